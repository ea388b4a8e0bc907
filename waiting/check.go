package waiting

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"

	"github.com/symphonix/symphonix/flow"
)

// Checker is a waiting store that can say whether it keeps runs now: a
// Store, and the store in memory OpenOrMemory falls back to.
type Checker interface {
	Check(ctx context.Context) error
}

// CheckerOf is cp's Checker, when it has one: what OpenOrMemory returns
// does. nil otherwise.
func CheckerOf(cp flow.Checkpointer) Checker {
	c, _ := cp.(Checker)
	return c
}

// Check writes a row and reads it back, as a health check: a store whose
// file cannot be written (a full disk, a folder made read-only, a file
// locked by another process past the busy timeout) fails it, naming why.
// The row is in a table of its own, health, outside the runs' layout
// (PRAGMA user_version): it holds one row, the last check's, and a build
// that does not know it leaves it alone. Nothing the runs keep is touched.
func (s *Store) Check(ctx context.Context) error {
	var b [8]byte
	_, _ = rand.Read(b[:]) // never fails
	want := hex.EncodeToString(b[:])
	if _, err := s.db.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS health (
		id      INTEGER PRIMARY KEY CHECK (id = 1),
		nonce   TEXT NOT NULL,
		checked INTEGER NOT NULL -- unix milliseconds
	)`); err != nil {
		return fmt.Errorf("waiting: check %s: %w", s.path, err)
	}
	if _, err := s.db.ExecContext(ctx, `INSERT INTO health (id, nonce, checked) VALUES (1, ?, ?)
		ON CONFLICT (id) DO UPDATE SET nonce = excluded.nonce, checked = excluded.checked`,
		want, s.now().UnixMilli()); err != nil {
		return fmt.Errorf("waiting: check %s: write: %w", s.path, err)
	}
	var got string
	if err := s.db.QueryRowContext(ctx, "SELECT nonce FROM health WHERE id = 1").Scan(&got); err != nil {
		return fmt.Errorf("waiting: check %s: read: %w", s.path, err)
	}
	if got != want {
		return fmt.Errorf("waiting: check %s: read back %q after writing %q: another process checks the same store", s.path, got, want)
	}
	return nil
}

// ErrInMemory: the waiting runs are kept in memory, and lost on restart.
var ErrInMemory = errors.New("waiting runs are kept in memory (they are lost on restart)")

// Check fails for the store in memory, with why the folder's store could
// not be opened: the agent runs, but a run waiting for a person does not
// survive a restart, which it would say it does.
func (m *memory) Check(context.Context) error {
	if m.why == nil {
		return ErrInMemory
	}
	return fmt.Errorf("%w: %w", ErrInMemory, m.why)
}
