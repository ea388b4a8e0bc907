package packages

import (
	"bytes"
	"crypto/ed25519"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestBuildScanRoundTrip(t *testing.T) {
	t.Parallel()
	data, m := build(t, agentDir(t))
	var paths []string
	for _, f := range m.Files {
		paths = append(paths, f.Path)
	}
	// .symphonix/, .env, .env.*, .packageignore and what it lists stay out.
	if want := []string{"README.md", "flow.json", "prompts/greet.txt"}; !slices.Equal(paths, want) {
		t.Errorf("Build files = %v, want %v", paths, want)
	}
	wantReq := Requires{MCP: []string{}, Inputs: []string{"who"}, Secrets: []string{"GREETER_TOKEN"}}
	if diff := cmp.Diff(wantReq, m.Requires); diff != "" {
		t.Errorf("Build requires (-want +got):\n%s", diff)
	}
	if m.Kind != KindAgent || m.DSLVersion != "0.17" || m.Description != "Greets whoever it is handed." {
		t.Errorf("Build manifest = %+v", m)
	}
	if bytes.Contains(data, []byte("s3cret")) {
		t.Error("the package holds the .env's secret")
	}
	p, err := Scan(bytes.NewReader(data), Limits{})
	if err != nil {
		t.Fatalf("Scan: %v", err)
	}
	if diff := cmp.Diff(*m, p.Manifest); diff != "" {
		t.Errorf("Scan manifest (-built +scanned):\n%s", diff)
	}
	d, _ := m.Digest()
	if p.Digest != d || p.ArchiveBytes != int64(len(data)) {
		t.Errorf("Scan digest %s, bytes %d; want %s, %d", p.Digest, p.ArchiveBytes, d, len(data))
	}
	if err := Verify(p, d); err != nil {
		t.Errorf("Verify(own digest): %v", err)
	}
	other := "sha256:" + string(bytes.Repeat([]byte("0"), 64))
	if err := Verify(p, other); ReasonOf(err) != ReasonDigestMismatch {
		t.Errorf("Verify(other digest) = %v, want %s", err, ReasonDigestMismatch)
	}
}

func TestBuildDeterministic(t *testing.T) {
	t.Parallel()
	a := agentDir(t)
	first, _ := build(t, a)
	// The same files elsewhere, written later with other modes and times.
	b := agentDir(t)
	old := time.Date(2001, 1, 1, 0, 0, 0, 0, time.UTC)
	for _, p := range []string{"flow.json", "README.md", "prompts/greet.txt"} {
		full := filepath.Join(b, p)
		if err := os.Chtimes(full, old, old); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(full, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	second, _ := build(t, b)
	if !bytes.Equal(first, second) {
		t.Errorf("two builds of the same files differ: %d and %d bytes", len(first), len(second))
	}
	// One byte more in one file makes another package.
	writeTree(t, b, map[string]string{"README.md": "# hello!\n"})
	if third, _ := build(t, b); bytes.Equal(first, third) {
		t.Error("a changed file built the same bytes")
	}
}

func TestBuildRefuses(t *testing.T) {
	t.Parallel()
	t.Run("symlink", func(t *testing.T) {
		t.Parallel()
		dir := agentDir(t)
		if err := os.Symlink("/etc/passwd", filepath.Join(dir, "passwd")); err != nil {
			t.Fatal(err)
		}
		_, err := Build(dir, Meta{Name: "acme/hello", Version: "1.0.0"}, &bytes.Buffer{}, Limits{})
		if ReasonOf(err) != ReasonSourceFile {
			t.Errorf("Build with a symlink = %v, want %s", err, ReasonSourceFile)
		}
	})
	t.Run("invalid flow", func(t *testing.T) {
		t.Parallel()
		dir := t.TempDir()
		writeTree(t, dir, map[string]string{"flow.json": `{"version":"0.17","nodes":[],"start":"x"}`})
		_, err := Build(dir, Meta{Name: "acme/hello", Version: "1.0.0"}, &bytes.Buffer{}, Limits{})
		if ReasonOf(err) != ReasonInvalidFlow {
			t.Errorf("Build of an invalid flow = %v, want %s", err, ReasonInvalidFlow)
		}
	})
	for _, meta := range []Meta{
		{Name: "hello", Version: "1.0.0"}, {Name: "Acme/hello", Version: "1.0.0"}, {Name: "acme/-x", Version: "1.0.0"},
		{Name: "acme/hello", Version: "1.0"}, {Name: "acme/hello", Version: "v1.0.0"}, {Name: "acme/hello", Version: "1.0.0-01"},
	} {
		if _, err := Build(agentDir(t), meta, &bytes.Buffer{}, Limits{}); err == nil {
			t.Errorf("Build(%+v) = nil error, want a refusal", meta)
		}
	}
}

func TestVersions(t *testing.T) {
	t.Parallel()
	for _, v := range []string{"0.0.0", "1.2.3", "10.20.30", "1.0.0-alpha", "1.0.0-alpha.1", "1.0.0-0.3.7", "1.0.0-x.7.z.92", "1.0.0+20130313144700", "1.0.0-beta+exp.sha.5114f85"} {
		if err := CheckVersion(v); err != nil {
			t.Errorf("CheckVersion(%q) = %v, want nil", v, err)
		}
	}
	for _, v := range []string{"", "1", "1.2", "1.2.3.4", "01.2.3", "1.02.3", "1.2.03", "v1.2.3", "1.2.3-", "1.2.3-01", "1.2.3+", "1.2.3-a..b", " 1.2.3", "1.2.3 "} {
		if err := CheckVersion(v); err == nil {
			t.Errorf("CheckVersion(%q) = nil, want an error", v)
		}
	}
}

func TestImportInstalled(t *testing.T) {
	t.Parallel()
	data, m := build(t, agentDir(t))
	dir := filepath.Join(t.TempDir(), "hello")
	p, err := Import(bytes.NewReader(data), dir, Limits{})
	if err != nil {
		t.Fatalf("Import: %v", err)
	}
	for _, f := range m.Files {
		got, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(f.Path)))
		if err != nil || sum(got) != f.SHA256 {
			t.Errorf("imported %s: %v, sha256 %s, want %s", f.Path, err, sum(got), f.SHA256)
		}
	}
	in, err := Installed(dir)
	if err != nil {
		t.Fatalf("Installed: %v", err)
	}
	want := &Installation{Name: "acme/hello", Version: "1.0.0", Kind: KindAgent, Digest: p.Digest}
	if diff := cmp.Diff(want, in); diff != "" {
		t.Errorf("Installed (-want +got):\n%s", diff)
	}
	// Never over an existing folder, even an empty one.
	empty := t.TempDir()
	if _, err := Import(bytes.NewReader(data), empty, Limits{}); !errors.Is(err, ErrExists) {
		t.Errorf("Import into an existing folder = %v, want ErrExists", err)
	}
	if _, err := Installed(t.TempDir()); !errors.Is(err, ErrNotInstalled) {
		t.Errorf("Installed(plain folder) = %v, want ErrNotInstalled", err)
	}
	// A truncated package leaves nothing behind.
	parent := t.TempDir()
	if _, err := Import(bytes.NewReader(data[:len(data)/2]), filepath.Join(parent, "x"), Limits{}); err == nil {
		t.Error("Import of half a package = nil error")
	}
	if left, _ := os.ReadDir(parent); len(left) != 0 {
		t.Errorf("a refused Import left %v", left)
	}
}

func TestTemplate(t *testing.T) {
	t.Parallel()
	src := t.TempDir()
	writeTree(t, src, map[string]string{"flow.json": templateFlow, "template.json": templateJSON, "README.md": "a template\n"})
	var b bytes.Buffer
	m, err := Build(src, Meta{Name: "acme/greeter", Version: "2.0.0"}, &b, Limits{})
	if err != nil {
		t.Fatalf("Build(template): %v", err)
	}
	if m.Kind != KindTemplate {
		t.Fatalf("kind = %s, want template", m.Kind)
	}
	data := b.Bytes()
	dir := filepath.Join(t.TempDir(), "greeter")
	if _, err := Instantiate(bytes.NewReader(data), dir, map[string]string{"agent_name": "front-desk"}, Limits{}); err != nil {
		t.Fatalf("Instantiate: %v", err)
	}
	got, err := os.ReadFile(filepath.Join(dir, "flow.json"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"name": "front-desk"`, `Write a warm greeting for {{who}}.`} {
		if !bytes.Contains(got, []byte(want)) {
			t.Errorf("instantiated flow.json lacks %s:\n%s", want, got)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "template.json")); !os.IsNotExist(err) {
		t.Errorf("template.json in the agent folder: %v", err)
	}
	in, err := Installed(dir)
	if err != nil || !in.Template || in.Params["agent_name"] != "front-desk" {
		t.Errorf("Installed = %+v, %v", in, err)
	}
	for name, params := range map[string]map[string]string{
		"missing required": {},
		"undeclared":       {"agent_name": "x", "colour": "red"},
	} {
		parent := t.TempDir()
		if _, err := Instantiate(bytes.NewReader(data), filepath.Join(parent, "a"), params, Limits{}); ReasonOf(err) != ReasonInvalidTemplate {
			t.Errorf("Instantiate(%s) = %v, want %s", name, err, ReasonInvalidTemplate)
		}
		if left, _ := os.ReadDir(parent); len(left) != 0 {
			t.Errorf("Instantiate(%s) left %v", name, left)
		}
	}
	// An agent package is not a template.
	agent, _ := build(t, agentDir(t))
	if _, err := Instantiate(bytes.NewReader(agent), filepath.Join(t.TempDir(), "a"), nil, Limits{}); ReasonOf(err) != ReasonInvalidTemplate {
		t.Errorf("Instantiate(agent package) = %v, want %s", err, ReasonInvalidTemplate)
	}
}

func TestParamTypes(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		typ, value string
		ok         bool
	}{
		{"integer", "42", true}, {"integer", "4.2", false}, {"integer", "x", false},
		{"number", "4.5", true}, {"number", "NaN", false}, {"number", "1e400", false},
		{"boolean", "true", true}, {"boolean", "1", false}, {"string", "anything", true},
	} {
		_, err := Param{Name: "p", Type: c.typ}.value(c.value)
		if (err == nil) != c.ok {
			t.Errorf("%s value %q: err = %v, want ok=%v", c.typ, c.value, err, c.ok)
		}
	}
}

func TestSignVerify(t *testing.T) {
	t.Parallel()
	_, m := build(t, agentDir(t))
	digest, _ := m.Digest()
	var pubs []ed25519.PublicKey
	var envs []Envelope
	for range 3 {
		pub, priv, err := NewKey()
		if err != nil {
			t.Fatal(err)
		}
		env, err := Sign(digest, priv, KeyID(pub))
		if err != nil {
			t.Fatal(err)
		}
		pubs, envs = append(pubs, pub), append(envs, env)
	}
	// PAE exactly as DSSE writes it.
	if got, want := string(PAE("t", []byte("ab"))), "DSSEv1 1 t 2 ab"; got != want {
		t.Errorf("PAE = %q, want %q", got, want)
	}
	if err := VerifySignature(envs[0], digest, pubs[:1], 1); err != nil {
		t.Errorf("VerifySignature(1 of 1): %v", err)
	}
	two := envs[0]
	two.Signatures = append(slices.Clone(two.Signatures), envs[1].Signatures...)
	if err := VerifySignature(two, digest, pubs, 2); err != nil {
		t.Errorf("VerifySignature(2 of 3): %v", err)
	}
	// The same key twice counts once.
	twice := envs[0]
	twice.Signatures = append(slices.Clone(twice.Signatures), envs[0].Signatures...)
	if err := VerifySignature(twice, digest, pubs, 2); !errors.Is(err, ErrSignature) {
		t.Errorf("VerifySignature(one key twice, threshold 2) = %v, want ErrSignature", err)
	}
	// A key not trusted does not count.
	if err := VerifySignature(envs[2], digest, pubs[:2], 1); !errors.Is(err, ErrSignature) {
		t.Errorf("VerifySignature(untrusted key) = %v, want ErrSignature", err)
	}
	// A signature claiming a trusted key's id but made by another.
	forged := envs[2]
	forged.Signatures = []Signature{{KeyID: KeyID(pubs[0]), Sig: envs[2].Signatures[0].Sig}}
	if err := VerifySignature(forged, digest, pubs, 1); !errors.Is(err, ErrSignature) {
		t.Errorf("VerifySignature(forged keyid) = %v, want ErrSignature", err)
	}
	// Another package's digest.
	if err := VerifySignature(envs[0], "sha256:"+string(bytes.Repeat([]byte("a"), 64)), pubs, 1); !errors.Is(err, ErrSignature) {
		t.Errorf("VerifySignature(other digest) = %v, want ErrSignature", err)
	}
	tampered := envs[0]
	tampered.PayloadType = "application/json"
	if err := VerifySignature(tampered, digest, pubs, 1); !errors.Is(err, ErrSignature) {
		t.Errorf("VerifySignature(other payload type) = %v, want ErrSignature", err)
	}
	if err := VerifySignature(envs[0], digest, pubs, 0); !errors.Is(err, ErrSignature) {
		t.Errorf("VerifySignature(threshold 0) = %v, want ErrSignature", err)
	}
}

func TestKeyFiles(t *testing.T) {
	t.Parallel()
	pub, priv, err := NewKey()
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "signer.key")
	if err := WritePrivateKey(path, priv); err != nil {
		t.Fatal(err)
	}
	st, err := os.Stat(path)
	if err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("key file mode = %v, %v; want 0600", st.Mode(), err)
	}
	if err := WritePrivateKey(path, priv); !errors.Is(err, ErrKeyFile) {
		t.Errorf("WritePrivateKey over a file = %v, want ErrKeyFile", err)
	}
	got, err := ReadPrivateKey(path)
	if err != nil || !got.Equal(priv) {
		t.Fatalf("ReadPrivateKey = %v, want the key written", err)
	}
	if err := os.Chmod(path, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadPrivateKey(path); !errors.Is(err, ErrKeyFile) {
		t.Errorf("ReadPrivateKey(0644) = %v, want ErrKeyFile", err)
	}
	back, err := ParsePublicKey(FormatPublicKey(pub) + "\n")
	if err != nil || !back.Equal(pub) {
		t.Errorf("ParsePublicKey(FormatPublicKey) = %v", err)
	}
	if id := KeyID(pub); len(id) != len("sha256:")+64 {
		t.Errorf("KeyID = %q", id)
	}
}

func TestFill(t *testing.T) {
	t.Parallel()
	in := []byte(`{"a":"{{params.n}}","b":"x {{ params.n }} y","c":"{{who}}","d":["{{params.on}}"],"e":"{{params.s}}"}`)
	values := map[string]any{"n": json.Number("20"), "on": true, "s": `say "hi"`}
	out, err := fill(in, values)
	if err != nil {
		t.Fatal(err)
	}
	var got map[string]any
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatal(err)
	}
	want := map[string]any{"a": 20.0, "b": "x 20 y", "c": "{{who}}", "d": []any{true}, "e": `say "hi"`}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("fill (-want +got):\n%s", diff)
	}
	if _, err := fill([]byte(`{"a":"{{params.nope}}"}`), values); ReasonOf(err) != ReasonInvalidTemplate {
		t.Errorf("fill(undeclared placeholder) = %v, want %s", err, ReasonInvalidTemplate)
	}
}

// TestBuildThroughLinkedFolder: the folder may be reached through a
// symbolic link; the package is the same as from the folder itself.
func TestBuildThroughLinkedFolder(t *testing.T) {
	t.Parallel()
	dir := agentDir(t)
	link := filepath.Join(t.TempDir(), "link")
	if err := os.Symlink(dir, link); err != nil {
		t.Fatal(err)
	}
	direct, _ := build(t, dir)
	linked, _ := build(t, link)
	if !bytes.Equal(direct, linked) {
		t.Error("a build through a link to the folder differs from a build of the folder")
	}
}

// TestReadEnvelope: an envelope reads back as it was written; one over
// MaxEnvelopeBytes, with an unknown field, or with more after it is
// refused.
func TestReadEnvelope(t *testing.T) {
	t.Parallel()
	pub, priv, err := NewKey()
	if err != nil {
		t.Fatal(err)
	}
	env, err := Sign("sha256:"+strings.Repeat("ab", 32), priv, KeyID(pub))
	if err != nil {
		t.Fatal(err)
	}
	data, err := json.Marshal(env)
	if err != nil {
		t.Fatal(err)
	}
	got, err := ReadEnvelope(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(env, got); diff != "" {
		t.Errorf("ReadEnvelope of a written envelope (-wrote +read):\n%s", diff)
	}
	padded := append(slices.Clone(data[:len(data)-1]), []byte(`,"x":"`+strings.Repeat("a", MaxEnvelopeBytes)+`"}`)...)
	for name, bad := range map[string][]byte{
		"over the limit":   padded,
		"an unknown field": append(slices.Clone(data[:len(data)-1]), []byte(`,"extra":1}`)...),
		"more after it":    append(slices.Clone(data), []byte(` {}`)...),
	} {
		if _, err := ReadEnvelope(bytes.NewReader(bad)); err == nil {
			t.Errorf("ReadEnvelope of an envelope with %s: no error", name)
		}
	}
}

// TestEnvelopeEveryByte changes every byte of a signature file, compact and
// indented, to other values and requires each change refused: by
// ReadEnvelope, or by VerifySignature of what it read. A key's letter case,
// a base64 padding bit or spacing would otherwise read as the same
// envelope.
func TestEnvelopeEveryByte(t *testing.T) {
	t.Parallel()
	pub, priv, err := NewKey()
	if err != nil {
		t.Fatal(err)
	}
	digest := "sha256:" + strings.Repeat("cd", 32)
	env, err := Sign(digest, priv, KeyID(pub))
	if err != nil {
		t.Fatal(err)
	}
	compact, err := json.Marshal(env)
	if err != nil {
		t.Fatal(err)
	}
	indented, err := json.MarshalIndent(env, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	for name, data := range map[string][]byte{"compact": compact, "indented": append(indented, '\n')} {
		if _, err := ReadEnvelope(bytes.NewReader(data)); err != nil {
			t.Fatalf("%s: ReadEnvelope of the envelope as written: %v", name, err)
		}
		for i := range data {
			for _, delta := range []byte{1, 2, 0x20, 0x80} {
				changed := slices.Clone(data)
				changed[i] ^= delta
				got, err := ReadEnvelope(bytes.NewReader(changed))
				if err != nil {
					continue
				}
				if err := VerifySignature(got, digest, []ed25519.PublicKey{pub}, 1); err == nil {
					t.Errorf("%s: byte %d (%q) xor %#x: read and verified as the same envelope", name, i, data[i], delta)
				}
			}
		}
	}
	// A key's letter case, spelled out: Go's JSON would read it.
	if _, err := ReadEnvelope(bytes.NewReader(bytes.Replace(compact, []byte(`"payload"`), []byte(`"Payload"`), 1))); err == nil {
		t.Error(`ReadEnvelope took "Payload" for "payload"`)
	}
}
