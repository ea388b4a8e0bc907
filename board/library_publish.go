package board

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"connectrpc.com/connect/v2"

	boardv1 "github.com/symphonix/symphonix/api/symphonix/board/v1"
	"github.com/symphonix/symphonix/api/symphonix/board/v1/boardv1connect"
	"github.com/symphonix/symphonix/audit"
	"github.com/symphonix/symphonix/ent"
	"github.com/symphonix/symphonix/ent/packageversion"
	"github.com/symphonix/symphonix/identity"
	"github.com/symphonix/symphonix/packages"
	"github.com/symphonix/symphonix/store"
)

// Publish takes one signed package through the library's four gates:
//
//  1. safe archive: packages.Scan with the board's limits;
//  2. digests: every file matches the manifest (Scan), and the envelope
//     signs the manifest's digest;
//  3. signatures: trusted keys of publishers allowed in the package's
//     scope sign it, as many as the scope's threshold;
//  4. name@version: new, or already there with the same digest: then
//     nothing changes, or, when this publish's envelope is another, it
//     takes the place of the stored one (the version signed again).
//
// The archive is spooled to a file (Config.SpoolDir) as it arrives, and
// removed whatever happens; nothing reaches the store until every gate has
// passed, and then the chunks, the version and the audit entry go in one
// transaction. A publish cut short leaves nothing. Like every stream
// but the link, a publish is held to its credential while it is open
// (streams.go); unlike the streams that may stay open, its body is held
// to the minimum rate of every request body (bodyrate.go), so a slow
// upload cannot hold a publish slot for ever.
func (s packageService) Publish(ctx context.Context, stream boardv1connect.PackageServicePublishServerStream) (*boardv1.PublishResponse, error) {
	b := s.b
	select {
	case b.publishing <- struct{}{}:
		defer func() { <-b.publishing }()
	default:
		return nil, connect.Errorf(connect.CodeResourceExhausted,
			"busy: the board takes at most %d publishes at once and is taking them: try again in a minute", cap(b.publishing))
	}

	first, err := stream.Receive()
	if errors.Is(err, io.EOF) {
		return nil, connect.NewError(connect.CodeInvalidArgument, "header: required: the first message must be the header")
	}
	if err != nil {
		return nil, err
	}
	h := first.GetHeader()
	if h == nil {
		return nil, connect.NewError(connect.CodeInvalidArgument, "header: required: the first message must be the header, not a chunk")
	}
	env, signed, err := readSignedEnvelope(h.GetEnvelope())
	if err != nil {
		return nil, err
	}
	limit := b.cfg.Limits.PackageBytes
	switch size := h.GetSize(); {
	case size <= 0:
		return nil, connect.Errorf(connect.CodeInvalidArgument, "header.size: %d, must be the archive's length in bytes, more than 0", size)
	case size > limit:
		return nil, connect.Errorf(connect.CodeResourceExhausted,
			"header.size: %d bytes: the library takes packages of at most %d bytes", size, limit)
	}

	f, err := os.CreateTemp(b.cfg.SpoolDir, "publish-*.tgz")
	if err != nil {
		return nil, fmt.Errorf("spool a publish: %w", err)
	}
	defer func() {
		f.Close()
		os.Remove(f.Name())
	}()
	if err := spool(stream, f, h.GetSize()); err != nil {
		return nil, err
	}

	// Gate 1: a safe, consistent archive.
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return nil, err
	}
	lim := packages.DefaultLimits
	lim.MaxArchiveBytes = limit
	pkg, err := packages.Scan(bufio.NewReaderSize(f, 64<<10), lim)
	if err != nil {
		if packages.ReasonOf(err) != "" {
			return nil, connect.Errorf(connect.CodeInvalidArgument, "safe archive: %v", err)
		}
		return nil, fmt.Errorf("scan a publish: %w", err)
	}
	if pkg.ArchiveBytes != h.GetSize() {
		return nil, connect.Errorf(connect.CodeInvalidArgument, "safe archive: %d bytes read of the %d sent", pkg.ArchiveBytes, h.GetSize())
	}

	// Gate 2: the envelope signs this package.
	if err := packages.Verify(pkg, signed); err != nil {
		return nil, connect.Errorf(connect.CodeInvalidArgument,
			"digests: the signature is for another package: the archive's manifest is %s, the envelope signs %s", pkg.Digest, signed)
	}
	manifest, err := pkg.Manifest.Canonical()
	if err != nil {
		return nil, fmt.Errorf("the manifest of a publish: %w", err)
	}

	m := pkg.Manifest
	scope := scopeOf(m.Name)
	actor := identity.ActorOf(ctx, "")
	now := b.now().UTC().Truncate(time.Microsecond)
	var (
		row               *ent.PackageVersion
		created, resigned bool
	)
	err = store.InTx(ctx, b.db, func(tx *ent.Tx) error {
		// Gate 3: the scope's trust, read in the transaction that writes.
		trust, err := b.trustOf(ctx, tx.Client(), scope)
		if err != nil {
			return err
		}
		signers, err := trust.check(env, pkg.Digest)
		if err != nil {
			return connect.Errorf(connect.CodePermissionDenied, "signatures: %v", err)
		}

		// Gate 4: name@version is immutable.
		old, err := tx.PackageVersion.Query().
			Where(packageversion.Name(m.Name), packageversion.Version(m.Version)).
			Select(append(listedVersionFields, packageversion.FieldEnvelope)...).Only(ctx)
		switch {
		case err == nil:
			row = old
			if err := sameOrRefused(old, pkg.Digest); err != nil || bytes.Equal(old.Envelope, h.GetEnvelope()) {
				return err
			}
			row, resigned, err = resign(ctx, b, tx, old, h.GetEnvelope(), signers, actor, now)
			return err
		case !ent.IsNotFound(err):
			return err
		}
		if err := storeChunks(ctx, tx, f, pkg.Digest); err != nil {
			return err
		}
		row, err = tx.PackageVersion.Create().
			SetName(m.Name).
			SetScope(scope).
			SetVersion(m.Version).
			SetDigest(pkg.Digest).
			SetKind(string(m.Kind)).
			SetDescription(m.Description).
			SetSize(pkg.ArchiveBytes).
			SetFiles(len(m.Files)).
			SetManifest(manifest).
			SetEnvelope(h.GetEnvelope()).
			SetSigners(signers).
			SetPublishedBy(actor).
			SetPublishedAt(now).
			Save(ctx)
		if err != nil {
			return err
		}
		created = true
		err = b.audit.Append(ctx, tx, audit.Record{
			Actor:   actor,
			Action:  "package.publish",
			Subject: m.Name + "@" + m.Version,
			Detail: map[string]any{
				"digest":  pkg.Digest,
				"kind":    string(m.Kind),
				"size":    pkg.ArchiveBytes,
				"files":   len(m.Files),
				"signers": signers,
			},
			At: now,
		})
		return err
	})
	if ent.IsConstraintError(err) || errors.Is(err, errChunkTaken) {
		// Another publish of the same name@version, or of the same package,
		// committed first: the unique indexes decided; the rule is the same.
		created = false
		row, err = b.db.PackageVersion.Query().
			Where(packageversion.Name(m.Name), packageversion.Version(m.Version)).
			Select(listedVersionFields...).Only(ctx)
		if ent.IsNotFound(err) {
			return nil, connect.Errorf(connect.CodeAborted,
				"name@version: another publish of %s@%s ran at the same moment and did not finish: try again", m.Name, m.Version)
		}
		if err == nil {
			err = sameOrRefused(row, pkg.Digest)
		}
	}
	if err != nil {
		return nil, err
	}
	row.Manifest = manifest
	run, err := b.runningOne(ctx, row.Digest)
	if err != nil {
		return nil, err
	}
	return &boardv1.PublishResponse{Version: versionProto(row, run), Created: created, Resigned: resigned}, nil
}

