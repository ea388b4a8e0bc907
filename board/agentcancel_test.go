package board_test

import (
	"strings"
	"testing"
	"time"

	boardv1 "github.com/symphonix/symphonix/api/symphonix/board/v1"
	"github.com/symphonix/symphonix/board"
	"github.com/symphonix/symphonix/identity"
	"github.com/symphonix/symphonix/internal/boardtest"
)

// withdraw sends w on the link and returns the answer, which must echo its
// request id: all of it, or none when it is over the limit (the board
// never sends back a field it refused for its size).
func (l *rawLink) withdraw(w *boardv1.Withdraw) *boardv1.LinkResponse {
	l.t.Helper()
	if w.RequestId == "" {
		w.RequestId = l.requestID()
	}
	l.send(&boardv1.LinkRequest{Kind: &boardv1.LinkRequest_Withdraw{Withdraw: w}})
	m := l.next()
	id := m.GetWithdrawn().GetRequestId()
	if e := m.GetError(); e != nil {
		id = e.GetRequestId()
	}
	want := w.RequestId
	if len(want) > board.MaxRequestIDForTest {
		want = ""
	}
	if id != want {
		l.t.Fatalf("answer %v echoes request_id %q, want %q", m, id, want)
	}
	return m
}

// withdrawn withdraws w and wants a Withdrawn.
func (l *rawLink) withdrawn(w *boardv1.Withdraw) *boardv1.Withdrawn {
	l.t.Helper()
	m := l.withdraw(w)
	if m.GetWithdrawn() == nil {
		l.t.Fatalf("withdraw(%v) = %v, want withdrawn", w, m)
	}
	return m.GetWithdrawn()
}

