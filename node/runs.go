package node

import (
	"context"
	"fmt"
	"io"
	"path/filepath"
	"sync/atomic"
	"time"

	"github.com/symphonix/symphonix/agent"
	"github.com/symphonix/symphonix/agentlink"
	"github.com/symphonix/symphonix/flow"
	"github.com/symphonix/symphonix/runs"
)

// runRecord is the agent's record of its runs (package runs) and the link
// it goes over: live events to the link that is up, summaries through the
// outbox in the folder.
type runRecord struct {
	rec  *runs.Recorder
	box  *runs.Outbox // nil: the outbox could not be read, and nothing is kept
	link atomic.Pointer[agentlink.Link]
}

// runsDetail reads MONITOR_DETAIL from cfg.Getenv: "" or "full".
func runsDetail(cfg Config) (runs.Detail, error) {
	getenv := cfg.Getenv
	if getenv == nil {
		return runs.DetailMetadata, nil
	}
	return runs.ParseDetail(getenv(runs.EnvDetail))
}

// openRuns makes the record of the runs of the agent id, for a board: nil
// without one. MONITOR_DETAIL says how much of a run goes (runs.Detail);
// a value it does not know fails. An outbox that cannot be read is said on
// out, and the runs are told live only.
func openRuns(cfg Config, id agentlink.Identity, out io.Writer) (*runRecord, error) {
	detail, err := runsDetail(cfg)
	if err != nil {
		return nil, err
	}
	if cfg.BoardURL == "" {
		return nil, nil
	}
	rr := &runRecord{}
	if rr.box, err = runs.OpenOutbox(runs.OutboxPath(cfg.Dir)); err != nil {
		fmt.Fprintf(out, "agent %s: runs: %v: the summaries of runs are not kept for the board\n", id.Name, err)
		rr.box = nil
	}
	named, _ := namedSet(cfg) // unreadable env files: nil, none; detailFilter says so for errors
	var outputs []string
	if f, err := flow.LoadFile(filepath.Join(cfg.Dir, "flow.json")); err == nil {
		outputs = f.Outputs
	}
	rcfg := runs.Config{
		Build: id.Build, Outputs: outputs, Detail: detail, SecretSet: named, Safe: detailFilter(cfg),
		OnEvent: rr.event, OnSummary: rr.added,
		OnError: func(err error) { cfg.Logger.Warn("runs: the outbox", "err", err) },
	}
	if rr.box != nil {
		rcfg.Outbox = rr.box
	}
	if rr.rec, err = runs.NewRecorder(rcfg); err != nil {
		return nil, err
	}
	return rr, nil
}

// watch is the Watcher to build the agent's graph with; nil for none.
func (rr *runRecord) watch() flow.Watcher {
	if rr == nil {
		return nil
	}
	return rr.rec.Watch
}

// raised is governed's OnRaised: the approval the board holds for a
// paused run goes into its record, and a summary naming it to the board.
// nil without a record.
func (rr *runRecord) raised() func(run, approvalID string) {
	if rr == nil {
		return nil
	}
	return func(run, approvalID string) { rr.rec.Raised(run, approvalID) }
}

// wrapModel counts the tokens of the model's calls in the runs' records.
func (rr *runRecord) wrapModel(m flow.Model) flow.Model {
	if rr == nil {
		return m
	}
	return rr.rec.WrapModel(m)
}

// use gives the record the link to tell.
func (rr *runRecord) use(l *agentlink.Link) {
	if rr != nil {
		rr.link.Store(l)
	}
}

// summaries is the outbox as the link reads it; nil without one.
func (rr *runRecord) summaries() agentlink.Summaries {
	if rr == nil || rr.box == nil {
		return nil
	}
	return outboxOf{rr.box}
}

func (rr *runRecord) event(e runs.Event) {
	if l := rr.link.Load(); l != nil {
		l.SendRunEvent(agentlink.RunEvent{
			RunID: e.Run, Seq: e.Seq, At: e.At, Kind: e.Kind,
			Thread: e.Thread, StartedBy: e.StartedBy, StartedByWho: e.StartedByWho, Build: e.Build,
			Step: stepOf(e.Step), Pause: e.Pause, Node: e.Node, ApprovalID: e.ApprovalID, Trigger: runTriggerOf(e.Trigger),
			Delegation: runDelegationOf(e.Delegation), Failure: delegationFailureOf(e.Failure),
		})
	}
}

