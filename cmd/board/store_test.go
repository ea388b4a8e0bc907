package main

import (
	"bytes"
	"context"
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/symphonix/symphonix/store"
)

// errStarted: startBoard's board started.
var errStarted = errors.New("the board started")

// startBoard runs the board on data (--listen 127.0.0.1:0), and returns
// why it did not start, or errStarted once it has (it is then stopped).
func startBoard(t *testing.T, data string) error {
	t.Helper()
	return runStarting(t, "--data", data, "--listen", "127.0.0.1:0")
}

// runStarting is the command with args; a board it starts is stopped,
// and errStarted returned.
func runStarting(t *testing.T, args ...string) error {
	t.Helper()
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	out := &cancelOn{s: "listening on", cancel: cancel}
	err := run(ctx, args, noEnv, out, &bytes.Buffer{})
	if out.seen {
		return errStarted
	}
	return err
}

// cancelOn calls cancel once s has been written to it.
type cancelOn struct {
	s      string
	cancel func()
	b      syncBuffer
	seen   bool
}

func (c *cancelOn) Write(p []byte) (int, error) {
	n, err := c.b.Write(p)
	if !c.seen && strings.Contains(c.b.String(), c.s) {
		c.seen = true
		c.cancel()
	}
	return n, err
}

// TestUnknownDatabaseScheme: --database with a scheme that is neither
// PostgreSQL's nor file: is refused, naming the flag and the forms
// accepted, and makes nothing in the working directory. Not parallel: it
// changes the working directory.
func TestUnknownDatabaseScheme(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	for _, args := range [][]string{
		{"--database", "mysql://x", "--listen", "127.0.0.1:0"},
		{"--database", "mysql://x", "--listen", "127.0.0.1:0", "--public-url", "https://board.example"},
		{"token", "list", "--database", "mysql://x"},
		{"user", "list", "--database", "mysql://x"},
	} {
		err := runStarting(t, args...)
		if !errors.Is(err, store.ErrDSN) {
			t.Errorf("board %s = %v, want store.ErrDSN", strings.Join(args, " "), err)
			continue
		}
		for _, want := range []string{"--database", `"mysql"`, "postgres://", "file:"} {
			if !strings.Contains(err.Error(), want) {
				t.Errorf("board %s = %v, want it to name %s", strings.Join(args, " "), err, want)
			}
		}
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Errorf("--database mysql://x left %v in the working directory", entries)
	}
}
