package agentlink

import (
	"context"
	"errors"
	"slices"
	"time"

	"google.golang.org/protobuf/types/known/durationpb"
	"google.golang.org/protobuf/types/known/structpb"
	"google.golang.org/protobuf/types/known/timestamppb"

	boardv1 "github.com/symphonix/symphonix/api/symphonix/board/v1"
)

// Where a run stands (Run.State).
const (
	RunRunning  = "running"
	RunPaused   = "paused"
	RunFinished = "finished"
	RunFailed   = "failed"
	RunStopped  = "stopped"
)

// What a live RunEvent says happened (RunEvent.Kind).
const (
	RunEventStart  = "start"
	RunEventStep   = "step"
	RunEventPause  = "pause"
	RunEventResume = "resume"
	// RunEventDelegationFailed: one of the run's agent nodes did not get
	// its delegation (RunEvent.Failure).
	RunEventDelegationFailed = "delegation_failed"
)

// The bounds of what the link carries of runs.
const (
	// MaxRunID is the most bytes of a run's id: letters, digits, '-', '_'
	// and '.'.
	MaxRunID = 64
	// MaxRunSteps is the most steps a summary carries.
	MaxRunSteps = 1000
	// RunEventBuffer is how many live events wait for the link that is up
	// to send them; past it, and whenever no link is up, one is dropped.
	RunEventBuffer = 256
	// MaxFiring is how many Fires and Stops are handled at once; past it
	// the board is answered resource_exhausted.
	MaxFiring = 8
)

// Tokens is what model calls spent, as the provider reported it.
type Tokens struct{ Input, Output, Cached, Total int64 }

// RunStep is one node's step in a run.
type RunStep struct {
	Seq        int
	Node, Kind string
	// Copy: the fanout copy from 0, or -1.
	Copy     int
	Start    time.Time
	Duration time.Duration
	// Outcome: "ok", "failed", "paused", "stopped", or "" while it runs.
	Outcome string
	Error   string
	// Pause: "ask" or "approval" when paused.
	Pause      string
	ApprovalID string
	Tokens     Tokens
}

// Run is a run as the agent reports it (docs/runs.md).
type Run struct {
	ID, Thread, StartedBy, StartedByWho, Build string
	// State: RunRunning, RunPaused, RunFinished, RunFailed or RunStopped.
	State      string
	Start, End time.Time
	Duration   time.Duration
	StepCount  int
	Tokens     Tokens
	Error      string
	// Pause: "ask" or "approval" while paused, at PausedAt.
	Pause, PausedAt, ApprovalID string
	// Input and Output: only from an agent sending full detail.
	Input, Output map[string]any
	// Withheld: what was there and is not sent: "input", "output".
	Withheld       []string
	Steps          []RunStep
	StepsTruncated bool
	// Trigger: why the run exists, when a trigger started it.
	Trigger *RunTrigger
	// Delegation: the run and node that delegated to it, when one did.
	Delegation *RunDelegation
	// Failures: the delegations its agent nodes did not get, in order; at
	// most MaxRunFailures are sent, the first ones.
	Failures []DelegationFailure
}

// RunEvent is one thing that happened in a run, as it happened.
type RunEvent struct {
	RunID string
	Seq   uint32
	At    time.Time
	// Kind: RunEventStart, RunEventStep, RunEventPause or RunEventResume.
	Kind string
	// For a start: the run's thread, who started it, its build, and the
	// trigger or the delegation that started it, if one did.
	Thread, StartedBy, StartedByWho, Build string
	Trigger                                *RunTrigger
	Delegation                             *RunDelegation
	// For RunEventDelegationFailed: which delegation, and why.
	Failure *DelegationFailure
	// For a step: the step as it stands.
	Step RunStep
	// For a pause: "ask" or "approval", the node, the approval once raised.
	Pause, Node, ApprovalID string
}

// RunSummary is a run as it stands when it pauses or ends.
type RunSummary struct {
	Run Run
	Seq uint32
	// Dropped: summaries of other runs dropped since the board last
	// stored one.
	Dropped uint32
}

