package board_test

import (
	"bytes"
	"crypto/ed25519"
	"encoding/json"
	"math/rand/v2"
	"os"
	"strings"
	"testing"

	"connectrpc.com/connect/v2"

	boardv1 "github.com/symphonix/symphonix/api/symphonix/board/v1"
	"github.com/symphonix/symphonix/board"
	"github.com/symphonix/symphonix/identity"
	"github.com/symphonix/symphonix/internal/boardtest"
	"github.com/symphonix/symphonix/packages"
)

// TestLibraryPublishDownload: a signed package goes in and comes out with
// the same bytes, by name, by name and version and by digest; the same
// package again changes nothing; another package under the same
// name@version is refused; all of it survives a restart.
func TestLibraryPublishDownload(t *testing.T) {
	t.Parallel()
	l := newLibrary(t, boardtest.Options{})
	alice := newSigner(t)
	l.trustKey("alice", alice)
	l.putScope("acme", 1, "alice")

	// Over 2 MiB of poorly compressible bytes, so the archive spans chunks.
	noise := make([]byte, 5<<19)
	_, _ = rand.NewChaCha8([32]byte{1}).Read(noise)
	p := buildPkg(t, "acme/hello", "1.0.0", "# hello\n", map[string]string{"data/noise.bin": string(noise)})
	if len(p.archive) <= 2<<20 {
		t.Fatalf("archive of %d bytes: want more than two chunks", len(p.archive))
	}
	res := l.publishOK(p, alice)
	v := res.GetVersion()
	if !res.GetCreated() || v.GetName() != "acme/hello" || v.GetVersion() != "1.0.0" || v.GetDigest() != p.digest ||
		v.GetKind() != "agent" || v.GetSize() != int64(len(p.archive)) || v.GetFiles() != 3 ||
		v.GetPublishedBy() != "root" || v.GetPublishTime() == nil || v.GetYanked() != nil {
		t.Fatalf("publish = %v", res)
	}
	if len(v.GetSigners()) != 1 || v.GetSigners()[0] != alice.id {
		t.Errorf("signers = %v, want [%s]", v.GetSigners(), alice.id)
	}
	if r := v.GetRequires(); len(r.GetInputs()) != 1 || r.GetInputs()[0] != "who" || len(r.GetSecrets()) != 1 || r.GetSecrets()[0] != "GREETER_TOKEN" {
		t.Errorf("requires = %v", r)
	}

	check := func(when string) {
		t.Helper()
		for _, req := range []*boardv1.DownloadRequest{
			{Name: "acme/hello"},
			{Name: "acme/hello", Version: "1.0.0"},
			{Digest: p.digest},
			{Name: "acme/hello", Version: "1.0.0", Digest: p.digest},
		} {
			head, data, err := download(t.Context(), l.admin, req)
			if err != nil {
				t.Fatalf("%s: download %v: %v", when, req, err)
			}
			if !bytes.Equal(data, p.archive) {
				t.Fatalf("%s: download %v: %d bytes, not the %d published", when, req, len(data), len(p.archive))
			}
			if head.GetVersion().GetDigest() != p.digest || !bytes.Equal(head.GetEnvelope(), signed(t, p.digest, alice)) {
				t.Fatalf("%s: head = %v", when, head)
			}
			tr := head.GetTrust()
			if tr.GetScope() != "acme" || tr.GetThreshold() != 1 || len(tr.GetKeys()) != 1 || tr.GetKeys()[0].GetKeyId() != alice.id {
				t.Fatalf("%s: trust = %v", when, tr)
			}
			// What the downloader checks itself passes.
			env, err := packages.ReadEnvelope(bytes.NewReader(head.GetEnvelope()))
			if err != nil {
				t.Fatal(err)
			}
			pub, err := packages.ParsePublicKey(tr.GetKeys()[0].GetPublicKey())
			if err != nil {
				t.Fatal(err)
			}
			scanned, err := packages.Scan(bytes.NewReader(data), packages.Limits{})
			if err != nil {
				t.Fatal(err)
			}
			if err := packages.Verify(scanned, p.digest); err != nil {
				t.Fatal(err)
			}
			if err := packages.VerifySignature(env, scanned.Digest, []ed25519.PublicKey{pub}, 1); err != nil {
				t.Fatal(err)
			}
		}
		got, err := l.admin.GetPackage(t.Context(), &boardv1.GetPackageRequest{Name: "acme/hello"})
		if err != nil || len(got.GetVersions()) != 1 || got.GetPackage().GetLatest() != "1.0.0" || got.GetVersions()[0].GetDigest() != p.digest {
			t.Fatalf("%s: GetPackage = %v, %v", when, got, err)
		}
		list, err := l.admin.ListPackages(t.Context(), &boardv1.ListPackagesRequest{})
		if err != nil || len(list.GetPackages()) != 1 || list.GetPackages()[0].GetName() != "acme/hello" || list.GetPackages()[0].GetVersions() != 1 {
			t.Fatalf("%s: ListPackages = %v, %v", when, list, err)
		}
	}
	check("after publish")

	// The same package again: nothing changes.
	again := l.publishOK(p, alice)
	if again.GetCreated() || again.GetVersion().GetDigest() != p.digest || !again.GetVersion().GetPublishTime().AsTime().Equal(v.GetPublishTime().AsTime()) {
		t.Fatalf("republish = %v, want created=false and the first record", again)
	}
	// Another package under the same name@version: refused.
	other := buildPkg(t, "acme/hello", "1.0.0", "# hello, changed\n", nil)
	_, err := publish(t.Context(), l.admin, signed(t, other.digest, alice), other.archive, 0)
	refused(t, "another digest", err, connect.CodeAlreadyExists, "name@version", p.digest)

	l.bt.Restart()
	l.reconnect()
	check("after restart")
	if res, err := publish(t.Context(), l.admin, signed(t, p.digest, alice), p.archive, 64<<10); err != nil || res.GetCreated() {
		t.Fatalf("republish after restart = %v, %v; want created=false", res, err)
	}
}

