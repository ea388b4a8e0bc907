package flow

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"time"
)

// EventKind is what happened in a run.
type EventKind uint8

// The things that happen in a run, in the order they can: a run starts (or
// is resumed), enters and finishes nodes, and pauses or ends one of three
// ways.
const (
	// EventRunStarted: Invoke accepted its input and the run begins.
	EventRunStarted EventKind = iota + 1
	// EventRunResumed: Resume accepted an answer and the run goes on.
	EventRunResumed
	// EventNodeEntered: a node's step begins.
	EventNodeEntered
	// EventNodeFinished: a node's step ended: Event.Outcome says how.
	EventNodeFinished
	// EventRunPaused: the run stopped to wait for a person (Event.Pending).
	EventRunPaused
	// EventRunFinished: the run came to its end.
	EventRunFinished
	// EventRunFailed: the run ended with an error (Event.Err).
	EventRunFailed
	// EventRunStopped: Graph.Stop ended the run at a step boundary
	// (Event.Err is ErrStopped, with the reason).
	EventRunStopped
)

var eventKindNames = [...]string{"", "run started", "run resumed", "node entered", "node finished", "run paused", "run finished", "run failed", "run stopped"}

func (k EventKind) String() string {
	if int(k) < len(eventKindNames) {
		return eventKindNames[k]
	}
	return fmt.Sprintf("event kind %d", uint8(k))
}

// How a node's step came out (Event.Outcome of EventNodeFinished).
const (
	OutcomeOK      = "ok"
	OutcomeFailed  = "failed"  // Event.Err; with onError the run went on there
	OutcomePaused  = "paused"  // an approval not yet given, an ask not yet answered
	OutcomeStopped = "stopped" // the run's context ended, or another node of the step failed
)

// Event is one thing that happened in a run, as BuildOptions.Watch is told.
type Event struct {
	Kind EventKind
	// Run is the run's id (RunOf); Thread its thread.
	Run    string
	Thread string
	// At is when it happened, by BuildOptions.Now.
	At time.Time
	// Node, NodeKind and Copy name the node of a node event (Copy is the
	// fanout copy, from 0, or -1), and Node the node a paused run waits at.
	Node     string
	NodeKind Kind
	Copy     int
	// Outcome is how a finished node came out: OutcomeOK, …
	Outcome string
	// Duration is a finished node's time, or the time this call of Invoke
	// or Resume spent in steps when the run pauses or ends.
	Duration time.Duration
	// Steps is how many steps this call of Invoke or Resume took, when the
	// run pauses or ends.
	Steps int
	// Err is why a node failed, or why the run failed or was stopped.
	Err error
	// Pending is what a paused run waits for, and what a node whose
	// outcome is paused waits for.
	Pending *Pending
	// Input is what EventRunStarted's run was given, as Invoke was given
	// it; State is the run's final state at EventRunFinished. Both are
	// the run's own: a Watcher reads them and never changes them.
	Input map[string]any
	State State
	// Delegation is how the run was delegated to, when an agent node of
	// another run started it; nil otherwise. The same on every event of
	// the run.
	Delegation *Delegation
}

// Watcher is told everything that happens in every run of a graph, as it
// happens, on the goroutine it happens on: it must not block, and must be
// safe for concurrent use. ctx is the run's (RunOf names it).
type Watcher func(ctx context.Context, e Event)

// ErrStopped is what a run ended by Graph.Stop fails with.
var ErrStopped = errors.New("flow: the run was stopped")

// runKey carries the run's id on the context of everything a run calls.
type runKey struct{}

// RunOf returns the id of the run ctx belongs to: the engine puts it on the
// context of every handler, router, model and tool call, and of the
// Watcher. "" outside a run.
func RunOf(ctx context.Context) string {
	s, _ := ctx.Value(runKey{}).(string)
	return s
}

// InRun returns ctx carrying the run id as RunOf reads it, for a run
// another engine makes (an Agent Flow workflow's): the model and tool
// calls made on it are journalled and counted as that run's. Invoke never
// reads it; WithRunID names the run Invoke starts.
func InRun(ctx context.Context, id string) context.Context {
	return context.WithValue(ctx, runKey{}, id)
}

// WithRunID returns ctx asking Invoke to give the run it starts this id,
// so the caller can name the run before it starts (a run fired from a
// board is answered with its id at once). Without it, Invoke makes one up.
// The id is the caller's to keep unique.
func WithRunID(ctx context.Context, id string) context.Context {
	return context.WithValue(ctx, runIDKey{}, id)
}

type runIDKey struct{}

// NewRunID returns a new random run id: 32 lower-case hex digits.
func NewRunID() string {
	var b [16]byte
	_, _ = rand.Read(b[:]) // crypto/rand does not fail on supported platforms
	return hex.EncodeToString(b[:])
}

