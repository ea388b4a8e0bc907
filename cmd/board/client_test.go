package main

import (
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/symphonix/symphonix/identity"
	"github.com/symphonix/symphonix/internal/boardtest"
)

// TestClientRefusals: every way of pointing the commands at the wrong
// thing is one line that names the problem and what to do, exit 1 when
// the board (or what answers) refused, 2 when the command line is wrong.
func TestClientRefusals(t *testing.T) {
	t.Parallel()
	f := startFleet(t)
	env := func(vars ...string) func(string) string {
		return func(k string) string {
			for i := 0; i+1 < len(vars); i += 2 {
				if vars[i] == k {
					return vars[i+1]
				}
			}
			return ""
		}
	}
	token := env("SYMPHONIX_TOKEN", f.admin)

	// A web server that is not a board, over h2c and over HTTP/1 only.
	page := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.WriteHeader(http.StatusNotFound)
		w.Write([]byte("<html><body>no such page</body></html>"))
	})
	h2c := httptest.NewUnstartedServer(page)
	h2c.Config.Protocols = new(http.Protocols)
	h2c.Config.Protocols.SetHTTP1(true)
	h2c.Config.Protocols.SetUnencryptedHTTP2(true)
	h2c.Start()
	t.Cleanup(h2c.Close)
	// A server that answers as a board does, with far too much.
	huge := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/proto")
		w.Write(make([]byte, 9<<20))
	}))
	huge.Config.Protocols = h2c.Config.Protocols
	huge.Start()
	t.Cleanup(huge.Close)
	h1 := httptest.NewServer(page)
	t.Cleanup(h1.Close)
	// An address nothing listens on.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := "http://" + ln.Addr().String()
	ln.Close()

	dir := t.TempDir()
	tokenFile := filepath.Join(dir, "token")
	if err := os.WriteFile(tokenFile, []byte(f.admin+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	empty := filepath.Join(dir, "empty")
	if err := os.WriteFile(empty, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	open := filepath.Join(dir, "open")
	if err := os.WriteFile(open, []byte(f.admin), 0o644); err != nil {
		t.Fatal(err)
	}
	viewer := f.b.OperatorToken("watcher", identity.RoleViewer)

	for _, tc := range []struct {
		name  string
		env   func(string) string
		args  []string
		code  int
		words []string
	}{
		{"unknown flag", token, []string{"agents", "list", "--colour", "--board", f.b.URL}, 2, []string{"--colour", "unknown flag"}},
		{"unknown command", token, []string{"agents", "dance", "--board", f.b.URL}, 2, []string{"dance"}},
		{"no such flag as --token", token, []string{"agents", "list", "--token", f.admin, "--board", f.b.URL}, 2, []string{"--token: unknown flag"}},
		{"not a board (h2c)", token, []string{"agents", "list", "--board", h2c.URL}, 1, []string{h2c.URL + " is not a Symphonix board: HTTP 404 Not Found (text/html)"}},
		{"not a board (HTTP/1)", token, []string{"agents", "list", "--board", h1.URL}, 1, []string{h1.URL + " is not a Symphonix board: it does not speak HTTP/2"}},
		{"too much", token, []string{"agents", "list", "--board", huge.URL}, 1, []string{huge.URL + " sent a message larger than 8 MiB"}},
		{"nothing there", token, []string{"agents", "list", "--board", closed}, 1, []string{"cannot reach the board at " + closed, "is it running?"}},
		{"not a URL", token, []string{"agents", "list", "--board", "board.example.com"}, 2, []string{"--board", "http://HOST:PORT"}},
		{"credentials in the URL", token, []string{"agents", "list", "--board", "http://ops:secret@127.0.0.1:1"}, 2, []string{"--board", "SYMPHONIX_TOKEN"}},
		{"no token", env(), []string{"agents", "list", "--board", f.b.URL}, 2, []string{"no token", "SYMPHONIX_TOKEN", "--token-file"}},
		{"wrong token", env("SYMPHONIX_TOKEN", "not-a-token"), []string{"agents", "list", "--board", f.b.URL}, 1, []string{"the board refused the token: ", "set SYMPHONIX_TOKEN or --token-file"}},
		{"empty token file", env(), []string{"agents", "list", "--board", f.b.URL, "--token-file", empty}, 2, []string{"--token-file " + empty, "empty"}},
		{"missing token file", env(), []string{"agents", "list", "--board", f.b.URL, "--token-file", filepath.Join(dir, "nope")}, 1, []string{"--token-file", "no such file"}},
		{"token file others may read", env(), []string{"agents", "list", "--board", f.b.URL, "--token-file", open}, 1, []string{"--token-file", "other users", "chmod 600 " + open}},
		{"a viewer deciding", env("SYMPHONIX_TOKEN", viewer), []string{"rules", "delete", "x", "--board", f.b.URL}, 1, []string{"rule x: the board refused: ", "role"}},
		{"--ca-file for http", token, []string{"agents", "list", "--board", f.b.URL, "--ca-file", tokenFile}, 2, []string{"--ca-file", "https"}},
		{"--limit 0", token, []string{"agents", "list", "--limit", "0", "--board", f.b.URL}, 2, []string{"--limit"}},
		{"--limit too many", token, []string{"approvals", "list", "--limit", "10001", "--board", f.b.URL}, 2, []string{"--limit", "10000"}},
		{"--state unknown", token, []string{"approvals", "list", "--state", "done", "--board", f.b.URL}, 2, []string{"--state", "pending"}},
		{"get without a name", token, []string{"agents", "get", "--board", f.b.URL}, 2, []string{"NAME"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, stderr, err := runWith(t, tc.env, nil, tc.args...)
			wantExit(t, err, tc.code, tc.words...)
			if strings.Contains(err.Error(), f.admin) || strings.Contains(stderr, f.admin) || strings.Contains(out, f.admin) {
				t.Errorf("the token was printed: %v", err)
			}
			for _, raw := range []string{"unauthenticated:", "unavailable:", "Post \"", "goroutine "} {
				if strings.Contains(err.Error(), raw) {
					t.Errorf("error %q: a raw %q", err, raw)
				}
			}
		})
	}

	// The token from a file, and SYMPHONIX_TOKEN_FILE for --token-file.
	runOK := func(env func(string) string, args ...string) {
		t.Helper()
		if _, stderr, err := runWith(t, env, nil, args...); err != nil {
			t.Errorf("board %s: %v\n%s", strings.Join(args, " "), err, stderr)
		}
	}
	runOK(env(), "agents", "list", "--board", f.b.URL, "--token-file", tokenFile)
	runOK(env("SYMPHONIX_TOKEN_FILE", tokenFile, "SYMPHONIX_BOARD", f.b.URL), "agents", "list")

	// Both: the stronger source wins; both in the environment is refused.
	runOK(env("SYMPHONIX_TOKEN", "not-a-token"), "agents", "list", "--board", f.b.URL, "--token-file", tokenFile)
	config := filepath.Join(dir, "board.toml")
	if err := os.WriteFile(config, []byte("token-file = \""+empty+"\"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	runOK(env("SYMPHONIX_TOKEN", f.admin, "SYMPHONIX_CONFIG", config), "agents", "list", "--board", f.b.URL)
	_, _, err = runWith(t, env("SYMPHONIX_TOKEN", f.admin, "SYMPHONIX_TOKEN_FILE", tokenFile), nil, "agents", "list", "--board", f.b.URL)
	wantExit(t, err, 2, "SYMPHONIX_TOKEN and SYMPHONIX_TOKEN_FILE")
}

// TestClientTLS: an https board is verified against the system's roots,
// and --ca-file adds a private CA.
func TestClientTLS(t *testing.T) {
	t.Parallel()
	b := boardtest.Start(t, boardtest.Options{TLS: true})
	admin := b.OperatorToken("ops", identity.RoleAdmin)
	env := func(k string) string {
		if k == "SYMPHONIX_TOKEN" {
			return admin
		}
		return ""
	}
	_, _, err := runWith(t, env, nil, "agents", "list", "--board", b.URL)
	wantExit(t, err, 1, b.URL, "not signed by a trusted authority", "--ca-file")

	ca := filepath.Join(t.TempDir(), "ca.pem")
	if err := os.WriteFile(ca, []byte(b.CertPEM()), 0o600); err != nil {
		t.Fatal(err)
	}
	out, stderr, err := runWith(t, env, nil, "agents", "list", "--board", b.URL, "--ca-file", ca)
	if err != nil || !strings.HasPrefix(out, "NAME") {
		t.Errorf("agents list --ca-file: %v\n%s%s", err, out, stderr)
	}
	_, _, err = runWith(t, env, nil, "agents", "list", "--board", b.URL, "--ca-file", filepath.Join(t.TempDir(), "none.pem"))
	wantExit(t, err, 1, "--ca-file")
}