// TestLibraryGates: each gate refuses with its own code and says why, and
// a refused publish leaves nothing in the library.
func TestLibraryGates(t *testing.T) {
	t.Parallel()
	l := newLibrary(t, boardtest.Options{})
	alice, bob, mallory, stranger, gone := newSigner(t), newSigner(t), newSigner(t), newSigner(t), newSigner(t)
	l.trustKey("alice", alice)
	l.trustKey("bob", bob)
	l.trustKey("mallory", mallory)
	l.trustKey("alice", gone)
	l.revoke(gone)
	l.putScope("acme", 1, "alice")
	l.putScope("bank", 2, "alice", "bob")

	good := buildPkg(t, "acme/hello", "1.0.0", "# hello\n", nil)
	unsafe, err := os.ReadFile("../packages/testdata/bad/traversal.tgz")
	if err != nil {
		t.Fatal(err)
	}
	symlink, err := os.ReadFile("../packages/testdata/bad/symlink.tgz")
	if err != nil {
		t.Fatal(err)
	}
	flipped := bytes.Clone(good.archive)
	flipped[len(flipped)/2] ^= 0x01
	// One flipped byte of the envelope: in the signature.
	var env packages.Envelope
	if err := json.Unmarshal(signed(t, good.digest, alice), &env); err != nil {
		t.Fatal(err)
	}
	env.Signatures[0].Sig[5] ^= 0x01
	badSig, _ := json.Marshal(env)
	// One flipped byte of the envelope as sent: its JSON no longer reads.
	badJSON := signed(t, good.digest, alice)
	badJSON[0] ^= 0x01
	otherPkg := buildPkg(t, "acme/hello", "1.0.0", "# another\n", nil)
	scopeless := buildPkg(t, "nobody/hello", "1.0.0", "# hello\n", nil)
	bank := buildPkg(t, "bank/hello", "1.0.0", "# hello\n", nil)

	for _, tc := range []struct {
		name    string
		env     []byte
		archive []byte
		code    connect.Code
		words   []string
	}{
		{"unsafe archive (traversal)", signed(t, good.digest, alice), unsafe, connect.CodeInvalidArgument, []string{"safe archive", "unsafe_path"}},
		{"unsafe archive (symlink)", signed(t, good.digest, alice), symlink, connect.CodeInvalidArgument, []string{"safe archive", "symlink"}},
		{"a flipped byte in the archive", signed(t, good.digest, alice), flipped, connect.CodeInvalidArgument, []string{"safe archive"}},
		{"the signature of another package", signed(t, otherPkg.digest, alice), good.archive, connect.CodeInvalidArgument, []string{"digests", "the signature is for another package"}},
		{"a flipped byte in the signature", badSig, good.archive, connect.CodePermissionDenied, []string{"signatures", alice.id, "does not verify"}},
		{"a flipped byte in the envelope", badJSON, good.archive, connect.CodeInvalidArgument, []string{"header.envelope"}},
		{"an unknown key", signed(t, good.digest, stranger), good.archive, connect.CodePermissionDenied, []string{"signatures", stranger.id, "not known"}},
		{"a revoked key", signed(t, good.digest, gone), good.archive, connect.CodePermissionDenied, []string{"signatures", gone.id, "revoked"}},
		{"a publisher not allowed in the scope", signed(t, good.digest, mallory), good.archive, connect.CodePermissionDenied, []string{"signatures", mallory.id, "may not publish"}},
		{"a scope nobody put", signed(t, scopeless.digest, alice), scopeless.archive, connect.CodePermissionDenied, []string{"signatures", `scope "nobody" admits nobody`}},
		{"one signature of two", signed(t, bank.digest, alice), bank.archive, connect.CodePermissionDenied, []string{"signatures", "1 of the 2"}},
		{"two signatures by one key", signed(t, bank.digest, alice, alice), bank.archive, connect.CodePermissionDenied, []string{"signatures", "1 of the 2"}},
		{"no header", nil, good.archive, connect.CodeInvalidArgument, []string{"header"}},
		{"no envelope", []byte{}, good.archive, connect.CodeInvalidArgument, []string{"header.envelope: required"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var err error
			if tc.env == nil {
				st, serr := l.admin.Publish(t.Context())
				if serr != nil {
					t.Fatal(serr)
				}
				_ = st.Send(&boardv1.PublishRequest{Part: &boardv1.PublishRequest_Chunk{Chunk: tc.archive}})
				_, err = st.CloseAndReceive()
			} else {
				_, err = publish(t.Context(), l.admin, tc.env, tc.archive, 0)
			}
			refused(t, tc.name, err, tc.code, tc.words...)
		})
	}
	for _, name := range []string{"acme/hello", "nobody/hello", "bank/hello"} {
		_, err := l.admin.GetPackage(t.Context(), &boardv1.GetPackageRequest{Name: name})
		refused(t, "GetPackage "+name+" after refusals", err, connect.CodeNotFound)
	}
	if n, err := l.bt.Store.PackageChunk.Query().Count(t.Context()); err != nil || n != 0 {
		t.Fatalf("chunks after refusals = %d, %v; want none", n, err)
	}

	// Two keys of the scope's publishers reach the threshold of 2.
	res := l.publishOK(bank, alice, bob)
	if !res.GetCreated() || len(res.GetVersion().GetSigners()) != 2 {
		t.Fatalf("two signatures = %v, want created with two signers", res)
	}
	// And the good one passes every gate.
	if res := l.publishOK(good, alice); !res.GetCreated() {
		t.Fatalf("good = %v", res)
	}
	if left := spooled(t, l.bt); len(left) != 0 {
		t.Errorf("spool folder holds %v after the publishes", left)
	}
}

