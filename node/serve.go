package node

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"time"

	"github.com/symphonix/symphonix/flow"
	"github.com/symphonix/symphonix/governed"
	"github.com/symphonix/symphonix/journal"
	"github.com/symphonix/symphonix/lock"
	"github.com/symphonix/symphonix/mcptools"
	"github.com/symphonix/symphonix/runs"
	"github.com/symphonix/symphonix/serve"
	"github.com/symphonix/symphonix/transcript"
)

// shutdownGrace is how long a stopping agent waits for the runs in flight.
const shutdownGrace = 10 * time.Second

// Serve is `agent serve DIR`: the agent served on cfg.Listen (the chat page
// and its API, docs/serve.md), with its journal and its lock in
// DIR/.symphonix, linked to the board when cfg.BoardURL is set, until ctx
// ends. When the flow has a trigger file (triggers.FileFor) its schedules
// are armed and its webhooks served on their own listener
// (cfg.TriggerListen), each occurrence a run as a message to the chat is,
// and the triggers are reported to the board (docs/triggers.md). Then it stops taking requests, waits up to 10 s for the runs in
// flight, closes the MCP servers and the journal, releases the lock, and
// returns nil.
//
// It fails when cfg is wrong, the flow cannot be read, the folder's lock is
// held by another agent (a *lock.HeldError), or the flow cannot be
// assembled (a *flow.ValidationError when it is invalid) unless
// cfg.LinkUnservable is set, or its trigger file cannot be run (one that
// cannot be read or has problems, a secret or delivery URL it names not
// set, a listener that cannot be opened), naming why.
func Serve(ctx context.Context, cfg Config) error {
	cfg, err := cfg.checked()
	if err != nil {
		return err
	}
	id, err := readIdentity(cfg.Dir)
	if err != nil {
		return err
	}
	cfg = cfg.withEnv(id.Name, cfg.Stdout)
	days, err := transcript.DaysFrom(cfg.Getenv)
	if err != nil {
		return err
	}
	pz, err := openPauses(cfg.Dir, id.Name, cfg.Stdout, cfg.Logger)
	if err != nil {
		return err
	}
	fmt.Fprintf(cfg.Stdout, "agent %s: build %s\n", id.Name, id.Build)
	if p := id.Package; p != nil {
		fmt.Fprintf(cfg.Stdout, "agent %s: installed from package %s@%s (%s)\n", id.Name, p.Name, p.Version, p.Digest)
	}
	if s := pz.Current(); s.Paused {
		fmt.Fprintf(cfg.Stdout, "agent %s: %s: no new work is taken until it is resumed\n", id.Name, s.Say())
	}

	ms, err := listenMetrics(cfg, newAgentMetrics())
	if err != nil {
		return err
	}

	ctx, cancel := context.WithCancel(ctx)
	p := &parts{cfg: cfg, id: id, out: cfg.Stdout, pauses: pz, runCtx: context.WithoutCancel(ctx)}
	pz.onChange = p.reportTriggers
	p.bg.Go(func() { pz.run(ctx) })
	p.bg.Go(func() { watchEnv(ctx, cfg, cfg.Logger) })
	if ms != nil {
		p.metrics = ms.metrics
		fmt.Fprintf(cfg.Stdout, "agent %s: metrics on %s\n", id.Name, ms.url())
		p.bg.Go(func() { ms.run(ctx) })
	}
	if cfg.BoardURL != "" {
		p.spoke, p.ready = make(chan struct{}), make(chan struct{})
	}
	s, err := startServing(ctx, p, days)
	defer func() {
		// What the link and the tool check started ask the approvals
		// and the agent: they end with ctx, and before those close.
		cancel()
		p.bg.Wait()
		if s != nil {
			s.close()
		}
		if p.trig != nil && p.trig.ln != nil {
			p.trig.ln.Close() // already closed when it was served
		}
	}()
	var tasks []func() error
	var cannot *cannotRun
	switch {
	case err == nil:
		tasks = append(tasks, func() error { return s.run(ctx) })
		p.bg.Go(func() {
			// The servers themselves say what they offer; a difference
			// from the declaration is said, never acted on.
			lines := p.agent.ToolMismatches(ctx, mcptools.AskWithin)
			if ctx.Err() != nil {
				return // stopping: a question cut short is no answer
			}
			for _, line := range lines {
				fmt.Fprintf(cfg.Stdout, "agent %s: %s\n", id.Name, line)
			}
		})
	case cfg.LinkUnservable && errors.As(err, &cannot):
		fmt.Fprintf(cfg.Stdout, "agent %s: not served: %v\n", id.Name, cannot.err)
	case errors.As(err, &cannot):
		return cannot.err
	default:
		return err
	}
	if p.health, err = newHealthChecks(cfg, id.Name, p.agent); err != nil {
		return err
	}
	if p.api != nil {
		if p.trig, err = openTriggers(p); err != nil {
			return err
		}
		if p.trig != nil {
			p.trig.say(p)
			tasks = append(tasks, p.trig.tasks(ctx)...)
		}
	}

	if cfg.BoardURL == "" {
		fmt.Fprintf(cfg.Stdout, "agent %s: no board configured (--monitor or MONITOR_URL): running without a board\n", id.Name)
	} else {
		link, err := p.link(ctx)
		if err != nil {
			return err
		}
		if p.api != nil {
			tasks = append(tasks, func() error { return p.api.Report(ctx) })
			p.bg.Go(func() { awaitReady(ctx, p) })
		}
		tasks = append(tasks, func() error { return link.Run(ctx) })
		p.bg.Go(func() { p.reportEvals(ctx, link, true) })
	}
	if p.health != nil {
		// Once the link has it: the first round goes to the board too.
		p.bg.Go(func() { p.health.run(ctx) })
	}
	if len(tasks) == 0 {
		<-ctx.Done()
		return nil
	}
	// The first task to end ends the others: ctx, or a server that
	// stopped.
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

// awaitReady lets a linked served agent's runs start (closes p.ready) once
// the board has said which of its declared tools are on, or after
// Config.SwitchesWithin without that word, when it says what the runs start
// with instead; at once for a flow that declares no tools.
func awaitReady(ctx context.Context, p *parts) {
	defer close(p.ready)
	if len(p.agent.Subscription.Declared()) == 0 {
		return
	}
	heard, err := awaitSwitches(ctx, p.spoke, p.cfg.SwitchesWithin)
	if err != nil {
		return
	}
	if line := unheardLine(p.id.Name, "runs start", p.agent.Subscription, p.cfg.SwitchesWithin); !heard && line != "" {
		fmt.Fprintln(p.out, line)
	}
}

// cannotRun is a flow this binary cannot assemble: invalid, or naming
// handlers or routers that neither the folder nor an MCP tool provides
// (docs/handlers.md).
type cannotRun struct{ err error }

func (e *cannotRun) Error() string { return e.err.Error() }
func (e *cannotRun) Unwrap() error { return e.err }

// serving is an agent being served: the listener, the lock, the journal
// and the agent, released in the opposite order by close.
type serving struct {
	p          *parts
	ln         net.Listener
	srv        *http.Server
	held       *lock.Lock
	journal    *journal.Journal
	transcript *transcript.Transcript
}

// startServing listens, takes the folder's lock naming the address, opens
// the journal, the transcript (keeping turns for days) and the agent, and
// says where it serves; p gets the agent, its approvals and the server.
// Nothing is served until run.
func startServing(ctx context.Context, p *parts, days int) (_ *serving, err error) {
	cfg := p.cfg
	s := &serving{p: p}
	defer func() {
		if err != nil {
			s.close()
			p.agent, p.gov, p.api = nil, nil, nil
		}
	}()
	if s.ln, err = net.Listen("tcp", cfg.Listen); err != nil {
		return nil, fmt.Errorf("--listen: %w", err)
	}
	url := "http://" + s.ln.Addr().String()
	if s.held, err = lock.Take(cfg.Dir, lock.Me(url, time.Now())); err != nil {
		return nil, err
	}
	var journalLine, transcriptLine string
	s.journal, journalLine = openJournal(cfg)
	s.transcript, transcriptLine = openTranscript(cfg, days)
	rr, err := openRuns(cfg, p.id, cfg.Stdout)
	if err != nil {
		return nil, err
	}
	if p.agent, err = open(ctx, cfg, s.journal, rr, p.metrics); err != nil {
		return nil, &cannotRun{err}
	}
	p.runs = rr
	rr.settle(ctx, p.agent)
	p.gov, err = govern(cfg, p.agent, rr, func(thread string, res flow.Result, v governed.Verdict, err error) {
		p.api.Decided(thread, res, v, err) // before the line: the line says it is there
		fmt.Fprintln(cfg.Stdout, decidedLine(thread, res, v, err))
	})
	if err != nil {
		return nil, err
	}
	p.api, err = serve.New(ctx, serve.Config{
		Agent: p.agent, Approvals: p.gov, Public: cfg.Public, Monitored: cfg.BoardURL != "", Logger: cfg.Logger,
		Ready: p.ready, Paused: p.pauses.Current, Journal: s.journal, Transcript: s.transcript,
		About: about(cfg, p.id.Build),
	})
	if err != nil {
		return nil, err
	}
	s.srv = &http.Server{
		Handler:           p.api,
		ReadHeaderTimeout: 10 * time.Second,
		IdleTimeout:       2 * time.Minute,
		MaxHeaderBytes:    64 << 10,
		ErrorLog:          slog.NewLogLogger(cfg.Logger.Handler(), slog.LevelWarn),
	}
	sayAssembled(cfg.Stdout, p.agent)
	fmt.Fprintln(cfg.Stdout, journalLine)
	fmt.Fprintln(cfg.Stdout, transcriptLine)
	if rr != nil {
		fmt.Fprintln(cfg.Stdout, runsLine(rr))
	}
	fmt.Fprintf(cfg.Stdout, "serving %s on %s\n", cfg.Dir, url)
	return s, nil
}

// openJournal opens the folder's journal, without the agent's named
// secrets, and says so in a line to print at start. It never fails: a
// journal that cannot be kept (an .env that cannot be read, a folder that
// cannot be written) is nil, and the line says why.
func openJournal(cfg Config) (*journal.Journal, string) {
	named, err := namedSet(cfg)
	var j *journal.Journal
	if err == nil {
		j, err = journal.Open(journal.Config{
			Path: journal.Path(cfg.Dir), MaxBytes: cfg.JournalMaxBytes, Detail: cfg.JournalDetail, SecretSet: named, Logger: cfg.Logger,
		})
	}
	if err != nil {
		return nil, fmt.Sprintf("journal: not kept: %v", err)
	}
	what := "without payloads"
	if cfg.JournalDetail == journal.DetailFull {
		what = "with payloads (full detail)"
	}
	return j, fmt.Sprintf("journal: %s, %s, rotated past %d bytes", j.Path(), what, cfg.JournalMaxBytes)
}

// openTranscript opens the folder's transcript, keeping turns for days,
// written without the agent's named secrets, and says so in a line to
// print at start. It never fails: a transcript that cannot be kept (an
// .env that cannot be read, a file that cannot be read or written anew)
// is nil, and the line says why.
func openTranscript(cfg Config, days int) (*transcript.Transcript, string) {
	named, err := namedSet(cfg)
	var t *transcript.Transcript
	if err == nil {
		t, err = transcript.Open(transcript.Config{
			Path: transcript.Path(cfg.Dir), Days: days, Secrets: named, Logger: cfg.Logger,
		})
	}
	if err != nil {
		return nil, fmt.Sprintf("transcript: not kept: %v", err)
	}
	return t, fmt.Sprintf("transcript: %s, turns kept for %d days (%s), capped at %d bytes", t.Path(), days, transcript.EnvDays, transcript.DefaultMaxBytes)
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
		s.p.cfg.Logger.WarnContext(sctx, "runs still in flight at shutdown", "err", err)
		s.srv.Close()
	}
	fired := make(chan struct{})
	go func() { s.p.fired.Wait(); close(fired) }()
	select {
	case <-fired:
	case <-sctx.Done():
		s.p.cfg.Logger.WarnContext(sctx, "runs fired from the board still in flight at shutdown", "err", sctx.Err())
	}
	if err := <-served; !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// close releases what startServing took, in the opposite order.
func (s *serving) close() {
	p, log := s.p, s.p.cfg.Logger
	if p.gov != nil {
		p.gov.Close() // runs a decision resumed finish first
	}
	if p.agent != nil {
		if err := p.agent.Close(); err != nil {
			log.Warn("closing the agent", "err", err)
		}
	}
	if err := s.journal.Close(); err != nil {
		log.Warn("closing the journal", "err", err)
	}
	if err := s.held.Release(); err != nil {
		log.Warn("releasing the lock", "err", err)
	}
	if s.ln != nil {
		s.ln.Close() // already closed when it was served
	}
}

// runsLine says how the agent's runs are reported.
func runsLine(rr *runRecord) string {
	what := "without their input and output"
	if rr.rec.Detail() == runs.DetailFull {
		what = "with their input and output, less the named secrets (MONITOR_DETAIL=full)"
	}
	where := "told live only"
	if rr.box != nil {
		where = "kept until it stores them, in " + rr.box.Path()
	}
	return fmt.Sprintf("runs: reported to the board %s; summaries %s", what, where)
}
