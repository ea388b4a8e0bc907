package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const pkgFlow = `{
  "version": "0.17",
  "name": "hello",
  "description": "Greets whoever it is handed.",
  "inputs": ["who"],
  "requires": {"env": ["GREETER_TOKEN"]},
  "state": { "who": { "type": "string" }, "greeting": { "type": "string" } },
  "nodes": [ { "id": "greet", "type": "llm", "output": "greeting", "prompt": "Greet {{who}}." } ],
  "edges": [ { "from": "greet", "to": "END" } ],
  "start": "greet"
}`

// TestPackageCommands: key create, package build, inspect, sign (twice,
// two signers), verify with one and two trusted keys, and the refusals.
func TestPackageCommands(t *testing.T) {
	t.Parallel()
	tmp := t.TempDir()
	agent := filepath.Join(tmp, "agent")
	if err := os.MkdirAll(agent, 0o755); err != nil {
		t.Fatal(err)
	}
	for name, body := range map[string]string{"flow.json": pkgFlow, ".env": "GREETER_TOKEN=s3cret\n", "README.md": "hi\n"} {
		if err := os.WriteFile(filepath.Join(agent, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	must := func(args ...string) string {
		t.Helper()
		out, errOut, code, err := runArgs(t, nil, args...)
		if code != 0 {
			t.Fatalf("board %s: exit %d: %v\n%s", strings.Join(args, " "), code, err, errOut)
		}
		return out
	}
	fails := func(wantCode int, args ...string) error {
		t.Helper()
		_, _, code, err := runArgs(t, nil, args...)
		if code != wantCode {
			t.Errorf("board %s: exit %d (%v), want %d", strings.Join(args, " "), code, err, wantCode)
		}
		return err
	}

	// Keys.
	keys := make([]keyJSON, 2)
	for i := range keys {
		file := filepath.Join(tmp, "signer"+string(rune('a'+i))+".key")
		if err := json.Unmarshal([]byte(must("key", "create", "--out", file, "-o", "json")), &keys[i]); err != nil {
			t.Fatal(err)
		}
		st, err := os.Stat(file)
		if err != nil || st.Mode().Perm() != 0o600 {
			t.Fatalf("key file %s: %v, %v; want mode 0600", file, st, err)
		}
		if !strings.HasPrefix(keys[i].KeyID, "sha256:") || !strings.HasPrefix(keys[i].PublicKey, "ed25519:") {
			t.Errorf("key create printed %+v", keys[i])
		}
	}
	fails(1, "key", "create", "--out", keys[0].PrivateKey) // never over a key
	fails(2, "key", "create")

	// Build, then inspect.
	pkg := filepath.Join(tmp, "hello-1.0.0.tgz")
	var built packageJSON
	if err := json.Unmarshal([]byte(must("package", "build", agent, "--name", "acme/hello", "--version", "1.0.0", "--out", pkg, "-o", "json")), &built); err != nil {
		t.Fatal(err)
	}
	var inspected packageJSON
	if err := json.Unmarshal([]byte(must("package", "inspect", pkg, "-o", "json")), &inspected); err != nil {
		t.Fatal(err)
	}
	if inspected.Digest != built.Digest || inspected.Manifest.Name != "acme/hello" || len(inspected.Manifest.Files) != 2 {
		t.Errorf("inspect = %+v, want build's digest %s and 2 files", inspected, built.Digest)
	}
	if table := must("package", "inspect", pkg); !strings.Contains(table, "GREETER_TOKEN") || strings.Contains(table, "s3cret") {
		t.Errorf("inspect table:\n%s", table)
	}
	fails(2, "package", "build", agent, "--name", "Acme/Hello", "--version", "1.0.0", "--out", pkg)
	fails(2, "package", "build", agent, "--name", "acme/hello", "--version", "1.0", "--out", pkg)

	// Unsigned: verify checks the archive only.
	must("package", "verify", pkg)
	fails(1, "package", "verify", pkg, "--trust", keys[0].PublicFile) // no signature file yet

	// One signer, then a second into the same file.
	must("package", "sign", pkg, "--key", keys[0].PrivateKey)
	must("package", "verify", pkg, "--trust", keys[0].PublicFile)
	fails(1, "package", "verify", pkg, "--trust", keys[1].PublicKey) // signed by a key not trusted
	fails(1, "package", "verify", pkg, "--trust", keys[0].PublicFile, "--trust", keys[1].PublicFile, "--threshold", "2")
	must("package", "sign", pkg, "--key", keys[1].PrivateKey)
	must("package", "verify", pkg, "--trust", keys[0].PublicFile, "--trust", keys[1].PublicKey, "--threshold", "2")
	fails(2, "package", "verify", pkg, "--trust", keys[0].PublicFile, "--threshold", "2")
	fails(2, "package", "verify", pkg, "--sig", pkg+".sig.json")

	// A package changed after signing: another digest, refused.
	if err := os.WriteFile(filepath.Join(agent, "README.md"), []byte("changed\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	other := filepath.Join(tmp, "other.tgz")
	must("package", "build", agent, "--name", "acme/hello", "--version", "1.0.0", "--out", other)
	fails(1, "package", "verify", other, "--trust", keys[0].PublicFile, "--sig", pkg+".sig.json")

	// A key others may read is refused.
	if err := os.Chmod(keys[0].PrivateKey, 0o644); err != nil {
		t.Fatal(err)
	}
	fails(1, "package", "sign", pkg, "--key", keys[0].PrivateKey)

	// A malicious archive: refused with its reason.
	evil, err := os.ReadFile(filepath.Join("..", "..", "packages", "testdata", "bad", "traversal.tgz"))
	if err != nil {
		t.Fatal(err)
	}
	bad := filepath.Join(tmp, "evil.tgz")
	if err := os.WriteFile(bad, evil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := fails(1, "package", "inspect", bad); err == nil || !strings.Contains(err.Error(), "unsafe_path") {
		t.Errorf("inspect of a traversal = %v, want the unsafe_path reason", err)
	}
}
