package node

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/symphonix/symphonix/agent"
	"github.com/symphonix/symphonix/agentlink"
	"github.com/symphonix/symphonix/flow"
	"github.com/symphonix/symphonix/governed"
	"github.com/symphonix/symphonix/journal"
	"github.com/symphonix/symphonix/runs"
	"github.com/symphonix/symphonix/subscription"
)

// ErrNoAnswer: standard input ended before the run did. The run waits on
// its thread, for the next Run there.
var ErrNoAnswer = errors.New("no answer (standard input ended)")

// ErrStopped: Run's context ended while the board had yet to decide the
// run's approval. The run waits on its thread, and the decision reaches it
// the next time the agent runs.
var ErrStopped = errors.New("stopped")

// ErrBoardDecides: the run waits at an approval its holding note says is
// the board's, and no board is configured. The run waits on its thread
// until the agent runs linked to its board, or Cancel ends it; nothing the
// chat says answers it.
var ErrBoardDecides = errors.New("the board decides this approval, and no board is configured")

// ErrRunWaiting: Run was given Input for a thread where a run waits. Input
// starts a new run, and the waiting one would be resumed instead, so
// neither is done: answer the waiting run (Run without Input), end it
// (Cancel), or start the new one on another thread.
var ErrRunWaiting = errors.New("a run waits on the thread")

// summariesWithin is how long a run at a terminal, linked, waits before it
// exits for the board to store the summaries of its runs; what it has not
// stored is delivered the next time the agent links.
const summariesWithin = 5 * time.Second

// DefaultSwitchesWithin is how long a run linked to a board waits for the
// board's word on its tools before it starts, unless
// Config.SwitchesWithin says otherwise. Then it starts with what the
// subscription has: the board's last word kept in the folder, or nothing
// (docs/tools.md).
const DefaultSwitchesWithin = 10 * time.Second

// Run is `agent run DIR`: one run at a terminal. It starts a run on
// cfg.Thread with cfg.Input, or resumes the one waiting there (after a
// restart too). Questions (asks and approval cards) go to Stderr and the
// answers are read from Stdin, a line each; an approval the board decides
// is waited for, linked to the board for the length of the run. Linked, the
// run starts once the board has said which tools are on, or after
// cfg.SwitchesWithin without its word. The finished run's outputs go to
// Stdout, or its state as JSON with cfg.JSON.
//
// It fails when cfg is wrong, the flow cannot be assembled (a
// *flow.ValidationError when it is invalid), or the run fails; with
// ErrRunWaiting when cfg.Input is given and a run waits on the thread,
// ErrNoAnswer when Stdin ends before the run does, ErrStopped when ctx
// ends while the board has yet to decide, and ErrBoardDecides when the run
// waits for a board and none is configured. Linked, it fails with the
// link's *agentlink.GaveUpError when the link gives up (a refused token, a
// URL that is not a board's, an untrusted certificate): the run is stopped
// rather than left waiting on a board that will never answer.
func Run(ctx context.Context, cfg Config) error {
	ctx, gaveUp := context.WithCancelCause(ctx)
	defer gaveUp(nil)
	err := run(ctx, cfg, gaveUp)
	var gave *agentlink.GaveUpError
	if errors.As(context.Cause(ctx), &gave) {
		return gave
	}
	return err
}

