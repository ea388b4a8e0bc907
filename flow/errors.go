package flow

import (
	"errors"
	"fmt"
	"strings"
)

// Errors of building and running a graph. Test for them with errors.Is;
// each is wrapped with what it is about.
var (
	// ErrNotRegistered: a handler, router or reducer the flow names is not
	// in the registry, or is registered as nil.
	ErrNotRegistered = errors.New("flow: not in the registry")
	// ErrNoModel: the flow has an llm node and the build was given no Model.
	ErrNoModel = errors.New("flow: an llm node needs a model, and BuildOptions.Model is nil")
	// ErrNoToolCaller: the flow has a tool or tools node and the build was
	// given no ToolCaller.
	ErrNoToolCaller = errors.New("flow: a tool or tools node needs a tool caller, and BuildOptions.Tools is nil")

	// ErrStepLimit: a run took as many steps as BuildOptions.StepLimit
	// allows and had not ended — a loop nothing stops.
	ErrStepLimit = errors.New("flow: step limit reached")
	// ErrWaiting: Invoke on a thread whose run is waiting for an answer.
	// Resume it, or Cancel it.
	ErrWaiting = errors.New("flow: the thread is waiting for an answer")
	// ErrNothingPending: Resume or Cancel on a thread with no run waiting.
	ErrNothingPending = errors.New("flow: nothing is waiting for an answer")
	// ErrEmptyAnswer: Resume with nil, false, 0 or "". An empty answer
	// never reaches the flow: a refusal needs a word, "no" or
	// {"approved": false}.
	ErrEmptyAnswer = errors.New(`flow: an empty answer never reaches the flow: a refusal needs a word, "no" or {"approved": false}`)
	// ErrNoThread: a run that can wait or remember was given no thread.
	ErrNoThread = errors.New("flow: this flow waits or remembers, so a run needs a thread")
	// ErrCheckpoint: a checkpoint or memory record this build cannot read.
	ErrCheckpoint = errors.New("flow: unreadable checkpoint")
)

// NodeError is a node that failed on its last attempt, with no onError to
// go to. The run ends with it.
type NodeError struct {
	Node     string
	Attempts int
	Err      error
}

func (e *NodeError) Error() string {
	return fmt.Sprintf("flow: node %q failed: %v", e.Node, e.Err)
}

func (e *NodeError) Unwrap() error { return e.Err }

// RoutingError is a router that returned something that is not one of its
// edge's routes (LGFlowRoutingError in the flow language reference). It
// names the router, the edge (by its source) and the routes that were
// declared, sorted.
type RoutingError struct {
	Router string
	From   string
	Route  string
	Routes []string
}

func (e *RoutingError) Error() string {
	return fmt.Sprintf("flow: router %q on the edge from %q returned %q, which is not one of its routes: %s",
		e.Router, e.From, e.Route, strings.Join(e.Routes, ", "))
}

// WriteConflictError is two writes in one step to a channel with no
// reducer: the last write wins only when there is one.
type WriteConflictError struct {
	Channel string
	Nodes   [2]string
}

func (e *WriteConflictError) Error() string {
	return fmt.Sprintf("flow: channel %q was written by %q and by %q in one step, and it has no reducer to combine them",
		e.Channel, e.Nodes[0], e.Nodes[1])
}
