//go:build unix

package store

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestLockOnePerStore: while one Lock holds an SQLite store a second is
// refused, naming the holder's PID; once released it can be taken again.
// PostgreSQL stores have no lock. Not parallel: a process another test
// forks while the first Lock is held holds it too, until it execs.
func TestLockOnePerStore(t *testing.T) {
	dir := t.TempDir()
	first, err := TakeLock(SQLiteDSN(dir))
	if err != nil {
		t.Fatal(err)
	}
	if st, err := os.Stat(filepath.Join(dir, "board.db.lock")); err != nil || st.Mode().Perm() != 0o600 {
		t.Errorf("lock file: %v, %v; want mode 0600", st, err)
	}
	// The same file, named another way.
	_, err = TakeLock("file://" + filepath.Join(dir, "board.db") + "?_pragma=cache_size(-4000)")
	var locked *LockedError
	if !errors.As(err, &locked) {
		t.Fatalf("second TakeLock = %v, want a *LockedError", err)
	}
	if locked.PID != os.Getpid() || locked.Path != filepath.Join(dir, "board.db") {
		t.Errorf("LockedError = %+v, want pid %d, path %s", locked, os.Getpid(), filepath.Join(dir, "board.db"))
	}
	if want := "pid " + strconv.Itoa(os.Getpid()); !strings.Contains(err.Error(), want) {
		t.Errorf("second TakeLock = %v, want it to name %s", err, want)
	}
	if err := first.Release(); err != nil {
		t.Fatal(err)
	}
	second, err := TakeLock(SQLiteDSN(dir))
	if err != nil {
		t.Fatalf("TakeLock after Release: %v", err)
	}
	second.Release()

	if l, err := TakeLock("postgres://board@db.example/board"); l != nil || err != nil {
		t.Errorf("TakeLock(postgres) = %v, %v; want no lock and no error", l, err)
	}
}
