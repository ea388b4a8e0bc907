package node

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/symphonix/symphonix/agentlink"
	"github.com/symphonix/symphonix/flow"
	"github.com/symphonix/symphonix/runs"
	"github.com/symphonix/symphonix/serve"
)

// fire starts the run the board fired (agentlink's OnFire): it checks the
// thread and the input against the flow's declared inputs, refuses while
// the agent is paused or a run waits on the thread, names the run, answers
// at once, and runs it in the background as a message to the chat runs,
// started by "board" and the operator who fired it.
func (p *parts) fire(_ context.Context, f agentlink.Fire) (agentlink.Fired, error) {
	if p.api == nil {
		return agentlink.Fired{}, &agentlink.Refusal{Code: "failed_precondition", Message: "this agent is not served: it takes no fired runs"}
	}
	if s := p.pauses.Current(); s.Paused {
		return agentlink.Fired{}, &agentlink.Refusal{Code: "failed_precondition", Message: "the agent is paused " + s.Why() + ": it takes no new work"}
	}
	thread := f.Thread
	if thread == "" {
		thread = "fired-" + flow.NewRunID()[:16]
	}
	if err := serve.CheckThread(thread); err != nil {
		return agentlink.Fired{}, &agentlink.Refusal{Code: "invalid_argument", Message: err.Error()}
	}
	if err := p.agent.CheckInputs(f.Input); err != nil {
		return agentlink.Fired{}, &agentlink.Refusal{Code: "invalid_argument", Message: err.Error()}
	}
	ctx := p.runCtx
	if w, err := p.agent.Graph.Pending(ctx, thread); err != nil {
		return agentlink.Fired{}, err
	} else if w != nil {
		return agentlink.Fired{}, &agentlink.Refusal{Code: "failed_precondition",
			Message: fmt.Sprintf("thread: a run waits on %q at %s: answer it or stop it first", thread, w.Node)}
	}
	id := flow.NewRunID()
	runCtx := runs.StartedBy(flow.WithRunID(ctx, id), runs.ByBoard, f.By)
	// The board may stop the run before it begins: it waits for the
	// board's word on the tools, and its turn on the thread.
	release := p.agent.Graph.Reserve(id)
	p.fired.Go(func() {
		defer release()
		if p.ready != nil {
			select {
			case <-p.ready:
			case <-ctx.Done():
				return
			}
		}
		res, _, err := p.api.Start(runCtx, thread, f.Input)
		fmt.Fprintln(p.out, firedLine(p.id.Name, thread, f.By, res, err))
	})
	return agentlink.Fired{RunID: id, Thread: thread}, nil
}

// firedLine says what a run fired from the board came to.
func firedLine(name, thread, by string, res flow.Result, err error) string {
	head := fmt.Sprintf("agent %s: thread %s: a run fired from the board by %s", name, thread, by)
	switch {
	case errors.Is(err, flow.ErrStopped):
		return head + " was stopped: " + err.Error()
	case err != nil:
		return head + " failed: " + err.Error()
	case res.Pending != nil:
		return head + " waits at " + res.Pending.Node
	}
	return head + " finished"
}

// stop ends the run the board asked to stop (agentlink's OnStop): one
// taking steps at its next step boundary (the step in flight completes);
// one fired and not begun yet before its first step; one that waits for a
// person as `agent cancel` ends it, its approval withdrawn on the board.
// Each ends stopped. not_found for a run that neither runs nor waits here.
func (p *parts) stop(ctx context.Context, s agentlink.Stop) error {
	if p.agent == nil {
		return &agentlink.Refusal{Code: "not_found", Message: "run_id: this agent runs nothing"}
	}
	why := "stopped on the board"
	if s.By != "" {
		why += " by " + s.By
	}
	if s.Reason != "" {
		why += ": " + agentlink.Clip(s.Reason, agentlink.MaxPauseReason)
	}
	if p.agent.Graph.Stop(s.RunID, why) {
		return nil
	}
	thread, ok := p.waitingThread(ctx, s.RunID)
	if !ok || p.gov == nil {
		return &agentlink.Refusal{Code: "not_found", Message: fmt.Sprintf("run_id: no run %q runs or waits here", s.RunID)}
	}
	if _, err := p.gov.Cancel(ctx, thread, why); err != nil {
		if errors.Is(err, flow.ErrNothingPending) {
			return &agentlink.Refusal{Code: "not_found", Message: fmt.Sprintf("run_id: run %q no longer waits", s.RunID)}
		}
		return err
	}
	if p.runs != nil {
		p.runs.rec.Stopped(s.RunID, why, time.Now())
	}
	fmt.Fprintf(p.out, "agent %s: thread %s: the waiting run %s was %s\n", p.id.Name, thread, s.RunID, why)
	// The board hears of a withdrawn approval now, not on the next link.
	p.bg.Go(func() {
		if err := p.gov.Recover(p.runCtx); err != nil && p.runCtx.Err() == nil {
			p.cfg.Logger.Warn("telling the board of a run stopped while it waited", "err", err)
		}
	})
	return nil
}

// waitingThread finds the thread where run id waits: from its record, or
// else among the threads that wait.
func (p *parts) waitingThread(ctx context.Context, id string) (string, bool) {
	var threads []string
	if p.runs != nil {
		if r, ok := p.runs.rec.Get(id); ok && r.Thread != "" {
			threads = append(threads, r.Thread)
		}
	}
	if all, err := p.agent.WaitingThreads(ctx); err == nil {
		threads = append(threads, all...)
	}
	for _, t := range threads {
		if w, err := p.agent.Graph.Pending(ctx, t); err == nil && w != nil && w.Run == id {
			return t, true
		}
	}
	return "", false
}
