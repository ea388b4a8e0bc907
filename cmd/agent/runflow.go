package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"strings"

	"github.com/symphonix/symphonix/agent"
	"github.com/symphonix/symphonix/agentlink"
	"github.com/symphonix/symphonix/flow"
	"github.com/symphonix/symphonix/governed"
	"github.com/symphonix/symphonix/subscription"
)

// runFlow is `agent run DIR`: one run at a terminal. Questions (asks and
// approval cards) go to stderr and answers are read line by line from
// stdin; with --json the final state is the only thing on stdout. A run
// left waiting (stdin ended) is resumed by the next `agent run` on the
// same thread, after a restart too.
func runFlow(ctx context.Context, args []string, getenv func(string) string, stdin io.Reader, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("agent run", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var inputs listFlag
	fs.Var(&inputs, "input", "NAME=VALUE written to the run's channel NAME; repeatable")
	asJSON := fs.Bool("json", false, "print the final state as one JSON object on stdout, and nothing else")
	thread := fs.String("thread", "terminal", "the run's thread: a waiting run on it is resumed")
	monitor := fs.String("monitor", getenv("MONITOR_URL"), "the board's URL (env MONITOR_URL)")
	token := fs.String("token", getenv("MONITOR_TOKEN"), "an agent token (env MONITOR_TOKEN)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		return fmt.Errorf("usage: agent run [--input NAME=VALUE]... [--json] DIR")
	}
	dir := fs.Arg(0)
	log := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	a, err := agent.Open(ctx, dir, agent.Options{Getenv: getenv, Logger: log, Stderr: stderr, Monitored: *monitor != ""})
	if err != nil {
		var ve *flow.ValidationError
		if errors.As(err, &ve) {
			fmt.Fprint(stderr, ve.Format())
			return errReported
		}
		return err
	}
	defer a.Close()
	fmt.Fprintln(stderr, a.Model)
	if a.Waiting != "" {
		fmt.Fprintln(stderr, a.Waiting)
	}
	fmt.Fprintln(stderr, a.Tools)
	// Runs a decision on the board resumed or ended, on this run's thread.
	decided := make(chan decision, 4)
	gov, err := governed.New(governed.Config{
		Graph:     a.Graph,
		Holding:   a.Holding(),
		Monitored: *monitor != "",
		Threads:   a.WaitingThreads,
		Logger:    log,
		OnResult: func(th string, res flow.Result, v governed.Verdict, err error) {
			if th != *thread {
				return
			}
			select {
			case decided <- decision{res, v, err}:
			default: // never blocks the decision: the run's state is in the store
				log.Warn("a decision's outcome not shown: one is waiting to be read", "thread", th)
			}
		},
	})
	if err != nil {
		return err
	}
	defer gov.Close()
	if *monitor != "" {
		stop, err := linkInBackground(ctx, dir, *monitor, *token, gov, a.Subscription, stderr, log)
		if err != nil {
			return err
		}
		defer stop()
	}

	in := map[string]any{}
	for _, kv := range inputs {
		name, value, ok := strings.Cut(kv, "=")
		if !ok || name == "" {
			return fmt.Errorf("--input %q: want NAME=VALUE", kv)
		}
		v, err := a.Input(name, value)
		if err != nil {
			return fmt.Errorf("--input %s: %w", name, err)
		}
		in[name] = v
	}

	var (
		res flow.Result
		v   governed.Verdict
	)
	pending, err := a.Graph.Pending(ctx, *thread)
	switch {
	case err != nil && !errors.Is(err, flow.ErrNothingPending):
		return err
	case pending != nil:
		fmt.Fprintf(stderr, "resuming the run waiting on thread %q\n", *thread)
		res = flow.Result{Pending: pending}
		if v, err = gov.Settle(ctx, *thread, pending); err != nil {
			return err
		}
	default:
		if res, v, err = gov.Invoke(ctx, *thread, in); err != nil {
			return err
		}
	}
	answers := bufio.NewScanner(stdin)
	for !res.Finished() {
		if v.Who == governed.Organisation {
			// The board decides: the run goes on when it has.
			fmt.Fprintf(stderr, "\napproval at %s: %s\n%s\n", res.Pending.Node, res.Pending.Question, v.Why)
			select {
			case d := <-decided:
				if errors.Is(d.err, governed.ErrCancelled) || errors.Is(d.err, governed.ErrExpired) {
					return fmt.Errorf("the run on thread %q ended without an answer: %s", *thread, d.v.Why)
				}
				if d.err != nil {
					return d.err
				}
				res, v = d.res, d.v
				continue
			case <-ctx.Done():
				return fmt.Errorf("stopped: the run waits on thread %q for the board's decision, which reaches it the next time this agent runs", *thread)
			}
		}
		showPending(stderr, res.Pending)
		if !answers.Scan() {
			return fmt.Errorf("no answer (standard input ended): the run waits on thread %q", *thread)
		}
		if res, v, err = gov.Answer(ctx, *thread, answers.Text()); err != nil {
			return err
		}
	}
	if *asJSON {
		return json.NewEncoder(stdout).Encode(res.State)
	}
	outs := a.Flow.Outputs
	if len(outs) == 0 {
		outs = slices.Sorted(func(yield func(string) bool) {
			for k := range res.State {
				if !yield(k) {
					return
				}
			}
		})
	}
	for _, name := range outs {
		fmt.Fprintf(stdout, "%s: %s\n", name, flow.Text(res.State[name]))
	}
	return nil
}

// showPending puts a question, or an approval card, in front of the person.
func showPending(w io.Writer, p *flow.Pending) {
	if p.Kind == flow.PendingApproval {
		fmt.Fprintf(w, "\napproval needed at %s: %s\n", p.Node, p.Question)
		for _, k := range slices.Sorted(func(yield func(string) bool) {
			for k := range p.Show {
				if !yield(k) {
					return
				}
			}
		}) {
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

// decision is what a decision on the board came to for a run.
type decision struct {
	res flow.Result
	v   governed.Verdict
	err error
}

// linkInBackground dials the board for the length of the run, asking it
// about the approvals gov holds.
func linkInBackground(ctx context.Context, dir, url, token string, gov *governed.Approvals, sub *subscription.Subscription, stderr io.Writer, log *slog.Logger) (stop func(), err error) {
	if token == "" {
		return nil, fmt.Errorf("--token or MONITOR_TOKEN: required with a monitor URL")
	}
	id, err := agentlink.ReadIdentity(dir)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(ctx)
	link, err := agentlink.New(agentlink.Config{
		BoardURL: url, Token: token, Identity: id, Logger: log,
		Holding: gov, OnDecision: gov.Decided,
		OnSwitches: func(on []string, spoken bool) {
			fmt.Fprintln(stderr, switchesLine(id.Name, sub, on, spoken))
		},
		OnState: func(st agentlink.State) {
			if !st.Up {
				sub.Unreachable()
			}
			if st.Up {
				go func() {
					if err := gov.Recover(ctx); err != nil {
						log.WarnContext(ctx, "asking the board about waiting runs", "err", err)
					}
				}()
			}
		},
	})
	if err != nil {
		cancel()
		return nil, err
	}
	gov.Use(link)
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = link.Run(ctx)
	}()
	return func() { cancel(); <-done }, nil
}
