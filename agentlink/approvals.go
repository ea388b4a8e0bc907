package agentlink

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"go.opentelemetry.io/otel/trace"

	boardv1 "github.com/symphonix/symphonix/api/symphonix/board/v1"
	"github.com/symphonix/symphonix/approvals"
	"github.com/symphonix/symphonix/telemetry"
)

// DefaultAnswerWithin is how long a request on the link waits for the
// board's answer when Config.AnswerWithin is zero.
const DefaultAnswerWithin = 10 * time.Second

// rememberDecisions is how many delivered decisions (and approvals' runs
// and nodes) a Link remembers, to deliver each decision once.
const rememberDecisions = 8192

// ErrNoLink is a request made while no link to the board is up.
var ErrNoLink = errors.New("agentlink: no link to the board is up")

// ErrNoAnswer is a request the board did not answer within the time limit.
var ErrNoAnswer = errors.New("agentlink: the board did not answer in time")

// ErrLinkDown is a request whose link went down before the answer came.
var ErrLinkDown = errors.New("agentlink: the link went down before the board answered")

// BoardError is the board refusing one request (a LinkError): only that
// request failed, and the link stays up.
type BoardError struct {
	// Code: a connect code name, "invalid_argument", "internal", ...
	Code    string
	Message string
}

func (e *BoardError) Error() string {
	return "agentlink: board refused the request: " + e.Code + ": " + e.Message
}

// RuleInfo is the rule the board says governs an approval; zero when not
// governed.
type RuleInfo struct {
	ID string
	// Who may decide: a role, or named people.
	Role   string
	People []string
	// How many distinct people must say yes.
	Quorum int
}

// Raise is one approval asked of the organisation. Raising is idempotent per
// (agent, Run, Node) on the board: the same Digest again is the same
// approval; a different one while it is pending supersedes it.
type Raise struct {
	// Run: the run waiting on the decision; required.
	Run string
	// Thread: the conversation the run belongs to.
	Thread string
	// Node: the node of the flow that asks; required.
	Node string
	// Ask: the question put to a person.
	Ask string
	// Show: what is shown to the person; nil is an empty object.
	Show map[string]any
	// Account: the case for it.
	Account string
	// Digest: approvals.Digest of what is shown and the account, taken once
	// and kept in the holding note; required.
	Digest string
	// RunID: the run, as the agent reports it (RunEvent, RunSummary), that
	// stopped for the approval; "" from an agent that does not report runs.
	// Not part of the raise's identity.
	RunID string
	// Trace: the span the raise is made in, sent as the raise's
	// traceparent so that the board's handling of it and its decision join
	// the agent's trace; zero for none. Not part of the raise's identity.
	Trace trace.SpanContext
}

// Raised is the approval the board holds for a Raise.
type Raised struct {
	ApprovalID string
	// State: pending, approved, rejected, cancelled, expired or superseded.
	State string
	// Decision: set once the approval is decided.
	Decision *Decision
}

// Decision is how an approval was decided.
type Decision struct {
	ApprovalID string
	// Say: "yes", "no", "cancelled", or "expired" (nobody decided in the
	// rule's time limit: neither yes nor no). Anything else is a no.
	Say string
	// Digest: the digest the decision was made for; compare it with the
	// held one with approvals.StillTheSameThing before acting.
	Digest string
	Who    []string
	At     time.Time
	Reason string
	// Run, Node and Thread: the approval's, as it was raised.
	Run    string
	Node   string
	Thread string
	// Trace: the board's span for the decision, a child of the raise's
	// (Raise.Trace), for the resumed run to continue; zero when the board
	// sent none, or sent something that is not a traceparent.
	Trace trace.SpanContext
	// Receipt: the board's signed receipt of the decision (package
	// receipts), verified before OnDecision is called; keep it with the
	// run as proof of who decided what.
	Receipt string
}

// ReAskResult counts one re-ask: Held approvals listed, Asked that the
// board answered, Decided of those already decided, Failed that could not
// be asked (no answer, refused, link down).
type ReAskResult struct {
	Held, Asked, Decided, Failed int
}

// WhoDecides asks the board whether an approval at node is governed, and by
// what rule. With no link up, or no answer within Config.AnswerWithin, it
// returns the Ruling "" and an error saying why: approvals.WhatToDo reads
// "" as Wait, never as a pass.
func (l *Link) WhoDecides(ctx context.Context, node string) (approvals.Ruling, RuleInfo, error) {
	c := l.current()
	if c == nil {
		return "", RuleInfo{}, ErrNoLink
	}
	m, err := l.request(ctx, c, func(id string) *boardv1.LinkRequest {
		return &boardv1.LinkRequest{Kind: &boardv1.LinkRequest_WhoDecides{WhoDecides: &boardv1.WhoDecides{
			RequestId: id, Node: node,
		}}}
	})
	if err != nil {
		return "", RuleInfo{}, fmt.Errorf("who_decides %q: %w", node, err)
	}
	a := m.GetWhoDecidesAnswer()
	if a == nil {
		return "", RuleInfo{}, fmt.Errorf("who_decides %q: the board answered with something else", node)
	}
	info := RuleInfo{ID: a.GetRuleId(), Role: roleOf(a.GetRole()), People: a.GetPeople(), Quorum: int(a.GetQuorum())}
	return rulingOf(a.GetRuling()), info, nil
}

// Raise asks the board for an approval and returns the one it holds for it:
// its id, its state, and its decision when already decided. A decision that
// comes back here is also passed to OnDecision (once, like every other), so
// the runtime may act on decisions in that one place.
func (l *Link) Raise(ctx context.Context, r Raise) (Raised, error) {
	c := l.current()
	if c == nil {
		return Raised{}, ErrNoLink
	}
	return l.raiseOn(ctx, c, r)
}

