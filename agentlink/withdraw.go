package agentlink

import (
	"context"
	"fmt"

	boardv1 "github.com/symphonix/symphonix/api/symphonix/board/v1"
)

// Withdrawal is an approval the agent raised whose run it ended itself,
// without an answer (a person at the agent's side ended it): the board is
// to cancel it.
type Withdrawal struct {
	// Run and Node: the approval's, as raised; required.
	Run  string
	Node string
	// Reason: why the run was ended; at most 4096 bytes.
	Reason string
}

// Withdrawn is what the board holds for a Withdrawal after it.
type Withdrawn struct {
	// ApprovalID: "" when the board holds no approval for the run and node
	// (it was never raised there): nothing to cancel.
	ApprovalID string
	// State: "cancelled" when the withdrawal cancelled it; otherwise what it
	// already was: approved, rejected, cancelled or expired.
	State string
}

// Withdraw tells the board that the run waiting on an approval this agent
// raised was ended here, so that the board cancels the approval (as this
// agent, audited) if it is still pending. It is idempotent. With no link up,
// or no answer within Config.AnswerWithin (a board that predates Withdraw
// never answers), it fails, and the caller tells the board again on its
// next link.
func (l *Link) Withdraw(ctx context.Context, w Withdrawal) (Withdrawn, error) {
	c := l.current()
	if c == nil {
		return Withdrawn{}, ErrNoLink
	}
	m, err := l.request(ctx, c, func(id string) *boardv1.LinkRequest {
		return &boardv1.LinkRequest{Kind: &boardv1.LinkRequest_Withdraw{Withdraw: &boardv1.Withdraw{
			RequestId: id, Run: w.Run, Node: w.Node, Reason: w.Reason,
		}}}
	})
	if err != nil {
		return Withdrawn{}, fmt.Errorf("withdraw %s/%s: %w", w.Run, w.Node, err)
	}
	a := m.GetWithdrawn()
	if a == nil {
		return Withdrawn{}, fmt.Errorf("withdraw %s/%s: the board answered with something else", w.Run, w.Node)
	}
	return Withdrawn{ApprovalID: a.GetApprovalId(), State: stateOf(a.GetState())}, nil
}