// Summaries is where the link finds the run summaries to deliver: the
// agent's outbox. Next returns the oldest the board has yet to store for
// which skip is false; Stored takes the board's word that it holds one.
// Both must be quick and safe for concurrent use.
type Summaries interface {
	Next(skip func(run string, seq uint32) bool) (RunSummary, bool)
	Stored(run string, seq uint32)
}

// SendRunEvent hands e to the link that is up, for the board's live view
// of runs: never queued across links, so it is dropped (false) when no
// link is up, when the link does not announce CapabilityLiveRuns, or when
// RunEventBuffer events already wait. It never blocks.
func (l *Link) SendRunEvent(e RunEvent) bool {
	if l == nil || !l.announces(CapabilityLiveRuns) {
		return false
	}
	c := l.current()
	if c == nil {
		return false
	}
	select {
	case c.events <- runEventOf(e):
		return true
	default:
		return false
	}
}

// SummaryAdded tells the link a summary was added to Config.Summaries, so
// the link that is up delivers it now rather than after the next welcome.
// It never blocks.
func (l *Link) SummaryAdded() {
	if l == nil {
		return
	}
	select {
	case l.summaryWake <- struct{}{}:
	default:
	}
}

// sendEvents sends the live events handed to c until it goes down. When
// the board reads run_events, the events waiting together go in one
// message, up to MaxRunEventBatch, and a step's event waits up to
// RunEventLinger for those that follow it (the run's next steps), so that a
// run of many quick steps costs the board a few messages rather than two a
// step; any other event (a start, pause, resume or failure) is sent at
// once, with the steps waiting before it, and so are the steps waiting
// when a summary is about to go (flushEvents), so that the board hears a
// run's steps before its end. Otherwise each event goes alone, at once.
func (l *Link) sendEvents(ctx context.Context, c *conn) {
	linger := time.NewTimer(time.Hour)
	linger.Stop()
	var held []*boardv1.RunEvent
	send := func() error {
		m := eventsMessage(held)
		held = held[:0]
		return c.send(m)
	}
	for {
		select {
		case <-ctx.Done():
			return
		case <-c.done:
			return
		case <-linger.C:
			if err := send(); err != nil {
				return
			}
		case sent := <-c.flush:
			linger.Stop()
			for {
				for len(held) < MaxRunEventBatch && len(c.events) > 0 && (c.batches || len(held) == 0) {
					held = append(held, <-c.events)
				}
				if len(held) == 0 {
					break
				}
				if err := send(); err != nil {
					return
				}
			}
			close(sent)
		case e := <-c.events:
			if !c.batches {
				held = append(held, e)
				if err := send(); err != nil {
					return
				}
				continue
			}
			if len(held) == 0 {
				linger.Reset(RunEventLinger)
			}
			held = append(held, e)
			for len(held) < MaxRunEventBatch && e.GetStep() != nil {
				select {
				case e = <-c.events:
					held = append(held, e)
					continue
				default:
				}
				break
			}
			if len(held) < MaxRunEventBatch && e.GetStep() != nil {
				continue // more steps may follow within the linger
			}
			linger.Stop()
			if err := send(); err != nil {
				return
			}
		}
	}
}

// flushEvents has the live events c holds sent before it returns; false
// when c or ctx ended first.
func (c *conn) flushEvents(ctx context.Context) bool {
	sent := make(chan struct{})
	select {
	case c.flush <- sent:
	case <-c.done:
		return false
	case <-ctx.Done():
		return false
	}
	select {
	case <-sent:
		return true
	case <-c.done:
		return false
	case <-ctx.Done():
		return false
	}
}

// MaxRunEventBatch is the most live events one message carries.
const MaxRunEventBatch = 64

// RunEventLinger is the longest a step's live event waits for others to
// go with it in one message.
const RunEventLinger = 250 * time.Millisecond

// eventsMessage carries events, at least one: alone as a run_event, or
// together as run_events.
func eventsMessage(events []*boardv1.RunEvent) *boardv1.LinkRequest {
	if len(events) == 1 {
		return &boardv1.LinkRequest{Kind: &boardv1.LinkRequest_RunEvent{RunEvent: events[0]}}
	}
	return &boardv1.LinkRequest{Kind: &boardv1.LinkRequest_RunEvents{RunEvents: &boardv1.RunEvents{Events: slices.Clone(events)}}}
}

