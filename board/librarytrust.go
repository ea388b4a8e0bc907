package board

import (
	"context"
	"crypto/ed25519"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"connectrpc.com/connect/v2"
	"google.golang.org/protobuf/types/known/timestamppb"

	boardv1 "github.com/symphonix/symphonix/api/symphonix/board/v1"
	"github.com/symphonix/symphonix/audit"
	"github.com/symphonix/symphonix/ent"
	"github.com/symphonix/symphonix/ent/agent"
	"github.com/symphonix/symphonix/ent/packagescope"
	"github.com/symphonix/symphonix/ent/publisherkey"
	"github.com/symphonix/symphonix/identity"
	"github.com/symphonix/symphonix/packages"
	"github.com/symphonix/symphonix/store"
)

// Limits on the library's trust: what admins set is read whole at every
// publish and download, so it stays small.
const (
	// maxPublisherKeys is how many publisher keys a board holds, revoked
	// ones included (they are kept for the record).
	maxPublisherKeys = 1000
	// maxScopes is how many scopes a board holds.
	maxScopes = 1000
	// maxScopePublishers is how many publishers one scope may allow.
	maxScopePublishers = 64
	// maxLibraryReason is the longest reason for a revocation or a yank,
	// in bytes.
	maxLibraryReason = 1024
	// maxRunningNames is how many agent names a version's record lists.
	maxRunningNames = 100
)

// scopeTrust is what one scope admits now: the keys, by key id, of its
// publishers that are not revoked, and how many of them must sign. A scope
// nobody has put has threshold 0 and admits nothing.
type scopeTrust struct {
	scope     string
	threshold int
	keys      map[string]ed25519.PublicKey
	// publisherOf names the publisher of every key the board knows, and
	// revoked and notAllowed the keys that do not count here and why, so
	// that a refusal can say what it found.
	publisherOf map[string]string
	revoked     map[string]bool
	notAllowed  map[string]bool
}

// trustOf reads what scope admits now, through client (the board's, or a
// transaction's).
func (b *Board) trustOf(ctx context.Context, client *ent.Client, scope string) (scopeTrust, error) {
	t := scopeTrust{scope: scope, keys: map[string]ed25519.PublicKey{}, publisherOf: map[string]string{},
		revoked: map[string]bool{}, notAllowed: map[string]bool{}}
	sc, err := client.PackageScope.Get(ctx, scope)
	switch {
	case ent.IsNotFound(err):
		sc = nil
	case err != nil:
		return t, fmt.Errorf("scope %s: %w", scope, err)
	}
	var allowed []string
	if sc != nil {
		t.threshold, allowed = sc.Threshold, sc.Publishers
	}
	keys, err := client.PublisherKey.Query().All(ctx)
	if err != nil {
		return t, fmt.Errorf("publisher keys: %w", err)
	}
	for _, k := range keys {
		t.publisherOf[k.ID] = k.Publisher
		switch {
		case k.RevokedAt != nil:
			t.revoked[k.ID] = true
		case !slices.Contains(allowed, k.Publisher):
			t.notAllowed[k.ID] = true
		default:
			t.keys[k.ID] = ed25519.PublicKey(k.PublicKey)
		}
	}
	return t, nil
}

