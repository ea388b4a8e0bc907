package main

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"
)

func noEnv(string) string { return "" }

func runOK(t *testing.T, args ...string) (stdout, stderr string) {
	t.Helper()
	var out, errb bytes.Buffer
	if err := run(t.Context(), args, noEnv, &out, &errb); err != nil {
		t.Fatalf("board %s: %v\n%s", strings.Join(args, " "), err, errb.String())
	}
	return out.String(), errb.String()
}

// TestUserCommands: add prints a one-time setup link and sets no password;
// list shows people; disable and enable say how many sessions ended.
func TestUserCommands(t *testing.T) {
	t.Parallel()
	data := t.TempDir()
	out, _ := runOK(t, "user", "add", "--create", "--data", data, "--email", "Alice@Example.com", "--name", "Alice", "--role", "approver", "--url", "https://board.example/")
	if !regexp.MustCompile(`^https://board\.example/setup#token=[A-Za-z0-9_-]{43}\n$`).MatchString(out) {
		t.Errorf("user add printed %q, want the setup link alone", out)
	}
	var errb bytes.Buffer
	if err := run(t.Context(), []string{"user", "add", "--data", data, "--email", "alice@example.com", "--role", "viewer", "--url", "https://board.example"}, noEnv, &bytes.Buffer{}, &errb); err == nil {
		t.Errorf("adding alice twice: no error")
	}
	if err := run(t.Context(), []string{"user", "add", "--data", data, "--email", "bob@example.com", "--role", "root", "--url", "https://board.example"}, noEnv, &bytes.Buffer{}, &errb); err == nil {
		t.Errorf("adding with role root: no error")
	}
	out, _ = runOK(t, "user", "list", "--data", data)
	if !regexp.MustCompile(`alice@example\.com\s+Alice\s+approver\s+not set\s+-`).MatchString(out) {
		t.Errorf("user list:\n%s\nwant alice, approver, no password", out)
	}
	_, stderr := runOK(t, "user", "disable", "--data", data, "--email", "alice@example.com")
	if !strings.Contains(stderr, "disabled; 0 sessions ended") {
		t.Errorf("user disable said %q", stderr)
	}
	out, _ = runOK(t, "user", "list", "--data", data)
	if !strings.Contains(out, "disabled") {
		t.Errorf("user list after disable:\n%s", out)
	}
	runOK(t, "user", "enable", "--data", data, "alice@example.com")
	out, _ = runOK(t, "user", "list", "--data", data)
	if strings.Contains(out, "disabled") {
		t.Errorf("user list after enable:\n%s", out)
	}
}

// syncBuffer is a bytes.Buffer safe to read while run writes.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// serveBoard runs the board on data, with args after --data and --listen
// 127.0.0.1:0, until the test ends or stop is called, and waits for its
// listening line; it returns the board's stdout so far.
func serveBoard(t *testing.T, data string, args ...string) (out string, stop func()) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	var stdout, stderr syncBuffer
	done := make(chan error, 1)
	go func() {
		done <- run(ctx, append([]string{"--data", data, "--listen", "127.0.0.1:0"}, args...), noEnv, &stdout, &stderr)
	}()
	var once sync.Once
	stop = func() {
		once.Do(func() {
			cancel()
			<-done
		})
	}
	t.Cleanup(stop)
	deadline := time.Now().Add(20 * time.Second)
	// The listening line and the first-run line come in one write.
	for !strings.Contains(stdout.String(), "listening on") {
		select {
		case err := <-done:
			done <- err
			t.Fatalf("board did not start: %v\n%s", err, stderr.String())
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("board did not start: %s", stdout.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
	return stdout.String(), stop
}

// TestFirstRunLink: a board with nobody prints a one-time link that creates
// the first admin; with an admin it prints none.
func TestFirstRunLink(t *testing.T) {
	t.Parallel()
	data := t.TempDir()
	out, stop := serveBoard(t, data)
	m := regexp.MustCompile(`first run: create the first admin at (http://127\.0\.0\.1:\d+)/setup#token=([A-Za-z0-9_-]{43}) `).FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("no first-run link in:\n%s", out)
	}
	body, _ := json.Marshal(map[string]string{"token": m[2], "email": "root@example.com", "name": "Root", "password": "correct horse battery"})
	resp, err := http.Post(m[1]+"/auth/setup", "application/json", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("setup through the printed link: %s", resp.Status)
	}
	list, _ := runOK(t, "user", "list", "--data", data)
	if !regexp.MustCompile(`root@example\.com\s+Root\s+admin\s+set`).MatchString(list) {
		t.Errorf("user list:\n%s\nwant root, an admin with a password", list)
	}
	// The board again: somebody exists, so no link.
	stop()
	if out, _ := serveBoard(t, data); strings.Contains(out, "first run") {
		t.Errorf("a board with an admin printed a first-run link:\n%s", out)
	}
}

// TestPluralNames: users and tokens are user and token, named as the
// operator commands (agents, approvals, rules, tools) are.
func TestPluralNames(t *testing.T) {
	t.Parallel()
	data := t.TempDir()
	runOK(t, "users", "add", "--create", "--data", data, "--email", "ann@example.com", "--name", "Ann", "--role", "viewer", "--url", "https://board.example/")
	if out, _ := runOK(t, "users", "list", "--data", data); !strings.Contains(out, "ann@example.com") {
		t.Errorf("board users list printed %q, want ann", out)
	}
	runOK(t, "tokens", "agent", "--name", "hello", "--data", data)
	if out, _ := runOK(t, "tokens", "list", "--data", data); !strings.Contains(out, "hello") {
		t.Errorf("board tokens list printed %q, want the token of hello", out)
	}
}
