package flow

import (
	"context"
	"maps"
	"slices"
	"sync"
)

// MemoryCheckpointer is a Checkpointer in this process's memory: for tests,
// and for an agent with no folder to keep its runs in. Everything it holds
// is lost with the process. The zero value is ready to use, and it is safe
// for concurrent use.
type MemoryCheckpointer struct {
	mu      sync.Mutex
	threads map[string][]byte
}

// Put stores a copy of the checkpoint.
func (m *MemoryCheckpointer) Put(ctx context.Context, thread string, checkpoint []byte) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.threads == nil {
		m.threads = map[string][]byte{}
	}
	m.threads[thread] = slices.Clone(checkpoint)
	return nil
}

// Get returns a copy of thread's checkpoint.
func (m *MemoryCheckpointer) Get(ctx context.Context, thread string) ([]byte, bool, error) {
	if err := ctx.Err(); err != nil {
		return nil, false, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	c, ok := m.threads[thread]
	return slices.Clone(c), ok, nil
}

// Delete forgets thread.
func (m *MemoryCheckpointer) Delete(ctx context.Context, thread string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.threads, thread)
	return nil
}

// Threads lists the threads with a checkpoint, sorted.
func (m *MemoryCheckpointer) Threads(ctx context.Context) ([]string, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	return slices.Sorted(maps.Keys(m.threads)), nil
}
