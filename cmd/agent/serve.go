package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/symphonix/symphonix/agent"
	"github.com/symphonix/symphonix/agentlink"
	"github.com/symphonix/symphonix/flow"
	"github.com/symphonix/symphonix/governed"
	"github.com/symphonix/symphonix/journal"
	"github.com/symphonix/symphonix/lock"
	"github.com/symphonix/symphonix/mcptools"
	"github.com/symphonix/symphonix/serve"
	"github.com/symphonix/symphonix/subscription"
)

// shutdownGrace is how long a stopping agent waits for the runs in flight.
const shutdownGrace = 10 * time.Second

// runServe is `agent serve DIR` and plain `agent DIR`: the agent served on
// loopback (the chat page and its API, docs/serve.md), with its journal and
// its lock in DIR/.symphonix, linked to the board when a monitor URL is
// given. Plain `agent DIR` serves what it can: a flow this binary cannot
// run (one whose handlers a generated program provides) is said so and
// only linked, as before; `agent serve` fails on it.
func runServe(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer, plain bool) error {
	name := "agent serve"
	if plain {
		name = "agent"
	}
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	monitor := fs.String("monitor", getenv("MONITOR_URL"), "the board's URL (env MONITOR_URL)")
	token := fs.String("token", getenv("MONITOR_TOKEN"), "an agent token for this flow's name (env MONITOR_TOKEN)")
	var caps listFlag
	fs.Var(&caps, "capability", "an optional capability to claim (health, pause); repeatable")
	logLevel := fs.String("log-level", "info", "debug, info, warn or error")
	listen := fs.String("listen", "127.0.0.1:0", "the address to serve the chat page and API on (loopback unless --public)")
	public := fs.Bool("public", false, "allow a --listen address beyond loopback: there is no authentication on a served agent yet")
	detail := fs.String("journal-detail", string(journal.DetailMetadata), "what the journal keeps of each call: metadata, or full (prompts, replies, tool arguments and results)")
	maxBytes := fs.Int64("journal-max-bytes", journal.DefaultMaxBytes, "rotate the journal to journal.jsonl.1 past this many bytes")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		return fmt.Errorf("usage: %s [--listen ADDR] [--monitor URL] [--token TOKEN] DIR", name)
	}
	dir := fs.Arg(0)
	var level slog.Level
	if err := level.UnmarshalText([]byte(*logLevel)); err != nil {
		return fmt.Errorf("--log-level: %w", err)
	}
	jd, err := journal.ParseDetail(*detail)
	if err != nil {
		return fmt.Errorf("--journal-detail: %w", err)
	}
	if *maxBytes <= 0 {
		return fmt.Errorf("--journal-max-bytes: %d: want more than 0", *maxBytes)
	}
	if err := serve.CheckListen(*listen, *public); err != nil {
		return fmt.Errorf("--listen: %w", err)
	}
	if *monitor != "" && *token == "" {
		return fmt.Errorf("--token or MONITOR_TOKEN: required with a monitor URL")
	}
	log := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: level}))

	id, err := agentlink.ReadIdentity(dir)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "agent %s: build %s\n", id.Name, id.Build)

	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var tasks []func() error

	s, err := startServing(ctx, servingOptions{
		dir: dir, listen: *listen, public: *public, detail: jd, maxBytes: *maxBytes,
		getenv: getenv, log: log, stdout: stdout, stderr: stderr, monitored: *monitor != "",
	})
	var cannot *cannotRun
	var ve *flow.ValidationError
	switch {
	case err == nil:
		defer s.close()
		tasks = append(tasks, func() error { return s.run(ctx) })
		go func() {
			// The servers themselves say what they offer; a difference
			// from the declaration is said, never acted on.
			for _, line := range s.agent.ToolMismatches(ctx, mcptools.AskWithin) {
				fmt.Fprintf(stdout, "agent %s: %s\n", id.Name, line)
			}
		}()
	case plain && errors.As(err, &cannot):
		fmt.Fprintf(stdout, "agent %s: not served: %v\n", id.Name, cannot.err)
	case errors.As(err, &ve):
		fmt.Fprint(stderr, ve.Format())
		return errReported
	default:
		return err
	}

	if *monitor == "" {
		fmt.Fprintf(stdout, "agent %s: no board configured (--monitor or MONITOR_URL): running without a board\n", id.Name)
	} else {
		var (
			gov *governed.Approvals
			sub *subscription.Subscription
		)
		if s != nil {
			gov, sub = s.gov, s.agent.Subscription
		}
		cfg := agentlink.Config{
			BoardURL:     *monitor,
			Token:        *token,
			Identity:     id,
			Capabilities: caps,
			Logger:       log,
			OnState: func(st agentlink.State) {
				if !st.Up {
					fmt.Fprintf(stdout, "agent %s: link down: %v\n", id.Name, st.Err)
					if sub != nil {
						sub.Unreachable()
					}
					return
				}
				fmt.Fprintf(stdout, "agent %s: linked to %s (session %s)\n", id.Name, *monitor, st.Session)
				if s != nil {
					s.api.ReportAll() // the board has every pointer after each link-up
				}
				if gov != nil {
					go func() {
						if err := gov.Recover(ctx); err != nil {
							log.WarnContext(ctx, "asking the board about waiting runs", "err", err)
						}
					}()
				}
			},
		}
		if gov != nil {
			cfg.Holding, cfg.OnDecision = gov, gov.Decided
		}
		if sub != nil {
			cfg.OnSwitches = func(on []string, spoken bool) {
				fmt.Fprintln(stdout, switchesLine(id.Name, sub, on, spoken))
			}
		}
		if s != nil {
			cfg.OnPaired = s.api.Paired
		}
		link, err := agentlink.New(cfg)
		if err != nil {
			return err
		}
		if gov != nil {
			gov.Use(link)
		}
		if s != nil {
			s.api.Use(link)
			tasks = append(tasks, func() error { return s.api.Report(ctx) })
		}
		tasks = append(tasks, func() error { return link.Run(ctx) })
	}
	if len(tasks) == 0 {
		<-ctx.Done()
		return nil
	}
	// The first task to end ends the others: the signal, or a server
	// that stopped.
	errs := make(chan error, len(tasks))
	for _, task := range tasks {
		go func() { errs <- task() }()
	}
	first := <-errs
	cancel()
	for range len(tasks) - 1 {
		if err := <-errs; first == nil {
			first = err
		}
	}
	return first
}

