package health_test

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/symphonix/symphonix/health"
)

// deadline is the longest any probe test waits.
const deadline = 45 * time.Second

func probe(t *testing.T, s health.Spec) error {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), deadline)
	defer cancel()
	return s.Check()(ctx)
}

// TestTCP: a listener answers; a closed port does not.
func TestTCP(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	if err := probe(t, health.Spec{Name: "db", TCP: ln.Addr().String()}); err != nil {
		t.Errorf("tcp to a listener: %v", err)
	}
	closed, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := closed.Addr().String()
	closed.Close()
	if err := probe(t, health.Spec{Name: "db", TCP: addr}); err == nil || !strings.Contains(err.Error(), "refused") {
		t.Errorf("tcp to a closed port = %v; want connection refused", err)
	}
}

// TestHTTP: the status wanted is ok; another is an error with the start of
// the body; redirects are followed up to MaxRedirects; the URL is never
// repeated.
func TestHTTP(t *testing.T) {
	t.Parallel()
	mux := http.NewServeMux()
	mux.HandleFunc("/ok", func(http.ResponseWriter, *http.Request) {})
	mux.HandleFunc("/down", func(w http.ResponseWriter, _ *http.Request) {
		http.Error(w, "database unreachable", http.StatusServiceUnavailable)
	})
	mux.HandleFunc("/huge", func(w http.ResponseWriter, _ *http.Request) {
		w.WriteHeader(http.StatusInternalServerError)
		chunk := []byte(strings.Repeat("x", 64<<10))
		for range 160 { // 10 MiB, unless the client stops reading
			if _, err := w.Write(chunk); err != nil {
				return
			}
		}
	})
	mux.HandleFunc("/hop/{n}", func(w http.ResponseWriter, r *http.Request) {
		var n int
		fmt.Sscan(r.PathValue("n"), &n)
		if n == 0 {
			return
		}
		http.Redirect(w, r, fmt.Sprintf("/hop/%d", n-1), http.StatusFound)
	})
	mux.HandleFunc("/created", func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusCreated) })
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)

	for _, tc := range []struct {
		name string
		h    health.HTTPSpec
		want string // "" for ok, else a part of the error
	}{
		{"ok", health.HTTPSpec{URL: srv.URL + "/ok"}, ""},
		{"the status declared", health.HTTPSpec{URL: srv.URL + "/created", Status: 201}, ""},
		{"not the status declared", health.HTTPSpec{URL: srv.URL + "/ok", Status: 204}, "status 200, want 204"},
		{"down", health.HTTPSpec{URL: srv.URL + "/down", Status: 200}, "status 503, want 200: database unreachable"},
		{"three redirects", health.HTTPSpec{URL: srv.URL + "/hop/3"}, ""},
		{"four redirects", health.HTTPSpec{URL: srv.URL + "/hop/4"}, "stopped after 3 redirects"},
		{"a huge body", health.HTTPSpec{URL: srv.URL + "/huge"}, "status 500, want 200: xxx"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			err := probe(t, health.Spec{Name: "api", HTTP: &tc.h})
			switch {
			case tc.want == "" && err != nil:
				t.Errorf("GET %s = %v; want ok", tc.h.URL, err)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
				t.Errorf("GET %s = %v; want %q", tc.h.URL, err, tc.want)
			case err != nil && len(err.Error()) > health.MaxBodyBytes+64:
				t.Errorf("GET %s: error of %d bytes; want the body read to at most %d", tc.h.URL, len(err.Error()), health.MaxBodyBytes)
			}
		})
	}

	t.Run("the URL is not repeated", func(t *testing.T) {
		t.Parallel()
		gone := httptest.NewServer(mux)
		url := gone.URL + "/ok?token=sk-in-the-query"
		gone.Close()
		err := probe(t, health.Spec{Name: "api", HTTP: &health.HTTPSpec{URL: url}})
		if err == nil || strings.Contains(err.Error(), "sk-in-the-query") || !strings.Contains(err.Error(), "refused") {
			t.Errorf("GET of a closed server = %v; want refused, without the URL", err)
		}
	})

	t.Run("a server that does not answer", func(t *testing.T) {
		t.Parallel()
		stuck := make(chan struct{})
		slow := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { <-stuck }))
		defer slow.Close()
		defer close(stuck)
		ctx, cancel := context.WithTimeout(t.Context(), 200*time.Millisecond)
		defer cancel()
		start := time.Now()
		err := health.Spec{Name: "api", HTTP: &health.HTTPSpec{URL: slow.URL}}.Check()(ctx)
		if err == nil || time.Since(start) > deadline {
			t.Errorf("GET of a server that does not answer = %v after %s; want an error when the context ends", err, time.Since(start))
		}
	})
}

