package store

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
)

// Lock keeps an SQLite store to one board process: an OS lock on a file
// beside the store (board.db.lock), which the kernel releases when the
// process ends however it ends, so a board killed with SIGKILL leaves
// nothing stale behind. The file says the holder's PID, for the error a
// second board gets.
type Lock struct {
	f *os.File
}

// LockedError is a store another live process holds the lock of.
type LockedError struct {
	Path string
	PID  int // 0 when the holder had not written it yet
}

func (e *LockedError) Error() string {
	by := "another board"
	if e.PID > 0 {
		by += " (pid " + strconv.Itoa(e.PID) + ")"
	}
	return fmt.Sprintf("store: %s is in use by %s: one board per SQLite store; stop that one first", e.Path, by)
}

// TakeLock takes the lock of the store dsn names, failing with a
// *LockedError that names the holder's PID while another process, or
// another Lock in this one, holds it. A PostgreSQL store is shared by
// boards on purpose and has no lock: TakeLock returns nil, and Release on
// nil does nothing. Commands that work on the store beside a running
// board (minting tokens, adding people) do not take it; serving does.
func TakeLock(dsn string) (*Lock, error) {
	src, err := parseDSN(dsn)
	if err != nil || src.postgres {
		return nil, err
	}
	if err := prepareFolder(src.path); err != nil {
		return nil, err
	}
	path := src.path + ".lock"
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("store: lock: %w", err)
	}
	if err := lockFile(f); err != nil {
		var pid int
		if b, rerr := os.ReadFile(path); rerr == nil {
			pid, _ = strconv.Atoi(strings.TrimSpace(string(b)))
		}
		f.Close()
		if errors.Is(err, errLocked) {
			return nil, &LockedError{Path: src.path, PID: pid}
		}
		return nil, fmt.Errorf("store: lock %s: %w", path, err)
	}
	pid := []byte(strconv.Itoa(os.Getpid()) + "\n")
	if err := f.Truncate(0); err != nil {
		f.Close()
		return nil, fmt.Errorf("store: lock: %w", err)
	}
	if _, err := f.WriteAt(pid, 0); err != nil {
		f.Close()
		return nil, fmt.Errorf("store: lock: %w", err)
	}
	return &Lock{f: f}, nil
}

// Release gives the lock up. The file stays: were it removed, a board that
// had just opened it could lock the removed file while another locks a new
// one of the same name.
func (l *Lock) Release() error {
	if l == nil {
		return nil
	}
	return l.f.Close()
}

// errLocked: lockFile found the file locked by another holder.
var errLocked = errors.New("locked")
