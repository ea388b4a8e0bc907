// Package runs keeps the agent's record of its runs, for the board: what
// ran, when, which nodes, how long, what failed and what it spent — and,
// unless the deployment sends full detail (MONITOR_DETAIL=full), never what
// a run was given or gave back. A Recorder is the flow's Watcher: it tells
// each step as it happens (Config.OnEvent, the link's live events) and puts
// a summary of each run that pauses or ends in an Outbox, a bounded file in
// the agent's folder the link delivers from, so a summary outlives a board
// that could not be reached and a restart of the agent.
//
// The design is docs/runs.md, "The agent's side".
package runs

import (
	"time"
)

// Where a run stands (Run.State).
const (
	StateRunning  = "running"
	StatePaused   = "paused"
	StateFinished = "finished"
	StateFailed   = "failed"
	StateStopped  = "stopped"
)

// What a paused run waits for (Run.Pause, Step.Pause).
const (
	PauseAsk      = "ask"
	PauseApproval = "approval"
)

// What started a run (StartedBy's by): a message in the served chat, the
// board (a fire), a run at a terminal (`agent run`).
const (
	ByChat  = "chat"
	ByBoard = "board"
	ByCLI   = "cli"
	// ByTrigger: a schedule or a webhook (WithTrigger says which).
	ByTrigger = "trigger"
	// ByDelegation: another run's agent node (Run.Delegation says which).
	ByDelegation = "delegation"
)

// The bounds of a run's record, as the board takes it.
const (
	// MaxSteps is how many steps a record keeps; a run that takes more is
	// StepsTruncated, and StepCount counts them all.
	MaxSteps = 1000
	// MaxError is the most bytes of an error kept: secrets.MaxDetail.
	MaxError = 1024
	// MaxPayload is the most bytes of a run's input, or of its output, as
	// JSON, that full detail sends; a larger one is withheld.
	MaxPayload = 64 << 10
	// MaxWho is the most bytes of who started a run.
	MaxWho = 256
	// MaxChain is the most agents a delegation's chain carries (the
	// latest, when there are more); MaxName the most bytes of an agent's
	// name, a node's or an id in one.
	MaxChain = 32
	MaxName  = 64
)

// Tokens is what model calls spent, as the provider reported it.
type Tokens struct {
	Input  int64 `json:"input,omitempty"`
	Output int64 `json:"output,omitempty"`
	// Cached is the part of Input the provider served from its cache.
	Cached int64 `json:"cached,omitempty"`
	Total  int64 `json:"total,omitempty"`
}

func (t *Tokens) add(u Tokens) {
	t.Input += u.Input
	t.Output += u.Output
	t.Cached += u.Cached
	t.Total += u.Total
}

// Step is one node's step in a run.
type Step struct {
	// Seq is its place in the run, from 1.
	Seq int `json:"seq"`
	// Node is the node's id, Kind its type ("llm", "tool", …), Copy the
	// fanout copy from 0, or -1.
	Node string `json:"node"`
	Kind string `json:"kind"`
	Copy int    `json:"copy"`
	// Start is when it was entered; Duration how long it took, 0 while it
	// runs.
	Start    time.Time     `json:"start"`
	Duration time.Duration `json:"duration,omitempty"`
	// Outcome is flow's: "ok", "failed", "paused", "stopped"; "" while it
	// runs.
	Outcome string `json:"outcome,omitempty"`
	// Error says why it failed, without secrets; at most MaxError bytes.
	Error string `json:"error,omitempty"`
	// Pause is PauseAsk or PauseApproval when its outcome is paused.
	Pause string `json:"pause,omitempty"`
	// Tokens is what its model calls spent.
	Tokens Tokens `json:"tokens,omitzero"`
}

