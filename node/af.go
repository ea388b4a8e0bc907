package node

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/symphonix/symphonix/agentflow"
	"github.com/symphonix/symphonix/agentlink"
	"github.com/symphonix/symphonix/flow"
	"github.com/symphonix/symphonix/journal"
	"github.com/symphonix/symphonix/runs"
	"github.com/symphonix/symphonix/subscription"
)

// AFLinkWithin is how long an Agent Flow run at a terminal, linked, waits
// for the board's welcome before it starts, so that the board's live view
// has it from its start. Without the welcome it starts all the same, and
// its summary reaches the board once the link is up.
const AFLinkWithin = 5 * time.Second

// AFConfig is what StartAF needs: Config's Dir (the folder of the .af
// file), BoardURL and Token, Getenv, Logger, Stderr, JournalDetail,
// JournalMaxBytes and SwitchesWithin, and the workflow.
type AFConfig struct {
	Config
	// Name is the workflow's name: the agent's name on the board, which
	// Token is minted for.
	Name string
	// Source is the file's text: its SHA-256 is the run's build.
	Source []byte
	// Tools is every MCP tool ("<server>.<tool>") the flow agents the
	// workflow's agent() calls run declare, together: announced in the
	// hello as the workflow's own, and, linked, switched by the board for
	// the workflow (AFRun.Subscription). A server's name may not hold a
	// dot. nil: the workflow calls no tool.
	Tools []string
}

// AFRun is the agent around one Agent Flow run at a terminal (`agent run
// FILE.af`): the journal of its model calls, kept where a flow's is (the
// file's folder, .symphonix/journal.jsonl), and, linked to a board, the
// record of the run the board is told as it happens — the run started,
// each stage (kind "stage") and agent() call (kind "agent") as a step,
// each emit progress as a step of kind "progress", and how the run ended
// — without what it was given or gave back unless MONITOR_DETAIL=full.
// Its methods are safe for concurrent use.
type AFRun struct {
	cfg   AFConfig
	id    string
	start time.Time
	j     *journal.Journal
	rr    *runRecord                 // nil unlinked
	sub   *subscription.Subscription // nil unlinked

	cancel   context.CancelCauseFunc
	stopLink context.CancelFunc
	linkDone chan struct{}
	gaveUp   error

	mu sync.Mutex
}

