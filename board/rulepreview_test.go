package board_test

import (
	"fmt"
	"strings"
	"testing"

	"connectrpc.com/connect/v2"
	"github.com/google/go-cmp/cmp"
	"google.golang.org/protobuf/testing/protocmp"

	boardv1 "github.com/symphonix/symphonix/api/symphonix/board/v1"
	"github.com/symphonix/symphonix/identity"
	"github.com/symphonix/symphonix/internal/boardtest"
)

// TestRulePreview: a preview lists the agents a rule's pattern matches and
// the nodes approvals came from, with the rule that governs each today and
// whether the previewed one would, and writes nothing.
func TestRulePreview(t *testing.T) {
	t.Parallel()
	testRulePreview(t, boardtest.Options{})
}

// TestRulePreviewPostgres: the same on PostgreSQL, whose GROUP BY and
// ORDER BY the preview's paged query leans on.
func TestRulePreviewPostgres(t *testing.T) {
	t.Parallel()
	testRulePreview(t, boardtest.Options{DSN: boardtest.PostgresDSN(t)})
}

func testRulePreview(t *testing.T, opts boardtest.Options) {
	bt := boardtest.Start(t, opts)
	admin := approvalsClient(bt, bt.OperatorToken("root", identity.RoleAdmin))
	raise := func(l *rawLink, run, node string) {
		t.Helper()
		r := refund(run, len(run)+len(node))
		r.Node = node
		l.raised(r)
	}
	deskA, deskB, other := openLink(t, bt, "desk-a"), openLink(t, bt, "desk-b"), openLink(t, bt, "other")
	raise(deskA, "run-1", "pay")
	raise(deskA, "run-2", "pay")
	raise(deskA, "run-3", "wire")
	raise(deskB, "run-1", "pay")
	raise(other, "run-1", "pay")

	putRule(t, admin, &boardv1.Rule{Id: "all", Agent: "*", Node: "*", Role: boardv1.Role_ROLE_APPROVER})
	putRule(t, admin, &boardv1.Rule{Id: "keep-wire", Agent: "desk-a", Node: "wire", Role: boardv1.Role_ROLE_ADMIN})
	before := listRules(t, admin)

	preview := func(r *boardv1.Rule) *boardv1.PreviewRuleResponse {
		t.Helper()
		res, err := admin.PreviewRule(t.Context(), &boardv1.PreviewRuleRequest{Rule: r})
		if err != nil {
			t.Fatalf("PreviewRule(%v): %v", r, err)
		}
		return res
	}
	got := preview(&boardv1.Rule{Agent: "desk-*", Node: "*", Role: boardv1.Role_ROLE_APPROVER})
	want := &boardv1.PreviewRuleResponse{
		Agents: []string{"desk-a", "desk-b"},
		Matches: []*boardv1.RuleMatch{
			{Agent: "desk-a", Node: "pay", GovernedBy: "all", WouldGovern: true, Approvals: 2},
			{Agent: "desk-a", Node: "wire", GovernedBy: "keep-wire", WouldGovern: false, Approvals: 1},
			{Agent: "desk-b", Node: "pay", GovernedBy: "all", WouldGovern: true, Approvals: 1},
		},
	}
	if diff := cmp.Diff(want, got, protocmp.Transform()); diff != "" {
		t.Errorf("PreviewRule(desk-*, *) (-want +got):\n%s", diff)
	}

	if diff := cmp.Diff(before, listRules(t, admin), protocmp.Transform()); diff != "" {
		t.Errorf("ListRules after a preview (-before +after):\n%s", diff)
	}

	// A rule put in the place of another: the one it replaces no longer
	// keeps anything. Without the id, the exact rule keeps desk-a's pay.
	putRule(t, admin, &boardv1.Rule{Id: "a-pay", Agent: "desk-a", Node: "pay", Role: boardv1.Role_ROLE_ADMIN})
	before = listRules(t, admin)
	for _, tt := range []struct {
		id   string
		want bool
	}{{"a-pay", true}, {"", false}, {"another", false}} {
		got := preview(&boardv1.Rule{Id: tt.id, Agent: "desk-*", Node: "pay", Role: boardv1.Role_ROLE_APPROVER})
		want := []*boardv1.RuleMatch{
			{Agent: "desk-a", Node: "pay", GovernedBy: "a-pay", WouldGovern: tt.want, Approvals: 2},
			{Agent: "desk-b", Node: "pay", GovernedBy: "all", WouldGovern: true, Approvals: 1},
		}
		if diff := cmp.Diff(want, got.GetMatches(), protocmp.Transform()); diff != "" {
			t.Errorf("PreviewRule(id %q, desk-*, pay) (-want +got):\n%s", tt.id, diff)
		}
	}

	// Checked as PutRule checks it.
	for _, tt := range []struct {
		rule  *boardv1.Rule
		field string
	}{
		{&boardv1.Rule{Agent: "desk-[", Node: "*", Role: boardv1.Role_ROLE_APPROVER}, "rule.agent: "},
		{&boardv1.Rule{Agent: "*", Node: "", Role: boardv1.Role_ROLE_APPROVER}, "rule.node: "},
		{&boardv1.Rule{Agent: "*", Node: "*"}, "rule: "},
		{nil, "rule: "},
	} {
		_, err := admin.PreviewRule(t.Context(), &boardv1.PreviewRuleRequest{Rule: tt.rule})
		var ce *connect.Error
		if connect.CodeOf(err) != connect.CodeInvalidArgument || !asConnect(err, &ce) || !strings.HasPrefix(ce.Message(), tt.field) {
			t.Errorf("PreviewRule(%v) = %v, want invalid_argument naming %q", tt.rule, err, tt.field)
		}
	}

	// Refused as PutRule refuses it: another rule has these patterns.
	_, err := admin.PreviewRule(t.Context(), &boardv1.PreviewRuleRequest{Rule: &boardv1.Rule{Agent: "desk-a", Node: "wire", Role: boardv1.Role_ROLE_APPROVER}})
	if connect.CodeOf(err) != connect.CodeAlreadyExists || !strings.Contains(err.Error(), `"keep-wire"`) {
		t.Errorf("PreviewRule(desk-a, wire) = %v, want already_exists naming keep-wire", err)
	}
	if _, err := admin.PreviewRule(t.Context(), &boardv1.PreviewRuleRequest{Rule: &boardv1.Rule{Id: "keep-wire", Agent: "desk-a", Node: "wire", Role: boardv1.Role_ROLE_ADMIN}}); err != nil {
		t.Errorf("PreviewRule(keep-wire in its own place) = %v, want no error", err)
	}

	// Admins only.
	for _, role := range []identity.Role{identity.RoleViewer, identity.RoleApprover} {
		c := approvalsClient(bt, bt.OperatorToken("someone", role))
		_, err := c.PreviewRule(t.Context(), &boardv1.PreviewRuleRequest{Rule: &boardv1.Rule{Agent: "*", Node: "*", Role: boardv1.Role_ROLE_APPROVER}})
		if connect.CodeOf(err) != connect.CodePermissionDenied {
			t.Errorf("%s: PreviewRule = %v, want permission_denied", role, err)
		}
	}

	// Nothing written.
	if diff := cmp.Diff(before, listRules(t, admin), protocmp.Transform()); diff != "" {
		t.Errorf("ListRules after previews (-before +after):\n%s", diff)
	}

	// A new rule as specific as a stored one goes after it, as PutRule
	// puts it: the older keeps desk-b's pay. In its place, it would govern.
	putRule(t, admin, &boardv1.Rule{Id: "older", Agent: "desk-?", Node: "pay", Role: boardv1.Role_ROLE_APPROVER})
	for _, tt := range []struct {
		id   string
		want bool
	}{{"", false}, {"older", true}} {
		got := preview(&boardv1.Rule{Id: tt.id, Agent: "desk-*", Node: "pay", Role: boardv1.Role_ROLE_ADMIN})
		want := []*boardv1.RuleMatch{
			{Agent: "desk-a", Node: "pay", GovernedBy: "a-pay", WouldGovern: false, Approvals: 2},
			{Agent: "desk-b", Node: "pay", GovernedBy: "older", WouldGovern: tt.want, Approvals: 1},
		}
		if diff := cmp.Diff(want, got.GetMatches(), protocmp.Transform()); diff != "" {
			t.Errorf("PreviewRule(id %q, desk-*, pay) beside desk-?'s (-want +got):\n%s", tt.id, diff)
		}
	}
}

// TestRulePreviewNoApprovals: agents the board knows are listed even when
// none has raised an approval.
func TestRulePreviewNoApprovals(t *testing.T) {
	t.Parallel()
	bt := boardtest.Start(t, boardtest.Options{})
	admin := approvalsClient(bt, bt.OperatorToken("root", identity.RoleAdmin))
	for i := range 3 {
		openLink(t, bt, fmt.Sprintf("desk-%d", i))
	}
	got, err := admin.PreviewRule(t.Context(), &boardv1.PreviewRuleRequest{Rule: &boardv1.Rule{Agent: "desk-?", Node: "*", Role: boardv1.Role_ROLE_APPROVER}})
	if err != nil {
		t.Fatal(err)
	}
	want := &boardv1.PreviewRuleResponse{Agents: []string{"desk-0", "desk-1", "desk-2"}}
	if diff := cmp.Diff(want, got, protocmp.Transform()); diff != "" {
		t.Errorf("PreviewRule(desk-?) (-want +got):\n%s", diff)
	}
}
