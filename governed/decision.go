package governed

import (
	"context"
	"fmt"

	"github.com/symphonix/symphonix/agentlink"
	"github.com/symphonix/symphonix/approvals"
	"github.com/symphonix/symphonix/flow"
	"github.com/symphonix/symphonix/waiting"
)

// Decided takes a decision the board sent: agentlink's OnDecision. It
// returns at once; the decision is acted on in the background, because a
// resumed run may take a while and the link must keep reading.
func (a *Approvals) Decided(d agentlink.Decision) {
	a.closeMu.Lock()
	defer a.closeMu.Unlock()
	if a.closed {
		return // stopping: the board delivers it again on the next connection
	}
	a.wg.Add(1)
	go func() {
		defer a.wg.Done()
		// A decision taken is carried through, even while stopping: Close
		// waits for it.
		a.decide(context.Background(), d)
	}()
}

// decide acts on d once: a yes or a no for the operation held resumes the
// run; a decision for another operation is refused and said; cancelled
// or expired ends the run and leaves a tombstone nothing can answer.
func (a *Approvals) decide(ctx context.Context, d agentlink.Decision) {
	log := a.log.With("approval", d.ApprovalID, "say", d.Say, "run", d.Run, "node", d.Node)
	if d.Run == "" || d.Node == "" {
		log.WarnContext(ctx, "a decision that names no run: not ours to act on")
		return
	}
	n, ok, err := a.cfg.Holding.Find(ctx, d.Run, d.Node)
	switch {
	case err != nil:
		log.ErrorContext(ctx, "a decision: reading the holding note; acted on when the board sends it again", "err", err)
		return
	case !ok:
		log.InfoContext(ctx, "a decision for nothing held here (acted on already): ignored")
		return
	case n.State.Ended():
		log.WarnContext(ctx, "a decision for a run that was ended: nothing can answer it", "why", n.Why)
		return
	case n.State != waiting.Held:
		log.WarnContext(ctx, "a decision for an approval the board does not govern here: ignored", "state", n.State)
		return
	}
	log = log.With("thread", n.Thread)
	defer a.carrying(n.Thread)()
	if a.cfg.RunContext != nil {
		ctx = a.cfg.RunContext(n.Thread)
	}
	ctx, span := a.decisionSpan(ctx, d, n.Thread)
	var (
		res flow.Result
		v   Verdict
	)
	defer func() { endRunSpan(span, res, v, err) }()

	switch d.Say {
	case "cancelled", "expired":
		why, end := "cancelled on the board", ErrCancelled
		if d.Say == "expired" {
			why, end = "nobody decided it within the rule's time limit", ErrExpired
		}
		if len(d.Who) > 0 {
			why += fmt.Sprintf(" by %v", d.Who)
		}
		if d.Reason != "" {
			why += ": " + d.Reason
		}
		// No digest check: nothing is performed, and a run nobody can end
		// is worse than one ended under a changed operation.
		if !a.swap(ctx, n, waiting.Held, waiting.Tombstone, why) {
			return
		}
		if p, err := a.cfg.Graph.Pending(ctx, n.Thread); err == nil && p != nil && p.Node == n.Node && p.Digest == n.Digest {
			if err := a.cfg.Graph.Cancel(ctx, n.Thread); err != nil {
				log.ErrorContext(ctx, "ending the run", "err", err)
			}
		}
		log.InfoContext(ctx, "the run ended without an answer", "why", why)
		v, err = Verdict{Who: Organisation, Why: why, Run: n.Run, Receipt: d.Receipt}, end
		a.report(n.Thread, flow.Result{}, v, err)
		return
	}

	// The decision must be about the operation the note holds, and the
	// run must still hold that operation.
	if !approvals.StillTheSameThing(d.Digest, n.Digest) {
		log.ErrorContext(ctx, "a decision for another operation: not performed; the run keeps waiting",
			"decided", d.Digest, "held", n.Digest)
		return
	}
	p, err := a.cfg.Graph.Pending(ctx, n.Thread)
	if err != nil {
		log.ErrorContext(ctx, "a decision: reading the run; acted on when the board sends it again", "err", err)
		return
	}
	if p == nil || p.Kind != flow.PendingApproval || p.Node != n.Node || !approvals.StillTheSameThing(n.Digest, p.Digest) {
		why := "the run no longer waits for this operation"
		if p != nil && p.Kind == flow.PendingApproval && p.Node == n.Node {
			why = fmt.Sprintf("the decision was for %s, and the run now holds %s", n.Digest, p.Digest)
		}
		log.ErrorContext(ctx, "a decision refused, not performed: "+why)
		if a.swap(ctx, n, waiting.Held, waiting.Tombstone, "refused: "+why) && p != nil {
			// What the run holds now is asked about afresh.
			v, err := a.settle(ctx, n.Thread, p, true)
			a.report(n.Thread, flow.Result{Pending: p}, v, err)
		}
		return
	}
	// Taken once: of two deliveries, one acts.
	if !a.swap(ctx, n, waiting.Held, "", "") {
		return
	}
	answer := "no"
	if d.Say == "yes" {
		answer = "yes"
	}
	log.InfoContext(ctx, "a decision acted on", "who", d.Who)
	res, err = a.cfg.Graph.Resume(ctx, n.Thread, answer)
	if err == nil {
		v, err = a.settle(ctx, n.Thread, res.Pending, true)
		v.Receipt = d.Receipt
	} else {
		log.ErrorContext(ctx, "resuming the run after the decision", "err", err)
	}
	a.report(n.Thread, res, v, err)
}

// swap moves n from one state to another and reports whether this call
// did it.
func (a *Approvals) swap(ctx context.Context, n waiting.Note, from, to waiting.NoteState, why string) bool {
	a.mu.Lock()
	ok, err := a.cfg.Holding.Swap(ctx, n.Run, n.Node, from, to, why)
	a.mu.Unlock()
	if err != nil {
		a.log.ErrorContext(ctx, "holding note", "run", n.Run, "node", n.Node, "err", err)
	}
	return ok
}

func (a *Approvals) report(thread string, res flow.Result, v Verdict, err error) {
	if a.cfg.OnResult != nil {
		a.cfg.OnResult(thread, res, v, err)
	}
}