// TestWithdraw: an agent that ended a run itself cancels the approval it
// raised for it, as the agent, audited once; an approval already decided
// is left as it is; another agent's approvals are none of its business.
func TestWithdraw(t *testing.T) {
	t.Parallel()
	bt := boardtest.Start(t, boardtest.Options{})
	putRule(t, approvalsClient(bt, bt.OperatorToken("root", identity.RoleAdmin)),
		&boardv1.Rule{Agent: "*", Node: "*", Role: boardv1.Role_ROLE_APPROVER})
	viewer := approvalsClient(bt, bt.OperatorToken("vic", identity.RoleViewer))
	l := openLink(t, bt, "desk")
	raised := l.raised(refund("run-1", 1))

	// Another agent cannot withdraw it: it has no approval there.
	if w := openLink(t, bt, "till").withdrawn(&boardv1.Withdraw{Run: "run-1", Node: "pay"}); w.GetApprovalId() != "" || w.GetState() != boardv1.ApprovalState_APPROVAL_STATE_UNSPECIFIED {
		t.Fatalf("another agent's withdraw = %v, want no approval", w)
	}

	w := l.withdrawn(&boardv1.Withdraw{Run: "run-1", Node: "pay", Reason: "the customer called"})
	if w.GetApprovalId() != raised.GetApprovalId() || w.GetState() != boardv1.ApprovalState_APPROVAL_STATE_CANCELLED {
		t.Fatalf("withdraw = %v, want %s cancelled", w, raised.GetApprovalId())
	}
	got, err := viewer.GetApproval(t.Context(), &boardv1.GetApprovalRequest{Id: raised.GetApprovalId()})
	if err != nil {
		t.Fatal(err)
	}
	d := got.GetApproval().GetDecision()
	if got.GetApproval().GetState() != boardv1.ApprovalState_APPROVAL_STATE_CANCELLED || d.GetSay() != boardv1.Say_SAY_CANCELLED || strings.Join(d.GetWho(), ",") != "desk" ||
		d.GetReason() != "the customer called" || d.GetDigest() != digestOf(1) {
		t.Fatalf("the approval after the withdraw = %v, want cancelled by desk with the reason", got.GetApproval())
	}
	// Sending it again changes nothing, and writes nothing.
	if again := l.withdrawn(&boardv1.Withdraw{Run: "run-1", Node: "pay"}); again.GetApprovalId() != raised.GetApprovalId() || again.GetState() != boardv1.ApprovalState_APPROVAL_STATE_CANCELLED {
		t.Fatalf("withdraw again = %v, want the same, cancelled", again)
	}
	// The agent needs no delivery of what it did itself.
	boardtest.Eventually(t, 5*time.Second, "the cancellation marked delivered", func() bool {
		row, err := bt.Store.Approval.Get(t.Context(), raised.GetApprovalId())
		if err != nil {
			t.Fatal(err)
		}
		return row.DeliveredAt != nil
	})

	// A decided approval stays decided.
	decided := l.raised(refund("run-2", 2))
	if _, err := approvalsClient(bt, bt.OperatorToken("ada", identity.RoleApprover)).Decide(t.Context(),
		&boardv1.DecideRequest{Id: decided.GetApprovalId(), Say: boardv1.Say_SAY_YES, Digest: digestOf(2)}); err != nil {
		t.Fatal(err)
	}
	if m := l.next(); m.GetDecision().GetApprovalId() != decided.GetApprovalId() {
		t.Fatalf("after the yes the link got %v, want its decision", m)
	}
	if w := l.withdrawn(&boardv1.Withdraw{Run: "run-2", Node: "pay"}); w.GetApprovalId() != decided.GetApprovalId() || w.GetState() != boardv1.ApprovalState_APPROVAL_STATE_APPROVED {
		t.Fatalf("withdraw of an approved approval = %v, want it approved still", w)
	}
	// Nothing raised there: nothing to cancel.
	if w := l.withdrawn(&boardv1.Withdraw{Run: "run-9", Node: "pay"}); w.GetApprovalId() != "" || w.GetState() != boardv1.ApprovalState_APPROVAL_STATE_UNSPECIFIED {
		t.Fatalf("withdraw of nothing raised = %v, want no approval", w)
	}
	acts := auditActions(t, bt)
	if got := acts["approval.cancel"]; strings.Join(got, ",") != raised.GetApprovalId()+" by desk" {
		t.Errorf("approval.cancel audit entries %v, want one, by desk", got)
	}
	l.ping(1)
}

// TestBadWithdraws: a withdraw the board cannot take is refused naming the
// field; only that request fails.
func TestBadWithdraws(t *testing.T) {
	t.Parallel()
	bt := boardtest.Start(t, boardtest.Options{})
	l := openLink(t, bt, "desk")
	for _, tt := range []struct {
		name  string
		w     *boardv1.Withdraw
		field string
	}{
		{"no run", &boardv1.Withdraw{Node: "pay"}, "withdraw.run"},
		{"no node", &boardv1.Withdraw{Run: "run-1"}, "withdraw.node"},
		{"a long run", &boardv1.Withdraw{Run: strings.Repeat("r", 257), Node: "pay"}, "withdraw.run"},
		{"a control character", &boardv1.Withdraw{Run: "run\n1", Node: "pay"}, "withdraw.run"},
		{"a long reason", &boardv1.Withdraw{Run: "run-1", Node: "pay", Reason: strings.Repeat("x", 4097)}, "withdraw.reason"},
		{"a long request id", &boardv1.Withdraw{RequestId: strings.Repeat("q", 129), Run: "run-1", Node: "pay"}, "withdraw.request_id"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			e := l.withdraw(tt.w).GetError()
			if e.GetCode() != boardv1.LinkErrorCode_LINK_ERROR_CODE_INVALID_ARGUMENT || !strings.HasPrefix(e.GetMessage(), tt.field+":") {
				t.Errorf("withdraw(%s) = %v, want invalid_argument naming %s", tt.name, e, tt.field)
			}
		})
	}
	l.ping(1)
}