// TestCommand: a command must exit 0; its output is the detail when it does
// not, bounded; it runs in Dir, without a shell; it is killed, with what it
// started, when its context ends.
func TestCommand(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "marker"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		cmd  []string
		want string
	}{
		{"true", []string{"true"}, ""},
		{"false", []string{"false"}, "exit status 1"},
		{"its output on failure", []string{"sh", "-c", "echo disk full >&2; exit 3"}, "exit status 3: disk full"},
		{"in Dir", []string{"test", "-f", "marker"}, ""},
		{"without a shell", []string{"test", "-f", "mark*"}, "exit status 1"},
		{"not found", []string{"no-such-program-here"}, "executable file not found"},
		{"go env", []string{"go", "env", "GOROOT"}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			err := probe(t, health.Spec{Name: "cmd", Command: tc.cmd, Dir: dir})
			if tc.want == "" && err != nil || tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)) {
				t.Errorf("%q = %v; want %q", tc.cmd, err, tc.want)
			}
		})
	}

	t.Run("output bounded", func(t *testing.T) {
		t.Parallel()
		err := probe(t, health.Spec{Name: "cmd", Command: []string{"sh", "-c", "yes | head -c 1000000; exit 1"}})
		if err == nil || len(err.Error()) > health.MaxOutputBytes+64 || !strings.HasSuffix(err.Error(), "y…") {
			n := 0
			if err != nil {
				n = len(err.Error())
			}
			t.Errorf("a command with 1 MB of output: error of %d bytes; want at most %d of its output, cut", n, health.MaxOutputBytes)
		}
	})

	t.Run("killed with what it started", func(t *testing.T) {
		t.Parallel()
		ctx, cancel := context.WithTimeout(t.Context(), 200*time.Millisecond)
		defer cancel()
		dir := t.TempDir()
		start := time.Now()
		// The shell waits for a child that holds the output open: killing
		// the shell alone would leave the sleep running for 60s.
		err := health.Spec{Name: "cmd", Command: []string{"sh", "-c", "sleep 60 & echo $! > child; wait"}, Dir: dir}.Check()(ctx)
		if took := time.Since(start); err == nil || !strings.Contains(err.Error(), "killed") || took > 5*time.Second {
			t.Errorf("a command past its context = %v after %s; want killed within a second or so", err, took)
		}
		pid, err := os.ReadFile(filepath.Join(dir, "child"))
		if err != nil {
			t.Fatal(err)
		}
		child := strings.TrimSpace(string(pid))
		stat := filepath.Join("/proc", child, "stat")
		if runtime.GOOS != "linux" {
			if os.Getenv("CI") == "true" {
				t.Fatal("CI runs on Linux: the child is looked for in /proc")
			}
			t.Skip("the child is looked for in /proc, which only Linux has")
		}
		for end := time.Now().Add(deadline); ; {
			data, err := os.ReadFile(stat)
			if err != nil || strings.Contains(string(data), ") Z ") { // gone, or dead and not yet reaped
				break
			}
			if time.Now().After(end) {
				t.Fatalf("the command's child %s is still running %s after the command was killed", child, deadline)
			}
			<-time.After(10 * time.Millisecond) // the next look
		}
	})
}

// TestSpecInvalid: a Spec built by hand with no probe, or two, fails as a
// check rather than panicking.
func TestSpecInvalid(t *testing.T) {
	t.Parallel()
	for _, s := range []health.Spec{{Name: "none"}, {Name: "two", TCP: "db:1", Command: []string{"true"}}} {
		if err := probe(t, s); err == nil || !strings.Contains(err.Error(), "none or more than one") {
			t.Errorf("%+v = %v; want an error", s, err)
		}
	}
}
