package node

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/symphonix/symphonix/agent"
	"github.com/symphonix/symphonix/agentlink"
	"github.com/symphonix/symphonix/flow"
	"github.com/symphonix/symphonix/governed"
	"github.com/symphonix/symphonix/journal"
	"github.com/symphonix/symphonix/packages"
	"github.com/symphonix/symphonix/serve"
	"github.com/symphonix/symphonix/subscription"
)

// parts is one agent process as Serve and Run assemble it. agent, gov and
// api may be nil: a flow this binary cannot assemble is only linked, and a
// run at a terminal is not served.
type parts struct {
	cfg Config // checked
	id  agentlink.Identity
	// out is where the agent's lines go: Stdout when served, Stderr for a
	// run (whose Stdout is its result).
	out   io.Writer
	agent *agent.Agent
	gov   *governed.Approvals
	api   *serve.Server
	// quietLink: the link's coming and going is not said, so that it does
	// not land in the middle of a question asked at a terminal.
	quietLink bool
	// bg holds what the link starts when it comes up; wait for it before
	// closing gov and agent.
	bg sync.WaitGroup
	// spoke, when set, is closed when the board's first word on the tools
	// has been applied.
	spoke     chan struct{}
	spokeOnce sync.Once
	// ready, when set, is closed when a served agent's runs may start:
	// the board has spoken on the tools, or the wait for it is over.
	ready chan struct{}
	// pauses is the agent's pause, told to the board and obeyed.
	pauses *pauses
	// health runs the agent's health checks; nil when none run.
	health *healthChecks
	// runs is the record of the agent's runs; nil without a board.
	runs *runRecord
	// metrics counts runs, calls and the link; nil counts nothing.
	metrics *agentMetrics
	// runCtx carries the runs fired from the board: it outlives the link
	// that fired them; fired holds them, for a stopping agent to wait.
	runCtx context.Context
	fired  sync.WaitGroup
	// trig is the served agent's triggers; nil when its folder has none.
	// trigLink is the link its reports go to, once there is one.
	trig     *triggered
	trigLink atomic.Pointer[agentlink.Link]
	// evals are the eval suites beside the flow, whose journals' scores the
	// link reports; set when the link is made.
	evals []string
}

// open assembles the flow folder, its model and tools journalled in j (nil:
// not journalled), its runs recorded in rr (nil: not recorded) and all
// three counted in m (nil: not counted), with the board switching its
// tools when one is configured. Its nodes and model and tool calls have
// spans when cfg.TracerProvider is set (trace.go).
func open(ctx context.Context, cfg Config, j *journal.Journal, rr *runRecord, m *agentMetrics) (*agent.Agent, error) {
	tr := newTracing(cfg.TracerProvider)
	a, err := agent.Open(ctx, cfg.Dir, agent.Config{
		Getenv:    cfg.Getenv,
		Logger:    cfg.Logger,
		Stderr:    cfg.Stderr,
		WrapModel: func(model flow.Model) flow.Model { return tr.wrapModel(m.wrapModel(rr.wrapModel(j.WrapModel(model)))) },
		WrapTools: func(call flow.ToolCaller) flow.ToolCaller { return tr.wrapTools(m.wrapTools(j.WrapTools(call))) },
		Monitored: cfg.BoardURL != "",
		Watch:     watchers(m.watch(rr.watch()), tr.watch()),
	})
	if err == nil {
		m.declare(a.Subscription.Declared())
	}
	return a, err
}

// sayAssembled says which model, waiting store, memory and tools a are
// using, and how each of its handlers and routers is provided.
func sayAssembled(w io.Writer, a *agent.Agent) {
	fmt.Fprintln(w, a.Model)
	if a.Waiting != "" {
		fmt.Fprintln(w, a.Waiting)
	}
	if a.Memory != "" {
		fmt.Fprintln(w, a.Memory)
	}
	fmt.Fprintln(w, a.Tools)
	for _, p := range a.Provisions() {
		fmt.Fprintln(w, p)
	}
}

// govern returns who answers the approvals a's runs wait at: the chat
// without a board, the board's rules with one. onResult hears every run a
// decision on the board resumed or ended; runs it resumes carry their
// thread for the journal. The approval the board holds for a run that
// waits goes into the run's record in rr (nil: none kept).
func govern(cfg Config, a *agent.Agent, rr *runRecord, onResult func(string, flow.Result, governed.Verdict, error)) (*governed.Approvals, error) {
	return governed.New(governed.Config{
		OnRaised:   rr.raised(),
		Graph:      a.Graph,
		Holding:    a.Holding(),
		Monitored:  cfg.BoardURL != "",
		Threads:    a.WaitingThreads,
		Logger:     cfg.Logger,
		RunContext: serve.RunContext,
		OnResult:   onResult,

		TracerProvider: cfg.TracerProvider,
	})
}

