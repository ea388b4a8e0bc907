package board

import (
	"context"
	"errors"

	"connectrpc.com/connect/v2"

	boardv1 "github.com/symphonix/symphonix/api/symphonix/board/v1"
	"github.com/symphonix/symphonix/api/symphonix/board/v1/boardv1connect"
	"github.com/symphonix/symphonix/ent"
	"github.com/symphonix/symphonix/ent/approval"
	"github.com/symphonix/symphonix/ent/predicate"
)

// Events on WatchApprovals. The board keeps them only in memory, as the
// API's own values: there is nothing to map.
const (
	eventSnapshot   = boardv1.ApprovalEvent_APPROVAL_EVENT_SNAPSHOT
	eventSynced     = boardv1.ApprovalEvent_APPROVAL_EVENT_SYNCED
	eventHeartbeat  = boardv1.ApprovalEvent_APPROVAL_EVENT_HEARTBEAT
	eventRaised     = boardv1.ApprovalEvent_APPROVAL_EVENT_RAISED
	eventSuperseded = boardv1.ApprovalEvent_APPROVAL_EVENT_SUPERSEDED
	eventVoted      = boardv1.ApprovalEvent_APPROVAL_EVENT_VOTED
	eventDecided    = boardv1.ApprovalEvent_APPROVAL_EVENT_DECIDED
	eventCancelled  = boardv1.ApprovalEvent_APPROVAL_EVENT_CANCELLED
	eventExpired    = boardv1.ApprovalEvent_APPROVAL_EVENT_EXPIRED
	eventEscalated  = boardv1.ApprovalEvent_APPROVAL_EVENT_ESCALATED
)

// defaultWatchHistory is how many decided approvals a watch's snapshot
// sends when the request does not say.
const defaultWatchHistory = 200

// maxWatchHistory is the most decided approvals a watch's snapshot sends.
const maxWatchHistory = 1000

// publishApproval sends the approval id, as it stands now, to the
// approvals' watchers with event, and announces it to the other boards of
// the store, whose watchers it reaches too (crossboard.go). The caller has committed the change
// event names: it is never called inside a transaction, and it never
// waits for a watcher (hub.publish drops one that is full).
//
// It reads the approval again rather than trusting the caller's copy, and
// reads and publishes under the approval's lock: two changes committed
// close together may reach here in either order, and this way what
// watchers see of one approval never goes back in time. A change overtaken
// by a later one that left the approval elsewhere (a vote, and then the
// decision) is not published: the later change's own publish carries it.
func (b *Board) publishApproval(ctx context.Context, event boardv1.ApprovalEvent, id string) {
	b.notify(ctx, wake{Kind: wakeApproval, ID: id, Event: int32(event)})
	b.publishApprovalHere(ctx, event, id)
}

// publishApprovalHere is publishApproval to this board's watchers alone:
// for a change another board made, and announced.
func (b *Board) publishApprovalHere(ctx context.Context, event boardv1.ApprovalEvent, id string) {
	if !b.approvals.watched() {
		return
	}
	unlock := b.approvalPublish.lock(id)
	defer unlock()
	ctx = context.WithoutCancel(ctx)
	row, err := b.db.Approval.Get(ctx, id)
	if err != nil {
		// The watchers would miss the change: end them, so that they
		// watch again and read it in a fresh snapshot.
		b.log.ErrorContext(ctx, "read an approval to publish", "approval", id, "event", event.String(), "err", err.Error())
		b.approvals.dropAll()
		return
	}
	stillPending := event == eventRaised || event == eventVoted || event == eventEscalated
	if stillPending != (row.State == StatePending) {
		return
	}
	b.approvals.publish(&boardv1.WatchApprovalsResponse{Event: event, Approval: approvalProto(row)})
}

func (s approvalService) WatchApprovals(ctx context.Context, req *boardv1.WatchApprovalsRequest, stream boardv1connect.ApprovalServiceWatchApprovalsServerStream) error {
	history := defaultWatchHistory
	if req.History != nil {
		h := req.GetHistory()
		if h < 0 {
			return connect.Errorf(connect.CodeInvalidArgument, "history: %d, want 0 or more", h)
		}
		history = min(int(h), maxWatchHistory)
	}
	done, err := s.b.startStream(ctx)
	if err != nil {
		return err
	}
	defer done()
	agentName := req.GetAgent()
	// Subscribe before reading the snapshot so no change falls between them;
	// a change seen twice is harmless, a change missed is not.
	ch, stop := s.b.approvals.watchWhere(func(c *boardv1.WatchApprovalsResponse) bool {
		return agentName == "" || c.GetApproval().GetAgent() == agentName
	})
	defer stop()
	err = s.b.approvalSnapshot(ctx, agentName, history, func(a *boardv1.Approval) error {
		return stream.Send(&boardv1.WatchApprovalsResponse{Event: eventSnapshot, Approval: a})
	})
	if err != nil {
		return sendErr(err)
	}
	if err := stream.Send(&boardv1.WatchApprovalsResponse{Event: eventSynced}); err != nil {
		return sendErr(err)
	}
	return watchLoop(ctx, s.b, ch, &boardv1.WatchApprovalsResponse{Event: eventHeartbeat}, stream.Send)
}

// sendErr is what a watch returns when a send failed: nothing when the
// watcher went away.
func sendErr(err error) error {
	if errors.Is(err, context.Canceled) {
		return nil
	}
	return err
}

// approvalSnapshot is what a watch sends first, each approval given to
// send as it is read, a page at a time: every pending approval, oldest
// first, then the newest history decided ones, newest first; only
// agentName's when it is given.
func (b *Board) approvalSnapshot(ctx context.Context, agentName string, history int, send func(*boardv1.Approval) error) error {
	var mine []predicate.Approval
	if agentName != "" {
		mine = append(mine, approval.Agent(agentName))
	}
	each := func(r *ent.Approval) (bool, error) {
		return true, send(approvalProto(r))
	}
	if err := b.approvalPages(ctx, append(mine, approval.State(StatePending)), false, nil, each); err != nil {
		return err
	}
	if history <= 0 {
		return nil
	}
	sent := 0
	return b.approvalPages(ctx, append(mine, approval.StateNEQ(StatePending)), true, nil, func(r *ent.Approval) (bool, error) {
		sent++
		return sent < history, send(approvalProto(r))
	})
}
