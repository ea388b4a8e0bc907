package board_test

import (
	"encoding/json"
	"maps"
	"strings"
	"testing"

	"connectrpc.com/connect/v2"

	boardv1 "github.com/symphonix/symphonix/api/symphonix/board/v1"
	"github.com/symphonix/symphonix/board"
	"github.com/symphonix/symphonix/internal/boardtest"
)

// TestAuditedRequestsLimited: an operator's refused Decides, and an
// agent's verifies, pairs and raises, write at most their burst of audit
// entries; past it a link request is refused with resource_exhausted (a
// verify answered no) and a refused Decide is still refused, and neither is
// written one by one: one audit.limited entry per actor counts them. Other
// callers are not affected.
func TestAuditedRequestsLimited(t *testing.T) {
	t.Parallel()
	const burst = 5
	bt, _ := decideBoard(t, &boardv1.Rule{Agent: "*", Node: "*", Role: boardv1.Role_ROLE_APPROVER},
		boardtest.Options{Limits: board.Limits{AuditBurst: burst, AuditPerSecond: 0.001}})
	ann, bob := approver(bt, "ann"), approver(bt, "bob")
	for i := range 20 {
		if _, err := decide(ann, t, "apr-none", "yes", digestOf(1), ""); connect.CodeOf(err) != connect.CodeNotFound {
			t.Fatalf("refused Decide %d: %v, want not_found, limited or not", i+1, err)
		}
	}
	if _, err := decide(bob, t, "apr-none", "yes", digestOf(1), ""); connect.CodeOf(err) != connect.CodeNotFound {
		t.Fatalf("bob's refused Decide: %v, want not_found", err)
	}

	l := openLink(t, bt, "desk")
	for i := range 8 {
		id := l.requestID()
		l.send(&boardv1.LinkRequest{Kind: &boardv1.LinkRequest_Verify{Verify: &boardv1.Verify{RequestId: id, Who: "ann@example.com", Secret: "a secret of some length"}}})
		v := l.next().GetVerified()
		limited := strings.HasPrefix(v.GetWhy(), "too many requests from this agent: at most 5 at once")
		if v.GetRequestId() != id || v.GetOk() || limited != (i >= burst) {
			t.Fatalf("verify %d: %v, want a no, limited past the burst of %d", i+1, v, burst)
		}
	}
	l.send(&boardv1.LinkRequest{Kind: &boardv1.LinkRequest_Pair{Pair: &boardv1.Pair{RequestId: l.requestID(), Thread: "t1"}}})
	if e := l.next().GetError(); e.GetCode() != boardv1.LinkErrorCode_LINK_ERROR_CODE_RESOURCE_EXHAUSTED || !strings.HasPrefix(e.GetMessage(), "pair: too many requests from this agent") {
		t.Fatalf("pair past the limit: %v, want resource_exhausted", e)
	}
	if e := l.raise(refund("run-1", 1)).GetError(); e.GetCode() != boardv1.LinkErrorCode_LINK_ERROR_CODE_RESOURCE_EXHAUSTED || !strings.HasPrefix(e.GetMessage(), "raise: too many requests from this agent") {
		t.Fatalf("raise past the limit: %v, want resource_exhausted", e)
	}
	if r := openLink(t, bt, "till").raised(refund("run-1", 1)); r.GetState() != boardv1.ApprovalState_APPROVAL_STATE_PENDING {
		t.Fatalf("another agent's raise: %v, want pending", r)
	}

	bt.Restart() // the board closes: what was left out is summarised
	if acts := auditCounts(t, bt); acts["approval.refuse"] != burst+1 || acts["verify.fail"] != burst || acts["approval.raise"] != 1 || acts["audit.limited"] != 2 {
		t.Fatalf("audit: %v, want %d refusals (ann's burst and bob's), %d verify.fail, till's raise, and two summaries", acts, burst+1, burst)
	}
	want := map[string]map[string]int{
		"ann":  {"approval.refuse": 15},
		"desk": {"verify": 3, "pair.code": 1, "approval.raise": 1},
	}
	for _, e := range auditEntries(t, bt, "audit.limited") {
		var d struct {
			LeftOut map[string]int `json:"left_out"`
			Burst   int            `json:"burst"`
		}
		if err := json.Unmarshal(e.Detail, &d); err != nil {
			t.Fatal(err)
		}
		if w, ok := want[e.Actor]; !ok || !maps.Equal(d.LeftOut, w) || d.Burst != burst {
			t.Errorf("audit.limited by %s: %s; want %v left out", e.Actor, e.Detail, want[e.Actor])
		}
		delete(want, e.Actor)
	}
}