// cannotRun is a flow this binary cannot assemble: invalid, or naming
// handlers only a generated program has.
type cannotRun struct{ err error }

func (e *cannotRun) Error() string { return e.err.Error() }
func (e *cannotRun) Unwrap() error { return e.err }

type servingOptions struct {
	dir, listen    string
	public         bool
	monitored      bool // a board is configured
	detail         journal.Detail
	maxBytes       int64
	getenv         func(string) string
	log            *slog.Logger
	stdout, stderr io.Writer
}

// serving is an agent being served: the listener, the lock, the journal
// and the agent, released in the opposite order by close.
type serving struct {
	ln      net.Listener
	srv     *http.Server
	lock    *lock.Lock
	journal *journal.Journal
	agent   *agent.Agent
	gov     *governed.Approvals
	api     *serve.Server
	log     *slog.Logger
}

// startServing listens, takes the folder's lock naming the address, opens
// the journal and the agent, and says where it serves. Nothing is served
// until run.
func startServing(ctx context.Context, o servingOptions) (_ *serving, err error) {
	s := &serving{log: o.log}
	defer func() {
		if err != nil {
			s.close()
		}
	}()
	if s.ln, err = net.Listen("tcp", o.listen); err != nil {
		return nil, fmt.Errorf("--listen: %w", err)
	}
	url := "http://" + s.ln.Addr().String()
	if s.lock, err = lock.Take(o.dir, lock.Me(url, time.Now())); err != nil {
		return nil, err
	}
	s.journal, err = journal.Open(journal.Config{
		Path: journal.Path(o.dir), MaxBytes: o.maxBytes, Detail: o.detail, Logger: o.log,
	})
	journalLine := ""
	if err != nil {
		journalLine = fmt.Sprintf("journal: not kept: %v", err)
		s.journal = nil
	} else {
		what := "without payloads"
		if o.detail == journal.DetailFull {
			what = "with payloads (full detail)"
		}
		journalLine = fmt.Sprintf("journal: %s, %s, rotated past %d bytes", s.journal.Path(), what, o.maxBytes)
	}
	s.agent, err = agent.Open(ctx, o.dir, agent.Options{
		Getenv:    o.getenv,
		Logger:    o.log,
		Stderr:    o.stderr,
		WrapModel: s.journal.WrapModel,
		WrapTools: s.journal.WrapTools,
		Monitored: o.monitored,
	})
	if err != nil {
		return nil, &cannotRun{err}
	}
	s.gov, err = governed.New(governed.Config{
		Graph:      s.agent.Graph,
		Holding:    s.agent.Holding(),
		Monitored:  o.monitored,
		Threads:    s.agent.WaitingThreads,
		Logger:     o.log,
		RunContext: serve.RunContext,
		OnResult: func(thread string, res flow.Result, v governed.Verdict, err error) {
			s.api.Decided(thread, res, v, err) // before the line: the line says it is there
			fmt.Fprintln(o.stdout, decidedLine(thread, res, v, err))
		},
	})
	if err != nil {
		return nil, err
	}
	s.api, err = serve.New(ctx, serve.Config{Agent: s.agent, Approvals: s.gov, Public: o.public, Monitored: o.monitored, Logger: o.log})
	if err != nil {
		return nil, err
	}
	s.srv = &http.Server{
		Handler:           s.api,
		ReadHeaderTimeout: 10 * time.Second,
		IdleTimeout:       2 * time.Minute,
		MaxHeaderBytes:    64 << 10,
		ErrorLog:          slog.NewLogLogger(o.log.Handler(), slog.LevelWarn),
	}
	fmt.Fprintln(o.stdout, s.agent.Model)
	if s.agent.Waiting != "" {
		fmt.Fprintln(o.stdout, s.agent.Waiting)
	}
	fmt.Fprintln(o.stdout, s.agent.Tools)
	fmt.Fprintln(o.stdout, journalLine)
	fmt.Fprintf(o.stdout, "serving %s on %s\n", o.dir, url)
	return s, nil
}

