package board

import (
	"context"
	"errors"
	"time"

	boardv1 "github.com/symphonix/symphonix/api/symphonix/board/v1"
	"github.com/symphonix/symphonix/audit"
	"github.com/symphonix/symphonix/ent"
	"github.com/symphonix/symphonix/ent/approval"
	"github.com/symphonix/symphonix/identity"
	"github.com/symphonix/symphonix/store"
)

// withdraw answers a withdraw: the agent ended, itself, a run whose
// approval it raised (`agent cancel`). Only a failure to send ends the
// link.
func (l linkService) withdraw(ctx context.Context, s *session, q *boardv1.Withdraw) error {
	row, err := l.b.withdraw(ctx, s.name, q)
	if err != nil {
		return l.answerError(ctx, s, q.GetRequestId(), "withdraw", err)
	}
	ans := &boardv1.Withdrawn{RequestId: q.GetRequestId()}
	if row != nil {
		ans.ApprovalId, ans.State = row.ID, approvalStateProto(row.State)
	}
	return s.out.send(&boardv1.LinkResponse{Kind: &boardv1.LinkResponse_Withdrawn{Withdrawn: ans}})
}

// validWithdraw checks a withdraw, naming the field at fault.
func validWithdraw(q *boardv1.Withdraw) error {
	if err := validRequestID(q.GetRequestId()); err != nil {
		return badRequest("withdraw.request_id: %v", err)
	}
	if err := validText(q.GetRun(), maxRunLen, true); err != nil {
		return badRequest("withdraw.run: %v", err)
	}
	if err := validText(q.GetNode(), maxNodeLen, true); err != nil {
		return badRequest("withdraw.node: %v", err)
	}
	if n := len(q.GetReason()); n > maxReasonLen {
		return badRequest("withdraw.reason: %d bytes, at most %d", n, maxReasonLen)
	}
	return nil
}

// withdraw cancels, as the agent, the pending approval agentName holds for
// the run and node q names, and returns it; an approval no longer pending
// is returned as it is, and none (nil) when the agent never raised one
// there. The cancellation and its audit entry are one transaction, and the
// state changes only from pending, so of a withdraw and a decision at the
// same moment exactly one wins. The agent that withdrew needs no delivery
// of the cancellation: it is marked delivered.
func (b *Board) withdraw(ctx context.Context, agentName string, q *boardv1.Withdraw) (*ent.Approval, error) {
	if err := validWithdraw(q); err != nil {
		return nil, err
	}
	now := b.now().UTC().Truncate(time.Microsecond)
	actor := identity.ActorOf(ctx, agentName)
	var out *ent.Approval
	cancelled := false
	err := store.InTx(ctx, b.db, func(tx *ent.Tx) error {
		row, err := tx.Approval.Query().
			Where(approval.Agent(agentName), approval.Run(q.GetRun()), approval.Node(q.GetNode()),
				approval.StateNEQ(StateSuperseded)).
			Order(ent.Desc(approval.FieldCreatedAt), ent.Desc(approval.FieldID)).
			First(ctx)
		switch {
		case ent.IsNotFound(err):
			return nil
		case err != nil:
			return err
		}
		out = row
		if row.State != StatePending {
			return nil
		}
		detail := map[string]any{
			"agent": agentName, "run": row.Run, "node": row.Node, "digest": row.Digest,
			"rule_id": row.RuleID, "who": []string{actor}, "withdrawn": true,
		}
		if q.GetReason() != "" {
			detail["reason"] = q.GetReason()
		}
		rec := audit.Record{Actor: actor, Action: "approval.cancel", Subject: row.ID, Detail: detail, At: now}
		err = b.recordDecision(ctx, tx, row, nil, decisionWrite{state: StateCancelled, say: sayCancelled, who: []string{actor}, reason: q.GetReason(), at: now}, rec)
		if errors.Is(err, errLostRace) {
			// Decided at the same moment: answered as it now is.
			out, err = tx.Approval.Get(ctx, row.ID)
			return err
		}
		if err != nil {
			return err
		}
		cancelled = true
		out, err = tx.Approval.Get(ctx, row.ID)
		return err
	})
	if err != nil {
		return nil, err
	}
	if cancelled {
		unlock := b.deliveries.lock(agentName)
		b.markDelivered(agentName, out.ID)
		unlock()
		b.publishApproval(ctx, eventCancelled, out.ID)
	}
	return out, nil
}
