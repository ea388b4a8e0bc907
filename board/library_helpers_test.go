package board_test

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"connectrpc.com/connect/v2"

	boardv1 "github.com/symphonix/symphonix/api/symphonix/board/v1"
	"github.com/symphonix/symphonix/api/symphonix/board/v1/boardv1connect"
	"github.com/symphonix/symphonix/identity"
	"github.com/symphonix/symphonix/internal/boardtest"
	"github.com/symphonix/symphonix/packages"
)

// libFlow is a small valid flow asking for one input, one secret and
// nothing else.
const libFlow = `{
  "version": "0.17",
  "name": "hello",
  "description": "Greets whoever it is handed.",
  "inputs": ["who"],
  "outputs": ["greeting"],
  "requires": {"env": ["GREETER_TOKEN"]},
  "state": {
    "who": { "type": "string" },
    "greeting": { "type": "string" }
  },
  "nodes": [
    { "id": "greet", "type": "llm", "output": "greeting", "prompt": "Write a one-line greeting for {{who}}." }
  ],
  "edges": [ { "from": "greet", "to": "END" } ],
  "start": "greet"
}
`

// pkg is one built package: its archive, digest and manifest.
type pkg struct {
	name, version string
	archive       []byte
	digest        string
}

// buildPkg builds name@version from a new agent folder whose README says
// readme (another readme, another digest), plus extra files.
func buildPkg(t testing.TB, name, version, readme string, extra map[string]string) pkg {
	t.Helper()
	dir := t.TempDir()
	files := map[string]string{"flow.json": libFlow, "README.md": readme}
	for p, body := range extra {
		files[p] = body
	}
	for p, body := range files {
		full := filepath.Join(dir, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	var b bytes.Buffer
	m, err := packages.Build(dir, packages.Meta{Name: name, Version: version}, &b, packages.Limits{})
	if err != nil {
		t.Fatalf("build %s@%s: %v", name, version, err)
	}
	d, err := m.Digest()
	if err != nil {
		t.Fatal(err)
	}
	return pkg{name: name, version: version, archive: b.Bytes(), digest: d}
}

// signer is a publisher's key pair.
type signer struct {
	pub  ed25519.PublicKey
	priv ed25519.PrivateKey
	id   string
}

func newSigner(t testing.TB) signer {
	t.Helper()
	pub, priv, err := packages.NewKey()
	if err != nil {
		t.Fatal(err)
	}
	return signer{pub: pub, priv: priv, id: packages.KeyID(pub)}
}

// signed is the JSON envelope of digest signed by each of signers.
func signed(t testing.TB, digest string, signers ...signer) []byte {
	t.Helper()
	var env packages.Envelope
	for i, s := range signers {
		e, err := packages.Sign(digest, s.priv, s.id)
		if err != nil {
			t.Fatal(err)
		}
		if i == 0 {
			env = e
		} else {
			env.Signatures = append(env.Signatures, e.Signatures...)
		}
	}
	data, err := json.Marshal(env)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// library is a board under test with an admin's PackageService client.
type library struct {
	t     testing.TB
	bt    *boardtest.Board
	admin boardv1connect.PackageServiceClient
}

func newLibrary(t testing.TB, opts boardtest.Options) *library {
	t.Helper()
	bt := boardtest.Start(t, opts)
	return &library{t: t, bt: bt, admin: packagesClient(bt, bt.OperatorToken("root", identity.RoleAdmin))}
}

// reconnect makes the admin client again, after a restart.
func (l *library) reconnect() {
	l.admin = packagesClient(l.bt, l.bt.OperatorToken("root", identity.RoleAdmin))
}

// trustKey trusts s's key as publisher's.
func (l *library) trustKey(publisher string, s signer) {
	l.t.Helper()
	_, err := l.admin.AddKey(l.t.Context(), &boardv1.AddKeyRequest{PublicKey: packages.FormatPublicKey(s.pub), Publisher: publisher})
	if err != nil {
		l.t.Fatalf("AddKey: %v", err)
	}
}

// putScope lets publishers publish in scope with threshold.
func (l *library) putScope(scope string, threshold int, publishers ...string) {
	l.t.Helper()
	_, err := l.admin.PutScope(l.t.Context(), &boardv1.PutScopeRequest{Name: scope, Publishers: publishers, Threshold: int32(threshold)})
	if err != nil {
		l.t.Fatalf("PutScope: %v", err)
	}
}

// revoke revokes s's key.
func (l *library) revoke(s signer) {
	l.t.Helper()
	_, err := l.admin.RevokeKey(l.t.Context(), &boardv1.RevokeKeyRequest{KeyId: s.id, Reason: "lost laptop"})
	if err != nil {
		l.t.Fatalf("RevokeKey: %v", err)
	}
}

// publish sends archive with env as one publish by c, in chunks of at
// most chunk bytes (0: 1 MiB).
func publish(ctx context.Context, c boardv1connect.PackageServiceClient, env, archive []byte, chunk int) (*boardv1.PublishResponse, error) {
	return publishSized(ctx, c, env, archive, int64(len(archive)), chunk)
}

// publishSized is publish with the header saying size.
func publishSized(ctx context.Context, c boardv1connect.PackageServiceClient, env, archive []byte, size int64, chunk int) (*boardv1.PublishResponse, error) {
	if chunk == 0 {
		chunk = 1 << 20
	}
	st, err := c.Publish(ctx)
	if err != nil {
		return nil, err
	}
	if err := st.Send(&boardv1.PublishRequest{Part: &boardv1.PublishRequest_Header{Header: &boardv1.PublishHeader{Envelope: env, Size: size}}}); err != nil && !errors.Is(err, io.EOF) {
		return nil, err
	}
	for len(archive) > 0 {
		n := min(chunk, len(archive))
		if err := st.Send(&boardv1.PublishRequest{Part: &boardv1.PublishRequest_Chunk{Chunk: archive[:n]}}); err != nil {
			if errors.Is(err, io.EOF) {
				break // the board answered early: CloseAndReceive says why
			}
			return nil, err
		}
		archive = archive[n:]
	}
	return st.CloseAndReceive()
}

// publishOK publishes p signed by signers and fails the test on an error.
func (l *library) publishOK(p pkg, signers ...signer) *boardv1.PublishResponse {
	l.t.Helper()
	res, err := publish(l.t.Context(), l.admin, signed(l.t, p.digest, signers...), p.archive, 0)
	if err != nil {
		l.t.Fatalf("publish %s@%s: %v", p.name, p.version, err)
	}
	return res
}

// download reads one version whole.
func download(ctx context.Context, c boardv1connect.PackageServiceClient, req *boardv1.DownloadRequest) (*boardv1.DownloadHead, []byte, error) {
	st, err := c.Download(ctx, req)
	if err != nil {
		return nil, nil, err
	}
	defer st.Close()
	var head *boardv1.DownloadHead
	var b bytes.Buffer
	for {
		msg, err := st.Receive()
		if errors.Is(err, io.EOF) {
			return head, b.Bytes(), nil
		}
		if err != nil {
			return nil, nil, err
		}
		if h := msg.GetHead(); h != nil {
			if head != nil || b.Len() > 0 {
				return nil, nil, errors.New("a second head, or a head after chunks")
			}
			head = h
			continue
		}
		if head == nil {
			return nil, nil, errors.New("a chunk before the head")
		}
		if n := len(msg.GetChunk()); n == 0 || n > 1<<20 {
			return nil, nil, errors.New("a chunk of 0 bytes or over 1 MiB")
		}
		b.Write(msg.GetChunk())
	}
}

// refused fails the test unless err is a connect error with code whose
// message holds every one of words.
func refused(t testing.TB, what string, err error, code connect.Code, words ...string) {
	t.Helper()
	if connect.CodeOf(err) != code {
		t.Fatalf("%s: got %v, want %s", what, err, code)
	}
	for _, w := range words {
		if !strings.Contains(err.Error(), w) {
			t.Fatalf("%s: %q does not say %q", what, err.Error(), w)
		}
	}
}

// spooled lists the files a publish left in the board's spool folder.
func spooled(t testing.TB, bt *boardtest.Board) []string {
	t.Helper()
	m, err := filepath.Glob(filepath.Join(bt.Dir, "publish-*"))
	if err != nil {
		t.Fatal(err)
	}
	return m
}