func (l *Link) raiseOn(ctx context.Context, c *conn, r Raise) (Raised, error) {
	show := "{}"
	if r.Show != nil {
		b, err := json.Marshal(r.Show)
		if err != nil {
			return Raised{}, fmt.Errorf("raise %s/%s: show: %w", r.Run, r.Node, err)
		}
		show = string(b)
	}
	m, err := l.request(ctx, c, func(id string) *boardv1.LinkRequest {
		return &boardv1.LinkRequest{Kind: &boardv1.LinkRequest_Raise{Raise: &boardv1.Raise{
			RequestId: id, Run: r.Run, Thread: r.Thread, Node: r.Node,
			Ask: r.Ask, Show: show, Account: r.Account, Digest: r.Digest, RunId: r.RunID,
			Traceparent: telemetry.Traceparent(r.Trace),
		}}}
	})
	if err != nil {
		return Raised{}, fmt.Errorf("raise %s/%s: %w", r.Run, r.Node, err)
	}
	a := m.GetRaised()
	if a == nil {
		return Raised{}, fmt.Errorf("raise %s/%s: the board answered with something else", r.Run, r.Node)
	}
	l.deliverMu.Lock()
	l.where.put(a.GetApprovalId(), runNode{r.Run, r.Node})
	l.deliverMu.Unlock()
	out := Raised{ApprovalID: a.GetApprovalId(), State: stateOf(a.GetState())}
	if d := a.GetDecision(); d != nil {
		dec := decisionOf(d)
		if dec.ApprovalID == "" {
			dec.ApprovalID = a.GetApprovalId()
		}
		dec.Run, dec.Node, dec.Thread = r.Run, r.Node, r.Thread
		out.Decision = &dec
		l.deliver(dec)
	} else if a.GetState() == boardv1.ApprovalState_APPROVAL_STATE_EXPIRED {
		// Expired while this agent was away: passed on as the board would
		// have pushed it, so OnDecision is the one place that hears it.
		l.deliver(Decision{ApprovalID: a.GetApprovalId(), Say: "expired", Digest: r.Digest,
			Run: r.Run, Node: r.Node, Thread: r.Thread})
	}
	return out, nil
}

// ReAsk raises again everything Config.Holding lists, on the link that is
// up now, and delivers every decision already made through OnDecision. The
// link does this by itself whenever it comes up; an error is only for no
// link or a Holding that could not list what it holds.
func (l *Link) ReAsk(ctx context.Context) (ReAskResult, error) {
	c := l.current()
	if c == nil {
		return ReAskResult{}, ErrNoLink
	}
	return l.reAsk(ctx, c)
}

func (l *Link) reAsk(ctx context.Context, c *conn) (ReAskResult, error) {
	var res ReAskResult
	if l.cfg.Holding == nil {
		return res, nil
	}
	held, err := l.cfg.Holding.All(ctx)
	if err != nil {
		return res, fmt.Errorf("agentlink: list what is held: %w", err)
	}
	res.Held = len(held)
	for _, h := range held {
		r, err := l.raiseOn(ctx, c, h)
		if err != nil {
			res.Failed++
			l.log.WarnContext(ctx, "re-ask failed", "run", h.Run, "node", h.Node, "err", err)
			continue
		}
		res.Asked++
		if r.Decision != nil {
			res.Decided++ // delivered by raiseOn
		}
	}
	return res, nil
}

// reAskOnUp is the re-ask the link makes when it comes up: it logs and
// reports its counts, and never ends the link.
func (l *Link) reAskOnUp(ctx context.Context, c *conn) {
	if l.cfg.Holding == nil {
		return
	}
	res, err := l.reAsk(ctx, c)
	if err != nil {
		l.log.ErrorContext(ctx, "re-ask", "err", err)
	} else {
		l.log.InfoContext(ctx, "re-asked held approvals", "held", res.Held, "asked", res.Asked,
			"decided", res.Decided, "failed", res.Failed)
	}
	if l.cfg.OnReAsk != nil {
		l.cfg.OnReAsk(res)
	}
}

// deliver passes d to OnDecision, once per approval and say, when its
// receipt verifies.
func (l *Link) deliver(d Decision) {
	l.deliverMu.Lock()
	defer l.deliverMu.Unlock()
	if d.Run == "" && d.Node == "" {
		if w, ok := l.where.get(d.ApprovalID); ok {
			d.Run, d.Node = w.run, w.node
		}
	}
	key := d.ApprovalID + "\x00" + d.Say
	if _, seen := l.delivered.get(key); seen {
		return
	}
	if err := l.checkReceipt(context.Background(), d); err != nil {
		l.log.Error("a decision whose receipt does not verify: not acted on", "approval", d.ApprovalID, "say", d.Say, "run", d.Run, "err", err.Error())
		return
	}
	l.delivered.put(key, struct{}{})
	if l.cfg.OnDecision != nil {
		l.cfg.OnDecision(d)
	}
}

func decisionOf(d *boardv1.ApprovalDecision) Decision {
	out := Decision{
		ApprovalID: d.GetApprovalId(),
		Say:        sayOf(d.GetSay()),
		Digest:     d.GetDigest(),
		Who:        d.GetWho(),
		Reason:     d.GetReason(),
		Run:        d.GetRun(),
		Node:       d.GetNode(),
		Thread:     d.GetThread(),
		Receipt:    d.GetReceipt(),
	}
	if d.GetDecideTime() != nil {
		out.At = d.GetDecideTime().AsTime()
	}
	out.Trace, _ = telemetry.ParseTraceparent(d.GetTraceparent()) // not one: no trace
	return out
}

type runNode struct{ run, node string }