// TestLibrarySizeLimit: an archive of exactly the board's limit is taken;
// one byte over is refused as resource_exhausted, before it is read.
func TestLibrarySizeLimit(t *testing.T) {
	t.Parallel()
	p := buildPkg(t, "acme/hello", "1.0.0", "# hello\n", nil)
	size := int64(len(p.archive))
	alice := newSigner(t)

	at := newLibrary(t, boardtest.Options{Limits: limitsWithPackageBytes(size)})
	at.trustKey("alice", alice)
	at.putScope("acme", 1, "alice")
	if res := at.publishOK(p, alice); !res.GetCreated() {
		t.Fatalf("at the limit: %v", res)
	}

	under := newLibrary(t, boardtest.Options{Limits: limitsWithPackageBytes(size - 1)})
	under.trustKey("alice", alice)
	under.putScope("acme", 1, "alice")
	_, err := publish(t.Context(), under.admin, signed(t, p.digest, alice), p.archive, 0)
	refused(t, "one byte over", err, connect.CodeResourceExhausted, "header.size", "at most")

	// A header that says less than is sent is caught as it arrives.
	_, err = publishSized(t.Context(), at.admin, signed(t, p.digest, alice), p.archive, size-1, 0)
	refused(t, "more than declared", err, connect.CodeInvalidArgument, "chunk", "more than")
	_, err = publishSized(t.Context(), at.admin, signed(t, p.digest, alice), p.archive[:size-1], size, 0)
	refused(t, "less than declared", err, connect.CodeInvalidArgument, "chunk", "ended after")
	_, err = publishSized(t.Context(), at.admin, signed(t, p.digest, alice), p.archive, 0, 0)
	refused(t, "size 0", err, connect.CodeInvalidArgument, "header.size")
}

