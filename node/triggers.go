package node

import (
	"context"
	"errors"
	"fmt"
	"net"
	"path/filepath"
	"strings"
	"time"

	"github.com/symphonix/symphonix/agentlink"
	"github.com/symphonix/symphonix/flow"
	"github.com/symphonix/symphonix/runs"
	"github.com/symphonix/symphonix/triggers"
)

// TriggerStatePath is where a served agent keeps each schedule's latest
// occurrence, for a schedule that catches up what it missed while the
// agent was down.
func TriggerStatePath(dir string) string {
	return filepath.Join(dir, ".symphonix", "trigger-state.json")
}

// triggered is a served agent's triggers: the runtime and, when the file
// has webhooks, the listener they are served on.
type triggered struct {
	rt   *triggers.Runtime
	file string
	ln   net.Listener // nil: no webhooks
}

// openTriggers finds the trigger file that governs the folder's flow
// (triggers.FileFor) and readies its runtime, with runs started as a
// message to the chat is (p.triggerRun); nil when there is none. A file
// that cannot be read or that Problems rejects, a secret or delivery URL
// not set, and a listener that cannot be opened fail, naming the problem:
// an agent is never served with triggers it was given and cannot run.
func openTriggers(p *parts) (*triggered, error) {
	l, err := triggers.For(filepath.Join(p.cfg.Dir, "flow.json"))
	if err != nil {
		return nil, fmt.Errorf("triggers: %w", err)
	}
	if l == nil {
		return nil, nil
	}
	path := l.Path
	rt, err := triggers.NewRuntime(l, p.agent.Flow, triggers.Options{
		Run:         p.triggerRun,
		Getenv:      p.cfg.Getenv,
		AgentPaused: func() bool { return p.pauses.Current().Paused },
		StatePath:   TriggerStatePath(p.cfg.Dir),
		OnChange:    p.reportTriggers,
		OnDelivered: func(run string, o triggers.Outcome) {
			if p.runs != nil {
				p.runs.rec.Delivered(run, string(o.State), o.Attempts)
			}
		},
		Logger: p.cfg.Logger,
	})
	if err != nil {
		return nil, fmt.Errorf("triggers: %w", err)
	}
	tr := &triggered{rt: rt, file: path}
	if rt.Webhooks() {
		if tr.ln, err = triggers.Listen(p.cfg.TriggerListen, p.cfg.Getenv); err != nil {
			return nil, fmt.Errorf("--trigger-listen: %w", err)
		}
	}
	return tr, nil
}

// say writes what the agent's triggers are, a line each.
func (tr *triggered) say(p *parts) {
	ts := tr.rt.Triggers()
	fmt.Fprintf(p.out, "agent %s: triggers: %s: %d\n", p.id.Name, tr.file, len(ts))
	if tr.ln != nil {
		fmt.Fprintf(p.out, "agent %s: triggers: webhooks on http://%s\n", p.id.Name, tr.ln.Addr())
	}
	for _, r := range tr.rt.Reports() {
		t := r.Trigger
		switch t.Kind {
		case triggers.KindSchedule:
			next := "never comes round"
			if !r.Next.IsZero() {
				next = "next at " + r.Next.Format(time.RFC3339)
			}
			fmt.Fprintf(p.out, "agent %s: trigger %s: %s (%s, %s), %s\n", p.id.Name, t.ID, r.Description, t.Schedule, t.TimeZone, next)
		case triggers.KindWebhook:
			signed := ""
			if t.Secret != "" {
				signed = ", signed"
			}
			fmt.Fprintf(p.out, "agent %s: trigger %s: %s %s%s\n", p.id.Name, t.ID, t.Method, t.Path, signed)
		}
	}
}

// tasks are what serves the triggers until ctx ends: the schedules, and
// the listener when there are webhooks.
func (tr *triggered) tasks(ctx context.Context) []func() error {
	out := []func() error{func() error { return tr.rt.Run(ctx) }}
	if tr.ln != nil {
		out = append(out, func() error { return tr.rt.Serve(ctx, tr.ln) })
	}
	return out
}

// errWaits: a triggered run stopped for a person (an ask or an approval).
// It waits on its thread; nobody is there to see its result yet.
var errWaits = errors.New("the run waits for a person")

