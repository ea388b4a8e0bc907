//go:build unix

package main

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/symphonix/symphonix/store"
)

// TestBoardRefusesOpenStore: a board whose store other users may read, or
// whose folder they may write, does not start, and names the chmod that
// fixes it.
func TestBoardRefusesOpenStore(t *testing.T) {
	t.Parallel()
	data := t.TempDir()
	if err := os.Chmod(data, 0o777); err != nil {
		t.Fatal(err)
	}
	err := startBoard(t, data)
	var perm *store.PermissionError
	if !errors.As(err, &perm) || perm.Path != data || !strings.Contains(err.Error(), "chmod go-w "+data) {
		t.Fatalf("board on a folder anyone may write = %v, want a *store.PermissionError naming chmod go-w %s", err, data)
	}
	if err := os.Chmod(data, 0o755); err != nil {
		t.Fatal(err)
	}
	_, stop := serveBoard(t, data)
	stop()
	db := filepath.Join(data, "board.db")
	if err := os.Chmod(db, 0o644); err != nil {
		t.Fatal(err)
	}
	err = startBoard(t, data)
	if !errors.As(err, &perm) || perm.Path != db || !strings.Contains(err.Error(), "chmod go-rw "+db) {
		t.Fatalf("board on a board.db anyone may read = %v, want a *store.PermissionError naming chmod go-rw %s", err, db)
	}
}
