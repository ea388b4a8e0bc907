package board_test

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/hex"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"connectrpc.com/connect/v2"

	boardv1 "github.com/symphonix/symphonix/api/symphonix/board/v1"
	"github.com/symphonix/symphonix/api/symphonix/board/v1/boardv1connect"
	"github.com/symphonix/symphonix/board"
	"github.com/symphonix/symphonix/ent/packagechunk"
	"github.com/symphonix/symphonix/identity"
	"github.com/symphonix/symphonix/internal/boardtest"
	"github.com/symphonix/symphonix/packages"
)

// TestLibraryInterruptedPublish: an upload cut off midway leaves nothing:
// no spooled file, no version, no chunk; the same name@version then
// publishes with another digest.
func TestLibraryInterruptedPublish(t *testing.T) {
	t.Parallel()
	l := newLibrary(t, boardtest.Options{})
	alice := newSigner(t)
	l.trustKey("alice", alice)
	l.putScope("acme", 1, "alice")
	p := buildPkg(t, "acme/hello", "1.0.0", "# hello\n", nil)

	ctx, cancel := context.WithCancel(t.Context())
	st, err := l.admin.Publish(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := st.Send(&boardv1.PublishRequest{Part: &boardv1.PublishRequest_Header{Header: &boardv1.PublishHeader{
		Envelope: signed(t, p.digest, alice), Size: int64(len(p.archive)),
	}}}); err != nil {
		t.Fatal(err)
	}
	if err := st.Send(&boardv1.PublishRequest{Part: &boardv1.PublishRequest_Chunk{Chunk: p.archive[:len(p.archive)/2]}}); err != nil {
		t.Fatal(err)
	}
	boardtest.Eventually(t, 10*time.Second, "the upload is spooled", func() bool { return len(spooled(t, l.bt)) == 1 })
	cancel()
	_, _ = st.CloseAndReceive()
	boardtest.Eventually(t, 10*time.Second, "the spooled upload is removed", func() bool { return len(spooled(t, l.bt)) == 0 })

	_, err = l.admin.GetPackage(t.Context(), &boardv1.GetPackageRequest{Name: "acme/hello"})
	refused(t, "GetPackage after an interrupted publish", err, connect.CodeNotFound)
	if n, err := l.bt.Store.PackageChunk.Query().Count(t.Context()); err != nil || n != 0 {
		t.Fatalf("chunks = %d, %v; want none", n, err)
	}
	other := buildPkg(t, "acme/hello", "1.0.0", "# hello, for real\n", nil)
	if res := l.publishOK(other, alice); !res.GetCreated() || res.GetVersion().GetDigest() != other.digest {
		t.Fatalf("publish after the interrupted one = %v", res)
	}
}

// TestLibraryBusy: past Limits.PublishesAtOnce, a publish is refused busy
// at once; when the one running ends, the next is taken.
func TestLibraryBusy(t *testing.T) {
	t.Parallel()
	l := newLibrary(t, boardtest.Options{Limits: board.Limits{PublishesAtOnce: 1}})
	alice := newSigner(t)
	l.trustKey("alice", alice)
	l.putScope("acme", 1, "alice")
	p := buildPkg(t, "acme/hello", "1.0.0", "# hello\n", nil)

	ctx, cancel := context.WithCancel(t.Context())
	st, err := l.admin.Publish(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := st.Send(&boardv1.PublishRequest{Part: &boardv1.PublishRequest_Header{Header: &boardv1.PublishHeader{
		Envelope: signed(t, p.digest, alice), Size: int64(len(p.archive)),
	}}}); err != nil {
		t.Fatal(err)
	}
	boardtest.Eventually(t, 10*time.Second, "the first upload is spooled", func() bool { return len(spooled(t, l.bt)) == 1 })
	_, err = publish(t.Context(), l.admin, signed(t, p.digest, alice), p.archive, 0)
	refused(t, "a second publish at once", err, connect.CodeResourceExhausted, "busy", "at most 1 publishes at once")
	cancel()
	_, _ = st.CloseAndReceive()
	boardtest.Eventually(t, 10*time.Second, "the slot is free again", func() bool {
		res, err := publish(t.Context(), l.admin, signed(t, p.digest, alice), p.archive, 0)
		return err == nil && res.GetCreated()
	})
}

// TestLibraryConcurrentPublish: publishes of one name@version with two
// different archives at once: exactly one digest wins, every other
// publish is created=false (same digest) or already_exists (the other).
func TestLibraryConcurrentPublish(t *testing.T) {
	t.Parallel()
	concurrentPublish(t, boardtest.Options{Limits: board.Limits{PublishesAtOnce: 8}})
}

// TestLibraryConcurrentPublishPostgres is the same race on PostgreSQL.
func TestLibraryConcurrentPublishPostgres(t *testing.T) {
	t.Parallel()
	concurrentPublish(t, boardtest.Options{DSN: boardtest.PostgresDSN(t), Limits: board.Limits{PublishesAtOnce: 8}})
}

func concurrentPublish(t *testing.T, opts boardtest.Options) {
	l := newLibrary(t, opts)
	alice := newSigner(t)
	l.trustKey("alice", alice)
	l.putScope("acme", 1, "alice")
	pkgs := []pkg{
		buildPkg(t, "acme/hello", "1.0.0", "# one\n", nil),
		buildPkg(t, "acme/hello", "1.0.0", "# two\n", nil),
	}
	const n = 8
	type result struct {
		sent string
		res  *boardv1.PublishResponse
		err  error
	}
	results := make([]result, n)
	start := make(chan struct{})
	var wg sync.WaitGroup
	for i := range n {
		p := pkgs[i%2]
		env := signed(t, p.digest, alice)
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			res, err := publish(t.Context(), l.admin, env, p.archive, 4<<10)
			results[i] = result{p.digest, res, err}
		}()
	}
	close(start)
	wg.Wait()
	var winners []string
	for _, r := range results {
		if r.err == nil && r.res.GetCreated() {
			winners = append(winners, r.res.GetVersion().GetDigest())
		}
	}
	if len(winners) != 1 {
		t.Fatalf("%d publishes created the version, want exactly one: %+v", len(winners), results)
	}
	won := winners[0]
	for i, r := range results {
		switch {
		case r.err == nil && r.res.GetVersion().GetDigest() == won && r.sent == won:
		case r.err != nil && r.sent != won && connect.CodeOf(r.err) == connect.CodeAlreadyExists:
		default:
			t.Errorf("publish %d of %s: %v, %v; the winner is %s", i, r.sent, r.res, r.err, won)
		}
	}
	rows, err := l.bt.Store.PackageVersion.Query().All(t.Context())
	if err != nil || len(rows) != 1 || rows[0].Digest != won {
		t.Fatalf("versions stored = %v, %v", rows, err)
	}
	for _, p := range pkgs {
		n, err := l.bt.Store.PackageChunk.Query().Where(packagechunk.Digest(p.digest)).Count(t.Context())
		if err != nil || (p.digest == won) != (n > 0) {
			t.Errorf("chunks of %s = %d, %v; the winner is %s", p.digest, n, err, won)
		}
	}
	for _, p := range pkgs {
		if p.digest != won {
			continue
		}
		if _, data, err := download(t.Context(), l.admin, &boardv1.DownloadRequest{Name: p.name, Version: p.version}); err != nil || !bytes.Equal(data, p.archive) {
			t.Errorf("download of the winner: %d bytes of %d, %v", len(data), len(p.archive), err)
		}
	}
}

// TestLibraryPages: GetPackage's versions come newest first by semantic
// version (a pre-release before its release, 1.10 after 1.2), page by
// page; ListPackages pages by name within a scope; a token is good only
// for the request it came from.
func TestLibraryPages(t *testing.T) {
	t.Parallel()
	libraryPages(t, boardtest.Options{})
}

// TestLibraryPagesPostgres is the same on PostgreSQL.
func TestLibraryPagesPostgres(t *testing.T) {
	t.Parallel()
	libraryPages(t, boardtest.Options{DSN: boardtest.PostgresDSN(t)})
}

func libraryPages(t *testing.T, opts boardtest.Options) {
	l := newLibrary(t, opts)
	alice := newSigner(t)
	l.trustKey("alice", alice)
	l.putScope("acme", 1, "alice")
	l.putScope("other", 1, "alice")
	versions := []string{"1.2.0", "2.0.0-rc.1", "1.10.0", "1.2.0-rc.1", "2.0.0", "1.2.0-alpha"}
	for _, v := range versions {
		l.publishOK(buildPkg(t, "acme/hello", v, "# "+v+"\n", nil), alice)
	}
	for _, name := range []string{"acme/b", "acme/a", "acme/c", "other/a"} {
		l.publishOK(buildPkg(t, name, "0.1.0", "# "+name+"\n", nil), alice)
	}

	var got []string
	token := ""
	for pages := 0; ; pages++ {
		res, err := l.admin.GetPackage(t.Context(), &boardv1.GetPackageRequest{Name: "acme/hello", PageSize: 4, PageToken: token})
		if err != nil {
			t.Fatal(err)
		}
		for _, v := range res.GetVersions() {
			got = append(got, v.GetVersion())
		}
		if res.GetPackage().GetLatest() != "2.0.0" || res.GetPackage().GetVersions() != int32(len(versions)) {
			t.Fatalf("package = %v", res.GetPackage())
		}
		if token = res.GetNextPageToken(); token == "" || pages > 3 {
			break
		}
	}
	want := []string{"2.0.0", "2.0.0-rc.1", "1.10.0", "1.2.0", "1.2.0-rc.1", "1.2.0-alpha"}
	if !slices.Equal(got, want) {
		t.Fatalf("versions = %v, want %v", got, want)
	}

	var names []string
	token = ""
	for pages := 0; ; pages++ {
		res, err := l.admin.ListPackages(t.Context(), &boardv1.ListPackagesRequest{Scope: "acme", PageSize: 2, PageToken: token})
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range res.GetPackages() {
			names = append(names, p.GetName())
		}
		if token = res.GetNextPageToken(); token == "" || pages > 3 {
			break
		}
		// The token is for this scope's list only.
		_, err = l.admin.ListPackages(t.Context(), &boardv1.ListPackagesRequest{Scope: "other", PageToken: token})
		refused(t, "a token of another scope", err, connect.CodeInvalidArgument, "page_token")
		_, err = l.admin.GetPackage(t.Context(), &boardv1.GetPackageRequest{Name: "acme/hello", PageToken: token})
		refused(t, "a token of another list", err, connect.CodeInvalidArgument, "page_token")
	}
	if want := []string{"acme/a", "acme/b", "acme/c", "acme/hello"}; !slices.Equal(names, want) {
		t.Fatalf("names = %v, want %v", names, want)
	}
	_, err := l.admin.ListPackages(t.Context(), &boardv1.ListPackagesRequest{PageSize: -1})
	refused(t, "negative page_size", err, connect.CodeInvalidArgument, "page_size")
	_, err = l.admin.ListPackages(t.Context(), &boardv1.ListPackagesRequest{Scope: "Bad Scope"})
	refused(t, "a bad scope", err, connect.CodeInvalidArgument, "scope")
	_, err = l.admin.GetPackage(t.Context(), &boardv1.GetPackageRequest{Name: "acme/nothing"})
	refused(t, "GetPackage of nothing", err, connect.CodeNotFound, "acme/nothing")
	_, err = l.admin.GetPackage(t.Context(), &boardv1.GetPackageRequest{})
	refused(t, "GetPackage without a name", err, connect.CodeInvalidArgument, "name: required")
}

// TestLibraryPublishStream: a publish's messages are checked as they
// arrive: one header, first; chunks of 1 byte to 1 MiB.
func TestLibraryPublishStream(t *testing.T) {
	t.Parallel()
	l := newLibrary(t, boardtest.Options{})
	alice := newSigner(t)
	l.trustKey("alice", alice)
	l.putScope("acme", 1, "alice")
	p := buildPkg(t, "acme/hello", "1.0.0", "# hello\n", nil)
	header := &boardv1.PublishRequest{Part: &boardv1.PublishRequest_Header{Header: &boardv1.PublishHeader{
		Envelope: signed(t, p.digest, alice), Size: 4 << 20,
	}}}
	chunk := func(b []byte) *boardv1.PublishRequest {
		return &boardv1.PublishRequest{Part: &boardv1.PublishRequest_Chunk{Chunk: b}}
	}
	for _, tc := range []struct {
		name  string
		msgs  []*boardv1.PublishRequest
		code  connect.Code
		words []string
	}{
		{"nothing", nil, connect.CodeInvalidArgument, []string{"header: required"}},
		{"two headers", []*boardv1.PublishRequest{header, chunk([]byte{1}), header}, connect.CodeInvalidArgument, []string{"header: only the first"}},
		{"an empty chunk", []*boardv1.PublishRequest{header, chunk(nil)}, connect.CodeInvalidArgument, []string{"chunk: empty"}},
		{"a chunk of 1 MiB and a byte", []*boardv1.PublishRequest{header, chunk(make([]byte, 1<<20+1))}, connect.CodeInvalidArgument, []string{"chunk: 1048577 bytes, at most 1048576"}},
		{"a message over the most", []*boardv1.PublishRequest{header, chunk(make([]byte, 1<<20+64))}, connect.CodeResourceExhausted, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st, err := l.admin.Publish(t.Context())
			if err != nil {
				t.Fatal(err)
			}
			for _, m := range tc.msgs {
				if st.Send(m) != nil {
					break
				}
			}
			_, err = st.CloseAndReceive()
			refused(t, tc.name, err, tc.code, tc.words...)
		})
	}
	if left := spooled(t, l.bt); len(left) != 0 {
		t.Errorf("spool folder holds %v", left)
	}
}