// resign puts envelope, whose signers passed gate 3, in the place of the
// one old was published or last signed with: the package is the same (its
// digest is), only who vouches for it changes. It is audited as
// package.resign.
func resign(ctx context.Context, b *Board, tx *ent.Tx, old *ent.PackageVersion, envelope []byte, signers []string, actor string, now time.Time) (*ent.PackageVersion, bool, error) {
	n, err := tx.PackageVersion.Update().Where(packageversion.Digest(old.Digest)).
		SetEnvelope(envelope).SetSigners(signers).Save(ctx)
	if err != nil {
		return nil, false, fmt.Errorf("sign %s@%s again: %w", old.Name, old.Version, err)
	}
	if n != 1 {
		return nil, false, fmt.Errorf("sign %s@%s again: %d rows changed, want 1", old.Name, old.Version, n)
	}
	err = b.audit.Append(ctx, tx, audit.Record{
		Actor:   actor,
		Action:  "package.resign",
		Subject: old.Name + "@" + old.Version,
		Detail:  map[string]any{"digest": old.Digest, "signers": signers, "signers_before": old.Signers},
		At:      now,
	})
	old.Signers = signers
	return old, err == nil, err
}

// errChunkTaken is a chunk of the package already stored: another publish
// of it won the race.
var errChunkTaken = errors.New("chunk already stored")