// run serves until ctx ends, then stops taking requests and waits for the
// runs in flight, up to shutdownGrace.
func (s *serving) run(ctx context.Context) error {
	served := make(chan error, 1)
	go func() { served <- s.srv.Serve(s.ln) }()
	select {
	case err := <-served:
		return fmt.Errorf("serving: %w", err)
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), shutdownGrace)
	defer cancel()
	if err := s.srv.Shutdown(sctx); err != nil {
		s.log.WarnContext(sctx, "runs still in flight at shutdown", "err", err)
		s.srv.Close()
	}
	if err := <-served; !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// close releases what startServing took, in the opposite order.
func (s *serving) close() {
	if s.gov != nil {
		s.gov.Close() // runs a decision resumed finish first
	}
	if s.agent != nil {
		if err := s.agent.Close(); err != nil {
			s.log.Warn("closing the agent", "err", err)
		}
	}
	if err := s.journal.Close(); err != nil {
		s.log.Warn("closing the journal", "err", err)
	}
	if err := s.lock.Release(); err != nil {
		s.log.Warn("releasing the lock", "err", err)
	}
	if s.ln != nil {
		s.ln.Close() // already closed when it was served
	}
}

// decidedLine says what a decision made on the board came to, for stdout.
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

// switchesLine applies the board's word on the tools to sub and says what
// it came to, for stdout.
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
