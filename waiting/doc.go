// Package waiting is where a run that stopped for a person (at an ask or an
// approval) waits, so that it is still there after the agent restarts.
//
// Open keeps the runs in a SQLite database in the agent's folder,
// <dir>/.symphonix/waiting.db, written with synchronous=FULL: a paused
// approval an operator was told about must survive a power cut. A Store is a
// flow.Checkpointer; it keeps one checkpoint per thread, as the engine
// encoded it, and the time the thread was last written.
//
// What it stores is runs, which for a chat is what was said. A thread nobody
// has touched (written) for KeepDays is forgotten when the store opens — by
// the whole thread, never by part of it, because a run is a chain and half a
// chain is worse than none.
//
// Beside the runs, the same file keeps each thread's memory (MemoryOf): a
// conversation's history and the channels a flow marks remembers, as the
// engine's BuildOptions.Memory, so a thread goes on where it was after a
// restart. It is forgotten after KeepDays untouched, as a thread's run is.
//
// OpenOrMemory never fails: a folder that cannot be written or a file that is
// not a database takes away durability and nothing else, and the description
// it returns, which the agent prints every time it starts, says which one the
// runs got — the two look identical right up until somebody restarts the
// process.
package waiting