// Run is one run's record: one message answered, one firing, one run at a
// terminal, from its start to its end, across any pauses.
type Run struct {
	ID     string `json:"id"`
	Thread string `json:"thread,omitempty"`
	// StartedBy is ByChat, ByBoard, ByCLI, or "" when the record began
	// with the run's resumption (it paused before the agent restarted and
	// its summary had been delivered).
	StartedBy    string `json:"started_by,omitempty"`
	StartedByWho string `json:"started_by_who,omitempty"`
	// Build is the flow's build: "sha256:…".
	Build string `json:"build,omitempty"`
	// State is StateRunning, StatePaused, StateFinished, StateFailed or
	// StateStopped.
	State string    `json:"state"`
	Start time.Time `json:"start"`
	// End is when it ended; zero while it runs or waits.
	End time.Time `json:"end,omitzero"`
	// Duration is the time spent in its steps, pauses not counted.
	Duration  time.Duration `json:"duration,omitempty"`
	StepCount int           `json:"step_count,omitempty"`
	Tokens    Tokens        `json:"tokens,omitzero"`
	// Error says why it failed or was stopped, without secrets; at most
	// MaxError bytes.
	Error string `json:"error,omitempty"`
	// Pause, PausedAt and ApprovalID: what a paused run waits for, at
	// which node, and the approval once raised.
	Pause      string `json:"pause,omitempty"`
	PausedAt   string `json:"paused_at,omitempty"`
	ApprovalID string `json:"approval_id,omitempty"`
	// Input and Output: what it was given and what it ended with (the
	// flow's declared outputs), only with full detail, without the named
	// secrets.
	Input  map[string]any `json:"input,omitempty"`
	Output map[string]any `json:"output,omitempty"`
	// Withheld names what was there and is not sent: "input", "output".
	Withheld []string `json:"withheld,omitempty"`
	// Steps, in the order they were entered: at most MaxSteps, and
	// StepsTruncated when there were more.
	Steps          []Step `json:"steps,omitempty"`
	StepsTruncated bool   `json:"steps_truncated,omitempty"`
	// Trigger is why the run exists, when a trigger started it.
	Trigger *Trigger `json:"trigger,omitempty"`
	// Delegation is the run and node that delegated to it, when one did
	// (StartedBy is then ByDelegation).
	Delegation *Delegation `json:"delegation,omitempty"`
	// Failures are the delegations its agent nodes asked for and did not
	// get, in order: at most MaxFailures, the first ones. A summary holds
	// them all, so what a lost live event said still reaches the board.
	Failures []DelegationFailure `json:"delegation_failures,omitempty"`
}

// MaxFailures is the most delegation failures a run's record keeps.
const MaxFailures = 64

// Delegation is how a run was delegated to.
type Delegation struct {
	ParentRun  string   `json:"parent_run"`
	ParentNode string   `json:"parent_node"`
	Invocation string   `json:"invocation"`
	Agent      string   `json:"agent"`
	Chain      []string `json:"chain,omitempty"`
}

// DelegationFailure is a delegation an agent node asked for and did not
// get: refused before the child ran, or failed in it.
type DelegationFailure struct {
	Node string `json:"node"`
	// Target is the agent asked for, as given: at most MaxName bytes.
	Target string `json:"target"`
	// Code is one of package agents' codes.
	Code string `json:"code"`
	// Message says why, without secrets: at most MaxError bytes.
	Message    string   `json:"message,omitempty"`
	Chain      []string `json:"chain,omitempty"`
	Invocation string   `json:"invocation,omitempty"`
	// At is when it was refused or failed.
	At time.Time `json:"at"`
}

// Trigger is the trigger that started a run (WithTrigger).
type Trigger struct {
	// ID is the trigger's id in its file.
	ID string `json:"id"`
	// Kind is "schedule" or "webhook".
	Kind string `json:"kind"`
	// At is when it occurred.
	At time.Time `json:"at"`
	// Method and Path: a webhook's request.
	Method string `json:"method,omitempty"`
	Path   string `json:"path,omitempty"`
	// Delivery is where the result's delivery stands: "none", "pending"
	// for a trigger that delivers until Recorder.Delivered says how it
	// came out, "delivered" or "failed".
	Delivery string `json:"delivery,omitempty"`
	// DeliveryAttempts is how many posts the delivery made.
	DeliveryAttempts int `json:"delivery_attempts,omitempty"`
}

// clone copies r deeply enough that the record can go on changing: its
// steps and withheld. Input and Output are never changed once set.
func (r Run) clone() Run {
	r.Steps = append([]Step(nil), r.Steps...)
	r.Withheld = append([]string(nil), r.Withheld...)
	return r
}

// Ended reports whether the run has ended.
func (r Run) Ended() bool {
	return r.State == StateFinished || r.State == StateFailed || r.State == StateStopped
}

// Summary is a run as it stands when it pauses or ends, for the board.
type Summary struct {
	Run Run `json:"run"`
	// Seq is its place among the run's events and summaries.
	Seq uint32 `json:"seq"`
	// Dropped is how many summaries of other runs the outbox dropped,
	// oldest first, because it was full, since the last one the board
	// stored: set by Outbox.Next.
	Dropped uint32 `json:"-"`
}

// What an Event says happened.
const (
	EventStart  = "start"
	EventStep   = "step"
	EventPause  = "pause"
	EventResume = "resume"
	// EventDelegationFailed: an agent node did not get its delegation.
	EventDelegationFailed = "delegation_failed"
)

// Event is one thing that happened in a run, as it happened: the link's
// live RunEvent.
type Event struct {
	Run string
	// Seq is its place among the run's events and summaries, from 1.
	Seq uint32
	At  time.Time
	// Kind is EventStart, EventStep, EventPause, EventResume or
	// EventDelegationFailed.
	Kind string
	// For EventStart: the thread, who started it, and the build, and the
	// trigger or the delegation that started it, if one did.
	Thread, StartedBy, StartedByWho, Build string
	Trigger                                *Trigger
	Delegation                             *Delegation
	// For EventDelegationFailed: which, and why.
	Failure *DelegationFailure
	// For EventStep: the step as it stands.
	Step Step
	// For EventPause: what it waits for, at which node, the approval.
	Pause, Node, ApprovalID string
}
