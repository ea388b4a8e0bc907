package waiting

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestCheck: a store checks by writing and reading; its runs are left as
// they were; a store that cannot write fails, and the store in memory
// fails saying why it is in memory.
func TestCheck(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	s, err := Open(t.Context(), dir, Config{})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Put(t.Context(), "t1", []byte("run")); err != nil {
		t.Fatal(err)
	}
	for range 2 {
		if err := CheckerOf(s).Check(t.Context()); err != nil {
			t.Fatalf("Check of a store that works = %v", err)
		}
	}
	if threads, err := s.Threads(t.Context()); err != nil || len(threads) != 1 || threads[0] != "t1" {
		t.Errorf("Threads after the checks = %v, %v; want t1 alone", threads, err)
	}
	s.db.SetMaxOpenConns(1) // the connection that cannot write is the one asked
	if _, err := s.db.ExecContext(t.Context(), "PRAGMA query_only = ON"); err != nil {
		t.Fatal(err)
	}
	if err := s.Check(t.Context()); err == nil || !strings.Contains(err.Error(), "waiting: check") {
		t.Errorf("Check of a store that cannot write = %v, want an error", err)
	}
	s.Close()
	if err := s.Check(t.Context()); err == nil {
		t.Error("Check of a closed store = nil, want an error")
	}

	bad := t.TempDir()
	if err := os.MkdirAll(filepath.Join(bad, ".symphonix"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(Path(bad), []byte(strings.Repeat("not sqlite ", 1000)), 0o600); err != nil {
		t.Fatal(err)
	}
	cp, _ := OpenOrMemory(t.Context(), bad, Config{})
	err = CheckerOf(cp).Check(t.Context())
	if !errors.Is(err, ErrInMemory) || !strings.Contains(err.Error(), "not a database") {
		t.Errorf("Check of the store in memory = %v, want ErrInMemory, saying why", err)
	}
}
