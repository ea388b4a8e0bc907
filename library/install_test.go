package library_test

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"errors"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"connectrpc.com/connect/v2"

	boardv1 "github.com/symphonix/symphonix/api/symphonix/board/v1"
	"github.com/symphonix/symphonix/api/symphonix/board/v1/boardv1connect"
	"github.com/symphonix/symphonix/identity"
	"github.com/symphonix/symphonix/internal/boardtest"
	"github.com/symphonix/symphonix/library"
	"github.com/symphonix/symphonix/packages"
)

// shelf is a real board whose library trusts one publisher in scope acme.
type shelf struct {
	board *boardtest.Board
	admin boardv1connect.PackageServiceClient
	// agent is the client an installing agent uses: an agent token.
	agent boardv1connect.PackageServiceClient
}

// newShelf starts a board, and has its admin put scope acme for
// publisher acme-team (threshold 1).
func newShelf(t *testing.T) *shelf {
	t.Helper()
	b := boardtest.Start(t, boardtest.Options{})
	s := &shelf{
		board: b,
		admin: boardv1connect.NewPackageServiceClient(b.Client(b.OperatorToken("admin", identity.RoleAdmin))),
	}
	var err error
	s.agent, err = library.Dial(b.URL, b.AgentToken("hello"), nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.admin.PutScope(t.Context(), &boardv1.PutScopeRequest{Name: "acme", Publishers: []string{"acme-team"}, Threshold: 1}); err != nil {
		t.Fatalf("PutScope: %v", err)
	}
	return s
}

// trust has the board trust p's key for acme-team.
func (s *shelf) trust(t *testing.T, pub ed25519.PublicKey) {
	t.Helper()
	if _, err := s.admin.AddKey(t.Context(), &boardv1.AddKeyRequest{PublicKey: packages.FormatPublicKey(pub), Publisher: "acme-team"}); err != nil {
		t.Fatalf("AddKey: %v", err)
	}
}

// publish uploads p, signed by its key, which the board is made to trust.
func (s *shelf) publish(t *testing.T, p *built) {
	t.Helper()
	s.trust(t, p.pub)
	stream, err := s.admin.Publish(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if err := stream.Send(&boardv1.PublishRequest{Part: &boardv1.PublishRequest_Header{Header: &boardv1.PublishHeader{Envelope: p.envelope, Size: int64(len(p.archive))}}}); err != nil {
		t.Fatal(err)
	}
	for rest := p.archive; len(rest) > 0; {
		n := min(len(rest), 256<<10)
		if err := stream.Send(&boardv1.PublishRequest{Part: &boardv1.PublishRequest_Chunk{Chunk: rest[:n]}}); err != nil {
			t.Fatal(err)
		}
		rest = rest[n:]
	}
	res, err := stream.CloseAndReceive()
	if err != nil {
		t.Fatalf("Publish %s@%s: %v", p.manifest.Name, p.manifest.Version, err)
	}
	if res.GetVersion().GetDigest() != p.digest {
		t.Fatalf("Publish: the library holds %s, want %s", res.GetVersion().GetDigest(), p.digest)
	}
}

// tree is every file under dir (path → content), .symphonix/ left out.
func tree(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		if d.IsDir() {
			if rel == ".symphonix" {
				return filepath.SkipDir
			}
			return nil
		}
		data, err := os.ReadFile(p)
		out[filepath.ToSlash(rel)] = string(data)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// noLeftovers fails if parent holds anything but want: no download, no
// half-unpacked folder.
func noLeftovers(t *testing.T, parent string, want ...string) {
	t.Helper()
	entries, err := os.ReadDir(parent)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	if strings.Join(names, ",") != strings.Join(want, ",") {
		t.Errorf("%s holds %q, want %q", parent, names, want)
	}
}

// TestInstallFromTheLibrary: a published agent package installs into a
// new folder whose files are the package's, whose record Installed reads
// back, and nothing else is left beside it; by name alone the newest
// version comes, and a pinned digest is honoured.
func TestInstallFromTheLibrary(t *testing.T) {
	t.Parallel()
	s := newShelf(t)
	p := buildPackage(t, "acme/hello", "1.0.0", agentFiles)
	s.publish(t, p)

	parent := t.TempDir()
	dir := filepath.Join(parent, "hello")
	in, err := library.Install(t.Context(), s.agent, library.Ref{Name: "acme/hello", Version: "1.0.0"}, dir, library.Options{Digest: p.digest})
	if err != nil {
		t.Fatalf("Install: %v", err)
	}
	if in.Name != "acme/hello" || in.Version != "1.0.0" || in.Digest != p.digest || in.Dir != dir || in.Kind != packages.KindAgent ||
		len(in.Signers) != 1 || in.Signers[0] != packages.KeyID(p.pub) {
		t.Errorf("Install = %+v, want acme/hello 1.0.0 %s in %s signed by its key", in, p.digest, dir)
	}
	got := tree(t, dir)
	if len(got) != len(agentFiles) {
		t.Errorf("installed files %v, want %v", got, agentFiles)
	}
	for path, body := range agentFiles {
		if got[path] != body {
			t.Errorf("installed %s = %q, want %q", path, got[path], body)
		}
	}
	rec, err := packages.Installed(dir)
	if err != nil || rec.Name != "acme/hello" || rec.Version != "1.0.0" || rec.Digest != p.digest || rec.Template {
		t.Errorf("Installed = %+v, %v; want acme/hello 1.0.0 %s", rec, err, p.digest)
	}
	noLeftovers(t, parent, "hello")

	// By name alone: the newest version that is not yanked.
	newer := buildPackage(t, "acme/hello", "1.1.0", map[string]string{"flow.json": helloFlow, "README.md": "# hello, again\n"})
	s.publish(t, newer)
	in, err = library.Install(t.Context(), s.agent, library.Ref{Name: "acme/hello"}, filepath.Join(parent, "newest"), library.Options{})
	if err != nil || in.Version != "1.1.0" || in.Digest != newer.digest {
		t.Errorf("Install acme/hello = %+v, %v; want 1.1.0", in, err)
	}

	// Yanked: not by its version, still by its digest.
	if _, err := s.admin.Yank(t.Context(), &boardv1.YankRequest{Name: "acme/hello", Version: "1.1.0", Reason: "a bad greeting"}); err != nil {
		t.Fatalf("Yank: %v", err)
	}
	_, err = library.Install(t.Context(), s.agent, library.Ref{Name: "acme/hello", Version: "1.1.0"}, filepath.Join(parent, "yanked"), library.Options{})
	var be *library.BoardError
	if !errors.As(err, &be) || be.Code != connect.CodeFailedPrecondition {
		t.Errorf("Install of a yanked version by its version = %v, want the board's failed_precondition", err)
	}
	in, err = library.Install(t.Context(), s.agent, library.Ref{Name: "acme/hello", Version: "1.1.0"}, filepath.Join(parent, "pinned"), library.Options{Digest: newer.digest})
	if err != nil || in.Digest != newer.digest {
		t.Errorf("Install of a yanked version by its digest = %+v, %v; want it installed", in, err)
	}
	if in, err := library.Install(t.Context(), s.agent, library.Ref{Name: "acme/hello"}, filepath.Join(parent, "latest"), library.Options{}); err != nil || in.Version != "1.0.0" {
		t.Errorf("Install acme/hello once 1.1.0 is yanked = %+v, %v; want 1.0.0", in, err)
	}
	noLeftovers(t, parent, "hello", "latest", "newest", "pinned")
}

// TestInstallRefusals: what an install refuses, against a real board:
// each leaves no folder and no download behind, and says which check or
// which cause.
func TestInstallRefusals(t *testing.T) {
	t.Parallel()
	s := newShelf(t)
	p := buildPackage(t, "acme/hello", "1.0.0", agentFiles)
	s.publish(t, p)
	other := buildPackage(t, "acme/hello", "9.9.9", agentFiles)
	ref := library.Ref{Name: "acme/hello", Version: "1.0.0"}

	t.Run("a pinned digest that is not the package's", func(t *testing.T) {
		parent := t.TempDir()
		_, err := library.Install(t.Context(), s.agent, library.Ref{Name: "acme/hello"}, filepath.Join(parent, "hello"), library.Options{Digest: other.digest})
		// The board holds no version with that digest: it says so, and
		// nothing is written.
		if err == nil {
			t.Fatal("Install with another package's digest pinned: installed")
		}
		noLeftovers(t, parent)
	})
	t.Run("an existing folder", func(t *testing.T) {
		parent := t.TempDir()
		dir := filepath.Join(parent, "hello")
		if err := os.Mkdir(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		mine := filepath.Join(dir, "mine.txt")
		if err := os.WriteFile(mine, []byte("mine"), 0o644); err != nil {
			t.Fatal(err)
		}
		_, err := library.Install(t.Context(), s.agent, ref, dir, library.Options{})
		if err == nil || !strings.Contains(err.Error(), "exists") {
			t.Errorf("Install into an existing folder = %v, want refused as existing", err)
		}
		if got := tree(t, dir); len(got) != 1 || got["mine.txt"] != "mine" {
			t.Errorf("the existing folder now holds %v, want it untouched", got)
		}
		noLeftovers(t, parent, "hello")
	})
	t.Run("a version the library does not hold", func(t *testing.T) {
		parent := t.TempDir()
		_, err := library.Install(t.Context(), s.agent, library.Ref{Name: "acme/hello", Version: "3.0.0"}, filepath.Join(parent, "hello"), library.Options{})
		var be *library.BoardError
		if !errors.As(err, &be) || be.Code != connect.CodeNotFound {
			t.Errorf("Install of a version not published = %v, want the board's not_found", err)
		}
		noLeftovers(t, parent)
	})
	t.Run("an archive over the limit", func(t *testing.T) {
		parent := t.TempDir()
		size := int64(len(p.archive))
		_, err := library.Install(t.Context(), s.agent, ref, filepath.Join(parent, "hello"), library.Options{Limits: packages.Limits{MaxArchiveBytes: size - 1}})
		if library.CheckOf(err) != library.CheckArchive {
			t.Errorf("Install of an archive one byte over the limit = %v, want refused by the archive check", err)
		}
		noLeftovers(t, parent)
		if _, err := library.Install(t.Context(), s.agent, ref, filepath.Join(parent, "hello"), library.Options{Limits: packages.Limits{MaxArchiveBytes: size}}); err != nil {
			t.Errorf("Install of an archive of exactly the limit: %v", err)
		}
	})
	t.Run("a template", func(t *testing.T) {
		tmpl := buildPackage(t, "acme/greeter", "1.0.0", templateFiles)
		s.publish(t, tmpl)
		parent := t.TempDir()
		_, err := library.Install(t.Context(), s.agent, library.Ref{Name: "acme/greeter"}, filepath.Join(parent, "greeter"), library.Options{})
		if library.CheckOf(err) != library.CheckKind || !strings.Contains(err.Error(), "agent instantiate") {
			t.Errorf("Install of a template = %v, want the kind check naming agent instantiate", err)
		}
		noLeftovers(t, parent)
	})
	// Last, as it changes the board's trust: once its key is revoked, the
	// version published before is no longer installed.
	t.Run("the signer's key revoked", func(t *testing.T) {
		if _, err := s.admin.RevokeKey(t.Context(), &boardv1.RevokeKeyRequest{KeyId: packages.KeyID(p.pub), Reason: "the laptop was stolen"}); err != nil {
			t.Fatalf("RevokeKey: %v", err)
		}
		parent := t.TempDir()
		_, err := library.Install(t.Context(), s.agent, ref, filepath.Join(parent, "hello"), library.Options{})
		if library.CheckOf(err) != library.CheckSignature || !strings.Contains(err.Error(), "signature check") {
			t.Errorf("Install signed by a revoked key = %v, want refused by the signature check", err)
		}
		noLeftovers(t, parent)
	})
}

// TestInstantiateFromTheLibrary: a template fills its parameters (the
// default where none is given), its record names the template package,
// and a missing parameter or an agent package is refused, leaving
// nothing.
func TestInstantiateFromTheLibrary(t *testing.T) {
	t.Parallel()
	s := newShelf(t)
	tmpl := buildPackage(t, "acme/greeter", "2.0.0", templateFiles)
	s.publish(t, tmpl)
	agent := buildPackage(t, "acme/hello", "1.0.0", agentFiles)
	s.publish(t, agent)

	parent := t.TempDir()
	dir := filepath.Join(parent, "front-desk")
	in, err := library.Instantiate(t.Context(), s.agent, library.Ref{Name: "acme/greeter", Version: "2.0.0"}, dir, map[string]string{"agent_name": "front-desk"}, library.Options{})
	if err != nil {
		t.Fatalf("Instantiate: %v", err)
	}
	if in.Name != "acme/greeter" || in.Digest != tmpl.digest || in.Kind != packages.KindTemplate {
		t.Errorf("Instantiate = %+v, want acme/greeter %s", in, tmpl.digest)
	}
	flowJSON, err := os.ReadFile(filepath.Join(dir, "flow.json"))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(flowJSON, []byte(`"name":"front-desk"`)) && !bytes.Contains(flowJSON, []byte(`"name": "front-desk"`)) || !bytes.Contains(flowJSON, []byte("warm greeting")) {
		t.Errorf("the filled flow = %s, want its name front-desk and the warm tone", flowJSON)
	}
	if _, err := os.Stat(filepath.Join(dir, "template.json")); !os.IsNotExist(err) {
		t.Errorf("template.json in the new folder: %v", err)
	}
	rec, err := packages.Installed(dir)
	if err != nil || rec.Name != "acme/greeter" || rec.Version != "2.0.0" || rec.Digest != tmpl.digest || !rec.Template || rec.Params["agent_name"] != "front-desk" {
		t.Errorf("Installed = %+v, %v; want the template package with its parameters", rec, err)
	}
	noLeftovers(t, parent, "front-desk")

	other := t.TempDir()
	_, err = library.Instantiate(t.Context(), s.agent, library.Ref{Name: "acme/greeter"}, filepath.Join(other, "x"), nil, library.Options{})
	if packages.ReasonOf(err) != packages.ReasonInvalidTemplate || !strings.Contains(err.Error(), "agent_name") {
		t.Errorf("Instantiate without agent_name = %v, want invalid_template naming agent_name", err)
	}
	_, err = library.Instantiate(t.Context(), s.agent, library.Ref{Name: "acme/hello"}, filepath.Join(other, "y"), nil, library.Options{})
	if library.CheckOf(err) != library.CheckKind || !strings.Contains(err.Error(), "agent install") {
		t.Errorf("Instantiate of an agent package = %v, want the kind check naming agent install", err)
	}
	noLeftovers(t, other)
}

// TestDownloadGivesUpOnSilence: a board that accepts the connection and
// then says nothing is given up once Silence has passed, saying so, and
// nothing is left beside the target.
func TestDownloadGivesUpOnSilence(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	var held []net.Conn
	var mu sync.Mutex
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			held = append(held, c) // read nothing, answer nothing
			mu.Unlock()
		}
	}()
	t.Cleanup(func() {
		mu.Lock()
		defer mu.Unlock()
		for _, c := range held {
			c.Close()
		}
	})
	client, err := library.Dial("http://"+ln.Addr().String(), "a.b.c", nil)
	if err != nil {
		t.Fatal(err)
	}
	parent := t.TempDir()
	start := time.Now()
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	_, err = library.Install(ctx, client, library.Ref{Name: "acme/hello"}, filepath.Join(parent, "hello"), library.Options{Silence: 300 * time.Millisecond})
	var be *library.BoardError
	if !errors.As(err, &be) || be.Code != connect.CodeDeadlineExceeded || !strings.Contains(err.Error(), "sent nothing for 300ms") {
		t.Errorf("Install from a silent board = %v, want given up after 300ms of silence", err)
	}
	if took := time.Since(start); took > 30*time.Second {
		t.Errorf("Install from a silent board took %s", took)
	}
	noLeftovers(t, parent)
}