// link makes the link to the board and hands it to what asks the board:
// the approvals, which it re-asks about after each link-up, and the
// server's door and pointers. The board's word on the tools goes to the
// agent's subscription as it comes. Nothing is dialled until the link
// runs; ctx bounds what each link-up starts.
func (p *parts) link(ctx context.Context) (*agentlink.Link, error) {
	var sub *subscription.Subscription
	if p.agent != nil {
		sub = p.agent.Subscription
	}
	p.evals = evalSuites(p.cfg.Dir)
	cfg := agentlink.Config{
		BoardURL:       p.cfg.BoardURL,
		Token:          p.cfg.Token,
		Identity:       p.id,
		Capabilities:   p.capabilities(),
		Logger:         p.cfg.Logger,
		OnPong:         p.metrics.pong(),
		TracerProvider: p.cfg.TracerProvider,
		OnState: func(st agentlink.State) {
			p.metrics.linkState(st)
			if !st.Up {
				if !p.quietLink {
					fmt.Fprintf(p.out, "agent %s: link down: %v\n", p.id.Name, st.Err)
				}
				if sub != nil {
					sub.Unreachable()
				}
				return
			}
			if !p.quietLink {
				fmt.Fprintf(p.out, "agent %s: linked to %s (session %s)\n", p.id.Name, p.cfg.BoardURL, st.Session)
			}
			if p.api != nil {
				p.api.ReportAll() // the board has every pointer after each link-up
			}
			if p.gov != nil {
				p.bg.Go(func() {
					if err := p.gov.Recover(ctx); err != nil && ctx.Err() == nil {
						p.cfg.Logger.WarnContext(ctx, "asking the board about waiting runs", "err", err)
					}
				})
			}
		},
	}
	if p.gov != nil {
		cfg.Holding, cfg.OnDecision = p.gov, p.gov.Decided
	}
	if sub != nil {
		cfg.OnSwitches = func(on []string, spoken bool) {
			fmt.Fprintln(p.out, switchesLine(p.id.Name, sub, on, spoken))
			if p.spoke != nil {
				p.spokeOnce.Do(func() { close(p.spoke) })
			}
		}
	}
	if p.api != nil {
		cfg.OnPaired, cfg.OnChat = p.api.Paired, chat(p.api)
	}
	cfg.OnPause = p.pauses.fromBoard
	if p.runs != nil {
		cfg.Summaries = p.runs.summaries()
	}
	if p.api != nil && p.runs != nil {
		cfg.OnFire, cfg.OnStop = p.fire, p.stop
	}
	if p.trig != nil {
		cfg.OnTriggerPauses = p.trig.rt.SetPaused
	}
	cfg.Identity.Inputs = p.inputs()
	link, err := agentlink.New(cfg)
	if err != nil {
		return nil, err
	}
	if err := p.pauses.use(link); err != nil {
		return nil, err
	}
	if p.health != nil {
		p.health.use(link)
	}
	p.runs.use(link)
	if p.trig != nil {
		p.trigLink.Store(link)
		p.reportTriggers()
	}

	if p.gov != nil {
		p.gov.Use(link)
	}
	if p.api != nil {
		p.api.Use(link)
	}
	return link, nil
}

// switchesLine applies the board's word on the tools to sub and says what
// it came to.
func switchesLine(name string, sub *subscription.Subscription, on []string, spoken bool) string {
	if !spoken {
		if err := sub.NeverSpoke(); err != nil {
			return fmt.Sprintf("agent %s: tools: the board has not said which are on, so none are (%v)", name, err)
		}
		return fmt.Sprintf("agent %s: tools: the board has not said which are on, so none are", name)
	}
	undeclared, err := sub.Set(on)
	now, _ := sub.On()
	line := fmt.Sprintf("agent %s: tools: the board switched on %d: %s", name, len(now), strings.Join(now, ", "))
	if len(undeclared) > 0 {
		line += fmt.Sprintf(" (not declared by this flow, so left off: %s)", strings.Join(undeclared, ", "))
	}
	if err != nil {
		line += fmt.Sprintf(" (not remembered for a restart: %v)", err)
	}
	return line
}

// decidedLine says what a decision made on the board came to.
func decidedLine(thread string, res flow.Result, v governed.Verdict, err error) string {
	switch {
	case errors.Is(err, governed.ErrCancelled), errors.Is(err, governed.ErrExpired):
		return fmt.Sprintf("thread %s: the run ended without an answer: %s", thread, v.Why)
	case err != nil:
		return fmt.Sprintf("thread %s: after the board's decision: %v", thread, err)
	case res.Pending != nil:
		return fmt.Sprintf("thread %s: waits at %s: %s", thread, res.Pending.Node, v.Why)
	}
	return fmt.Sprintf("thread %s: the board decided; the run finished", thread)
}

// inputs is the flow's declared inputs for the hello, at most
// agentlink.MaxInputs (the flow's first).
func (p *parts) inputs() []agentlink.FlowInput {
	in := p.id.Inputs
	if len(in) > agentlink.MaxInputs {
		in = in[:agentlink.MaxInputs]
	}
	return in
}

// readIdentity is who the agent in dir says it is in its hello: its flow's
// identity, and the package the folder was installed from when its
// install record (packages.RecordPath) says so. A folder without a record
// reports no package; a record that cannot be read is an error naming the
// file, so an agent never reports a package it cannot vouch for.
func readIdentity(dir string) (agentlink.Identity, error) {
	id, err := agentlink.ReadIdentity(dir)
	if err != nil {
		return agentlink.Identity{}, err
	}
	// The tools of the agents it delegates to are called through it, and
	// switched by its subscription: it announces them as its own.
	id.Tools = agent.DelegatedTools(dir, id.Tools)
	in, err := packages.Installed(dir)
	switch {
	case errors.Is(err, packages.ErrNotInstalled):
		return id, nil
	case err != nil:
		return agentlink.Identity{}, fmt.Errorf("%s: the install record cannot be read: %w", filepath.Join(dir, filepath.FromSlash(packages.RecordPath)), err)
	}
	id.Package = &agentlink.InstalledPackage{Name: in.Name, Version: in.Version, Digest: in.Digest}
	return id, nil
}
