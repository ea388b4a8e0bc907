// Package governed is the agent's half of an approval its organisation
// decides, while the agent runs. When a run pauses at an approval it asks
// the board who decides: the chat (a card), or the organisation (the run
// waits). It keeps the holding note beside the run, raises the question,
// and acts on the decision once, and only for the operation that was
// shown. A governed approval is never answered in the chat, before or
// after a restart, and a board that cannot be reached means wait, never act.
//
// With no board configured, every approval is a card — the agent behaves as
// it did before boards existed — except one a holding note kept while a
// board was configured says is the board's: that run waits for the board,
// whatever the chat says, until the agent is linked again or a person at
// the agent ends it (Cancel), which the board is told of.
package governed

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"sync"

	"go.opentelemetry.io/otel/trace"
	"go.opentelemetry.io/otel/trace/noop"

	"github.com/symphonix/symphonix/agentlink"
	"github.com/symphonix/symphonix/approvals"
	"github.com/symphonix/symphonix/flow"
	"github.com/symphonix/symphonix/waiting"
)

// Board is what the agent asks of the board: an *agentlink.Link.
type Board interface {
	WhoDecides(ctx context.Context, node string) (approvals.Ruling, agentlink.RuleInfo, error)
	Raise(ctx context.Context, r agentlink.Raise) (agentlink.Raised, error)
	Withdraw(ctx context.Context, w agentlink.Withdrawal) (agentlink.Withdrawn, error)
}

// ErrGoverned is an approval answered in the chat that the chat may not
// answer: the organisation decides it on the board, or the board has not
// yet said who decides.
var ErrGoverned = errors.New("this approval is not the chat's to answer")

// ErrCancelled ends a run that was cancelled on the board.
var ErrCancelled = errors.New("the run was cancelled on the board")

// ErrExpired ends a run whose approval nobody decided within the rule's
// time limit: neither a yes nor a no.
var ErrExpired = errors.New("nobody decided the approval within the rule's time limit")

// Who answers an approval a run waits at.
const (
	// Chat: the person in the conversation decides (a card).
	Chat = "chat"
	// Organisation: the board decides; the run waits for it.
	Organisation = "board"
)

// Verdict says who answers what a run waits for, in words for a person.
// The zero Verdict: the run is not waiting at an approval.
type Verdict struct {
	// Who: Chat, Organisation, or "" when no approval waits.
	Who string
	// Why: one line for the person in the chat.
	Why string
	// Rule: the rule that governs it, when the board named one.
	Rule agentlink.RuleInfo
	// Run: the holding note's run id ("" for a card with no board).
	Run string
	// Approval: the board's id for the approval, when the board answered
	// its raise in this call (or the holding note keeps it); "" otherwise.
	Approval string
	// Receipt: the board's signed receipt of the decision the run went on
	// (or ended) by, as agentlink verified it; "" for no board decision.
	Receipt string
}

// Config configures New.
type Config struct {
	// Graph runs the flow; required.
	Graph *flow.Graph
	// Holding keeps the notes: waiting.HoldingOf the graph's checkpointer,
	// so a note is as durable as its run; required.
	Holding waiting.Holding
	// Monitored: a board is configured. Until Use gives it, and whenever
	// it cannot be reached, every approval waits. Without one, the chat
	// answers every approval but those a holding note says are the
	// board's.
	Monitored bool
	// Threads lists the threads whose runs wait (to recover notes after a
	// crash); nil means none.
	Threads func(ctx context.Context) ([]string, error)
	// OnResult hears every run a decision resumed or ended, with what it
	// came to (err is ErrCancelled or ErrExpired for a run ended without
	// an answer); nil means none. It must not block for long.
	OnResult func(thread string, res flow.Result, v Verdict, err error)
	// OnRaised hears, for each raise the board answered, the run that
	// waits at it (agentlink.Raise.RunID) and the approval the board holds
	// for it; nil means none. It must not block for long.
	OnRaised func(run, approvalID string)
	// RunContext: the context a run a decision resumes is carried on, for
	// thread (a journal reads the thread from it); nil is a plain
	// background context. It must not be cancelled when a request ends.
	RunContext func(thread string) context.Context
	// Logger: nil discards.
	Logger *slog.Logger
	// TracerProvider: where the spans of runs go (trace.go,
	// docs/tracing.md); nil is off.
	TracerProvider trace.TracerProvider
}