// StartAF opens the journal and, with a BoardURL, the link and the run's
// record, tells the record the run started with input (by the command
// line and the local user), and returns the run with the context to run
// it on: it carries the run's id (flow.RunOf), and ends when the link
// gives up. The journal is said in a line on Stderr; one that cannot be
// kept is said there too, and the run goes on without it. Linked, with
// Tools, it waits for the board's word on them as a flow run does (up to
// SwitchesWithin, and the same lines on Stderr) rather than for the
// welcome alone. It fails when cfg is wrong (MONITOR_DETAIL among it) or
// the link cannot be made. Finish ends it.
func StartAF(ctx context.Context, cfg AFConfig, input map[string]any) (*AFRun, context.Context, error) {
	if cfg.Dir == "" || cfg.Name == "" {
		return nil, nil, errors.New("node: AFConfig.Dir and Name are required")
	}
	if cfg.BoardURL != "" && cfg.Token == "" {
		return nil, nil, errors.New("node: Config.Token is required with a BoardURL")
	}
	if cfg.JournalDetail == "" {
		cfg.JournalDetail = journal.DetailMetadata
	}
	if _, err := journal.ParseDetail(string(cfg.JournalDetail)); err != nil {
		return nil, nil, fmt.Errorf("node: Config.JournalDetail: %w", err)
	}
	if cfg.JournalMaxBytes < 0 {
		return nil, nil, fmt.Errorf("node: Config.JournalMaxBytes is %d; want 0 (the default) or more", cfg.JournalMaxBytes)
	}
	if cfg.JournalMaxBytes == 0 {
		cfg.JournalMaxBytes = journal.DefaultMaxBytes
	}
	if cfg.SwitchesWithin < 0 {
		return nil, nil, fmt.Errorf("node: Config.SwitchesWithin is %s; want 0 (the default) or more", cfg.SwitchesWithin)
	}
	if cfg.SwitchesWithin == 0 {
		cfg.SwitchesWithin = DefaultSwitchesWithin
	}
	declared, err := afDeclared(cfg.Tools)
	if err != nil {
		return nil, nil, err
	}
	if cfg.Stderr == nil {
		cfg.Stderr = io.Discard
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	detail, err := runsDetail(cfg.Config)
	if err != nil {
		return nil, nil, err
	}
	sum := sha256.Sum256(cfg.Source)
	r := &AFRun{cfg: cfg, id: flow.NewRunID(), start: time.Now()}
	ctx, r.cancel = context.WithCancelCause(ctx)
	ctx = flow.InRun(runs.StartedBy(ctx, runs.ByCLI, localUser()), r.id)

	j, line := openJournal(cfg.Config)
	r.j = j
	if cfg.Stderr != nil {
		fmt.Fprintln(cfg.Stderr, line)
	}
	if cfg.BoardURL != "" {
		id := agentlink.Identity{Name: cfg.Name, Build: "sha256:" + hex.EncodeToString(sum[:])}
		// The flow agents' calls pass through the workflow: their tools
		// are announced, and switched, as its own.
		if r.sub, err = subscription.New(subscription.Config{
			Declared: declared, Board: true,
			Memory: filepath.Join(cfg.Dir, ".symphonix", "af-"+cfg.Name+"-subscription.json"),
		}); err != nil {
			r.j.Close()
			r.cancel(nil)
			return nil, nil, fmt.Errorf("node: AFConfig.Tools: %w", err)
		}
		if err := r.sub.Recall(); err != nil {
			fmt.Fprintf(cfg.Stderr, "agent %s: tools: none until the board says (%v)\n", cfg.Name, err)
		}
		id.Tools = r.sub.Declared()
		if err := r.link(ctx, id, detail); err != nil {
			r.j.Close()
			r.cancel(nil)
			return nil, nil, err
		}
		r.rr.rec.Watch(ctx, flow.Event{Kind: flow.EventRunStarted, Run: r.id, At: r.start, Copy: -1, Input: input})
	}
	return r, ctx, nil
}

// link opens the run's record and its outbox (in the folder's
// .symphonix, one for each workflow), and the link that tells the board,
// and waits for its welcome up to AFLinkWithin — or, when the workflow's
// agents declare tools, for the board's first word on them, up to
// SwitchesWithin, as a flow run at a terminal does.
func (r *AFRun) link(ctx context.Context, id agentlink.Identity, detail runs.Detail) error {
	cfg := r.cfg
	rr := &runRecord{}
	var err error
	path := filepath.Join(cfg.Dir, ".symphonix", "af-"+cfg.Name+"-runs-outbox.json")
	if rr.box, err = runs.OpenOutbox(path); err != nil {
		if cfg.Stderr != nil {
			fmt.Fprintf(cfg.Stderr, "agent %s: runs: %v: the summaries of runs are not kept for the board\n", cfg.Name, err)
		}
		rr.box = nil
	}
	named, _ := namedSet(cfg.Config)
	rcfg := runs.Config{
		Build: id.Build, Outputs: []string{"output"}, Detail: detail, SecretSet: named, Safe: detailFilter(cfg.Config),
		OnEvent: rr.event, OnSummary: rr.added,
		OnError: func(err error) { cfg.Logger.Warn("runs: the outbox", "err", err) },
	}
	if rr.box != nil {
		rcfg.Outbox = rr.box
	}
	if rr.rec, err = runs.NewRecorder(rcfg); err != nil {
		return err
	}
	up, spoke := make(chan struct{}), make(chan struct{})
	var once, spokeOnce sync.Once
	sub := r.sub
	lcfg := agentlink.Config{
		BoardURL: cfg.BoardURL, Token: cfg.Token, Identity: id, Logger: cfg.Logger,
		Capabilities: []string{agentlink.CapabilityRuns, agentlink.CapabilityLiveRuns},
		Summaries:    rr.summaries(),
		OnState: func(st agentlink.State) {
			if st.Up {
				once.Do(func() { close(up) })
			} else {
				sub.Unreachable()
			}
		},
	}
	if len(sub.Declared()) > 0 { // a workflow that calls no tool has none to switch
		lcfg.OnSwitches = func(on []string, spoken bool) {
			fmt.Fprintln(cfg.Stderr, switchesLine(cfg.Name, sub, on, spoken))
			spokeOnce.Do(func() { close(spoke) })
		}
	}
	link, err := agentlink.New(lcfg)
	if err != nil {
		return err
	}
	rr.use(link)
	r.rr = rr
	r.linkDone = make(chan struct{})
	lctx := context.WithoutCancel(ctx)
	lctx, stop := context.WithCancel(lctx)
	go func() {
		defer close(r.linkDone)
		err := link.Run(lctx)
		var gave *agentlink.GaveUpError
		if errors.As(err, &gave) {
			r.mu.Lock()
			r.gaveUp = gave
			r.mu.Unlock()
			r.cancel(gave) // the run stops rather than report to nobody
		}
	}()
	r.stopLink = stop
	if len(sub.Declared()) > 0 {
		// A tool called before the board has spoken would be refused for
		// nobody having decided, when the board had. A link that gives up
		// ends ctx, and the run with it.
		heard, err := awaitSwitches(ctx, spoke, cfg.SwitchesWithin)
		if line := unheardLine(cfg.Name, "the run starts", sub, cfg.SwitchesWithin); err == nil && !heard && line != "" {
			fmt.Fprintln(cfg.Stderr, line)
		}
		return nil
	}
	t := time.NewTimer(AFLinkWithin)
	defer t.Stop()
	select {
	case <-up:
	case <-t.C:
	case <-r.linkDone:
	case <-ctx.Done():
	}
	return nil
}

// ID is the run's id.
func (r *AFRun) ID() string { return r.id }

// Subscription is which of Tools the board switches on for the workflow,
// applied as the board speaks (a switch flipped during the run applies to
// the next call): what every flow agent the workflow calls is to ask
// before each of its tool calls (agent.Config.Subscription). nil
// unlinked: each keeps its own, every tool it declares on.
func (r *AFRun) Subscription() *subscription.Subscription { return r.sub }

// afDeclared is tools ("<server>.<tool>") as a subscription's
// declaration, server by server.
func afDeclared(tools []string) (map[string][]string, error) {
	declared := map[string][]string{}
	for _, t := range tools {
		server, tool, ok := strings.Cut(t, ".")
		if !ok || server == "" || tool == "" {
			return nil, fmt.Errorf("node: AFConfig.Tools: %q is not <server>.<tool>", t)
		}
		declared[server] = append(declared[server], tool)
	}
	return declared, nil
}

// WrapModel returns m with its calls journalled (kind llm, named for the
// agent() call's use alias) and their tokens counted in the run's record.
func (r *AFRun) WrapModel(m flow.Model) flow.Model {
	return r.rr.wrapModel(r.j.WrapModel(m))
}

// WrapTools returns call with its calls journalled (kind tool): how the
// tool calls of a flow agent an agent() call runs are kept beside the
// run's model calls.
func (r *AFRun) WrapTools(call flow.ToolCaller) flow.ToolCaller {
	return r.j.WrapTools(call)
}

// Observe is agentflow.Config's Observe: each stage and agent() call a
// step of the run's record, and each emit progress a step of kind
// "progress" (the link's run events have no kind of their own for it, and
// carry no payload of it, whatever the detail).
func (r *AFRun) Observe(ctx context.Context, e agentflow.Event) {
	if r.rr == nil {
		return
	}
	fe := flow.Event{Run: r.id, At: e.At, Copy: -1, Duration: e.Duration, Err: e.Err}
	switch e.Kind {
	case agentflow.EventStageStarted, agentflow.EventStageFinished:
		fe.Node, fe.NodeKind = e.Name, "stage"
	case agentflow.EventAgentStarted, agentflow.EventAgentFinished:
		fe.Node, fe.NodeKind, fe.Copy = e.Name, flow.KindAgent, e.Call-1
	case agentflow.EventProgress:
		fe.Node, fe.NodeKind, fe.Copy = "progress", "progress", e.Call-1
		fe.Kind = flow.EventNodeEntered
		r.rr.rec.Watch(ctx, fe)
		fe.Kind, fe.Outcome = flow.EventNodeFinished, flow.OutcomeOK
		r.rr.rec.Watch(ctx, fe)
		return
	default:
		return
	}
	switch e.Kind {
	case agentflow.EventStageStarted, agentflow.EventAgentStarted:
		fe.Kind = flow.EventNodeEntered
	default:
		fe.Kind, fe.Outcome = flow.EventNodeFinished, flow.OutcomeOK
		switch {
		case e.Err != nil && ctx.Err() != nil:
			fe.Outcome = flow.OutcomeStopped
		case e.Err != nil:
			fe.Outcome = flow.OutcomeFailed
		}
	}
	r.rr.rec.Watch(ctx, fe)
}

// Finish tells the record how the run ended — finished with out, or failed
// with err — waits up to a few seconds for the board to store its summary,
// and closes the link and the journal. It returns the link's
// *agentlink.GaveUpError when the link gave up (a refused token, a URL
// that is not a board's), and nil otherwise.
func (r *AFRun) Finish(ctx context.Context, out any, err error) error {
	defer r.cancel(nil)
	defer func() {
		if err := r.j.Close(); err != nil {
			r.cfg.Logger.Warn("closing the journal", "err", err)
		}
	}()
	if r.rr == nil {
		return nil
	}
	e := flow.Event{Kind: flow.EventRunFinished, Run: r.id, At: time.Now(), Copy: -1, State: flow.State{"output": out}}
	e.Duration = e.At.Sub(r.start)
	if err != nil {
		e.Kind, e.Err, e.State = flow.EventRunFailed, err, nil
	}
	r.rr.rec.Watch(ctx, e)
	r.mu.Lock()
	gave := r.gaveUp
	r.mu.Unlock()
	if gave == nil {
		r.rr.drain(context.WithoutCancel(ctx), summariesWithin)
	}
	r.stopLink()
	<-r.linkDone
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.gaveUp
}
