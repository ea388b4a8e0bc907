package main

import (
	"bytes"
	"crypto/rand"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	boardv1 "github.com/symphonix/symphonix/api/symphonix/board/v1"
	"github.com/symphonix/symphonix/api/symphonix/board/v1/boardv1connect"
	"github.com/symphonix/symphonix/board"
	"github.com/symphonix/symphonix/identity"
	"github.com/symphonix/symphonix/internal/boardtest"
	"github.com/symphonix/symphonix/internal/cli"
)

// shelf is a folder of keys, agent folders and packages that the offline
// commands make, for the library's commands to send to a real board.
type shelf struct {
	dir string
}

func newShelf(t *testing.T) *shelf {
	t.Helper()
	return &shelf{dir: t.TempDir()}
}

// offline runs an offline command (no --board) and fails the test if it
// fails.
func offline(t *testing.T, args ...string) string {
	t.Helper()
	out, errOut, code, err := runArgs(t, nil, args...)
	if code != 0 {
		t.Fatalf("board %s: exit %d: %v\n%s", strings.Join(args, " "), code, err, errOut)
	}
	return out
}

// key makes a signing key named name and returns its files and text.
func (s *shelf) key(t *testing.T, name string) keyJSON {
	t.Helper()
	return decodeJSON[keyJSON](t, offline(t, "key", "create", "--out", filepath.Join(s.dir, name+".key"), "-o", "json"))
}

