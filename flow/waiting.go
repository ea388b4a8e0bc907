package flow

import "context"

// Checkpointer keeps the runs that stopped for a person (at an ask or an
// approval), by thread, so that they are still there after a restart. The
// engine owns the checkpoint's encoding; a Checkpointer stores it as given.
// Implementations: MemoryCheckpointer (lost with the process) and package
// waiting (SQLite in the agent's folder).
type Checkpointer interface {
	// Put stores the checkpoint of thread, replacing any before it.
	Put(ctx context.Context, thread string, checkpoint []byte) error
	// Get returns thread's checkpoint; ok is false when there is none.
	Get(ctx context.Context, thread string) (checkpoint []byte, ok bool, err error)
	// Delete forgets thread. Deleting a thread that is not there is not an error.
	Delete(ctx context.Context, thread string) error
	// Threads lists the threads that have a checkpoint.
	Threads(ctx context.Context) ([]string, error)
}
