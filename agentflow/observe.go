package agentflow

import (
	"context"
	"time"
)

// EventKind is what happened in a run, as Config.Observe is told.
type EventKind uint8

// The things a run tells its observer, in the order they happen.
const (
	// EventStageStarted: a stage's body begins.
	EventStageStarted EventKind = iota + 1
	// EventStageFinished: a stage ended; Err says why when it failed.
	EventStageFinished
	// EventAgentStarted: an agent() call is made (its first try).
	EventAgentStarted
	// EventAgentFinished: an agent() call ended, after all its tries.
	EventAgentFinished
	// EventProgress: an emit progress; Payload is its object.
	EventProgress
)

var eventKindNames = [...]string{"", "stage started", "stage finished", "agent started", "agent finished", "progress"}

func (k EventKind) String() string {
	if int(k) < len(eventKindNames) {
		return eventKindNames[k]
	}
	return "event kind ?"
}

// Event is one thing that happened in a run.
type Event struct {
	Kind EventKind
	// Name is the stage's name for a stage event, the target's use alias
	// for an agent() call's, and the enclosing stage's name ("" in the
	// pipeline's own statements) for progress.
	Name string
	// Call numbers an agent() call in its run, from 1; the same on its
	// started and finished events. For progress it numbers the emit, from
	// 1.
	Call int
	// Pos is where the stage, the agent() call or the emit is.
	Pos Position
	// At is when it happened.
	At time.Time
	// Duration is how long a finished stage or agent() call took.
	Duration time.Duration
	// Tries is how many tries a finished agent() call made.
	Tries int
	// Err is why a finished stage or agent() call failed; nil when it did
	// not.
	Err error
	// Payload is progress's object, as emitted: the run's own value, to
	// be read and never changed.
	Payload map[string]any
}

// tell gives e to the run's observer, if it has one.
func (r *run) tell(ctx context.Context, e Event) {
	if r.cfg.Observe == nil {
		return
	}
	if e.At.IsZero() {
		e.At = time.Now()
	}
	r.cfg.Observe(ctx, e)
}