// pkg builds a package of the hello flow as name@version, with extra
// files, and returns its file and digest.
func (s *shelf) pkg(t *testing.T, name, version string, extra map[string][]byte) (file, digest string) {
	t.Helper()
	dir := filepath.Join(s.dir, "src-"+strings.ReplaceAll(name, "/", "-")+"-"+version)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	files := map[string][]byte{"flow.json": []byte(pkgFlow), "README.md": []byte("hello " + version + "\n")}
	for k, v := range extra {
		files[k] = v
	}
	for k, v := range files {
		if err := os.WriteFile(filepath.Join(dir, k), v, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	file = filepath.Join(s.dir, strings.ReplaceAll(name, "/", "-")+"-"+version+".tgz")
	built := decodeJSON[packageJSON](t, offline(t, "package", "build", dir, "--name", name, "--version", version, "--out", file, "-o", "json"))
	return file, built.Digest
}

// sign signs file with each key into FILE.sig.json.
func sign(t *testing.T, file string, keys ...keyJSON) {
	t.Helper()
	for _, k := range keys {
		offline(t, "package", "sign", file, "--key", k.PrivateKey)
	}
}

// TestLibraryLoop: the whole loop against a real board: key create, key
// add, scope set, package build, sign, publish (a package of several
// chunks), list, show, download, verify offline, yank, download by digest,
// and key revoke, after which the board's trust no longer admits the
// download.
func TestLibraryLoop(t *testing.T) {
	t.Parallel()
	f := startFleet(t)
	s := newShelf(t)
	signer := s.key(t, "signer")

	// key add, from the .pub file: trusted; again: nothing changes.
	out := f.ok(t, "key", "add", signer.PublicFile, "--publisher", "acme")
	if out != "key "+signer.KeyID+" trusted for publisher acme\n" {
		t.Errorf("key add: %q", out)
	}
	if out := f.ok(t, "key", "add", signer.PublicKey, "--publisher", "acme"); !strings.Contains(out, "already trusted for publisher acme (added by ops at ") {
		t.Errorf("key add again: %q", out)
	}
	type keyJSONOut struct {
		KeyID     string `json:"key_id"`
		PublicKey string `json:"public_key"`
		Publisher string `json:"publisher"`
		AddedBy   string `json:"added_by"`
		Revoked   *struct {
			By     string `json:"by"`
			Reason string `json:"reason"`
		} `json:"revoked"`
	}
	keys := decodeJSON[[]keyJSONOut](t, f.ok(t, "key", "list", "--publisher", "acme", "-o", "json"))
	if len(keys) != 1 || keys[0].KeyID != signer.KeyID || keys[0].PublicKey != signer.PublicKey || keys[0].AddedBy != "ops" || keys[0].Revoked != nil {
		t.Fatalf("key list --publisher acme -o json = %+v", keys)
	}
	if out := f.ok(t, "key", "list", "--publisher", "other"); strings.Contains(out, signer.KeyID) {
		t.Errorf("key list --publisher other shows acme's key:\n%s", out)
	}

	// scope set, scope list.
	if out := f.ok(t, "scope", "set", "acme", "--publisher", "acme"); !regexpLine(out, `^acme\s+acme\s+1\s+ops\s+\S+$`) {
		t.Errorf("scope set:\n%s", out)
	}
	type scopeJSON struct {
		Name       string   `json:"name"`
		Publishers []string `json:"publishers"`
		Threshold  int      `json:"threshold"`
	}
	scopes := decodeJSON[[]scopeJSON](t, f.ok(t, "scope", "list", "-o", "json"))
	if len(scopes) != 1 || scopes[0].Name != "acme" || len(scopes[0].Publishers) != 1 || scopes[0].Threshold != 1 {
		t.Errorf("scope list -o json = %+v", scopes)
	}

	// A package of more than two 1 MiB chunks (random bytes do not
	// compress), signed, published.
	noise := make([]byte, 5<<19)
	rand.Read(noise)
	file, digest := s.pkg(t, "acme/hello", "1.0.0", map[string][]byte{"noise.bin": noise})
	if st, err := os.Stat(file); err != nil || st.Size() <= 2*chunkBytes {
		t.Fatalf("the package is %v bytes (%v), want more than two chunks", st, err)
	}
	sign(t, file, signer)
	out = f.ok(t, "package", "publish", file)
	if !regexpLine(out, `^acme/hello\s+1\.0\.0\s+`+digest+`\s+published: new$`) {
		t.Errorf("package publish:\n%s", out)
	}
	type publishJSON struct {
		Version struct {
			Name    string   `json:"name"`
			Version string   `json:"version"`
			Digest  string   `json:"digest"`
			Signers []string `json:"signers"`
		} `json:"version"`
		Created bool `json:"created"`
	}
	again := decodeJSON[publishJSON](t, f.ok(t, "package", "publish", file, "-o", "json"))
	if again.Created || again.Version.Digest != digest || len(again.Version.Signers) != 1 || again.Version.Signers[0] != signer.KeyID {
		t.Errorf("package publish again -o json = %+v, want not created, the same digest, signed by %s", again, signer.KeyID)
	}
	if out := f.ok(t, "package", "publish", file); !strings.Contains(out, "already published with this digest: nothing changed") {
		t.Errorf("package publish again:\n%s", out)
	}

	// A second version, so list and show have something to order.
	file2, digest2 := s.pkg(t, "acme/hello", "1.1.0", nil)
	sign(t, file2, signer)
	f.ok(t, "package", "publish", file2)

	// An agent whose hello says it runs 1.0.0.
	linkAs(t, f, &boardv1.Hello{Name: "desk", Protocol: board.Protocol,
		Package: &boardv1.InstalledPackage{Name: "acme/hello", Version: "1.0.0", Digest: digest}})

	if out := f.ok(t, "agents", "get", "desk"); !regexpLine(out, `^package\s+acme/hello@1\.0\.0 \(`+digest+`\)$`) {
		t.Errorf("agents get desk, want the package it runs:\n%s", out)
	}
	if out := f.ok(t, "package", "list"); !regexpLine(out, `^acme/hello\s+agent\s+1\.1\.0\s+2\s+\S+\s+Greets whoever it is handed\.$`) {
		t.Errorf("package list:\n%s", out)
	}
	if out := f.ok(t, "package", "list", "--scope", "other"); strings.Contains(out, "acme/hello") {
		t.Errorf("package list --scope other:\n%s", out)
	}
	show := f.ok(t, "package", "show", "acme/hello")
	short := signer.KeyID[:19] + "…"
	if !regexpLine(show, `^1\.1\.0\s+`+digest2+`\s+agent\s+`+short+`\s+ops\s+\S+\s+-\s+-$`) ||
		!regexpLine(show, `^1\.0\.0\s+`+digest+`\s+agent\s+`+short+`\s+ops\s+\S+\s+-\s+desk$`) ||
		strings.Index(show, "1.1.0  ") > strings.Index(show, "1.0.0  ") {
		t.Errorf("package show, want both versions, newest first:\n%s", show)
	}

	type showJSON struct {
		Package struct {
			Name     string `json:"name"`
			Latest   string `json:"latest"`
			Versions int    `json:"versions"`
		} `json:"package"`
		Versions []struct {
			Version    string   `json:"version"`
			Digest     string   `json:"digest"`
			Signers    []string `json:"signers"`
			Agents     []string `json:"agents"`
			AgentCount int      `json:"agent_count"`
		} `json:"versions"`
	}
	sj := decodeJSON[showJSON](t, f.ok(t, "package", "show", "acme/hello", "-o", "json"))
	if sj.Package.Name != "acme/hello" || sj.Package.Latest != "1.1.0" || sj.Package.Versions != 2 || len(sj.Versions) != 2 ||
		sj.Versions[1].Digest != digest || sj.Versions[1].AgentCount != 1 || len(sj.Versions[1].Agents) != 1 || sj.Versions[1].Agents[0] != "desk" ||
		len(sj.Versions[0].Signers) != 1 || sj.Versions[0].Signers[0] != signer.KeyID {
		t.Errorf("package show -o json = %+v", sj)
	}
	if sj := decodeJSON[showJSON](t, f.ok(t, "package", "show", "acme/hello", "--limit", "1", "-o", "json")); len(sj.Versions) != 1 || sj.Versions[0].Version != "1.1.0" {
		t.Errorf("package show --limit 1 -o json = %+v, want the newest version alone", sj)
	}

	// Download, then verify offline with the key the board trusts.
	dl := filepath.Join(s.dir, "dl", "hello.tgz")
	if err := os.MkdirAll(filepath.Dir(dl), 0o755); err != nil {
		t.Fatal(err)
	}
	out, stderr, err := f.board(t, "package", "download", "acme/hello@1.0.0", "--out", dl)
	if err != nil {
		t.Fatalf("package download: %v\n%s", err, stderr)
	}
	if !regexpLine(out, `^digest\s+`+digest+`$`) || !regexpLine(out, `^checked\s+a safe archive, the record's digest, signed by 1 of the keys scope acme trusts now \(threshold 1\)$`) {
		t.Errorf("package download:\n%s", out)
	}
	if !strings.Contains(stderr, "board package verify "+dl+" --trust "+signer.PublicKey+" --threshold 1") {
		t.Errorf("package download: no verify hint on stderr: %q", stderr)
	}
	if a, b := readFile(t, file), readFile(t, dl); !bytes.Equal(a, b) {
		t.Errorf("the download (%d bytes) is not the published file (%d bytes)", len(b), len(a))
	}
	offline(t, "package", "verify", dl, "--trust", signer.PublicFile)
	// Never over a file: neither the package nor its signatures.
	_, _, err = f.board(t, "package", "download", "acme/hello@1.0.0", "--out", dl)
	wantExit(t, err, 1, dl, "exists")
	os.Remove(dl)
	_, _, err = f.board(t, "package", "download", "acme/hello@1.0.0", "--out", dl)
	wantExit(t, err, 1, dl+".sig.json", "exists")
	if _, err := os.Stat(dl); err == nil {
		t.Errorf("a refused download left %s", dl)
	}
	// By name alone: the newest, to the default file name in the current
	// folder, by the board command in a process of its own.
	tokenFile := filepath.Join(s.dir, "token")
	if err := os.WriteFile(tokenFile, []byte(f.admin+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(os.Args[0]) // the board, by TestMain
	cmd.Dir = filepath.Dir(dl)
	cmd.Env = append(os.Environ(), boardArgsEnv+"="+strings.Join([]string{"package", "download", "acme/hello", "--board", f.b.URL, "--token-file", tokenFile}, "\n"))
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("board package download acme/hello: %v\n%s", err, b)
	}
	if got := readFile(t, filepath.Join(cmd.Dir, "hello-1.1.0.tgz")); !bytes.Equal(got, readFile(t, file2)) {
		t.Errorf("download of acme/hello did not write 1.1.0 as hello-1.1.0.tgz")
	}
	readFile(t, filepath.Join(cmd.Dir, "hello-1.1.0.tgz.sig.json"))

	// Yank: hidden from the newest and from name@version; by digest, still
	// there.
	out = f.ok(t, "package", "yank", "acme/hello@1.1.0", "--reason", "greets too loudly")
	if !strings.HasPrefix(out, "acme/hello@1.1.0 ("+digest2+") yanked by ops at ") || !strings.HasSuffix(out, ": greets too loudly\n") {
		t.Errorf("package yank: %q", out)
	}
	if show := f.ok(t, "package", "show", "acme/hello"); !regexpLine(show, `^1\.1\.0\s+.*by ops at \S+: greets too loudly\s+-$`) {
		t.Errorf("package show after yank:\n%s", show)
	}
	if out := f.ok(t, "package", "list"); !regexpLine(out, `^acme/hello\s+agent\s+1\.0\.0\s+2\s`) {
		t.Errorf("package list after yanking 1.1.0, want 1.0.0 the latest:\n%s", out)
	}
	_, _, err = f.board(t, "package", "download", "acme/hello@1.1.0", "--out", filepath.Join(s.dir, "y.tgz"))
	wantExit(t, err, 1, "digest")
	f.ok(t, "package", "download", "--digest", digest2, "--out", filepath.Join(s.dir, "y.tgz"))

	// Revoke, with --yes: the key is marked, and a download of what it
	// signed no longer passes the board's trust: refused, nothing kept.
	out = f.ok(t, "key", "revoke", signer.KeyID, "--reason", "laptop stolen", "--yes")
	if !strings.HasPrefix(out, "key "+signer.KeyID+" revoked by ops at ") {
		t.Errorf("key revoke --yes: %q", out)
	}
	keys = decodeJSON[[]keyJSONOut](t, f.ok(t, "key", "list", "-o", "json"))
	if len(keys) != 1 || keys[0].Revoked == nil || keys[0].Revoked.Reason != "laptop stolen" || keys[0].Revoked.By != "ops" {
		t.Errorf("key list after revoke = %+v", keys)
	}
	_, _, err = f.board(t, "key", "revoke", signer.KeyID, "--reason", "again", "--yes")
	wantExit(t, err, 1, "already revoked")
	late := filepath.Join(s.dir, "late.tgz")
	_, _, err = f.board(t, "package", "download", "--digest", digest, "--out", late)
	wantExit(t, err, 1, "not kept", "refused by the signature check", `scope "acme" asks for 1`)
	for _, p := range []string{late, late + ".sig.json"} {
		if _, err := os.Stat(p); err == nil {
			t.Errorf("a refused download left %s", p)
		}
	}
	// Signed again by a new trusted key and published once more: the same
	// package, installable again.
	rotated := s.key(t, "rotated")
	f.ok(t, "key", "add", rotated.PublicFile, "--publisher", "acme")
	sign(t, file, rotated)
	if out := f.ok(t, "package", "publish", file); !regexpLine(out, `^acme/hello\s+1\.0\.0\s+`+digest+`\s+signed again: `) {
		t.Errorf("package publish, signed again:\n%s", out)
	}
	f.ok(t, "package", "download", "--digest", digest, "--out", late)
	offline(t, "package", "verify", late, "--trust", rotated.PublicFile)
	if entries, _ := os.ReadDir(s.dir); len(entries) == 0 {
		t.Fatal("the shelf is empty")
	} else {
		for _, e := range entries {
			if strings.HasPrefix(e.Name(), ".late.tgz") {
				t.Errorf("a refused download left its temporary file %s", e.Name())
			}
		}
	}
}

// TestLibraryRefusals: each gate's refusal is the board's message, naming
// the gate, with exit 1; a role too low says so; nothing refused is in
// the library afterwards.
func TestLibraryRefusals(t *testing.T) {
	t.Parallel()
	f := startFleet(t)
	s := newShelf(t)
	signer, stranger := s.key(t, "signer"), s.key(t, "stranger")
	f.ok(t, "key", "add", signer.PublicFile, "--publisher", "acme")

	// A scope nobody set admits nothing.
	file, _ := s.pkg(t, "acme/hello", "1.0.0", nil)
	sign(t, file, signer)
	_, _, err := f.board(t, "package", "publish", file)
	wantExit(t, err, 1, file+": refused: signatures:", "admits nobody")
	f.ok(t, "scope", "set", "acme", "--publisher", "acme")

	// Signed by a key the board does not trust.
	other, _ := s.pkg(t, "acme/other", "1.0.0", nil)
	sign(t, other, stranger)
	_, _, err = f.board(t, "package", "publish", other)
	wantExit(t, err, 1, other+": refused: signatures:", stranger.KeyID)

	// A threshold of two, one signature.
	f.ok(t, "scope", "set", "acme", "--publisher", "acme", "--threshold", "2")
	_, _, err = f.board(t, "package", "publish", file)
	wantExit(t, err, 1, "refused: signatures:", "of the 2 signatures")
	f.ok(t, "scope", "set", "acme", "--publisher", "acme")

	// The signatures of another package.
	_, _, err = f.board(t, "package", "publish", other, "--sig", file+".sig.json")
	wantExit(t, err, 1, "refused: digests:")

	// A byte changed in the archive after signing.
	data := readFile(t, file)
	bad := filepath.Join(s.dir, "tampered.tgz")
	data[len(data)/2] ^= 0x01
	if err := os.WriteFile(bad, data, 0o644); err != nil {
		t.Fatal(err)
	}
	_, _, err = f.board(t, "package", "publish", bad, "--sig", file+".sig.json")
	wantExit(t, err, 1, "refused: safe archive:")

	// An envelope that is not one.
	junk := filepath.Join(s.dir, "junk.sig.json")
	if err := os.WriteFile(junk, []byte(`{"payload": 1}`), 0o644); err != nil {
		t.Fatal(err)
	}
	_, _, err = f.board(t, "package", "publish", file, "--sig", junk)
	wantExit(t, err, 1, "refused: header.envelope")

	// Published; then the same name@version with another digest.
	f.ok(t, "package", "publish", file)
	s2 := newShelf(t)
	changed, _ := s2.pkg(t, "acme/hello", "1.0.0", map[string][]byte{"extra.txt": []byte("more")})
	sign(t, changed, signer)
	_, _, err = f.board(t, "package", "publish", changed)
	wantExit(t, err, 1, "refused: name@version:", "never changes")

	// A viewer may read the library, not publish, yank or trust.
	viewer := f.b.OperatorToken("eve", identity.RoleViewer)
	env := func(k string) string {
		if k == "SYMPHONIX_TOKEN" {
			return viewer
		}
		return ""
	}
	for _, args := range [][]string{
		{"package", "publish", file},
		{"package", "yank", "acme/hello@1.0.0", "--reason", "no"},
		{"key", "add", stranger.PublicFile, "--publisher", "acme"},
		{"scope", "set", "acme", "--publisher", "eve"},
	} {
		_, _, err := runWith(t, env, nil, append(args, "--board", f.b.URL)...)
		wantExit(t, err, 1, "needs role admin", "the token's role may not do this")
	}
	if _, _, err := runWith(t, env, nil, "package", "list", "--board", f.b.URL); err != nil {
		t.Errorf("package list as a viewer: %v", err)
	}

	// Not found, by the board.
	_, _, err = f.board(t, "package", "show", "acme/nothing")
	wantExit(t, err, 1, "acme/nothing", "not in the library")
	_, _, err = f.board(t, "package", "yank", "acme/hello@9.9.9", "--reason", "x")
	wantExit(t, err, 1, "9.9.9")
	_, _, err = f.board(t, "key", "revoke", stranger.KeyID, "--reason", "x", "--yes")
	wantExit(t, err, 1, stranger.KeyID, "not found")

	// Only acme/hello made it in.
	type summary struct {
		Name string `json:"name"`
	}
	if list := decodeJSON[[]summary](t, f.ok(t, "package", "list", "-o", "json")); len(list) != 1 || list[0].Name != "acme/hello" {
		t.Errorf("package list after the refusals = %+v, want acme/hello alone", list)
	}
}

// TestLibraryPublishCutShort: an archive shorter than the size announced
// (a file that changed while being read) ends the upload; the board keeps
// nothing of it.
func TestLibraryPublishCutShort(t *testing.T) {
	t.Parallel()
	f := startFleet(t)
	s := newShelf(t)
	signer := s.key(t, "signer")
	f.ok(t, "key", "add", signer.PublicFile, "--publisher", "acme")
	f.ok(t, "scope", "set", "acme", "--publisher", "acme")
	noise := make([]byte, 3<<20)
	rand.Read(noise)
	file, _ := s.pkg(t, "acme/hello", "1.0.0", map[string][]byte{"noise.bin": noise})
	sign(t, file, signer)
	data, env := readFile(t, file), readFile(t, file+".sig.json")

	bc, err := (&clientOptions{Board: f.b.URL, Token: f.admin}).dial()
	if err != nil {
		t.Fatal(err)
	}
	_, err = publish(t.Context(), bc, bytes.NewReader(data[:len(data)-chunkBytes/2]), file, env, int64(len(data)))
	if err == nil || !strings.Contains(err.Error(), "shorter than when publish began") || !strings.Contains(err.Error(), "nothing was published") {
		t.Fatalf("publish of a file cut short = %v", err)
	}
	_, err = publish(t.Context(), bc, bytes.NewReader(append(data, 0)), file, env, int64(len(data)))
	if err == nil || !strings.Contains(err.Error(), "longer than when publish began") {
		t.Fatalf("publish of a file that grew = %v", err)
	}
	res, err := bc.packages.ListPackages(t.Context(), &boardv1.ListPackagesRequest{})
	if err != nil || len(res.GetPackages()) != 0 {
		t.Fatalf("the library after two uploads cut short: %v, %v; want empty", res.GetPackages(), err)
	}
	// The whole file, from the command: published.
	f.ok(t, "package", "publish", file)
}

// TestLibraryPublishOverLimit: a board that takes archives of at most
// 2 MiB refuses a larger one as soon as the header announces its size;
// the command ends with the board's reason while it is still sending,
// and the library holds nothing.
func TestLibraryPublishOverLimit(t *testing.T) {
	t.Parallel()
	f := &fleet{b: boardtest.Start(t, boardtest.Options{Limits: board.Limits{PackageBytes: 2 << 20}})}
	f.admin = f.b.OperatorToken("ops", identity.RoleAdmin)
	s := newShelf(t)
	signer := s.key(t, "signer")
	f.ok(t, "key", "add", signer.PublicFile, "--publisher", "acme")
	f.ok(t, "scope", "set", "acme", "--publisher", "acme")
	noise := make([]byte, 6<<20)
	rand.Read(noise)
	file, _ := s.pkg(t, "acme/big", "1.0.0", map[string][]byte{"noise.bin": noise})
	sign(t, file, signer)
	_, _, err := f.board(t, "package", "publish", file)
	wantExit(t, err, 1, file+": refused: header.size:", "at most 2097152")
	if out := f.ok(t, "package", "list"); strings.Contains(out, "acme/big") {
		t.Errorf("package list after a refused publish:\n%s", out)
	}
}

// TestLibraryRevokeNeedsConfirmation: without a terminal and without
// --yes, key revoke refuses (exit 2) after showing the key, and the key
// stays trusted; SYMPHONIX_YES decides nothing.
func TestLibraryRevokeNeedsConfirmation(t *testing.T) {
	t.Parallel()
	f := startFleet(t)
	s := newShelf(t)
	signer := s.key(t, "signer")
	f.ok(t, "key", "add", signer.PublicFile, "--publisher", "acme")

	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	w.Close()
	defer r.Close()
	_, stderr, err := runWith(t, f.env, r, "key", "revoke", signer.KeyID, "--reason", "lost", "--board", f.b.URL)
	wantExit(t, err, cli.ExitUsage, "key "+signer.KeyID+": not revoked: no terminal to confirm on; pass --yes to revoke without asking")
	if !strings.Contains(stderr, "publisher  acme") || !strings.Contains(stderr, "for good") {
		t.Errorf("revoke without --yes: the key is not shown first:\n%s", stderr)
	}
	env := func(k string) string {
		if k == "SYMPHONIX_YES" {
			return "true"
		}
		return f.env(k)
	}
	_, _, err = runWith(t, env, nil, "key", "revoke", signer.KeyID, "--reason", "lost", "--board", f.b.URL)
	wantExit(t, err, cli.ExitUsage, "--yes")
	if out := f.ok(t, "key", "list"); !regexpLine(out, signer.KeyID+`\s+acme\s+\S+\s+ops\s+\S+\s+-$`) {
		t.Errorf("key list after refused revokes, want the key not revoked:\n%s", out)
	}
}

// TestLibraryUsageErrors: bad flags and arguments of the library's
// commands exit 2 with one line naming them, before anything is sent (the
// board named does not exist).
func TestLibraryUsageErrors(t *testing.T) {
	t.Parallel()
	s := newShelf(t)
	k := s.key(t, "k")
	env := func(name string) string {
		if name == "SYMPHONIX_TOKEN" {
			return "t0ken"
		}
		return ""
	}
	const id = "sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"key", "add", k.PublicFile}, "--publisher: required"},
		{[]string{"key", "add", k.PublicFile, "--publisher", "Acme Corp"}, `--publisher: "Acme Corp": want 1 to 63 of a-z`},
		{[]string{"key", "add", "ed25519:short", "--publisher", "acme"}, "PUBKEY: "},
		{[]string{"key", "add", filepath.Join(s.dir, "none.pub"), "--publisher", "acme"}, "PUBKEY: "},
		{[]string{"key", "add"}, "key add: want PUBKEY"},
		{[]string{"key", "list", "--publisher", "A"}, "--publisher"},
		{[]string{"key", "revoke", "abc", "--reason", "x", "--yes"}, `KEYID: "abc": want sha256:`},
		{[]string{"key", "revoke", id, "--yes"}, "--reason: required"},
		{[]string{"key", "revoke", id, "--reason", strings.Repeat("x", 1025), "--yes"}, "--reason: 1025 bytes, at most 1024"},
		{[]string{"scope", "set", "acme"}, "--publisher: required"},
		{[]string{"scope", "set", "acme", "--none", "--publisher", "acme"}, "--none and --publisher"},
		{[]string{"scope", "set", "Acme", "--publisher", "acme"}, `NAME: "Acme"`},
		{[]string{"scope", "set", "acme", "--publisher", "acme", "--threshold", "0"}, "--threshold: 0, want 1 to 32"},
		{[]string{"scope", "set", "acme", "--publisher", "acme", "--threshold", "33"}, "--threshold: 33, want 1 to 32"},
		{[]string{"scope", "set", "acme", "--publisher", "a_b"}, `--publisher: "a_b"`},
		{[]string{"scope", "set"}, "scope set: want NAME"},
		{[]string{"scope", "list", "--limit", "0"}, "--limit: 0"},
		{[]string{"package", "publish"}, "package publish: want FILE"},
		{[]string{"package", "list", "--scope", "a/b"}, `--scope: "a/b"`},
		{[]string{"package", "show", "hello"}, `NAME: name "hello": want scope/name`},
		{[]string{"package", "yank", "acme/hello", "--reason", "x"}, `NAME@VERSION: "acme/hello" has no version`},
		{[]string{"package", "yank", "acme/hello@1.0", "--reason", "x"}, `NAME@VERSION: version "1.0"`},
		{[]string{"package", "yank", "acme/hello@1.0.0"}, "--reason: required"},
		{[]string{"package", "download"}, "want NAME[@VERSION] or --digest"},
		{[]string{"package", "download", "--digest", "sha256:ABC"}, `--digest: "sha256:ABC"`},
		{[]string{"package", "download", "acme/hello", "acme/other"}, `unexpected argument "acme/other"`},
		{[]string{"package", "download", "acme/hello", "-o", "yaml"}, `--output: "yaml"`},
	} {
		_, _, err := runWith(t, env, nil, append(c.args, "--board", "http://127.0.0.1:1")...)
		wantExit(t, err, cli.ExitUsage, c.want)
	}
	_, _, code, err := runArgs(t, nil, "scope")
	if code != cli.ExitUsage || err == nil || !strings.Contains(err.Error(), "scope: want a command: list or set") {
		t.Errorf("board scope: exit %d, %v; want 2 and the commands", code, err)
	}
	// A signature file that is not there: exit 1, saying how to make one.
	file := filepath.Join(s.dir, "x.tgz")
	if err := os.WriteFile(file, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, _, err = runWith(t, env, nil, "package", "publish", file, "--board", "http://127.0.0.1:1")
	wantExit(t, err, 1, "--sig: "+file+".sig.json", "board package sign")
}

// linkAs links an agent to the fleet's board with hello h, until the test
// ends.
func linkAs(t *testing.T, f *fleet, h *boardv1.Hello) {
	t.Helper()
	link := boardv1connect.NewAgentLinkServiceClient(f.b.Client(f.b.AgentToken(h.GetName())))
	s, err := link.Link(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	if err := s.Send(&boardv1.LinkRequest{Kind: &boardv1.LinkRequest_Hello{Hello: h}}); err != nil {
		t.Fatal(err)
	}
	if m, err := s.Receive(); err != nil || m.GetWelcome() == nil {
		t.Fatalf("hello: %v %v, want a welcome", m, err)
	}
}

func readFile(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
