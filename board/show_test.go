package board_test

import (
	"strings"
	"testing"
	"time"

	"connectrpc.com/connect/v2/connecthttp"

	boardv1 "github.com/symphonix/symphonix/api/symphonix/board/v1"
	"github.com/symphonix/symphonix/api/symphonix/board/v1/boardv1connect"
	"github.com/symphonix/symphonix/board"
	"github.com/symphonix/symphonix/identity"
	"github.com/symphonix/symphonix/internal/boardtest"
)

// nested is a JSON object depth objects deep.
func nested(depth int) string {
	return strings.Repeat(`{"a":`, depth-1) + `{}` + strings.Repeat("}", depth-1)
}

// TestShowNestedDeep: a show nested deeper than protobuf clients decode is
// refused at raise, naming the limit, and protobuf clients (Connect's
// binary codec and gRPC) list, get and watch approvals after the attempt.
// An approval stored with such a show before the limit existed is still
// listed, got and watched, with its show_json and without the Struct.
func TestShowNestedDeep(t *testing.T) {
	t.Parallel()
	bt := boardtest.Start(t, boardtest.Options{})
	l := openLink(t, bt, "desk")
	deep := nested(4000)

	r := refund("run-1", 1)
	r.Show = deep
	if e := l.raise(r).GetError(); e.GetCode() != boardv1.LinkErrorCode_LINK_ERROR_CODE_INVALID_ARGUMENT || !strings.HasPrefix(e.GetMessage(), "raise.show: nested more than 16 deep") {
		t.Fatalf("raise with a show 4000 deep: %v, want invalid_argument naming raise.show and the limit", e)
	}
	// At the limits: 16 deep, 10,000 keys and values.
	r = refund("run-2", 2)
	r.Show = `{"deep":` + nested(15) + `,"many":[` + strings.Repeat("1,", 9966) + `1]}` // 33 + 9967
	ok := l.raised(r).GetApprovalId()

	// As a board without the limit stored one.
	old, err := bt.Store.Approval.Create().
		SetID("apr-old").SetAgent("desk").SetRun("run-3").SetNode("pay").
		SetShow(deep).SetDigest(digestOf(3)).SetState(board.StatePending).
		SetCreatedAt(time.Now().Add(-time.Hour)).Save(t.Context())
	if err != nil {
		t.Fatal(err)
	}

	viewer := bt.OperatorToken("vic", identity.RoleViewer)
	for name, c := range map[string]boardv1connect.ApprovalServiceClient{
		"connect": approvalsClient(bt, viewer),
		"grpc":    approvalsClient(bt, viewer, connecthttp.WithGRPC()),
	} {
		list, err := c.ListApprovals(t.Context(), &boardv1.ListApprovalsRequest{})
		if err != nil || len(list.GetApprovals()) != 2 || list.GetApprovals()[0].GetId() != ok {
			t.Fatalf("%s: ListApprovals = %v, %v; want the good one and the old one", name, len(list.GetApprovals()), err)
		}
		a := list.GetApprovals()[1]
		//lint:ignore SA1019 the deprecated show is still sent, and this checks it is left out here
		show := a.GetShow()
		if a.GetId() != old.ID || a.GetShowJson() != deep || show != nil {
			t.Errorf("%s: the old approval listed with show_json of %d bytes and show %v; want its show_json and no show", name, len(a.GetShowJson()), show != nil)
		}
		got, err := c.GetApproval(t.Context(), &boardv1.GetApprovalRequest{Id: old.ID})
		if err != nil || got.GetApproval().GetShowJson() != deep {
			t.Errorf("%s: GetApproval(old) = %v; want it with its show_json", name, err)
		}
		w, err := c.WatchApprovals(t.Context(), &boardv1.WatchApprovalsRequest{})
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for {
			m, err := w.Receive()
			if err != nil {
				t.Fatalf("%s: WatchApprovals: %v after %d approvals", name, err, n)
			}
			if m.GetEvent() == boardv1.ApprovalEvent_APPROVAL_EVENT_SYNCED {
				break
			}
			n++
		}
		if n != 2 {
			t.Errorf("%s: WatchApprovals snapshot of %d approvals, want both", name, n)
		}
		_ = w.Close()
	}
}
