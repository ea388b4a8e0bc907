package waiting

import (
	"context"
	"fmt"
	"path/filepath"

	"github.com/symphonix/symphonix/flow"
)

// OpenOrMemory returns where the runs of the agent folder dir wait: the
// Store of Open when that is possible, and a checkpointer in memory (whose
// runs are lost on restart) when it is not — a folder that cannot be
// written, a file that is not a database, a database of a newer layout. It
// never fails, because an agent that refuses to start over this is a worse
// answer than one that starts without durability.
//
// The description says which, and why, without the checkpoints: print it
// every time the agent starts, for example
//
//	waiting runs are kept in /srv/agent/.symphonix/waiting.db
//	waiting runs are kept in memory (they are lost on restart): waiting: create folder: mkdir …: permission denied
//
// Either checkpointer is an io.Closer; close it when the agent stops.
func OpenOrMemory(ctx context.Context, dir string, cfg Config) (flow.Checkpointer, string) {
	s, err := Open(ctx, dir, cfg)
	if err != nil {
		return newMemory(err), "waiting runs are kept in memory (they are lost on restart): " + err.Error()
	}
	path := s.Path()
	if abs, err := filepath.Abs(path); err == nil {
		path = abs
	}
	desc := "waiting runs are kept in " + path
	if n := s.Forgotten(); n > 0 {
		desc += fmt.Sprintf(" (forgot %d %s nobody had touched for %d days)", n, plural(n, "thread", "threads"), cfg.days())
	}
	return s, desc
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