// Stop asks the run with id run, if it is taking steps in this Graph, to
// end at its next step boundary: the step in flight finishes (a tool call
// in it completes, and is recorded as any other), then the run fails with
// ErrStopped and why, and a Watcher sees EventRunStopped. A run whose step
// in flight pauses it ends so too, rather than waiting, and one reserved
// (Reserve) and not begun ends before its first step. It reports whether
// such a run was found. A paused run is not taking steps: Cancel ends it.
func (g *Graph) Stop(run, why string) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	a, ok := g.active[run]
	if ok && a.why == "" {
		if why == "" {
			why = "stopped"
		}
		a.why = why
	}
	return ok
}

// Running returns the ids of the runs taking steps in this Graph now.
func (g *Graph) Running() []string {
	g.mu.Lock()
	defer g.mu.Unlock()
	ids := make([]string, 0, len(g.active))
	for id, a := range g.active {
		if !a.reserved {
			ids = append(ids, id)
		}
	}
	return ids
}

// activeRun is a run taking steps, or reserved to, for Stop.
type activeRun struct {
	why      string
	reserved bool // by Reserve, and not begun yet
}

// Reserve holds id for a run the caller is about to start with
// WithRunID, and may not start at once (it waits its turn on its thread,
// or for the caller to be ready): a Stop meanwhile finds it, and the run
// then ends stopped before its first step, as if stopped at its first
// step boundary. release lets id go if no run starts with it; once a run
// has begun with it, release does nothing.
func (g *Graph) Reserve(id string) (release func()) {
	g.mu.Lock()
	if g.active == nil {
		g.active = map[string]*activeRun{}
	}
	if g.active[id] == nil {
		g.active[id] = &activeRun{reserved: true}
	}
	g.mu.Unlock()
	return func() {
		g.mu.Lock()
		if a := g.active[id]; a != nil && a.reserved {
			delete(g.active, id)
		}
		g.mu.Unlock()
	}
}

// begin registers r as taking steps, keeping a stop asked for while it
// was reserved, and returns ctx carrying its id.
func (r *run) begin(ctx context.Context) context.Context {
	r.g.mu.Lock()
	if r.g.active == nil {
		r.g.active = map[string]*activeRun{}
	}
	if a := r.g.active[r.id]; a != nil && a.reserved {
		a.reserved = false
	} else {
		r.g.active[r.id] = &activeRun{}
	}
	r.g.mu.Unlock()
	return context.WithValue(ctx, runKey{}, r.id)
}

// end takes r out of the runs taking steps.
func (r *run) end() { r.leave() }

// leave takes r out of the runs taking steps and returns why it was asked
// to stop before it left, or "": the two at once, so a Stop either finds r
// and is answered here, or does not find it.
func (r *run) leave() string {
	r.g.mu.Lock()
	defer r.g.mu.Unlock()
	var why string
	if a := r.g.active[r.id]; a != nil {
		why = a.why
	}
	delete(r.g.active, r.id)
	return why
}

// stopped returns why the run was asked to stop, or "".
func (r *run) stopped() string {
	r.g.mu.Lock()
	defer r.g.mu.Unlock()
	if a := r.g.active[r.id]; a != nil {
		return a.why
	}
	return ""
}

// tell gives e, filled with the run's id, thread and the time, to the
// graph's Watcher.
func (r *run) tell(ctx context.Context, e Event) {
	if r.g.watch == nil {
		return
	}
	e.Run, e.Thread = r.id, r.thread
	e.Delegation = DelegationOf(ctx)
	if e.At.IsZero() {
		e.At = r.g.now()
	}
	if e.Kind != EventNodeEntered && e.Kind != EventNodeFinished {
		e.Copy = -1
	}
	r.g.watch(ctx, e)
}

// spent is the time this call of Invoke or Resume has spent in steps; 0
// without a Watcher, which is the only reader (a clock is not read for
// nobody).
func (r *run) spent() time.Duration {
	if r.g.watch == nil {
		return 0
	}
	return r.g.now().Sub(r.began)
}

// tellNode tells the Watcher a task's node finished, with how.
func (r *run) tellNode(ctx context.Context, t *task, start time.Time, outcome string, err error) {
	if r.g.watch == nil {
		return
	}
	e := Event{Kind: EventNodeFinished, Node: t.node.ID, NodeKind: t.node.Type, Copy: t.copy,
		Outcome: outcome, Duration: r.g.now().Sub(start), Err: err}
	if outcome == OutcomePaused {
		e.Pending = t.pending
	}
	r.tell(ctx, e)
}

// outcomeOf says how a node's step came out from what exec returned.
func outcomeOf(ctx context.Context, t *task, err error) string {
	switch {
	case err != nil && (ctx.Err() != nil || errors.Is(err, context.Canceled)):
		return OutcomeStopped
	case err != nil:
		return OutcomeFailed
	case t.status == taskPaused:
		return OutcomePaused
	}
	return OutcomeOK
}

// stopError is the error a stopped run ends with.
type stopError struct{ why string }

func (e *stopError) Error() string { return ErrStopped.Error() + ": " + e.why }
func (e *stopError) Unwrap() error { return ErrStopped }