// sameOrRefused is gate 4's rule for a name@version already published:
// nil (nothing to do) for the same digest, already_exists for another.
func sameOrRefused(old *ent.PackageVersion, digest string) error {
	if old.Digest == digest {
		return nil
	}
	return connect.Errorf(connect.CodeAlreadyExists,
		"name@version: %s@%s is already published with digest %s, and a published version never changes: publish a new version",
		old.Name, old.Version, old.Digest)
}

// readSignedEnvelope reads the header's envelope and the digest it signs.
// It does not check the signatures (gate 3 does), only the form.
func readSignedEnvelope(raw []byte) (packages.Envelope, string, error) {
	bad := func(format string, args ...any) (packages.Envelope, string, error) {
		return packages.Envelope{}, "", connect.Errorf(connect.CodeInvalidArgument, "header.envelope: "+format, args...)
	}
	if len(raw) == 0 {
		return bad("required: the package's DSSE signature envelope")
	}
	if len(raw) > packages.MaxEnvelopeBytes {
		return bad("%d bytes, at most %d", len(raw), packages.MaxEnvelopeBytes)
	}
	env, err := packages.ReadEnvelope(bytes.NewReader(raw))
	if err != nil {
		return bad("%v", err)
	}
	if env.PayloadType != packages.PayloadType {
		return bad("payload type %s, want %s", quoted(env.PayloadType), packages.PayloadType)
	}
	if len(env.Signatures) == 0 {
		return bad("no signature")
	}
	if len(env.Signatures) > packages.MaxSignatures {
		return bad("%d signatures, at most %d", len(env.Signatures), packages.MaxSignatures)
	}
	var st packages.Statement
	dec := json.NewDecoder(bytes.NewReader(env.Payload))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&st); err != nil {
		return bad("the payload is not a package statement: %v", err)
	}
	if err := packages.CheckDigest(st.Digest); err != nil {
		return bad("the payload's digest: %v", err)
	}
	return env, st.Digest, nil
}

// spool copies the archive's chunks from stream to f: exactly size bytes,
// each chunk at most MaxChunkBytes.
func spool(stream boardv1connect.PackageServicePublishServerStream, f *os.File, size int64) error {
	w := bufio.NewWriterSize(f, 256<<10)
	var got int64
	for {
		msg, err := stream.Receive()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return err
		}
		if msg.GetHeader() != nil {
			return connect.NewError(connect.CodeInvalidArgument, "header: only the first message is the header; every later one is a chunk")
		}
		chunk := msg.GetChunk()
		switch {
		case len(chunk) == 0:
			return connect.NewError(connect.CodeInvalidArgument, "chunk: empty: every message after the header carries 1 byte to 1 MiB of the archive")
		case len(chunk) > MaxChunkBytes:
			return connect.Errorf(connect.CodeInvalidArgument, "chunk: %d bytes, at most %d", len(chunk), MaxChunkBytes)
		case got+int64(len(chunk)) > size:
			return connect.Errorf(connect.CodeInvalidArgument, "chunk: more than the %d bytes header.size declared", size)
		}
		if _, err := w.Write(chunk); err != nil {
			return fmt.Errorf("spool a publish: %w", err)
		}
		got += int64(len(chunk))
	}
	if got < size {
		return connect.Errorf(connect.CodeInvalidArgument, "chunk: the upload ended after %d of the %d bytes header.size declared", got, size)
	}
	if err := w.Flush(); err != nil {
		return fmt.Errorf("spool a publish: %w", err)
	}
	return nil
}

// storeChunks writes the archive in f into the store under digest, in
// pieces of MaxChunkBytes, one at a time.
func storeChunks(ctx context.Context, tx *ent.Tx, f *os.File, digest string) error {
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return err
	}
	buf := make([]byte, MaxChunkBytes)
	for seq := 0; ; seq++ {
		n, err := io.ReadFull(f, buf)
		if n > 0 {
			if _, err := tx.PackageChunk.Create().SetDigest(digest).SetSeq(seq).SetData(buf[:n]).Save(ctx); err != nil {
				if ent.IsConstraintError(err) {
					return errChunkTaken
				}
				return err
			}
		}
		if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
			return nil
		}
		if err != nil {
			return err
		}
	}
}
