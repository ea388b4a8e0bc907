package board

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"strings"
	"time"

	"connectrpc.com/connect/v2"
	"google.golang.org/protobuf/types/known/timestamppb"

	boardv1 "github.com/symphonix/symphonix/api/symphonix/board/v1"
	"github.com/symphonix/symphonix/ent"
	"github.com/symphonix/symphonix/ent/actionlinkuse"
	"github.com/symphonix/symphonix/identity"
	"github.com/symphonix/symphonix/store"
)

// An action link is the personal link to one approval that a notification
// sends a person who may decide it (docs/notifications.md): the board's
// public URL, "#act/" and a token. The token names the approval, its
// digest, the person (their canonical address) and when it stops working,
// and is signed with a key derived from the board's signing key, so every
// board of one store opens the others' and nobody can make or change one.
// It is in the URL's fragment, which a browser never sends: opening the
// link loads the board's page, which asks the person to sign in, shows the
// approval (OpenActionLink) and decides only when they confirm (Decide
// with the link). A decision made through it uses it up (action_link_uses).
//
// The bytes signed: the version, then the link's id, the approval's id,
// the person and the digest, each as a length and its bytes, then the
// expiry in Unix seconds as a uvarint. The HMAC-SHA256 of those follows.

const (
	actionLinkVersion = 1
	// maxActionLink is the longest action link token a request may carry.
	maxActionLink = 1024
	// actionLinkTTL is how long an action link works at most; never past
	// its approval's time limit.
	actionLinkTTL = 24 * time.Hour
	// actionLinkKeep is how long a used link's row is kept past its expiry.
	actionLinkKeep = 24 * time.Hour
)

// actionLink is what an action link token says.
type actionLink struct {
	id, approval, person, digest string
	expires                      time.Time
}

// actionLinks makes and opens action link tokens with one key.
type actionLinks struct {
	key []byte
}

// make is a new link for person to decide row, working until the
// approval's time limit or actionLinkTTL, whichever is first.
func (a actionLinks) make(person string, row *ent.Approval, now time.Time) (string, actionLink, error) {
	id := make([]byte, 16)
	if _, err := rand.Read(id); err != nil {
		return "", actionLink{}, fmt.Errorf("action link id: %w", err)
	}
	l := actionLink{id: "act-" + hex.EncodeToString(id), approval: row.ID, person: person, digest: row.Digest,
		expires: now.Add(actionLinkTTL).Truncate(time.Second)}
	if row.ExpiresAt != nil && row.ExpiresAt.Before(l.expires) {
		l.expires = row.ExpiresAt.Truncate(time.Second)
	}
	b := []byte{actionLinkVersion}
	for _, s := range []string{l.id, l.approval, l.person, l.digest} {
		b = appendString(b, s)
	}
	b = binary.AppendUvarint(b, uint64(l.expires.Unix()))
	b = append(b, a.mac(b)...)
	return base64.RawURLEncoding.EncodeToString(b), l, nil
}

// open checks a token and returns the link it names: refused
// (invalid_argument) when it is too long, malformed, or not made by this
// store's boards unchanged; failed_precondition when it has expired.
// Whose it is and whether it was used are the caller's to check.
func (a actionLinks) open(token string, now time.Time) (actionLink, error) {
	bad := func(why string) (actionLink, error) {
		return actionLink{}, refusal(connect.CodeInvalidArgument, "link: %s", why)
	}
	if len(token) > maxActionLink {
		return bad(fmt.Sprintf("%d bytes, at most %d", len(token), maxActionLink))
	}
	b, err := base64.RawURLEncoding.DecodeString(token)
	if err != nil || len(b) < 1+sha256.Size {
		return bad("not an action link: open the link as it came")
	}
	body, mac := b[:len(b)-sha256.Size], b[len(b)-sha256.Size:]
	if !hmac.Equal(mac, a.mac(body)) {
		return bad("not an action link of this board, or changed: open the link as it came")
	}
	r := tokenReader{b: body}
	if v := r.byte(); v != actionLinkVersion {
		return bad(fmt.Sprintf("version %d, this board reads %d", v, actionLinkVersion))
	}
	l := actionLink{id: r.string(), approval: r.string(), person: r.string(), digest: r.string()}
	exp := r.uvarint()
	if r.err != nil || len(r.b) != 0 || exp > 1<<40 {
		return bad("malformed")
	}
	l.expires = time.Unix(int64(exp), 0).UTC()
	if !now.Before(l.expires) {
		return actionLink{}, refusal(connect.CodeFailedPrecondition, "link: expired at %s; open the approval on the board", l.expires.Format(time.RFC3339))
	}
	return l, nil
}