// triggerRun starts the run a trigger's occurrence makes (the runtime's
// Run): as a message to the chat is, on a thread of its own, started by
// "trigger" and recorded with the trigger, once the board has said which
// tools are on. It returns when the run ends, with the flow's outputs.
func (p *parts) triggerRun(_ context.Context, s triggers.Start) (triggers.Result, error) {
	if err := p.agent.CheckInputs(s.Input); err != nil {
		return triggers.Result{}, fmt.Errorf("the input the trigger mapped: %w", err)
	}
	p.fired.Add(1)
	defer p.fired.Done()
	ctx := p.runCtx
	if p.ready != nil {
		select {
		case <-p.ready:
		case <-ctx.Done():
			return triggers.Result{}, ctx.Err()
		}
	}
	delivery := runs.DeliveryNone
	if s.Trigger.Deliver != nil {
		delivery = runs.DeliveryPending
	}
	ctx = runs.WithTrigger(runs.StartedBy(flow.WithRunID(ctx, s.RunID), runs.ByTrigger, s.Trigger.ID), runs.Trigger{
		ID: s.Trigger.ID, Kind: string(s.Trigger.Kind), At: s.At,
		Method: s.Occurrence.Method, Path: s.Occurrence.Path, Delivery: delivery,
	})
	thread := "trigger-" + s.Trigger.ID + "-" + s.RunID[:min(12, len(s.RunID))]
	res, _, err := p.api.Start(ctx, thread, s.Input)
	fmt.Fprintln(p.out, triggeredLine(p.id.Name, s.Trigger.ID, thread, res, err))
	switch {
	case err != nil:
		return triggers.Result{}, err
	case res.Pending != nil:
		return triggers.Result{}, fmt.Errorf("%w at %s, on thread %s", errWaits, res.Pending.Node, thread)
	}
	out := map[string]any{}
	names := p.agent.Flow.Outputs
	if len(names) == 0 {
		for k := range res.State {
			names = append(names, k)
		}
	}
	for _, k := range names {
		if v, ok := res.State[k]; ok {
			out[k] = v
		}
	}
	return triggers.Result{Outputs: out}, nil
}

// triggeredLine says what a triggered run came to.
func triggeredLine(name, id, thread string, res flow.Result, err error) string {
	head := fmt.Sprintf("agent %s: trigger %s: thread %s: the run", name, id, thread)
	switch {
	case err != nil:
		return head + " failed: " + err.Error()
	case res.Pending != nil:
		return head + " waits at " + res.Pending.Node
	}
	return head + " finished"
}

// reportTriggers tells the board the triggers as they stand (the
// runtime's OnChange, and the agent's pause changing: a paused agent's
// schedules have no next run); nothing without a link, or before the
// runtime is made.
func (p *parts) reportTriggers() {
	l := p.trigLink.Load() // stored after p.trig was set
	if l == nil {
		return
	}
	tr := p.trig
	if err := l.ReportTriggers(triggerReports(tr.rt.Reports())); err != nil {
		p.cfg.Logger.Warn("reporting the triggers", "err", err)
	}
}

// triggerReports are the runtime's reports as the link carries them, at
// most agentlink.MaxTriggers (the file's first).
func triggerReports(rs []triggers.Report) []agentlink.Trigger {
	rs = rs[:min(len(rs), agentlink.MaxTriggers)]
	out := make([]agentlink.Trigger, len(rs))
	for i, r := range rs {
		t := r.Trigger
		out[i] = agentlink.Trigger{
			ID: t.ID, Kind: string(t.Kind), Schedule: t.Schedule, TimeZone: t.TimeZone, Description: r.Description,
			Method: t.Method, Path: t.Path, Next: r.Next, Overlap: string(t.Overlap),
			Delivers: t.Deliver != nil, Signed: t.Secret != "",
		}
		if h := r.Last; h != nil {
			out[i].Last = &agentlink.TriggerOccurrence{
				At: h.At, RunID: h.RunID, OK: h.OK, Duration: h.Duration,
				Error: strings.TrimSpace(h.Error), Delivery: string(h.Delivery.State),
			}
		}
	}
	return out
}
