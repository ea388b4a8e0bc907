package library_test

import (
	"bytes"
	"crypto/ed25519"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"

	boardv1 "github.com/symphonix/symphonix/api/symphonix/board/v1"
	"github.com/symphonix/symphonix/library"
	"github.com/symphonix/symphonix/packages"
)

// helloFlow is a small valid flow the stand-in model can run.
const helloFlow = `{
  "version": "0.17",
  "name": "hello",
  "description": "Greets whoever it is handed.",
  "inputs": ["who"],
  "outputs": ["greeting"],
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

// templateFlow is helloFlow with two parameters.
const templateFlow = `{
  "version": "0.17",
  "name": "{{params.agent_name}}",
  "description": "Greets in the {{params.tone}} tone.",
  "inputs": ["who"],
  "outputs": ["greeting"],
  "state": {
    "who": { "type": "string" },
    "greeting": { "type": "string" }
  },
  "nodes": [
    { "id": "greet", "type": "llm", "output": "greeting", "prompt": "Write a {{params.tone}} greeting for {{who}}." }
  ],
  "edges": [ { "from": "greet", "to": "END" } ],
  "start": "greet"
}
`

const templateJSON = `{"parameters": [
  {"name": "agent_name", "type": "string", "description": "The agent's name."},
  {"name": "tone", "type": "string", "description": "How it greets.", "default": "warm"}
]}`

// built is one package built and signed in a test's folder.
type built struct {
	archive  []byte
	digest   string
	manifest *packages.Manifest
	envelope []byte
	pub      ed25519.PublicKey
	priv     ed25519.PrivateKey
	src      string // the folder it was built from
}

// writeTree writes files (path → content) under dir.
func writeTree(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for p, body := range files {
		full := filepath.Join(dir, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// agentFiles are the files of the agent package the tests install.
var agentFiles = map[string]string{
	"flow.json":         helloFlow,
	"README.md":         "# hello\n",
	"prompts/greet.txt": "Be kind.\n",
}

// templateFiles are the files of the template package.
var templateFiles = map[string]string{
	"flow.json":     templateFlow,
	"template.json": templateJSON,
	"README.md":     "# a greeter template\n",
}

// buildPackage builds files as name@version and signs it with a new key.
func buildPackage(t *testing.T, name, version string, files map[string]string) *built {
	t.Helper()
	src := t.TempDir()
	writeTree(t, src, files)
	var b bytes.Buffer
	m, err := packages.Build(src, packages.Meta{Name: name, Version: version}, &b, packages.Limits{})
	if err != nil {
		t.Fatalf("Build: %v", err)
	}
	digest, err := m.Digest()
	if err != nil {
		t.Fatal(err)
	}
	pub, priv, err := packages.NewKey()
	if err != nil {
		t.Fatal(err)
	}
	return &built{archive: b.Bytes(), digest: digest, manifest: m, envelope: sign(t, digest, priv), pub: pub, priv: priv, src: src}
}

// sign is the envelope of digest signed by priv, as JSON.
func sign(t *testing.T, digest string, priv ed25519.PrivateKey) []byte {
	t.Helper()
	env, err := packages.Sign(digest, priv, packages.KeyID(priv.Public().(ed25519.PublicKey)))
	if err != nil {
		t.Fatal(err)
	}
	data, err := json.Marshal(env)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// head is the head a board would send for p, its scope trusting p's key.
func (p *built) head() *boardv1.DownloadHead {
	scope, _, _ := strings.Cut(p.manifest.Name, "/")
	return &boardv1.DownloadHead{
		Version: &boardv1.PackageVersion{
			Name: p.manifest.Name, Version: p.manifest.Version, Digest: p.digest, Kind: string(p.manifest.Kind),
			Size: int64(len(p.archive)), Files: int32(len(p.manifest.Files)),
		},
		Envelope: p.envelope,
		Trust: &boardv1.Trust{Scope: scope, Threshold: 1, Keys: []*boardv1.PublisherKey{
			{KeyId: packages.KeyID(p.pub), PublicKey: packages.FormatPublicKey(p.pub), Publisher: "acme-team"},
		}},
	}
}

// TestVerifyChecks: a download passes only when every check holds, and
// each refusal names the check that failed.
func TestVerifyChecks(t *testing.T) {
	t.Parallel()
	p := buildPackage(t, "acme/hello", "1.0.0", agentFiles)
	other := buildPackage(t, "acme/hello", "1.0.1", map[string]string{"flow.json": helloFlow, "README.md": "another\n"})
	tmpl := buildPackage(t, "acme/greeter", "2.0.0", templateFiles)
	ref := library.Ref{Name: "acme/hello", Version: "1.0.0"}

	got, err := library.Verify(p.head(), bytes.NewReader(p.archive), ref, packages.KindAgent, "", packages.Limits{})
	if err != nil {
		t.Fatalf("Verify of a good download: %v", err)
	}
	if got.Name != "acme/hello" || got.Version != "1.0.0" || got.Digest != p.digest || got.Kind != packages.KindAgent ||
		len(got.Signers) != 1 || got.Signers[0] != packages.KeyID(p.pub) {
		t.Errorf("Verify = %+v, want acme/hello 1.0.0 %s signed by %s", got, p.digest, packages.KeyID(p.pub))
	}
	if _, err := library.Verify(p.head(), bytes.NewReader(p.archive), library.Ref{Name: "acme/hello"}, packages.KindAgent, p.digest, packages.Limits{}); err != nil {
		t.Errorf("Verify with no version asked and the right pin: %v", err)
	}

	_, stranger, _ := packages.NewKey()
	tampered := bytes.Clone(p.archive)
	tampered[len(tampered)/2] ^= 0xff

	for _, c := range []struct {
		name    string
		edit    func(h *boardv1.DownloadHead)
		archive []byte
		ref     library.Ref
		kind    packages.Kind
		pin     string
		check   library.Check
		want    string
	}{
		{name: "a tampered byte", archive: tampered, check: library.CheckArchive, want: "package refused"},
		{name: "another package's archive under this record", archive: other.archive, check: library.CheckVersion, want: "the archive holds acme/hello@1.0.1"},
		{name: "the record names another digest", edit: func(h *boardv1.DownloadHead) { h.Version.Digest = other.digest }, check: library.CheckDigest, want: "not the board's record"},
		{name: "the pin is another digest", pin: other.digest, check: library.CheckDigest, want: "not the digest pinned"},
		{name: "the record names another version", edit: func(h *boardv1.DownloadHead) { h.Version.Version = "1.0.1" }, check: library.CheckVersion, want: "the board sent acme/hello@1.0.1, not acme/hello@1.0.0"},
		{name: "another version than asked", ref: library.Ref{Name: "acme/hello", Version: "2.0.0"}, check: library.CheckVersion, want: "not acme/hello@2.0.0"},
		{name: "the record says template", edit: func(h *boardv1.DownloadHead) { h.Version.Kind = "template" }, check: library.CheckKind, want: "agent instantiate"},
		{name: "no key of the scope signed", edit: func(h *boardv1.DownloadHead) {
			pub := stranger.Public().(ed25519.PublicKey)
			h.Trust.Keys = []*boardv1.PublisherKey{{KeyId: packages.KeyID(pub), PublicKey: packages.FormatPublicKey(pub)}}
		}, check: library.CheckSignature, want: "by keys not trusted"},
		{name: "the key revoked", edit: func(h *boardv1.DownloadHead) { h.Trust.Keys[0].Revoked = &boardv1.Revoked{By: "admin", Reason: "lost"} }, check: library.CheckSignature, want: "0 of 1 trusted signatures"},
		{name: "the scope has no keys", edit: func(h *boardv1.DownloadHead) { h.Trust.Keys = nil }, check: library.CheckSignature, want: "0 of 1"},
		{name: "a threshold of two", edit: func(h *boardv1.DownloadHead) { h.Trust.Threshold = 2 }, check: library.CheckSignature, want: "1 of 2 trusted signatures"},
		{name: "a threshold of zero", edit: func(h *boardv1.DownloadHead) { h.Trust.Threshold = 0 }, check: library.CheckSignature, want: "admits nobody"},
		{name: "the trust of another scope", edit: func(h *boardv1.DownloadHead) { h.Trust.Scope = "evil" }, check: library.CheckSignature, want: `scope "evil", not of "acme"`},
		{name: "no trust", edit: func(h *boardv1.DownloadHead) { h.Trust = nil }, check: library.CheckSignature, want: "no trust"},
		{name: "a key id not of its bytes", edit: func(h *boardv1.DownloadHead) {
			pub := stranger.Public().(ed25519.PublicKey)
			h.Trust.Keys[0].PublicKey = packages.FormatPublicKey(pub)
		}, check: library.CheckSignature, want: "its id is not that of its bytes"},
		{name: "an envelope for another package", edit: func(h *boardv1.DownloadHead) { h.Envelope = sign(t, other.digest, p.priv) }, check: library.CheckSignature, want: "signs another package"},
		{name: "a forged signature", edit: func(h *boardv1.DownloadHead) { h.Envelope = sign(t, p.digest, stranger) }, check: library.CheckSignature, want: "not trusted"},
		{name: "no envelope", edit: func(h *boardv1.DownloadHead) { h.Envelope = nil }, check: library.CheckSignature, want: "not a signature envelope"},
		{name: "no record", edit: func(h *boardv1.DownloadHead) { h.Version = nil }, check: library.CheckVersion, want: "no record"},
	} {
		t.Run(c.name, func(t *testing.T) {
			h := proto.Clone(p.head()).(*boardv1.DownloadHead)
			if c.edit != nil {
				c.edit(h)
			}
			archive, r, kind := p.archive, ref, packages.KindAgent
			if c.archive != nil {
				archive = c.archive
			}
			if c.ref.Name != "" {
				r = c.ref
			}
			if c.kind != "" {
				kind = c.kind
			}
			_, err := library.Verify(h, bytes.NewReader(archive), r, kind, c.pin, packages.Limits{})
			if library.CheckOf(err) != c.check || !strings.Contains(err.Error(), c.want) {
				t.Errorf("Verify = %v (check %q), want the %s check refusing with %q", err, library.CheckOf(err), c.check, c.want)
			}
		})
	}

	// The kinds: a template is not installed, an agent not instantiated.
	tref := library.Ref{Name: "acme/greeter"}
	if _, err := library.Verify(tmpl.head(), bytes.NewReader(tmpl.archive), tref, packages.KindAgent, "", packages.Limits{}); library.CheckOf(err) != library.CheckKind || !strings.Contains(err.Error(), "agent instantiate") {
		t.Errorf("Verify of a template for install = %v, want the kind check naming agent instantiate", err)
	}
	if _, err := library.Verify(p.head(), bytes.NewReader(p.archive), ref, packages.KindTemplate, "", packages.Limits{}); library.CheckOf(err) != library.CheckKind || !strings.Contains(err.Error(), "agent install") {
		t.Errorf("Verify of an agent for instantiate = %v, want the kind check naming agent install", err)
	}
	// A record that lies about the kind is caught by the manifest.
	h := tmpl.head()
	h.Version.Kind = "agent"
	if _, err := library.Verify(h, bytes.NewReader(tmpl.archive), tref, packages.KindAgent, "", packages.Limits{}); library.CheckOf(err) != library.CheckVersion {
		t.Errorf("Verify of a template the record calls an agent = %v, want the version check", err)
	}
}

// TestParseRef: scope/name with an optional @version, each checked.
func TestParseRef(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]library.Ref{
		"acme/hello":             {Name: "acme/hello"},
		"acme/hello@1.0.0":       {Name: "acme/hello", Version: "1.0.0"},
		"acme/hello@1.0.0-rc.1":  {Name: "acme/hello", Version: "1.0.0-rc.1"},
		"acme/hello@1.2.3+build": {Name: "acme/hello", Version: "1.2.3+build"},
	} {
		if got, err := library.ParseRef(in); err != nil || got != want {
			t.Errorf("ParseRef(%q) = %+v, %v; want %+v", in, got, err, want)
		}
	}
	for _, in := range []string{"", "hello", "acme/", "/hello", "Acme/hello", "acme/hello@", "acme/hello@v1.0.0", "acme/hello@1.0", "acme/hello/x", "../hello"} {
		if _, err := library.ParseRef(in); err == nil {
			t.Errorf("ParseRef(%q) accepted", in)
		}
	}
}
