package governed

import (
	"context"
	"errors"
	"fmt"

	"github.com/symphonix/symphonix/agentlink"
	"github.com/symphonix/symphonix/flow"
	"github.com/symphonix/symphonix/waiting"
)

// MaxReason is the most bytes of why a run was ended that Cancel keeps
// and tells the board: the board refuses more.
const MaxReason = 4096

// Ended is what Cancel ended.
type Ended struct {
	// Pending: what the run waited for; nil when the run was gone already
	// and only its note was left (an earlier Cancel stopped half-way).
	Pending *flow.Pending
	// Withdrawn: the board held the run's approval. It is told when the
	// link is next up (Recover), and cancels the approval there.
	Withdrawn bool
}

// Cancel ends the run waiting on thread, here, without an answer: nothing
// runs, not even an onReject. Its holding note becomes a tombstone that
// nothing can answer afterwards — Withdrawn when the board held its
// approval, until the board has been told (Recover) — and a decision that
// comes for it later is ignored. reason says why, for the board; at most
// MaxReason bytes.
//
// It is how a person at the agent ends a run the board would otherwise
// decide, for example with no board to link to any more. A thread where
// nothing waits fails with flow.ErrNothingPending.
func (a *Approvals) Cancel(ctx context.Context, thread, reason string) (Ended, error) {
	if len(reason) > MaxReason {
		return Ended{}, fmt.Errorf("governed: the reason is %d bytes, at most %d", len(reason), MaxReason)
	}
	p, err := a.cfg.Graph.Pending(ctx, thread)
	if err != nil {
		return Ended{}, fmt.Errorf("governed: thread %q: %w", thread, err)
	}
	n, noted, err := a.cfg.Holding.Note(ctx, thread)
	if err != nil {
		return Ended{}, fmt.Errorf("governed: the holding note for thread %q: %w", thread, err)
	}
	if p == nil && (!noted || n.State != waiting.Held) {
		return Ended{}, fmt.Errorf("governed: thread %q: %w", thread, flow.ErrNothingPending)
	}
	// The run first: a crash between the two leaves a held note without
	// a run, which the next Cancel ends; never a run whose note is gone.
	if p != nil {
		if err := a.cfg.Graph.Cancel(ctx, thread); err != nil && !errors.Is(err, flow.ErrNothingPending) {
			return Ended{}, fmt.Errorf("governed: thread %q: %w", thread, err)
		}
	}
	end := Ended{Pending: p}
	if !noted {
		return end, nil
	}
	why := "ended at the agent, without an answer"
	if reason != "" {
		why += ": " + reason
	}
	to := waiting.Tombstone
	if n.State == waiting.Held {
		to, end.Withdrawn = waiting.Withdrawn, true
	}
	a.mu.Lock()
	_, err = a.cfg.Holding.Swap(ctx, n.Run, n.Node, n.State, to, why)
	a.mu.Unlock()
	if err != nil {
		return end, fmt.Errorf("governed: the holding note for thread %q: %w", thread, err)
	}
	return end, nil
}

// tell tells the board of a run ended here whose approval it held, and
// makes the note a plain tombstone once the board has heard. A board that
// cannot be told now is told when the link is next up.
func (a *Approvals) tell(ctx context.Context, n waiting.Note) error {
	b := a.theBoard()
	if b == nil {
		return nil
	}
	log := a.log.With("thread", n.Thread, "run", n.Run, "node", n.Node)
	w, err := b.Withdraw(ctx, agentlink.Withdrawal{Run: n.Run, Node: n.Node, Reason: agentlink.Clip(n.Why, MaxReason)})
	var refused *agentlink.BoardError
	if errors.As(err, &refused) && refused.Code == "invalid_argument" {
		// Never taken, however often sent: the board's approval is left
		// for an operator to cancel.
		log.ErrorContext(ctx, "the board refused to hear the run was ended here; cancel its approval on the board", "err", err)
		a.swap(ctx, n, waiting.Withdrawn, waiting.Tombstone, n.Why)
		return nil
	}
	if err != nil {
		return fmt.Errorf("governed: telling the board the run on thread %q was ended: %w", n.Thread, err)
	}
	switch w.State {
	case "", "cancelled":
		log.InfoContext(ctx, "the board was told the run was ended here", "approval", w.ApprovalID)
	default:
		log.WarnContext(ctx, "the board had decided the approval before it heard the run was ended here: nothing was done",
			"approval", w.ApprovalID, "state", w.State)
	}
	a.swap(ctx, n, waiting.Withdrawn, waiting.Tombstone, n.Why)
	return nil
}