// TestLibraryProtocols: a publish in full 1 MiB chunks and its download
// work over every wire protocol the board serves.
func TestLibraryProtocols(t *testing.T) {
	t.Parallel()
	l := newLibrary(t, boardtest.Options{})
	alice := newSigner(t)
	l.trustKey("alice", alice)
	l.putScope("acme", 1, "alice")
	noise := make([]byte, 3<<19)
	_, _ = rand.NewChaCha8([32]byte{2}).Read(noise)
	token := l.bt.OperatorToken("root", identity.RoleAdmin)
	for proto, opts := range boardtest.Protocols {
		t.Run(proto, func(t *testing.T) {
			p := buildPkg(t, "acme/"+proto, "1.0.0", "# hello\n", map[string]string{"noise.bin": string(noise)})
			c := boardv1connect.NewPackageServiceClient(l.bt.Client(token, opts...))
			res, err := publish(t.Context(), c, signed(t, p.digest, alice), p.archive, 1<<20)
			if err != nil || !res.GetCreated() {
				t.Fatalf("publish = %v, %v", res, err)
			}
			_, data, err := download(t.Context(), c, &boardv1.DownloadRequest{Name: p.name})
			if err != nil || !bytes.Equal(data, p.archive) {
				t.Fatalf("download: %d bytes of %d, %v", len(data), len(p.archive), err)
			}
		})
	}
}