// run is Run; gaveUp ends ctx with the link's error when it gives up.
func run(ctx context.Context, cfg Config, gaveUp context.CancelCauseFunc) error {
	cfg, err := cfg.checked()
	if err != nil {
		return err
	}
	id, err := readIdentity(cfg.Dir)
	if err != nil {
		return err
	}
	cfg = cfg.withEnv(id.Name, cfg.Stderr)
	pz, err := openPauses(cfg.Dir, id.Name, cfg.Stderr, cfg.Logger)
	if err != nil {
		return err
	}
	rr, err := openRuns(cfg, id, cfg.Stderr)
	if err != nil {
		return err
	}
	j, journalLine := openJournal(cfg)
	defer func() {
		if err := j.Close(); err != nil {
			cfg.Logger.Warn("closing the journal", "err", err)
		}
	}()
	a, err := open(ctx, cfg, j, rr, nil)
	if err != nil {
		return err
	}
	defer a.Close()
	rr.settle(ctx, a)
	if err := refuseNewRun(ctx, cfg, a, pz); err != nil {
		return err
	}
	sayAssembled(cfg.Stderr, a)
	fmt.Fprintln(cfg.Stderr, journalLine)
	// The run's lines in the journal name its thread, as a served run's do.
	ctx = journal.WithThread(ctx, cfg.Thread)
	// Runs a decision on the board resumed or ended, on this run's thread.
	decided := make(chan decision, 4)
	gov, err := govern(cfg, a, rr, func(th string, res flow.Result, v governed.Verdict, err error) {
		if th != cfg.Thread {
			return
		}
		select {
		case decided <- decision{res, v, err}:
		default: // never blocks the decision: the run's state is in the store
			cfg.Logger.Warn("a decision's outcome not shown: one is waiting to be read", "thread", th)
		}
	})
	if err != nil {
		return err
	}
	defer gov.Close()

	if len(cfg.Input) > 0 {
		// The input is for a new run; resuming the waiting one with it
		// would act on one request with the other's values.
		p, err := a.Graph.Pending(ctx, cfg.Thread)
		if err != nil && !errors.Is(err, flow.ErrNothingPending) {
			return err
		}
		if p != nil {
			return fmt.Errorf("%w %q, at %s: %s; --input starts a new run, and never goes to a waiting one. "+
				"Answer it with `agent run --thread %s DIR` (no --input), end it with `agent cancel --thread %s DIR`, "+
				"or start the new run on another thread (--thread NAME)",
				ErrRunWaiting, cfg.Thread, p.Node, p.Question, cfg.Thread, cfg.Thread)
		}
	}
	in := map[string]any{}
	for _, name := range slices.Sorted(maps.Keys(cfg.Input)) {
		v, err := a.Input(name, cfg.Input[name])
		if err != nil {
			return fmt.Errorf("--input %s: %w", name, err)
		}
		in[name] = v
	}

	if cfg.BoardURL != "" {
		p := &parts{cfg: cfg, id: id, out: cfg.Stderr, agent: a, gov: gov, quietLink: true, spoke: make(chan struct{}), pauses: pz, runs: rr}
		lctx, cancel := context.WithCancel(ctx)
		link, err := p.link(lctx)
		if err != nil {
			cancel()
			return err
		}
		done := make(chan struct{})
		go func() {
			defer close(done)
			if err := link.Run(lctx); err != nil {
				gaveUp(err)
			}
		}()
		p.bg.Go(func() { pz.run(lctx) })
		p.reportEvals(lctx, link, false)
		defer func() {
			cancel()
			<-done
			p.bg.Wait()
		}()
		// Before the link goes: the board is told what the run came to.
		defer rr.drain(ctx, summariesWithin)
		if len(a.Subscription.Declared()) > 0 {
			// A tool called before the board has spoken would be refused
			// for nobody having decided, when the board had.
			heard, err := awaitSwitches(ctx, p.spoke, cfg.SwitchesWithin)
			if err != nil {
				return fmt.Errorf("%w before the run started, waiting for the board's word on the tools", ErrStopped)
			}
			if line := unheardLine(id.Name, "the run starts", a.Subscription, cfg.SwitchesWithin); !heard && line != "" {
				fmt.Fprintln(cfg.Stderr, line)
			}
		}
	}

	var (
		res    flow.Result
		v      governed.Verdict
		thread = cfg.Thread
	)
	// Read once linked: a decision the board made meanwhile may have
	// moved the run on.
	pending, err := a.Graph.Pending(ctx, thread)
	switch {
	case err != nil && !errors.Is(err, flow.ErrNothingPending):
		return err
	case pending != nil:
		fmt.Fprintf(cfg.Stderr, "resuming the run waiting on thread %q\n", thread)
		res = flow.Result{Pending: pending}
		if v, err = gov.Settle(ctx, thread, pending); err != nil {
			return err
		}
	default:
		if err := refuseNewRun(ctx, cfg, a, pz); err != nil {
			return err // paused meanwhile: by the board, once linked
		}
		if res, v, err = gov.Invoke(runs.StartedBy(ctx, runs.ByCLI, localUser()), thread, in); err != nil {
			return err
		}
	}
	answers := bufio.NewScanner(cfg.Stdin)
	for !res.Finished() {
		if v.Who == governed.Organisation {
			// The board decides: the run goes on when it has.
			fmt.Fprintf(cfg.Stderr, "\napproval at %s: %s\n%s\n", res.Pending.Node, res.Pending.Question, v.Why)
			if cfg.BoardURL == "" {
				return fmt.Errorf("%w: the run waits on thread %q until this agent runs linked to its board "+
					"(--monitor or MONITOR_URL), or `agent cancel --thread %s DIR` ends it", ErrBoardDecides, thread, thread)
			}
			select {
			case d := <-decided:
				if errors.Is(d.err, governed.ErrCancelled) || errors.Is(d.err, governed.ErrExpired) {
					return fmt.Errorf("the run on thread %q ended without an answer: %s", thread, d.v.Why)
				}
				if d.err != nil {
					return d.err
				}
				res, v = d.res, d.v
				continue
			case <-ctx.Done():
				return fmt.Errorf("%w: the run waits on thread %q for the board's decision, which reaches it the next time this agent runs", ErrStopped, thread)
			}
		}
		showPending(cfg.Stderr, res.Pending)
		if !answers.Scan() {
			return fmt.Errorf("%w: the run waits on thread %q", ErrNoAnswer, thread)
		}
		if res, v, err = gov.Answer(ctx, thread, answers.Text()); err != nil {
			return err
		}
	}
	if cfg.JSON {
		return json.NewEncoder(cfg.Stdout).Encode(res.State)
	}
	outs := a.Flow.Outputs
	if len(outs) == 0 {
		outs = slices.Sorted(maps.Keys(res.State))
	}
	for _, name := range outs {
		fmt.Fprintf(cfg.Stdout, "%s: %s\n", name, flow.Text(res.State[name]))
	}
	return nil
}