// TestLibraryAccess: a viewer lists but cannot publish or yank; an agent
// token downloads but cannot publish or list.
func TestLibraryAccess(t *testing.T) {
	t.Parallel()
	l := newLibrary(t, boardtest.Options{})
	alice := newSigner(t)
	l.trustKey("alice", alice)
	l.putScope("acme", 1, "alice")
	p := buildPkg(t, "acme/hello", "1.0.0", "# hello\n", nil)
	l.publishOK(p, alice)

	viewer := packagesClient(l.bt, l.bt.OperatorToken("vera", identity.RoleViewer))
	_, err := publish(t.Context(), viewer, signed(t, p.digest, alice), p.archive, 0)
	refused(t, "viewer publishes", err, connect.CodePermissionDenied)
	_, err = viewer.Yank(t.Context(), &boardv1.YankRequest{Name: p.name, Version: p.version, Reason: "no"})
	refused(t, "viewer yanks", err, connect.CodePermissionDenied)
	if _, err := viewer.ListPackages(t.Context(), &boardv1.ListPackagesRequest{}); err != nil {
		t.Fatalf("viewer lists: %v", err)
	}

	agent := packagesClient(l.bt, l.bt.AgentToken("desk"))
	if _, data, err := download(t.Context(), agent, &boardv1.DownloadRequest{Name: p.name}); err != nil || !bytes.Equal(data, p.archive) {
		t.Fatalf("agent downloads: %v", err)
	}
	_, err = publish(t.Context(), agent, signed(t, p.digest, alice), p.archive, 0)
	refused(t, "agent publishes", err, connect.CodeUnauthenticated)
	_, err = agent.ListPackages(t.Context(), &boardv1.ListPackagesRequest{})
	refused(t, "agent lists", err, connect.CodeUnauthenticated)
}

// TestLibraryDownloadFields: every field of a download is checked and
// named, and a version the library does not hold is not_found.
func TestLibraryDownloadFields(t *testing.T) {
	t.Parallel()
	l := newLibrary(t, boardtest.Options{})
	alice := newSigner(t)
	l.trustKey("alice", alice)
	l.putScope("acme", 1, "alice")
	p := buildPkg(t, "acme/hello", "1.0.0", "# hello\n", nil)
	l.publishOK(p, alice)
	missing := "sha256:" + strings.Repeat("0", 64)
	for _, tc := range []struct {
		req   *boardv1.DownloadRequest
		code  connect.Code
		words []string
	}{
		{&boardv1.DownloadRequest{}, connect.CodeInvalidArgument, []string{"name: required"}},
		{&boardv1.DownloadRequest{Name: "Acme/Hello"}, connect.CodeInvalidArgument, []string{"name:"}},
		{&boardv1.DownloadRequest{Name: "acme/hello", Version: "1.0"}, connect.CodeInvalidArgument, []string{"version:"}},
		{&boardv1.DownloadRequest{Version: "1.0.0"}, connect.CodeInvalidArgument, []string{"name: required"}},
		{&boardv1.DownloadRequest{Digest: "sha256:ABC"}, connect.CodeInvalidArgument, []string{"digest:"}},
		{&boardv1.DownloadRequest{Digest: p.digest, Name: "acme/other"}, connect.CodeInvalidArgument, []string{"name:", "acme/hello"}},
		{&boardv1.DownloadRequest{Digest: p.digest, Version: "2.0.0"}, connect.CodeInvalidArgument, []string{"version:"}},
		{&boardv1.DownloadRequest{Digest: missing}, connect.CodeNotFound, []string{missing}},
		{&boardv1.DownloadRequest{Name: "acme/other"}, connect.CodeNotFound, []string{"acme/other"}},
		{&boardv1.DownloadRequest{Name: "acme/hello", Version: "2.0.0"}, connect.CodeNotFound, []string{"acme/hello@2.0.0"}},
	} {
		_, _, err := download(t.Context(), l.admin, tc.req)
		refused(t, tc.req.String(), err, tc.code, tc.words...)
	}
}

func limitsWithPackageBytes(n int64) (l board.Limits) {
	l.PackageBytes = n
	return l
}
