package board_test

import (
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"connectrpc.com/connect/v2"
	"google.golang.org/protobuf/types/known/timestamppb"

	boardv1 "github.com/symphonix/symphonix/api/symphonix/board/v1"
	"github.com/symphonix/symphonix/identity"
	"github.com/symphonix/symphonix/internal/boardtest"
)

// TestListApprovalsFilters: ListApprovals picks by rule and by when the
// approval was raised (since inclusive, until exclusive), with the other
// filters and through its pages; it refuses a bad range and a rule id too
// long, naming the field, and a page token of other filters.
func TestListApprovalsFilters(t *testing.T) {
	t.Parallel()
	// The board's clock: a minute ahead of every token minted here, and
	// moved on by the minute (ahead) between raises.
	start := time.Now().Add(time.Minute).Truncate(time.Second)
	var ahead atomic.Int64
	bt := boardtest.Start(t, boardtest.Options{Now: func() time.Time { return start.Add(time.Duration(ahead.Load()) * time.Minute) }})
	admin := approvalsClient(bt, bt.OperatorToken("root", identity.RoleAdmin))
	putRule(t, admin, &boardv1.Rule{Id: "refunds", Agent: "*", Node: "pay", Role: boardv1.Role_ROLE_APPROVER})
	putRule(t, admin, &boardv1.Rule{Id: "shipping", Agent: "*", Node: "ship", Role: boardv1.Role_ROLE_APPROVER})
	l := openLink(t, bt, "desk")
	for i := range 6 {
		ahead.Store(int64(i * 10)) // raised at start, +10 min, … +50 min
		r := refund(fmt.Sprint("run-", i), i)
		if i%2 == 1 {
			r.Node = "ship"
		}
		l.raised(r)
	}
	runsOf := func(req *boardv1.ListApprovalsRequest) string {
		t.Helper()
		var got []string
		for {
			res, err := admin.ListApprovals(t.Context(), req)
			if err != nil {
				t.Fatalf("ListApprovals(%v): %v", req, err)
			}
			for _, a := range res.GetApprovals() {
				got = append(got, a.GetRun())
			}
			if res.GetNextPageToken() == "" {
				return strings.Join(got, " ")
			}
			req.PageToken = res.GetNextPageToken()
		}
	}
	at := func(min int) *timestamppb.Timestamp {
		return timestamppb.New(start.Add(time.Duration(min) * time.Minute))
	}
	for _, tc := range []struct {
		name string
		req  *boardv1.ListApprovalsRequest
		want string
	}{
		{"a rule", &boardv1.ListApprovalsRequest{RuleId: "shipping"}, "run-5 run-3 run-1"},
		{"since, inclusive", &boardv1.ListApprovalsRequest{Since: at(30)}, "run-5 run-4 run-3"},
		{"until, exclusive", &boardv1.ListApprovalsRequest{Until: at(20)}, "run-1 run-0"},
		{"a range and a rule, a page at a time", &boardv1.ListApprovalsRequest{RuleId: "refunds", Since: at(10), Until: at(50), PageSize: 1}, "run-4 run-2"},
		{"an agent that raised none", &boardv1.ListApprovalsRequest{RuleId: "refunds", Agent: "other"}, ""},
	} {
		if got := runsOf(tc.req); got != tc.want {
			t.Errorf("%s: %q, want %q", tc.name, got, tc.want)
		}
	}
	first, err := admin.ListApprovals(t.Context(), &boardv1.ListApprovalsRequest{RuleId: "refunds", PageSize: 1})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		req  *boardv1.ListApprovalsRequest
		want string
	}{
		{"until before since", &boardv1.ListApprovalsRequest{Since: at(20), Until: at(10)}, "until: "},
		{"until equal to since", &boardv1.ListApprovalsRequest{Since: at(20), Until: at(20)}, "until: "},
		{"a rule id too long", &boardv1.ListApprovalsRequest{RuleId: strings.Repeat("r", 65)}, "rule_id: 65 bytes"},
		{"a token of other filters", &boardv1.ListApprovalsRequest{RuleId: "shipping", PageSize: 1, PageToken: first.GetNextPageToken()}, "page_token: "},
	} {
		if _, err := admin.ListApprovals(t.Context(), tc.req); connect.CodeOf(err) != connect.CodeInvalidArgument || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want invalid_argument naming %q", tc.name, err, tc.want)
		}
	}
}
