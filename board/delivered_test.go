package board_test

import (
	"fmt"
	"testing"
	"time"

	boardv1 "github.com/symphonix/symphonix/api/symphonix/board/v1"
	"github.com/symphonix/symphonix/internal/boardtest"
)

// TestDeliveredMark: a decision pushed to the live link is marked
// delivered after Decide has answered, and is not sent again when the
// agent links again.
func TestDeliveredMark(t *testing.T) {
	t.Parallel()
	bt, _ := decideBoard(t, &boardv1.Rule{Agent: "*", Node: "*", Role: boardv1.Role_ROLE_APPROVER}, boardtest.Options{})
	l := openLink(t, bt, "desk")
	var ids []string
	for i := range 5 {
		ids = append(ids, l.raised(refund(fmt.Sprint("run-", i), i)).GetApprovalId())
	}
	for i, id := range ids {
		if _, err := decide(approver(bt, "ann"), t, id, "yes", digestOf(i), ""); err != nil {
			t.Fatal(err)
		}
	}
	if ds := l.decisionsUntilPong(1); len(ds) != len(ids) {
		t.Fatalf("decisions on the link: %v, want %d", ds, len(ids))
	}
	bt.Board.WaitDeliveredMarksForTest()
	for _, id := range ids {
		row, err := bt.Store.Approval.Get(t.Context(), id)
		if err != nil {
			t.Fatal(err)
		}
		if row.DeliveredAt == nil {
			t.Errorf("approval %s: delivered_at not set after its decision went out", id)
		}
	}
	l.hangUp()
	l = openLink(t, bt, "desk")
	if ds := l.decisionsUntilPong(1); len(ds) != 0 {
		t.Fatalf("decisions on relink: %v, want none", ds)
	}
}

// TestDeliveredMarkWhileStoreAway: a delivered mark that cannot be written
// because the store is away is kept, so that the decision is not sent
// again on the link it went out on, and is written once the store is back.
func TestDeliveredMarkWhileStoreAway(t *testing.T) {
	t.Parallel()
	proxy, through := boardtest.PostgresProxy(t, boardtest.PostgresDSN(t))
	bt, _ := decideBoard(t, &boardv1.Rule{Agent: "*", Node: "*", Role: boardv1.Role_ROLE_APPROVER}, boardtest.Options{DSN: through})
	l := openLink(t, bt, "desk")
	id := l.raised(refund("run-1", 1)).GetApprovalId()

	proxy.Cut()
	bt.Board.MarkDeliveredForTest("desk", id)
	time.Sleep(time.Second) // several writes tried and failed
	if !bt.Board.MarkPendingForTest("desk", id) {
		t.Fatal("the mark was dropped while the store was away")
	}
	proxy.Mend()
	bt.Board.WaitDeliveredMarksForTest()
	row, err := bt.Store.Approval.Get(t.Context(), id)
	if err != nil {
		t.Fatal(err)
	}
	if row.DeliveredAt == nil {
		t.Error("delivered_at not set once the store was back")
	}
}
