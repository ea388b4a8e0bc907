package waiting

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/symphonix/symphonix/flow"
)

// MemoryOf returns where the threads' memory (flow.BuildOptions.Memory:
// a conversation's history and the channels a flow marks remembers) is
// kept beside cp: the memory table of the same database when cp is a
// Store, so a thread's memory survives a restart as its waiting run does;
// nil otherwise, and the engine keeps it in the Graph's memory.
//
// It is a second flow.Checkpointer on the same file, never cp itself: the
// engine refuses a Memory that is its Checkpointer, since both are keyed
// by thread. A thread's memory nobody has written for KeepDays is
// forgotten when the store opens, as a waiting run is.
func MemoryOf(cp flow.Checkpointer) flow.Checkpointer {
	if s, ok := cp.(*Store); ok {
		return &storeMemory{s}
	}
	return nil
}

// storeMemory is the memory table of a Store.
type storeMemory struct{ s *Store }

var _ flow.Checkpointer = (*storeMemory)(nil)

// Put stores thread's memory, replacing what was there, and marks it
// touched now. It returns once the write is on disk.
func (m *storeMemory) Put(ctx context.Context, thread string, memory []byte) error {
	if memory == nil {
		memory = []byte{}
	}
	_, err := m.s.db.ExecContext(ctx, `INSERT INTO memory (thread, memory, updated_at) VALUES (?, ?, ?)
		ON CONFLICT (thread) DO UPDATE SET memory = excluded.memory, updated_at = excluded.updated_at`,
		thread, memory, m.s.now().UnixMilli())
	if err != nil {
		return fmt.Errorf("waiting: memory: put %q: %w", thread, err)
	}
	return nil
}

// Get returns thread's memory; ok is false when it has none.
func (m *storeMemory) Get(ctx context.Context, thread string) ([]byte, bool, error) {
	var b []byte
	err := m.s.db.QueryRowContext(ctx, "SELECT memory FROM memory WHERE thread = ?", thread).Scan(&b)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return nil, false, nil
	case err != nil:
		return nil, false, fmt.Errorf("waiting: memory: get %q: %w", thread, err)
	}
	if b == nil {
		b = []byte{}
	}
	return b, true, nil
}

// Delete forgets thread's memory.
func (m *storeMemory) Delete(ctx context.Context, thread string) error {
	if _, err := m.s.db.ExecContext(ctx, "DELETE FROM memory WHERE thread = ?", thread); err != nil {
		return fmt.Errorf("waiting: memory: delete %q: %w", thread, err)
	}
	return nil
}

// Threads lists the threads with a memory, in order.
func (m *storeMemory) Threads(ctx context.Context) ([]string, error) {
	rows, err := m.s.db.QueryContext(ctx, "SELECT thread FROM memory ORDER BY thread")
	if err != nil {
		return nil, fmt.Errorf("waiting: memory: threads: %w", err)
	}
	defer rows.Close()
	var threads []string
	for rows.Next() {
		var t string
		if err := rows.Scan(&t); err != nil {
			return nil, fmt.Errorf("waiting: memory: threads: %w", err)
		}
		threads = append(threads, t)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("waiting: memory: threads: %w", err)
	}
	return threads, nil
}