// proto is t as the API gives it to a downloader: only the keys that
// count.
func (t scopeTrust) proto() *boardv1.Trust {
	out := &boardv1.Trust{Scope: t.scope, Threshold: int32(t.threshold), Keys: []*boardv1.PublisherKey{}}
	ids := make([]string, 0, len(t.keys))
	for id := range t.keys {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	for _, id := range ids {
		out.Keys = append(out.Keys, &boardv1.PublisherKey{
			KeyId: id, PublicKey: packages.FormatPublicKey(t.keys[id]), Publisher: t.publisherOf[id],
		})
	}
	return out
}

// check says whether env signs digest with at least the scope's threshold
// of its trusted keys, and returns the key ids whose signatures counted.
// Its error says what did not count and why: a key not known, revoked, of
// a publisher not allowed in the scope, or a signature that does not
// verify.
func (t scopeTrust) check(env packages.Envelope, digest string) ([]string, error) {
	if t.threshold < 1 {
		return nil, fmt.Errorf("scope %q admits nobody: an admin has not put it (PutScope)", t.scope)
	}
	var signers, why []string
	for _, s := range env.Signatures {
		id := s.KeyID
		k, ok := t.keys[id]
		switch {
		case ok && slices.Contains(signers, id):
		case ok:
			one := packages.Envelope{Payload: env.Payload, PayloadType: env.PayloadType, Signatures: []packages.Signature{s}}
			if err := packages.VerifySignature(one, digest, []ed25519.PublicKey{k}, 1); err != nil {
				why = append(why, fmt.Sprintf("key %s of %s: the signature does not verify", id, t.publisherOf[id]))
				continue
			}
			signers = append(signers, id)
		case t.revoked[id]:
			why = append(why, fmt.Sprintf("key %s of %s is revoked", id, t.publisherOf[id]))
		case t.notAllowed[id]:
			why = append(why, fmt.Sprintf("key %s is %s's, who may not publish in scope %q", id, t.publisherOf[id], t.scope))
		default:
			why = append(why, fmt.Sprintf("key %s is not known to this board", keyIDText(id)))
		}
	}
	if len(signers) >= t.threshold {
		return signers, nil
	}
	msg := fmt.Sprintf("%d of the %d signatures scope %q asks for", len(signers), t.threshold, t.scope)
	if len(why) > 0 {
		msg += ": " + strings.Join(why, "; ")
	}
	return signers, errors.New(msg)
}

// keyIDText is a key id for a refusal: as it is when it has a key id's
// shape, quoted and cut otherwise.
func keyIDText(id string) string {
	if packages.CheckDigest(id) == nil {
		return id
	}
	return quoted(id)
}

// running is who runs one package version: the first maxRunningNames
// agent names and how many in all.
type running struct {
	names []string
	count int
}

// agentsRunning says, for each digest, which agents' last hello said they
// run it.
func (b *Board) agentsRunning(ctx context.Context, digests []string) (map[string]running, error) {
	out := make(map[string]running, len(digests))
	if len(digests) == 0 {
		return out, nil
	}
	var counts []struct {
		PackageDigest string `json:"package_digest"`
		Count         int    `json:"count"`
	}
	err := b.db.Agent.Query().Where(agent.PackageDigestIn(digests...)).
		GroupBy(agent.FieldPackageDigest).Aggregate(ent.Count()).Scan(ctx, &counts)
	if err != nil {
		return nil, fmt.Errorf("agents running packages: %w", err)
	}
	for _, c := range counts {
		names, err := b.db.Agent.Query().Where(agent.PackageDigest(c.PackageDigest)).
			Order(ent.Asc(agent.FieldName)).Limit(maxRunningNames).Select(agent.FieldName).Strings(ctx)
		if err != nil {
			return nil, fmt.Errorf("agents running packages: %w", err)
		}
		out[c.PackageDigest] = running{names: names, count: c.Count}
	}
	return out, nil
}

// AddKey trusts a public key as a publisher's.
func (s packageService) AddKey(ctx context.Context, req *boardv1.AddKeyRequest) (*boardv1.AddKeyResponse, error) {
	pub, err := packages.ParsePublicKey(req.GetPublicKey())
	if req.GetPublicKey() == "" {
		err = errors.New("required")
	}
	if err != nil {
		return nil, connect.Errorf(connect.CodeInvalidArgument, "public_key: %v", err)
	}
	publisher := req.GetPublisher()
	if err := checkPublisher(publisher); err != nil {
		return nil, connect.Errorf(connect.CodeInvalidArgument, "publisher: %v", err)
	}
	id := packages.KeyID(pub)
	actor := identity.ActorOf(ctx, "")
	now := s.b.now().UTC().Truncate(time.Microsecond)
	var out *ent.PublisherKey
	created := false
	err = store.InTx(ctx, s.b.db, func(tx *ent.Tx) error {
		old, err := tx.PublisherKey.Get(ctx, id)
		switch {
		case err == nil && old.RevokedAt != nil:
			return refusal(connect.CodeFailedPrecondition, "public_key: key %s was revoked; a revoked key is never trusted again: make a new one", id)
		case err == nil && old.Publisher != publisher:
			return refusal(connect.CodeAlreadyExists, "public_key: key %s is already %s's", id, old.Publisher)
		case err == nil:
			out = old
			return nil
		case !ent.IsNotFound(err):
			return err
		}
		n, err := tx.PublisherKey.Query().Count(ctx)
		if err != nil {
			return err
		}
		if n >= maxPublisherKeys {
			return refusal(connect.CodeResourceExhausted, "public_key: the board holds %d publisher keys, at most %d", n, maxPublisherKeys)
		}
		out, err = tx.PublisherKey.Create().SetID(id).SetPublicKey(pub).SetPublisher(publisher).
			SetAddedBy(actor).SetAddedAt(now).Save(ctx)
		if ent.IsConstraintError(err) {
			return refusal(connect.CodeAborted, "public_key: key %s was added at the same moment; try again", id)
		}
		if err != nil {
			return err
		}
		created = true
		err = s.b.audit.Append(ctx, tx, audit.Record{
			Actor: actor, Action: "package.key.add", Subject: id, At: now,
			Detail: map[string]any{"publisher": publisher, "public_key": packages.FormatPublicKey(pub)},
		})
		return err
	})
	if err != nil {
		return nil, err
	}
	return &boardv1.AddKeyResponse{Key: publisherKeyProto(out), Created: created}, nil
}

// ListKeys is a page of publisher keys by key id.
func (s packageService) ListKeys(ctx context.Context, req *boardv1.ListKeysRequest) (*boardv1.ListKeysResponse, error) {
	publisher := req.GetPublisher()
	if publisher != "" {
		if err := checkPublisher(publisher); err != nil {
			return nil, connect.Errorf(connect.CodeInvalidArgument, "publisher: %v", err)
		}
	}
	pg, err := s.b.page("ListKeys", req.GetPageSize(), req.GetPageToken(), defaultPageSize, maxPageSize, 1, publisher)
	if err != nil {
		return nil, err
	}
	q := s.b.db.PublisherKey.Query().Where(publisherkey.IDGT(pg.afterName())).Order(ent.Asc(publisherkey.FieldID))
	if publisher != "" {
		q = q.Where(publisherkey.Publisher(publisher))
	}
	rows, err := q.Limit(maxPublisherKeys).All(ctx)
	if err != nil {
		return nil, err
	}
	out := &boardv1.ListKeysResponse{Keys: []*boardv1.PublisherKey{}}
	for _, r := range rows {
		k := publisherKeyProto(r)
		if !pg.take(k, r.ID) {
			break
		}
		out.Keys = append(out.Keys, k)
	}
	out.NextPageToken = pg.next()
	return out, nil
}

// RevokeKey stops trusting a key for good.
func (s packageService) RevokeKey(ctx context.Context, req *boardv1.RevokeKeyRequest) (*boardv1.RevokeKeyResponse, error) {
	id := req.GetKeyId()
	if id == "" {
		return nil, connect.Errorf(connect.CodeInvalidArgument, "key_id: required")
	}
	if !strings.HasPrefix(id, "sha256:") || packages.CheckDigest(id) != nil {
		return nil, connect.Errorf(connect.CodeInvalidArgument, "key_id: %s: want sha256: and 64 lowercase hex digits, as `board key list` prints it", quoted(id))
	}
	reason := req.GetReason()
	if err := checkReason(reason); err != nil {
		return nil, err
	}
	actor := identity.ActorOf(ctx, "")
	now := s.b.now().UTC().Truncate(time.Microsecond)
	var out *ent.PublisherKey
	err := store.InTx(ctx, s.b.db, func(tx *ent.Tx) error {
		k, err := tx.PublisherKey.Query().Where(publisherkey.ID(id), store.ForUpdate).Only(ctx)
		if ent.IsNotFound(err) {
			return refusal(connect.CodeNotFound, "key_id: %s: not a key this board knows", id)
		}
		if err != nil {
			return err
		}
		if k.RevokedAt != nil {
			out = k
			return nil
		}
		out, err = k.Update().SetRevokedAt(now).SetRevokedBy(actor).SetRevokeReason(reason).Save(ctx)
		if err != nil {
			return err
		}
		err = s.b.audit.Append(ctx, tx, audit.Record{
			Actor: actor, Action: "package.key.revoke", Subject: id, At: now,
			Detail: map[string]any{"publisher": k.Publisher, "reason": reason},
		})
		return err
	})
	if err != nil {
		return nil, err
	}
	return &boardv1.RevokeKeyResponse{Key: publisherKeyProto(out)}, nil
}

// PutScope sets who may publish in a scope and how many must sign.
func (s packageService) PutScope(ctx context.Context, req *boardv1.PutScopeRequest) (*boardv1.PutScopeResponse, error) {
	name := req.GetName()
	if name == "" {
		return nil, connect.Errorf(connect.CodeInvalidArgument, "name: required")
	}
	if err := packages.CheckScope(name); err != nil {
		return nil, connect.Errorf(connect.CodeInvalidArgument, "name: %v", err)
	}
	pubs := slices.Clone(req.GetPublishers())
	if len(pubs) > maxScopePublishers {
		return nil, connect.Errorf(connect.CodeInvalidArgument, "publishers: %d, at most %d", len(pubs), maxScopePublishers)
	}
	for i, p := range pubs {
		if err := checkPublisher(p); err != nil {
			return nil, connect.Errorf(connect.CodeInvalidArgument, "publishers[%d]: %v", i, err)
		}
	}
	slices.Sort(pubs)
	pubs = slices.Compact(pubs)
	threshold := int(req.GetThreshold())
	switch {
	case threshold < 0:
		return nil, connect.Errorf(connect.CodeInvalidArgument, "threshold: %d, must not be negative", threshold)
	case threshold == 0:
		threshold = 1
	case threshold > packages.MaxSignatures:
		return nil, connect.Errorf(connect.CodeInvalidArgument, "threshold: %d, at most %d (the most signatures an envelope holds)", threshold, packages.MaxSignatures)
	}
	actor := identity.ActorOf(ctx, "")
	now := s.b.now().UTC().Truncate(time.Microsecond)
	var out *ent.PackageScope
	err := store.InTx(ctx, s.b.db, func(tx *ent.Tx) error {
		old, err := tx.PackageScope.Get(ctx, name)
		switch {
		case ent.IsNotFound(err):
			n, err := tx.PackageScope.Query().Count(ctx)
			if err != nil {
				return err
			}
			if n >= maxScopes {
				return refusal(connect.CodeResourceExhausted, "name: the board holds %d scopes, at most %d", n, maxScopes)
			}
			out, err = tx.PackageScope.Create().SetID(name).SetPublishers(pubs).SetThreshold(threshold).
				SetSetBy(actor).SetSetAt(now).Save(ctx)
			if ent.IsConstraintError(err) {
				return refusal(connect.CodeAborted, "name: scope %q was put at the same moment; try again", name)
			}
			if err != nil {
				return err
			}
		case err != nil:
			return err
		default:
			out, err = old.Update().SetPublishers(pubs).SetThreshold(threshold).SetSetBy(actor).SetSetAt(now).Save(ctx)
			if err != nil {
				return err
			}
		}
		err = s.b.audit.Append(ctx, tx, audit.Record{
			Actor: actor, Action: "package.scope.put", Subject: name, At: now,
			Detail: map[string]any{"publishers": pubs, "threshold": threshold},
		})
		return err
	})
	if err != nil {
		return nil, err
	}
	return &boardv1.PutScopeResponse{Scope: scopeProto(out)}, nil
}

// ListScopes is a page of scopes by name.
func (s packageService) ListScopes(ctx context.Context, req *boardv1.ListScopesRequest) (*boardv1.ListScopesResponse, error) {
	pg, err := s.b.page("ListScopes", req.GetPageSize(), req.GetPageToken(), defaultPageSize, maxPageSize, 1)
	if err != nil {
		return nil, err
	}
	rows, err := s.b.db.PackageScope.Query().Where(packagescope.IDGT(pg.afterName())).
		Order(ent.Asc(packagescope.FieldID)).Limit(maxScopes).All(ctx)
	if err != nil {
		return nil, err
	}
	out := &boardv1.ListScopesResponse{Scopes: []*boardv1.Scope{}}
	for _, r := range rows {
		sc := scopeProto(r)
		if !pg.take(sc, r.ID) {
			break
		}
		out.Scopes = append(out.Scopes, sc)
	}
	out.NextPageToken = pg.next()
	return out, nil
}

// checkPublisher says whether p can name a publisher: a lowercase DNS
// label, as scopes are.
func checkPublisher(p string) error {
	if p == "" {
		return errors.New("required")
	}
	return packages.CheckScope(p)
}

// checkReason says whether a revocation or yank reason is one.
func checkReason(r string) error {
	switch {
	case strings.TrimSpace(r) == "":
		return connect.Errorf(connect.CodeInvalidArgument, "reason: required: say why, for the record")
	case len(r) > maxLibraryReason:
		return connect.Errorf(connect.CodeInvalidArgument, "reason: %d bytes, at most %d", len(r), maxLibraryReason)
	}
	return nil
}

func publisherKeyProto(k *ent.PublisherKey) *boardv1.PublisherKey {
	out := &boardv1.PublisherKey{
		KeyId: k.ID, PublicKey: packages.FormatPublicKey(ed25519.PublicKey(k.PublicKey)), Publisher: k.Publisher,
		AddedBy: k.AddedBy, AddTime: timestamppb.New(k.AddedAt),
	}
	if k.RevokedAt != nil {
		out.Revoked = &boardv1.Revoked{By: k.RevokedBy, Time: timestamppb.New(*k.RevokedAt), Reason: k.RevokeReason}
	}
	return out
}

func scopeProto(s *ent.PackageScope) *boardv1.Scope {
	return &boardv1.Scope{
		Name: s.ID, Publishers: s.Publishers, Threshold: int32(s.Threshold),
		SetBy: s.SetBy, SetTime: timestamppb.New(s.SetAt),
	}
}

// installedPackageProto is the package a stored agent said it runs; nil
// for none.
func installedPackageProto(r *ent.Agent) *boardv1.InstalledPackage {
	if r.PackageDigest == "" {
		return nil
	}
	return &boardv1.InstalledPackage{Name: r.PackageName, Version: r.PackageVersion, Digest: r.PackageDigest}
}

// validInstalledPackage refuses a hello's package that is not one.
func validInstalledPackage(p *boardv1.InstalledPackage) error {
	if p == nil {
		return nil
	}
	if err := packages.CheckName(p.GetName()); err != nil {
		return fmt.Errorf("package.name: %v", err)
	}
	if err := packages.CheckVersion(p.GetVersion()); err != nil {
		return fmt.Errorf("package.version: %v", err)
	}
	if err := packages.CheckDigest(p.GetDigest()); err != nil {
		return fmt.Errorf("package.digest: %v", err)
	}
	return nil
}