// runSeq names one summary of one run.
type runSeq struct {
	run string
	seq uint32
}

// deliverSummaries sends the summaries Config.Summaries holds on c, oldest
// first, one at a time: the next once the board has stored the one in
// flight. One the board has not stored within Config.AnswerWithin is
// left for the next link, and the next one goes.
func (l *Link) deliverSummaries(ctx context.Context, c *conn) {
	sums := l.cfg.Summaries
	if sums == nil || !l.announces(CapabilityRuns) {
		return
	}
	unanswered := map[runSeq]bool{}
	skip := func(run string, seq uint32) bool { return unanswered[runSeq{run, seq}] }
	wait := time.NewTimer(time.Hour)
	wait.Stop()
	defer wait.Stop()
	for {
		s, ok := sums.Next(skip)
		if !ok {
			select {
			case <-ctx.Done():
				return
			case <-c.done:
				return
			case <-l.summaryWake:
				continue
			}
		}
		m := &boardv1.LinkRequest{Kind: &boardv1.LinkRequest_RunSummary{RunSummary: &boardv1.RunSummary{
			Run: runOf(s.Run), Seq: s.Seq, Dropped: s.Dropped,
		}}}
		if !c.flushEvents(ctx) {
			return
		}
		if err := c.send(m); err != nil {
			return
		}
		l.log.DebugContext(ctx, "run summary sent", "run", s.Run.ID, "seq", s.Seq)
		inFlight := runSeq{s.Run.ID, s.Seq}
		wait.Reset(l.cfg.AnswerWithin)
	await:
		for {
			select {
			case <-ctx.Done():
				return
			case <-c.done:
				return
			case got := <-c.stored:
				if got == inFlight {
					break await
				}
			case <-wait.C:
				l.log.WarnContext(ctx, "run summary: the board did not say it stored it; sent again on the next link", "run", s.Run.ID, "seq", s.Seq)
				unanswered[inFlight] = true
				break await
			}
		}
		if !wait.Stop() {
			select {
			case <-wait.C:
			default:
			}
		}
	}
}

// runStored takes the board's RunStored.
func (l *Link) runStored(c *conn, m *boardv1.RunStored) {
	if l.cfg.Summaries == nil {
		return
	}
	l.cfg.Summaries.Stored(m.GetRunId(), m.GetSeq())
	select {
	case c.stored <- runSeq{m.GetRunId(), m.GetSeq()}:
	default: // the deliverer's timer decides
	}
}

// Fire is the board asking the agent to start a run.
type Fire struct {
	// Input: the values to start with, checked by the board against the
	// declared inputs (and by the agent again).
	Input map[string]any
	// Thread: the conversation to run on; "" for a new one.
	Thread string
	// By: the operator who fired it.
	By string
}

// Fired is the run a Fire started.
type Fired struct{ RunID, Thread string }

// Stop is the board asking the agent to end a run at its next step
// boundary.
type Stop struct{ RunID, Reason, By string }

// Refusal is an OnFire or OnStop error the board is told as it is: Code a
// connect code name ("invalid_argument", "not_found",
// "failed_precondition", "resource_exhausted", "unavailable"), Message for
// a person, naming the field at fault. Any other error is told as
// internal, without its words.
type Refusal struct {
	Code    string
	Message string
}

func (r *Refusal) Error() string { return r.Code + ": " + r.Message }

// fire answers the board's Fire with Config.OnFire.
func (l *Link) fire(ctx context.Context, c *conn, f *boardv1.Fire) {
	id := f.GetRequestId()
	fired, err := l.cfg.OnFire(ctx, Fire{Input: f.GetInput().AsMap(), Thread: f.GetThread(), By: f.GetBy()})
	if err != nil {
		l.refuse(ctx, c, id, "fire", err)
		return
	}
	_ = c.send(&boardv1.LinkRequest{Kind: &boardv1.LinkRequest_Fired{Fired: &boardv1.Fired{
		RequestId: id, RunId: fired.RunID, Thread: fired.Thread,
	}}})
}