func (a actionLinks) mac(b []byte) []byte {
	m := hmac.New(sha256.New, a.key)
	m.Write(b)
	return m.Sum(nil)
}

// actionLink is the link for person to decide row — the board's public
// URL and the token in the fragment — and when it stops working. Empty
// when the board was given no public URL.
func (b *Board) actionLink(person string, row *ent.Approval, now time.Time) (string, time.Time, error) {
	if b.cfg.PublicURL == "" {
		return "", time.Time{}, nil
	}
	token, l, err := b.actions.make(person, row, now)
	if err != nil {
		return "", time.Time{}, err
	}
	return strings.TrimRight(b.cfg.PublicURL, "/") + "/#act/" + token, l.expires, nil
}

// openActionLink opens token for caller: theirs, unused and unexpired.
func (b *Board) openActionLink(ctx context.Context, db *ent.Client, caller identity.Caller, token string, now time.Time) (actionLink, error) {
	if token == "" {
		return actionLink{}, refusal(connect.CodeInvalidArgument, "link: required")
	}
	l, err := b.actions.open(token, now)
	if err != nil {
		return actionLink{}, err
	}
	if caller.Name != l.person {
		// Operator tokens' names are never addresses: only the person,
		// signed in, opens their link.
		return actionLink{}, refusal(connect.CodePermissionDenied, "link: made for another person; sign in as the person it was sent to")
	}
	used, err := db.ActionLinkUse.Query().Where(actionlinkuse.ID(l.id)).Exist(ctx)
	if err != nil {
		return actionLink{}, err
	}
	if used {
		return actionLink{}, refusal(connect.CodeFailedPrecondition, "link: used already; open the approval on the board")
	}
	return l, nil
}

// OpenActionLink returns the approval an action link is for, once the
// link and the caller are checked as Decide will check them.
func (s approvalService) OpenActionLink(ctx context.Context, req *boardv1.OpenActionLinkRequest) (*boardv1.OpenActionLinkResponse, error) {
	caller, _ := identity.FromContext(ctx)
	now := s.b.now().UTC()
	var row *ent.Approval
	l, err := s.b.openActionLink(ctx, s.b.db, caller, req.GetLink(), now)
	if err == nil {
		err = store.InTx(ctx, s.b.db, func(tx *ent.Tx) error {
			var err error
			row, _, err = s.b.decidable(ctx, tx, caller, l.approval, now, false)
			return err
		})
	}
	if err == nil && row.Digest != l.digest {
		err = refusal(connect.CodeFailedPrecondition, "link: made for another operation than approval %q shows", row.ID)
	}
	if err != nil {
		detail := map[string]any{"op": "open_action_link"}
		if l.id != "" {
			detail["link"] = l.id
		}
		return nil, s.b.refused(ctx, caller, l.approval, detail, err)
	}
	return &boardv1.OpenActionLinkResponse{Approval: approvalProto(row), ExpiresAt: timestamppb.New(l.expires)}, nil
}

// useActionLink checks, in the decision's transaction, that the link
// the caller decides through is theirs, for this approval and digest,
// unexpired and unused, and uses it up.
func (b *Board) useActionLink(ctx context.Context, tx *ent.Tx, caller identity.Caller, req *boardv1.DecideRequest, now time.Time) (string, error) {
	l, err := b.openActionLink(ctx, tx.Client(), caller, req.GetActionLink(), now)
	if err != nil {
		return "", err
	}
	if l.approval != req.GetId() {
		return "", refusal(connect.CodePermissionDenied, "link: made for approval %q, not %q", l.approval, req.GetId())
	}
	if l.digest != req.GetDigest() {
		return "", refusal(connect.CodeFailedPrecondition, "link: made for digest %q, not %q", l.digest, req.GetDigest())
	}
	err = tx.ActionLinkUse.Create().SetID(l.id).SetApprovalID(l.approval).SetPerson(l.person).
		SetUsedAt(now).SetExpiresAt(l.expires).Exec(ctx)
	return l.id, err
}

// sweepActionLinks removes the rows of used links well past their expiry:
// the link itself no longer opens.
func (b *Board) sweepActionLinks(ctx context.Context, now time.Time) {
	if _, err := b.db.ActionLinkUse.Delete().Where(actionlinkuse.ExpiresAtLT(now.Add(-actionLinkKeep))).Exec(ctx); err != nil {
		b.log.WarnContext(ctx, "sweep used action links", "err", err.Error())
	}
}