// Approvals decides who answers each approval a run waits at, and acts on
// the board's decisions. It is safe for concurrent use.
type Approvals struct {
	cfg    Config
	log    *slog.Logger
	tracer trace.Tracer

	boardMu sync.RWMutex
	board   Board

	// mu orders the note's changes in this process: the read and the
	// write of each change happen under it (never a network call).
	mu sync.Mutex
	// acting counts, by thread, the decisions being carried out: the
	// pause a decision took is not settled again meanwhile. Guarded by mu.
	acting map[string]int

	closeMu sync.Mutex
	closed  bool
	wg      sync.WaitGroup // runs a decision resumed
}

// New checks cfg and returns Approvals with no board given yet.
func New(cfg Config) (*Approvals, error) {
	if cfg.Graph == nil {
		return nil, errors.New("governed: Config.Graph is required")
	}
	if cfg.Holding == nil {
		return nil, errors.New("governed: Config.Holding is required")
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	if cfg.TracerProvider == nil {
		cfg.TracerProvider = noop.NewTracerProvider()
	}
	return &Approvals{cfg: cfg, log: cfg.Logger, tracer: cfg.TracerProvider.Tracer(tracerName)}, nil
}

// Use gives the board to ask (with Monitored set).
func (a *Approvals) Use(b Board) {
	a.boardMu.Lock()
	a.board = b
	a.boardMu.Unlock()
}

func (a *Approvals) theBoard() Board {
	a.boardMu.RLock()
	defer a.boardMu.RUnlock()
	return a.board
}

// Close stops acting on decisions and waits for runs a decision resumed.
func (a *Approvals) Close() {
	a.closeMu.Lock()
	a.closed = true
	a.closeMu.Unlock()
	a.wg.Wait()
}

// Invoke starts a run (flow.Graph.Invoke) and settles who answers it if it
// pauses at an approval.
// The run has a span ("run", trace.go), in which the approval it pauses at
// is raised.
func (a *Approvals) Invoke(ctx context.Context, thread string, input map[string]any) (res flow.Result, v Verdict, err error) {
	ctx, span := a.runSpan(ctx, "run", thread)
	defer func() { endRunSpan(span, res, v, err) }()
	res, err = a.cfg.Graph.Invoke(ctx, thread, input)
	if err != nil {
		return res, Verdict{}, err
	}
	v, err = a.Settle(ctx, thread, res.Pending)
	return res, v, err
}

// Answer answers, from the chat, what the run on thread waits for. An ask
// is always the chat's. An approval is the chat's only with no board
// configured, or when the board said it is not governed: anything else is
// refused with ErrGoverned and the run keeps waiting.
//
// The resumed run has a span ("run resume", trace.go).
func (a *Approvals) Answer(ctx context.Context, thread string, answer any) (res flow.Result, v Verdict, err error) {
	ctx, span := a.runSpan(ctx, "run resume", thread)
	defer func() { endRunSpan(span, res, v, err) }()
	return a.answer(ctx, thread, answer)
}

func (a *Approvals) answer(ctx context.Context, thread string, answer any) (flow.Result, Verdict, error) {
	p, err := a.cfg.Graph.Pending(ctx, thread)
	if err != nil {
		return flow.Result{}, Verdict{}, err
	}
	if p != nil && p.Kind == flow.PendingApproval && !a.cfg.Monitored {
		v, err := a.withoutBoard(ctx, thread, p)
		if err != nil {
			return flow.Result{}, v, err
		}
		if v.Who != Chat {
			return flow.Result{}, v, fmt.Errorf("%w: %s", ErrGoverned, v.Why)
		}
	}
	if p != nil && p.Kind == flow.PendingApproval && a.cfg.Monitored {
		v, err := a.Settle(ctx, thread, p)
		if err != nil {
			return flow.Result{}, v, err
		}
		if v.Who != Chat {
			return flow.Result{}, v, fmt.Errorf("%w: %s", ErrGoverned, v.Why)
		}
		// The card is used up by this answer.
		a.mu.Lock()
		_, err = a.cfg.Holding.Swap(ctx, v.Run, p.Node, waiting.Card, "", "")
		a.mu.Unlock()
		if err != nil {
			return flow.Result{}, v, err
		}
	}
	res, err := a.cfg.Graph.Resume(ctx, thread, answer)
	if err != nil {
		return res, Verdict{}, err
	}
	v, err := a.Settle(ctx, thread, res.Pending)
	return res, v, err
}

// Settle decides who answers p, what the run on thread waits for: nobody
// for an ask or nothing, the chat for a card, the organisation for a
// governed approval — which is raised on the board, with its holding note
// kept first. It is idempotent: settling the same pause again returns the
// same answer and raises nothing new. A pause the board's decision is
// being carried out on, or has moved the run on from, is the
// organisation's, and nothing is written or raised for it: the decision's
// outcome reaches Config.OnResult.
func (a *Approvals) Settle(ctx context.Context, thread string, p *flow.Pending) (Verdict, error) {
	return a.settle(ctx, thread, p, false)
}

// settle is Settle; inDecision says a decision being carried out on
// thread asks it, about the pause the run came to.
func (a *Approvals) settle(ctx context.Context, thread string, p *flow.Pending, inDecision bool) (Verdict, error) {
	if p == nil || p.Kind != flow.PendingApproval {
		return Verdict{}, nil
	}
	if !a.cfg.Monitored {
		return a.withoutBoard(ctx, thread, p)
	}
	a.mu.Lock()
	if !inDecision {
		// A decision takes the note before it resumes the run: p, read
		// before, must not be given a new one.
		cur, err := a.cfg.Graph.Pending(ctx, thread)
		switch {
		case err != nil:
			a.mu.Unlock()
			return Verdict{}, fmt.Errorf("governed: thread %q: %w", thread, err)
		case a.acting[thread] > 0 || !samePause(cur, p):
			a.mu.Unlock()
			return Verdict{Who: Organisation, Why: "the board's decision on it is being carried out"}, nil
		}
	}
	n, ok, err := a.cfg.Holding.Note(ctx, thread)
	if err == nil && ok && (n.Node != p.Node || n.Digest != p.Digest) {
		// A note about another pause of this thread: its run moved on.
		_, err = a.cfg.Holding.Swap(ctx, n.Run, n.Node, n.State, "", "")
		ok = false
	}
	if err == nil && !ok {
		n = waiting.Note{
			Run: newRun(), Thread: thread, Node: p.Node, Ask: p.Question, Show: p.Show,
			Account: p.Account, Digest: p.Digest, State: waiting.Asking, At: p.At,
		}
		err = a.cfg.Holding.Hold(ctx, n)
	}
	a.mu.Unlock()
	if err != nil {
		return Verdict{}, fmt.Errorf("governed: the holding note for thread %q: %w", thread, err)
	}
	return a.ask(ctx, n), nil
}

// samePause reports whether cur is the pause p: the same node, operation
// and moment.
func samePause(cur, p *flow.Pending) bool {
	return cur != nil && cur.Kind == p.Kind && cur.Node == p.Node && cur.Digest == p.Digest && cur.At.Equal(p.At)
}

// carrying marks a decision being carried out on thread, until done is
// called.
func (a *Approvals) carrying(thread string) (done func()) {
	a.mu.Lock()
	if a.acting == nil {
		a.acting = map[string]int{}
	}
	a.acting[thread]++
	a.mu.Unlock()
	return func() {
		a.mu.Lock()
		if a.acting[thread]--; a.acting[thread] == 0 {
			delete(a.acting, thread)
		}
		a.mu.Unlock()
	}
}

// Verdict says who answers p, what the run on thread waits for, from what
// is known already: it writes nothing and asks nobody.
func (a *Approvals) Verdict(ctx context.Context, thread string, p *flow.Pending) (Verdict, error) {
	if p == nil || p.Kind != flow.PendingApproval {
		return Verdict{}, nil
	}
	if !a.cfg.Monitored {
		return a.withoutBoard(ctx, thread, p)
	}
	n, ok, err := a.cfg.Holding.Note(ctx, thread)
	if err != nil {
		return Verdict{}, fmt.Errorf("governed: the holding note for thread %q: %w", thread, err)
	}
	if !ok || n.Node != p.Node || n.Digest != p.Digest {
		return Verdict{Who: Organisation, Why: "the board has not yet been asked who decides: the run waits. It is never answered here."}, nil
	}
	switch n.State {
	case waiting.Card, waiting.Held:
		return a.ask(ctx, n), nil // neither asks nor writes
	}
	return waitForBoard(n, "the board has not yet said who decides"), nil
}

// withoutBoard says who answers p, what the run on thread waits for, with
// no board configured: the chat, unless the run's holding note, kept while
// a board was configured, says the approval is the board's (held) or was
// to be put to it (asking). Then the run waits, and nothing here answers
// it: restarting the agent without its board does not step over the rule.
func (a *Approvals) withoutBoard(ctx context.Context, thread string, p *flow.Pending) (Verdict, error) {
	n, ok, err := a.cfg.Holding.Note(ctx, thread)
	if err != nil {
		return Verdict{}, fmt.Errorf("governed: the holding note for thread %q: %w", thread, err)
	}
	if ok && n.Node == p.Node && n.Digest == p.Digest {
		const waits = ", and no board is configured: the run waits until the agent is linked to its board again. It is never answered here."
		switch n.State {
		case waiting.Held:
			info := agentlink.RuleInfo{ID: n.Rule}
			return Verdict{Who: Organisation, Rule: info, Run: n.Run,
				Why: "the organisation decides this on the board" + ruleWords(info) + waits}, nil
		case waiting.Asking:
			return Verdict{Who: Organisation, Run: n.Run,
				Why: "the board was yet to say who decides this" + waits}, nil
		}
	}
	return Verdict{Who: Chat, Why: "no board is configured: the chat decides"}, nil
}

// ask moves a note on as far as the board lets it: Asking → Card or Held,
// and raises a Held one. It never fails: what it could not do, it does
// when the link is next up.
func (a *Approvals) ask(ctx context.Context, n waiting.Note) Verdict {
	switch n.State {
	case waiting.Card:
		return Verdict{Who: Chat, Why: "the board says no rule governs this approval: the chat decides", Run: n.Run}
	case waiting.Held:
		// Raised when it was held; the link asks again whenever it is up.
		info := agentlink.RuleInfo{ID: n.Rule}
		return Verdict{Who: Organisation, Rule: info, Run: n.Run, Approval: n.ApprovalID,
			Why: "the organisation decides this on the board" + ruleWords(info)}
	case waiting.Tombstone, waiting.Withdrawn:
		return Verdict{Who: Organisation, Why: "this run was ended: " + n.Why, Run: n.Run}
	}
	b := a.theBoard()
	if b == nil {
		return waitForBoard(n, "no board is reachable")
	}
	ruling, info, err := b.WhoDecides(ctx, n.Node)
	if err != nil {
		a.log.WarnContext(ctx, "who decides: the board did not say; the run waits", "thread", n.Thread, "node", n.Node, "err", err)
		return waitForBoard(n, "the board could not be asked who decides")
	}
	a.mu.Lock()
	cur, ok, err := a.cfg.Holding.Find(ctx, n.Run, n.Node)
	if err == nil && ok && cur.State == waiting.Asking {
		if approvals.WhatToDo(ruling) == approvals.Card {
			cur.State = waiting.Card
		} else {
			cur.State, cur.Rule = waiting.Held, info.ID
		}
		err = a.cfg.Holding.Hold(ctx, cur)
	}
	a.mu.Unlock()
	switch {
	case err != nil:
		a.log.ErrorContext(ctx, "holding note", "thread", n.Thread, "node", n.Node, "err", err)
		return waitForBoard(n, "the holding note could not be written")
	case !ok:
		return Verdict{Who: Organisation, Why: "this approval was acted on meanwhile", Run: n.Run}
	case cur.State == waiting.Held:
		return a.raise(ctx, cur, info)
	}
	return a.ask(ctx, cur)
}

func waitForBoard(n waiting.Note, why string) Verdict {
	return Verdict{Who: Organisation, Run: n.Run,
		Why: why + ": the run waits, and asks again when the link to the board is up. It is never answered here."}
}

// raise puts a held note's question to the board.
func (a *Approvals) raise(ctx context.Context, n waiting.Note, info agentlink.RuleInfo) Verdict {
	v := Verdict{Who: Organisation, Rule: info, Run: n.Run, Why: "the organisation decides this on the board" + ruleWords(info)}
	b := a.theBoard()
	if b == nil {
		return v
	}
	r := a.raiseOf(ctx, n)
	r.Trace = trace.SpanContextFromContext(ctx) // the run's span, so the decision joins its trace
	raised, err := b.Raise(ctx, r)
	if err != nil {
		a.log.WarnContext(ctx, "raise: asked again when the link is up", "thread", n.Thread, "node", n.Node, "err", err)
		return v
	}
	if a.cfg.OnRaised != nil && r.RunID != "" && raised.ApprovalID != "" {
		a.cfg.OnRaised(r.RunID, raised.ApprovalID)
	}
	v.Approval = raised.ApprovalID
	return v
}

func ruleWords(r agentlink.RuleInfo) string {
	switch {
	case r.Role != "":
		return fmt.Sprintf(" (rule %s: %d with the role %s)", r.ID, max(r.Quorum, 1), r.Role)
	case len(r.People) > 0:
		return fmt.Sprintf(" (rule %s: %d of %v)", r.ID, max(r.Quorum, 1), r.People)
	case r.ID != "":
		return " (rule " + r.ID + ")"
	}
	return ""
}

// raiseOf is the question a held note puts to the board, with the id of
// the run that waits at it (RunID), read from the run: "" when it no
// longer waits there.
func (a *Approvals) raiseOf(ctx context.Context, n waiting.Note) agentlink.Raise {
	r := agentlink.Raise{Run: n.Run, Thread: n.Thread, Node: n.Node, Ask: n.Ask, Show: n.Show,
		Account: n.Account, Digest: n.Digest}
	if p, err := a.cfg.Graph.Pending(ctx, n.Thread); err == nil && p != nil && p.Node == n.Node && p.Digest == n.Digest {
		r.RunID = p.Run
	}
	return r
}

// All lists every held note as the question to ask again: the
// agentlink.Holding the link re-asks whenever it comes up.
func (a *Approvals) All(ctx context.Context) ([]agentlink.Raise, error) {
	notes, err := a.cfg.Holding.Notes(ctx, waiting.Held)
	if err != nil {
		return nil, err
	}
	out := make([]agentlink.Raise, len(notes))
	for i, n := range notes {
		out[i] = a.raiseOf(ctx, n)
	}
	return out, nil
}

// Recover tells the board, after a start, of every run ended here whose
// approval it held (Cancel), settles every run that waits at an approval —
// one that paused before its note was written is given one now — and asks
// the board about every note it could not ask before. Call it when the
// link comes up (the link itself asks again about held notes).
func (a *Approvals) Recover(ctx context.Context) error {
	if !a.cfg.Monitored {
		return nil
	}
	var errs []error
	withdrawn, err := a.cfg.Holding.Notes(ctx, waiting.Withdrawn)
	if err != nil {
		errs = append(errs, err)
	}
	for _, n := range withdrawn {
		if err := a.tell(ctx, n); err != nil {
			errs = append(errs, err)
		}
	}
	if a.cfg.Threads != nil {
		threads, err := a.cfg.Threads(ctx)
		if err != nil {
			return fmt.Errorf("governed: list the waiting runs: %w", err)
		}
		for _, t := range threads {
			p, err := a.cfg.Graph.Pending(ctx, t)
			if err != nil {
				errs = append(errs, err)
				continue
			}
			if p == nil || p.Kind != flow.PendingApproval {
				continue
			}
			if n, ok, err := a.cfg.Holding.Note(ctx, t); err == nil && ok && n.Node == p.Node && n.Digest == p.Digest {
				continue // held: the link asks again; asking: below
			}
			if _, err := a.Settle(ctx, t, p); err != nil {
				errs = append(errs, err)
			}
		}
	}
	asking, err := a.cfg.Holding.Notes(ctx, waiting.Asking)
	if err != nil {
		return errors.Join(append(errs, err)...)
	}
	for _, n := range asking {
		a.ask(ctx, n)
	}
	return errors.Join(errs...)
}

// newRun names one pause: 16 random bytes, hex.
func newRun() string {
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic(err) // crypto/rand does not fail on supported platforms
	}
	return "run-" + hex.EncodeToString(b[:])
}