// stop answers the board's Stop with Config.OnStop.
func (l *Link) stop(ctx context.Context, c *conn, s *boardv1.Stop) {
	id := s.GetRequestId()
	if err := l.cfg.OnStop(ctx, Stop{RunID: s.GetRunId(), Reason: s.GetReason(), By: s.GetBy()}); err != nil {
		l.refuse(ctx, c, id, "stop", err)
		return
	}
	_ = c.send(&boardv1.LinkRequest{Kind: &boardv1.LinkRequest_Stopped{Stopped: &boardv1.Stopped{RequestId: id}}})
}

// command runs a Fire or Stop, at most MaxFiring at a time; past it, or
// with no handler, the board is refused.
func (l *Link) command(ctx context.Context, c *conn, what, id string, handler bool, do func()) {
	if !handler || !l.announces(CapabilityFire) {
		l.refuse(ctx, c, id, what, &Refusal{Code: "failed_precondition", Message: "this agent takes no fired runs"})
		return
	}
	select {
	case l.firing <- struct{}{}:
	default:
		l.refuse(ctx, c, id, what, &Refusal{Code: "resource_exhausted", Message: "too many fires and stops at once: try again"})
		return
	}
	go func() {
		defer func() { <-l.firing }()
		do()
	}()
}

// refuse answers request id with err: a Refusal as it is, anything else as
// internal.
func (l *Link) refuse(ctx context.Context, c *conn, id, what string, err error) {
	code, msg := boardv1.LinkErrorCode_LINK_ERROR_CODE_INTERNAL, "the agent could not do it"
	var r *Refusal
	if errors.As(err, &r) {
		code, msg = linkCode(r.Code), r.Message
	} else {
		l.log.ErrorContext(ctx, what+" from the board failed", "err", err)
	}
	_ = c.send(&boardv1.LinkRequest{Kind: &boardv1.LinkRequest_Error{Error: &boardv1.LinkError{
		RequestId: id, Code: code, Message: Clip(msg, 1024),
	}}})
}

// linkCode is a connect code name as the link's enum; internal for one it
// does not carry.
func linkCode(name string) boardv1.LinkErrorCode {
	switch name {
	case "invalid_argument":
		return boardv1.LinkErrorCode_LINK_ERROR_CODE_INVALID_ARGUMENT
	case "not_found":
		return boardv1.LinkErrorCode_LINK_ERROR_CODE_NOT_FOUND
	case "resource_exhausted":
		return boardv1.LinkErrorCode_LINK_ERROR_CODE_RESOURCE_EXHAUSTED
	case "failed_precondition":
		return boardv1.LinkErrorCode_LINK_ERROR_CODE_FAILED_PRECONDITION
	case "unavailable":
		return boardv1.LinkErrorCode_LINK_ERROR_CODE_UNAVAILABLE
	}
	return boardv1.LinkErrorCode_LINK_ERROR_CODE_INTERNAL
}

func runEventOf(e RunEvent) *boardv1.RunEvent {
	m := &boardv1.RunEvent{RunId: e.RunID, Seq: e.Seq, Time: timeOf(e.At)}
	switch e.Kind {
	case RunEventStart:
		m.Kind = &boardv1.RunEvent_Start{Start: &boardv1.RunStart{
			Thread: e.Thread, StartedBy: e.StartedBy, StartedByWho: e.StartedByWho, Build: e.Build,
			Trigger: runTriggerOf(e.Trigger), Delegation: runDelegationOf(e.Delegation),
		}}
	case RunEventStep:
		m.Kind = &boardv1.RunEvent_Step{Step: stepOf(e.Step)}
	case RunEventPause:
		m.Kind = &boardv1.RunEvent_Pause{Pause: &boardv1.RunPause{Kind: pauseKindOf(e.Pause), Node: e.Node, ApprovalId: e.ApprovalID}}
	case RunEventResume:
		m.Kind = &boardv1.RunEvent_Resume{Resume: &boardv1.RunResume{}}
	case RunEventDelegationFailed:
		m.Kind = &boardv1.RunEvent_DelegationFailed{DelegationFailed: delegationFailureOf(e.Failure, e.RunID)}
	}
	return m
}

