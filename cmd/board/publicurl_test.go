package main

import (
	"bytes"
	"errors"
	"net"
	"regexp"
	"strings"
	"testing"
)

// TestListenURL: a board listening on every interface is reached on
// loopback by a browser on its machine.
func TestListenURL(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		scheme, listen, addr, want string
	}{
		{"http", "[::]:7777", "[::]:7777", "http://localhost:7777"},
		{"http", ":7777", "[::]:7777", "http://localhost:7777"},
		{"http", "0.0.0.0:0", "[::]:41234", "http://127.0.0.1:41234"},
		{"https", "127.0.0.1:8443", "127.0.0.1:8443", "https://127.0.0.1:8443"},
		{"http", "[::1]:80", "[::1]:80", "http://[::1]:80"},
		{"http", "localhost:0", "127.0.0.1:41234", "http://localhost:41234"},
		{"http", "192.0.2.7:7777", "192.0.2.7:7777", "http://192.0.2.7:7777"},
	} {
		addr, err := net.ResolveTCPAddr("tcp", c.addr)
		if err != nil {
			t.Fatal(err)
		}
		if got := listenURL(c.scheme, c.listen, addr); got != c.want {
			t.Errorf("listenURL(%s, %s, %s) = %s, want %s", c.scheme, c.listen, c.addr, got, c.want)
		}
	}
}

// TestPublicURLChecked: --public-url and --url take an http(s) URL with a
// host and nothing after its path.
func TestPublicURLChecked(t *testing.T) {
	t.Parallel()
	for _, u := range []string{"board.example", "ftp://board.example", "https://", "https://ann:pw@board.example", "https://board.example/?a=1", "https://board.example/#x"} {
		err := run(t.Context(), []string{"--public-url", u, "--data", t.TempDir(), "--listen", "127.0.0.1:0"}, noEnv, &bytes.Buffer{}, &bytes.Buffer{})
		if err == nil || !strings.HasPrefix(err.Error(), "--public-url: ") {
			t.Errorf("--public-url %s = %v, want refused", u, err)
		}
	}
}

var setupLink = regexp.MustCompile(`(\S+)/setup#token=[A-Za-z0-9_-]{43}`)

// TestLinksUsePublicURL: the first-run link and board user add's link use
// the board's public URL: --public-url, else its listen address with a
// host a browser opens; user add, a process of its own, reads the one the
// board recorded when it started, unless told another.
func TestLinksUsePublicURL(t *testing.T) {
	t.Parallel()

	// Nothing recorded, nothing given: refused, and nobody added.
	data := t.TempDir()
	var errb bytes.Buffer
	err := run(t.Context(), []string{"user", "add", "--create", "--data", data, "--email", "ann@example.com", "--role", "viewer"}, noEnv, &bytes.Buffer{}, &errb)
	if !errors.Is(err, errNoPublicURL) {
		t.Errorf("user add before any board started = %v, want errNoPublicURL", err)
	}
	if list, _ := runOK(t, "user", "list", "--data", data); strings.Contains(list, "ann@") {
		t.Errorf("user add that failed added ann:\n%s", list)
	}

	// --public-url.
	out, _ := serveBoard(t, data, "--public-url", "https://board.example/")
	if m := setupLink.FindStringSubmatch(out); m == nil || m[1] != "https://board.example" {
		t.Errorf("first-run link with --public-url https://board.example/:\n%s", out)
	}
	out, _ = runOK(t, "user", "add", "--data", data, "--email", "ann@example.com", "--role", "viewer")
	if m := setupLink.FindStringSubmatch(out); m == nil || m[1] != "https://board.example" {
		t.Errorf("user add beside a board with --public-url https://board.example/ printed %q", out)
	}
	// The environment and --url win over what the board recorded.
	var stdout bytes.Buffer
	env := func(k string) string {
		if k == "SYMPHONIX_PUBLIC_URL" {
			return "https://proxy.example/board"
		}
		return ""
	}
	if err := run(t.Context(), []string{"user", "add", "--data", data, "--email", "bob@example.com", "--role", "viewer"}, env, &stdout, &errb); err != nil {
		t.Fatal(err)
	}
	if m := setupLink.FindStringSubmatch(stdout.String()); m == nil || m[1] != "https://proxy.example/board" {
		t.Errorf("user add with SYMPHONIX_PUBLIC_URL printed %q", stdout.String())
	}

	// On every interface, without --public-url: loopback, the real port.
	data = t.TempDir()
	out, _ = serveBoard(t, data, "--listen", "0.0.0.0:0")
	port := regexp.MustCompile(`listening on http://\S+:(\d+);`).FindStringSubmatch(out)
	if port == nil {
		t.Fatalf("board on 0.0.0.0:0 said:\n%s", out)
	}
	want := "http://127.0.0.1:" + port[1]
	if m := setupLink.FindStringSubmatch(out); m == nil || m[1] != want {
		t.Errorf("first-run link of a board on 0.0.0.0:%s, want %s:\n%s", port[1], want, out)
	}
	out, _ = runOK(t, "user", "add", "--data", data, "--email", "cy@example.com", "--role", "viewer")
	if m := setupLink.FindStringSubmatch(out); m == nil || m[1] != want {
		t.Errorf("user add beside a board on 0.0.0.0:%s printed %q, want %s/setup#token=…", port[1], out, want)
	}
}