// refuseNewRun fails with ErrPaused, saying why, when the agent is paused
// and no run waits on cfg.Thread: a new run is new work. A run waiting
// there is what the agent has in flight, and may be answered.
func refuseNewRun(ctx context.Context, cfg Config, a *agent.Agent, pz *pauses) error {
	s := pz.Current()
	if !s.Paused {
		return nil
	}
	p, err := a.Graph.Pending(ctx, cfg.Thread)
	if err != nil && !errors.Is(err, flow.ErrNothingPending) {
		return err
	}
	if p != nil {
		return nil
	}
	return fmt.Errorf("%w %s; a new run starts once it is resumed (`agent resume %s`, or on the board)", ErrPaused, s.Why(), cfg.Dir)
}

// awaitSwitches waits within for spoke to close — the board's first word
// on the tools — and reports whether it did. It fails only when ctx ends.
func awaitSwitches(ctx context.Context, spoke <-chan struct{}, within time.Duration) (bool, error) {
	t := time.NewTimer(within)
	defer t.Stop()
	select {
	case <-spoke:
		return true, nil
	case <-t.C:
		return false, nil
	case <-ctx.Done():
		return false, ctx.Err()
	}
}

// unheardLine says what runs start with when the board has not said which
// tools are on within the wait: its last word kept in the folder, or
// nothing; "" when it has just spoken after all. starts is the subject and
// verb: "the run starts" at a terminal, "runs start" when served.
func unheardLine(name, starts string, sub *subscription.Subscription, within time.Duration) string {
	on, src := sub.On()
	if src == subscription.FromMemory {
		return fmt.Sprintf("agent %s: tools: the board has not said which are on within %s: %s with its last word, kept in this folder: %d on: %s",
			name, within, starts, len(on), strings.Join(on, ", "))
	}
	if src == subscription.FromBoard {
		return "" // it spoke as the wait ended, and that was said
	}
	return fmt.Sprintf("agent %s: tools: the board has not said which are on within %s, and no word of its is kept in this folder: none are on until it says",
		name, within)
}

// decision is what a decision on the board came to for a run.
type decision struct {
	res flow.Result
	v   governed.Verdict
	err error
}

// showPending puts a question, or an approval card, in front of the person.
func showPending(w io.Writer, p *flow.Pending) {
	if p.Kind == flow.PendingApproval {
		fmt.Fprintf(w, "\napproval needed at %s: %s\n", p.Node, p.Question)
		for _, k := range slices.Sorted(maps.Keys(p.Show)) {
			fmt.Fprintf(w, "  %-16s %s\n", k, flow.Text(p.Show[k]))
		}
		if p.Account != "" {
			fmt.Fprintf(w, "  why: %s\n", p.Account)
		}
		fmt.Fprintf(w, "yes or no? ")
		return
	}
	fmt.Fprintf(w, "\n%s\n> ", p.Question)
}