func runOf(r Run) *boardv1.Run {
	m := &boardv1.Run{
		Id: r.ID, Thread: r.Thread, StartedBy: r.StartedBy, StartedByWho: r.StartedByWho, Build: r.Build,
		State: runStateOf(r.State), StartTime: timeOf(r.Start), EndTime: timeOf(r.End),
		Duration: durationpb.New(max(r.Duration, 0)), StepCount: int32(r.StepCount), Tokens: tokensOf(r.Tokens),
		Error: r.Error, Pause: pauseKindOf(r.Pause), PausedAt: r.PausedAt, ApprovalId: r.ApprovalID,
		Withheld: r.Withheld, StepsTruncated: r.StepsTruncated, Trigger: runTriggerOf(r.Trigger),
		Delegation: runDelegationOf(r.Delegation),
	}
	for i := range r.Failures[:min(len(r.Failures), MaxRunFailures)] {
		f := delegationFailureOf(&r.Failures[i], r.ID)
		f.Time = timeOf(r.Failures[i].At)
		m.DelegationFailures = append(m.DelegationFailures, f)
	}
	for what, v := range map[string]map[string]any{"input": r.Input, "output": r.Output} {
		if v == nil {
			continue
		}
		s, err := structpb.NewStruct(v)
		if err != nil {
			m.Withheld = append(m.Withheld, what) // not JSON: not shown
			continue
		}
		if what == "input" {
			m.Input = s
		} else {
			m.Output = s
		}
	}
	steps := r.Steps
	if len(steps) > MaxRunSteps {
		steps, m.StepsTruncated = steps[:MaxRunSteps], true
	}
	for _, st := range steps {
		m.Steps = append(m.Steps, stepOf(st))
	}
	return m
}

func stepOf(s RunStep) *boardv1.RunStep {
	m := &boardv1.RunStep{
		Seq: int32(s.Seq), Node: s.Node, Kind: s.Kind, Copy: int32(s.Copy), StartTime: timeOf(s.Start),
		Error: s.Error, Pause: pauseKindOf(s.Pause), ApprovalId: s.ApprovalID, Tokens: tokensOf(s.Tokens),
	}
	if s.Outcome != "" {
		m.Duration = durationpb.New(max(s.Duration, 0))
	}
	switch s.Outcome {
	case "ok":
		m.Outcome = boardv1.StepOutcome_STEP_OUTCOME_OK
	case "failed":
		m.Outcome = boardv1.StepOutcome_STEP_OUTCOME_FAILED
	case "paused":
		m.Outcome = boardv1.StepOutcome_STEP_OUTCOME_PAUSED
	case "stopped":
		m.Outcome = boardv1.StepOutcome_STEP_OUTCOME_STOPPED
	}
	return m
}

func tokensOf(t Tokens) *boardv1.Tokens {
	if t == (Tokens{}) {
		return nil
	}
	return &boardv1.Tokens{Input: t.Input, Output: t.Output, Cached: t.Cached, Total: t.Total}
}

func runStateOf(s string) boardv1.RunState {
	switch s {
	case RunRunning:
		return boardv1.RunState_RUN_STATE_RUNNING
	case RunPaused:
		return boardv1.RunState_RUN_STATE_PAUSED
	case RunFinished:
		return boardv1.RunState_RUN_STATE_FINISHED
	case RunFailed:
		return boardv1.RunState_RUN_STATE_FAILED
	case RunStopped:
		return boardv1.RunState_RUN_STATE_STOPPED
	}
	return boardv1.RunState_RUN_STATE_UNSPECIFIED
}

func pauseKindOf(k string) boardv1.PauseKind {
	switch k {
	case "ask":
		return boardv1.PauseKind_PAUSE_KIND_ASK
	case "approval":
		return boardv1.PauseKind_PAUSE_KIND_APPROVAL
	}
	return boardv1.PauseKind_PAUSE_KIND_UNSPECIFIED
}

func timeOf(t time.Time) *timestamppb.Timestamp {
	if t.IsZero() {
		return nil
	}
	return timestamppb.New(t)
}

func inputsOf(ins []FlowInput) []*boardv1.FlowInput {
	var out []*boardv1.FlowInput
	for _, in := range ins {
		out = append(out, &boardv1.FlowInput{Name: in.Name, Type: in.Type, Description: in.Description})
	}
	return out
}