// TestLibraryStalledPublish: an upload that stops sending is cut off once
// it falls behind the body rate, and its publish slot and spooled file go.
func TestLibraryStalledPublish(t *testing.T) {
	t.Parallel()
	l := newLibrary(t, boardtest.Options{BodyGrace: 300 * time.Millisecond, Limits: board.Limits{PublishesAtOnce: 1}})
	alice := newSigner(t)
	l.trustKey("alice", alice)
	l.putScope("acme", 1, "alice")
	p := buildPkg(t, "acme/hello", "1.0.0", "# hello\n", nil)

	st, err := l.admin.Publish(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if err := st.Send(&boardv1.PublishRequest{Part: &boardv1.PublishRequest_Header{Header: &boardv1.PublishHeader{
		Envelope: signed(t, p.digest, alice), Size: int64(len(p.archive)),
	}}}); err != nil {
		t.Fatal(err)
	}
	boardtest.Eventually(t, 10*time.Second, "the upload is spooled", func() bool { return len(spooled(t, l.bt)) == 1 })
	boardtest.Eventually(t, 10*time.Second, "the stalled upload is cut off", func() bool { return len(spooled(t, l.bt)) == 0 })
	_, err = st.CloseAndReceive()
	refused(t, "a stalled upload", err, connect.CodeDeadlineExceeded, "too slow")
	if res := l.publishOK(p, alice); !res.GetCreated() {
		t.Fatalf("the next publish = %v", res)
	}
}

// TestLibraryPublishRevoked: a publish is held to its credential while it
// uploads: revoking the token ends it, and nothing is kept.
func TestLibraryPublishRevoked(t *testing.T) {
	t.Parallel()
	l := newLibrary(t, boardtest.Options{RevocationPoll: 50 * time.Millisecond})
	alice := newSigner(t)
	l.trustKey("alice", alice)
	l.putScope("acme", 1, "alice")
	p := buildPkg(t, "acme/hello", "1.0.0", "# hello\n", nil)
	m := l.bt.Mint(identity.MintOptions{Kind: identity.KindOperator, Name: "rita", Role: identity.RoleAdmin})

	st, err := packagesClient(l.bt, m.Token).Publish(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if err := st.Send(&boardv1.PublishRequest{Part: &boardv1.PublishRequest_Header{Header: &boardv1.PublishHeader{
		Envelope: signed(t, p.digest, alice), Size: int64(len(p.archive)),
	}}}); err != nil {
		t.Fatal(err)
	}
	boardtest.Eventually(t, 10*time.Second, "the upload is spooled", func() bool { return len(spooled(t, l.bt)) == 1 })
	if err := l.bt.Board.Tokens().Revoke(t.Context(), m.ID, time.Now()); err != nil {
		t.Fatal(err)
	}
	boardtest.Eventually(t, 10*time.Second, "the upload is ended", func() bool { return len(spooled(t, l.bt)) == 0 })
	_, err = st.CloseAndReceive()
	refused(t, "a publish by a revoked token", err, connect.CodeUnauthenticated, "token revoked")
	_, err = l.admin.GetPackage(t.Context(), &boardv1.GetPackageRequest{Name: p.name})
	refused(t, "GetPackage after the revoked publish", err, connect.CodeNotFound)
}

// TestLibraryResign: a version whose only signer is revoked no longer has
// a trusted signature in its download; the same archive published again
// with a trusted key's envelope signs it again — the package unchanged,
// the envelope and signers replaced, audited — and an envelope that does
// not pass the signatures gate changes nothing.
func TestLibraryResign(t *testing.T) {
	t.Parallel()
	l := newLibrary(t, boardtest.Options{})
	old, fresh, stranger := newSigner(t), newSigner(t), newSigner(t)
	l.trustKey("acme-release", old)
	l.trustKey("acme-release", fresh)
	l.putScope("acme", 1, "acme-release")
	p := buildPkg(t, "acme/hello", "1.0.0", "v1", nil)
	l.publishOK(p, old)
	l.revoke(old)
	ctx := t.Context()

	head, _, err := download(ctx, l.admin, &boardv1.DownloadRequest{Name: p.name, Version: p.version})
	if err != nil {
		t.Fatal(err)
	}
	if env, err := packages.ReadEnvelope(bytes.NewReader(head.GetEnvelope())); err != nil || verifyHead(head, env, p.digest) == nil {
		t.Fatalf("before signing again: the download verifies (%v), want its only signer revoked", err)
	}

	_, err = publish(ctx, l.admin, signed(t, p.digest, stranger), p.archive, 0)
	refused(t, "signed again by an unknown key", err, connect.CodePermissionDenied, "signatures:", "not known")

	res, err := publish(ctx, l.admin, signed(t, p.digest, fresh), p.archive, 0)
	if err != nil {
		t.Fatal(err)
	}
	if res.GetCreated() || !res.GetResigned() || res.GetVersion().GetDigest() != p.digest ||
		strings.Join(res.GetVersion().GetSigners(), ",") != fresh.id {
		t.Errorf("signed again: %v, want resigned with %s the signer and the digest unchanged", res, fresh.id)
	}
	head, archive, err := download(ctx, l.admin, &boardv1.DownloadRequest{Name: p.name, Version: p.version})
	if err != nil {
		t.Fatal(err)
	}
	env, err := packages.ReadEnvelope(bytes.NewReader(head.GetEnvelope()))
	if err != nil || verifyHead(head, env, p.digest) != nil || !bytes.Equal(archive, p.archive) {
		t.Errorf("after signing again: %v %v, want the same archive under a signature its trust accepts", err, verifyHead(head, env, p.digest))
	}
	again, err := publish(ctx, l.admin, signed(t, p.digest, fresh), p.archive, 0)
	if err != nil || again.GetCreated() || again.GetResigned() {
		t.Errorf("the same envelope again: %v %v, want nothing changed", again, err)
	}
	row, err := l.bt.Store.PackageVersion.Query().Only(ctx)
	if sum := sha256.Sum256(row.Manifest); err != nil || "sha256:"+hex.EncodeToString(sum[:]) != p.digest {
		t.Errorf("the stored manifest (%v): its SHA-256 is not the package digest %s", err, p.digest)
	}
	wantAudited(t, l.bt, "package.resign", 1)
	wantAudited(t, l.bt, "package.publish", 1)
}

// verifyHead checks a download head's envelope against the trust it came
// with.
func verifyHead(head *boardv1.DownloadHead, env packages.Envelope, digest string) error {
	var keys []ed25519.PublicKey
	for _, k := range head.GetTrust().GetKeys() {
		pub, err := packages.ParsePublicKey(k.GetPublicKey())
		if err != nil {
			return err
		}
		keys = append(keys, pub)
	}
	return packages.VerifySignature(env, digest, keys, int(head.GetTrust().GetThreshold()))
}