func (rr *runRecord) added() {
	if l := rr.link.Load(); l != nil {
		l.SummaryAdded()
	}
}

// settle ends the records of paused runs that no longer wait in a (ended
// while the agent was not running, by `agent cancel` of an older build or
// a thread forgotten), so the board does not show them waiting for ever.
func (rr *runRecord) settle(ctx context.Context, a *agent.Agent) {
	if rr == nil {
		return
	}
	for _, id := range rr.rec.Active() {
		r, ok := rr.rec.Get(id)
		if !ok || r.State != runs.StatePaused {
			continue
		}
		p, err := a.Graph.Pending(ctx, r.Thread)
		if err != nil || (p != nil && p.Run == id) {
			continue
		}
		rr.rec.Stopped(id, "it no longer waits: ended while the agent was not running", time.Now())
	}
}

// drain waits, up to within, for the board to store every summary in the
// outbox: a run at a terminal says what it came to before it exits.
func (rr *runRecord) drain(ctx context.Context, within time.Duration) {
	if rr == nil || rr.box == nil {
		return
	}
	t := time.NewTimer(within)
	defer t.Stop()
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for rr.box.Len() > 0 {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			return
		case <-tick.C:
		}
	}
}

// outboxOf is a runs.Outbox as the link reads it.
type outboxOf struct{ box *runs.Outbox }

func (o outboxOf) Next(skip func(string, uint32) bool) (agentlink.RunSummary, bool) {
	s, ok := o.box.Next(skip)
	if !ok {
		return agentlink.RunSummary{}, false
	}
	return agentlink.RunSummary{Run: runOf(s.Run), Seq: s.Seq, Dropped: s.Dropped}, true
}

func (o outboxOf) Stored(run string, seq uint32) {
	_ = o.box.Stored(run, seq) // kept in memory all the same; written with the next change
}

func runOf(r runs.Run) agentlink.Run {
	out := agentlink.Run{
		ID: r.ID, Thread: r.Thread, StartedBy: r.StartedBy, StartedByWho: r.StartedByWho, Build: r.Build,
		State: r.State, Start: r.Start, End: r.End, Duration: r.Duration, StepCount: r.StepCount,
		Tokens: tokensOf(r.Tokens), Error: r.Error, Pause: r.Pause, PausedAt: r.PausedAt, ApprovalID: r.ApprovalID,
		Input: r.Input, Output: r.Output, Withheld: r.Withheld, StepsTruncated: r.StepsTruncated,
		Trigger: runTriggerOf(r.Trigger), Delegation: runDelegationOf(r.Delegation),
	}
	for i := range r.Failures {
		out.Failures = append(out.Failures, *delegationFailureOf(&r.Failures[i]))
	}
	for _, s := range r.Steps {
		out.Steps = append(out.Steps, stepOf(s))
	}
	return out
}

func stepOf(s runs.Step) agentlink.RunStep {
	return agentlink.RunStep{Seq: s.Seq, Node: s.Node, Kind: s.Kind, Copy: s.Copy, Start: s.Start, Duration: s.Duration,
		Outcome: s.Outcome, Error: s.Error, Pause: s.Pause, Tokens: tokensOf(s.Tokens)}
}

func tokensOf(t runs.Tokens) agentlink.Tokens {
	return agentlink.Tokens{Input: t.Input, Output: t.Output, Cached: t.Cached, Total: t.Total}
}

func runTriggerOf(t *runs.Trigger) *agentlink.RunTrigger {
	if t == nil {
		return nil
	}
	return &agentlink.RunTrigger{ID: t.ID, Kind: t.Kind, At: t.At, Method: t.Method, Path: t.Path,
		Delivery: t.Delivery, DeliveryAttempts: t.DeliveryAttempts}
}

func runDelegationOf(d *runs.Delegation) *agentlink.RunDelegation {
	if d == nil {
		return nil
	}
	return &agentlink.RunDelegation{ParentRunID: d.ParentRun, ParentNode: d.ParentNode, InvocationID: d.Invocation,
		Agent: d.Agent, Chain: d.Chain}
}

func delegationFailureOf(f *runs.DelegationFailure) *agentlink.DelegationFailure {
	if f == nil {
		return nil
	}
	return &agentlink.DelegationFailure{Node: f.Node, Target: f.Target, Code: f.Code, Message: f.Message,
		Chain: f.Chain, InvocationID: f.Invocation, At: f.At}
}
