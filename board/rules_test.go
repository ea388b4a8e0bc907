package board_test

import (
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"connectrpc.com/connect/v2"
	"connectrpc.com/connect/v2/connecthttp"
	"github.com/google/go-cmp/cmp"
	"google.golang.org/protobuf/testing/protocmp"
	"google.golang.org/protobuf/types/known/durationpb"

	boardv1 "github.com/symphonix/symphonix/api/symphonix/board/v1"
	"github.com/symphonix/symphonix/api/symphonix/board/v1/boardv1connect"
	"github.com/symphonix/symphonix/audit"
	"github.com/symphonix/symphonix/identity"
	"github.com/symphonix/symphonix/internal/boardtest"
)

func approvalsClient(bt *boardtest.Board, token string, opts ...connecthttp.Option) boardv1connect.ApprovalServiceClient {
	return boardv1connect.NewApprovalServiceClient(bt.Client(token, opts...))
}

func putRule(t *testing.T, c boardv1connect.ApprovalServiceClient, r *boardv1.Rule) *boardv1.Rule {
	t.Helper()
	res, err := c.PutRule(t.Context(), &boardv1.PutRuleRequest{Rule: r})
	if err != nil {
		t.Fatalf("PutRule(%v): %v", r, err)
	}
	return res.GetRule()
}

func listRules(t *testing.T, c boardv1connect.ApprovalServiceClient) []*boardv1.Rule {
	t.Helper()
	res, err := c.ListRules(t.Context(), &boardv1.ListRulesRequest{})
	if err != nil {
		t.Fatalf("ListRules: %v", err)
	}
	return res.GetRules()
}

func quorum(n int32) *int32 { return &n }

// TestRuleJSONGovernsEverything: the catch-all rule's JSON, posted as it is over
// the Connect protocol, makes every agent at every node governed.
func TestRuleJSONGovernsEverything(t *testing.T) {
	t.Parallel()
	bt := boardtest.Start(t, boardtest.Options{})
	ctx := t.Context()
	for _, who := range []string{"refund-desk", "a/b", "x"} {
		if r, err := bt.Board.RuleForTest(ctx, who, "n1"); err != nil || r != nil {
			t.Fatalf("before any rule: ruleFor(%s) = %v, %v; want nil, nil", who, r, err)
		}
	}
	body := `{"rule": {"agent": "*", "node": "*", "role": "ROLE_APPROVER", "quorum": 1}}`
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, bt.URL+boardv1connect.ApprovalServicePutRuleProcedure, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+bt.OperatorToken("root", identity.RoleAdmin))
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var got struct {
		Rule struct {
			ID        string `json:"id"`
			Agent     string `json:"agent"`
			Node      string `json:"node"`
			Role      string `json:"role"`
			Quorum    int    `json:"quorum"`
			UpdatedBy string `json:"updatedBy"`
			CreatedAt string `json:"createTime"`
		} `json:"rule"`
	}
	if err := json.NewDecoder(res.Body).Decode(&got); err != nil || res.StatusCode != http.StatusOK {
		t.Fatalf("POST PutRule = %d (%v), want 200", res.StatusCode, err)
	}
	r := got.Rule
	if r.ID == "" || r.Agent != "*" || r.Node != "*" || r.Role != "ROLE_APPROVER" || r.Quorum != 1 || r.UpdatedBy != "root" || r.CreatedAt == "" {
		t.Fatalf("PutRule answered %+v, want the rule with an id, times and updatedBy root", r)
	}
	for _, c := range []struct{ agent, node string }{
		{"refund-desk", "approve"}, {"a/b", "c/d"}, {"x", ""}, {"", "n"}, {"ünïcode", "*"},
	} {
		m, err := bt.Board.RuleForTest(ctx, c.agent, c.node)
		if err != nil || m == nil || m.ID != r.ID {
			t.Errorf("ruleFor(%q, %q) = %v, %v; want rule %s", c.agent, c.node, m, err, r.ID)
		}
	}
}

// TestRuleFor pins which rule governs when several match.
func TestRuleFor(t *testing.T) {
	t.Parallel()
	bt := boardtest.Start(t, boardtest.Options{})
	c := approvalsClient(bt, bt.OperatorToken("root", identity.RoleAdmin))
	for _, r := range []*boardv1.Rule{
		{Id: "all", Agent: "*", Node: "*", Role: boardv1.Role_ROLE_APPROVER},
		{Id: "refunds-any", Agent: "refund-*", Node: "*", Role: boardv1.Role_ROLE_APPROVER},
		{Id: "refund-desk-any", Agent: "refund-desk-*", Node: "*", Role: boardv1.Role_ROLE_APPROVER},
		{Id: "refunds-pay", Agent: "refund-*", Node: "pay", Role: boardv1.Role_ROLE_ADMIN},
		{Id: "desk-any", Agent: "desk", Node: "*", Role: boardv1.Role_ROLE_APPROVER},
		{Id: "desk-pay-glob", Agent: "desk", Node: "pay-*", Role: boardv1.Role_ROLE_APPROVER},
		{Id: "desk-pay", Agent: "desk", Node: "pay-big", People: []string{"ann", "bob"}, Quorum: quorum(2)},
		{Id: "any-wire", Agent: "*", Node: "wire", Role: boardv1.Role_ROLE_ADMIN},
	} {
		putRule(t, c, r)
	}
	tests := []struct {
		agent, node string
		want        string
	}{
		{"desk", "pay-big", "desk-pay"},               // exact agent and exact node beat everything
		{"desk", "pay-small", "desk-pay-glob"},        // exact agent, glob node
		{"desk", "wire", "desk-any"},                  // exact agent beats an exact node for all agents
		{"refund-x", "pay", "refunds-pay"},            // glob agent: exact node first
		{"refund-desk-1", "pay", "refunds-pay"},       // node kind before glob length
		{"refund-desk-1", "other", "refund-desk-any"}, // the longer glob
		{"refund-x", "other", "refunds-any"},
		{"someone", "wire", "any-wire"},
		{"someone", "else", "all"},
		{"desk/sub", "pay-big", "all"}, // "*" matches a name with a slash; "desk" does not
	}
	for _, tt := range tests {
		got, err := bt.Board.RuleForTest(t.Context(), tt.agent, tt.node)
		if err != nil || got == nil || got.ID != tt.want {
			t.Errorf("ruleFor(%q, %q) = %v, %v; want %s", tt.agent, tt.node, got, err, tt.want)
		}
	}
	// ListRules is in the order ruleFor tries them.
	var ids []string
	for _, r := range listRules(t, c) {
		ids = append(ids, r.GetId())
	}
	want := []string{"desk-pay", "desk-pay-glob", "desk-any", "refunds-pay", "refund-desk-any", "refunds-any", "any-wire", "all"}
	if diff := cmp.Diff(want, ids); diff != "" {
		t.Errorf("ListRules order (-want +got):\n%s", diff)
	}
	// With the catch-all gone, an unmatched approval is not governed.
	if _, err := c.DeleteRule(t.Context(), &boardv1.DeleteRuleRequest{Id: "all"}); err != nil {
		t.Fatal(err)
	}
	if got, err := bt.Board.RuleForTest(t.Context(), "someone", "else"); err != nil || got != nil {
		t.Errorf("ruleFor(someone, else) = %v, %v; want nil, nil", got, err)
	}
}

// TestRuleRoundTrip: put, list, upsert by id, delete, over both protocols.
func TestRuleRoundTrip(t *testing.T) {
	t.Parallel()
	bt := boardtest.Start(t, boardtest.Options{})
	token := bt.OperatorToken("root", identity.RoleAdmin)
	for proto, opts := range boardtest.Protocols {
		t.Run(proto, func(t *testing.T) {
			c := approvalsClient(bt, token, opts...)
			ctx := t.Context()
			in := &boardv1.Rule{
				Agent:             "refund-" + proto,
				Node:              "pay",
				People:            []string{"ann", "bob", "cy"},
				Quorum:            quorum(2),
				TimeLimit:         durationpb.New(time.Hour),
				RequireReason:     true,
				AllowSelfApproval: true,
				Description:       "refunds need two",
			}
			put := putRule(t, c, in)
			if put.GetId() == "" || put.GetUpdatedBy() != "root" || put.GetCreateTime() == nil || !put.GetCreateTime().AsTime().Equal(put.GetUpdateTime().AsTime()) {
				t.Fatalf("PutRule = %v, want an id, root, and created = updated", put)
			}
			ignore := protocmp.IgnoreFields(&boardv1.Rule{}, "id", "create_time", "update_time", "updated_by")
			if diff := cmp.Diff(in, put, protocmp.Transform(), ignore); diff != "" {
				t.Errorf("PutRule (-sent +stored):\n%s", diff)
			}
			found := false
			for _, r := range listRules(t, c) {
				if r.GetId() == put.GetId() {
					found = true
					if diff := cmp.Diff(put, r, protocmp.Transform()); diff != "" {
						t.Errorf("ListRules (-put +listed):\n%s", diff)
					}
				}
			}
			if !found {
				t.Fatalf("ListRules: %s missing", put.GetId())
			}

			// Upsert by id: the same rule, replaced.
			up := putRule(t, c, &boardv1.Rule{Id: put.GetId(), Agent: "refund-" + proto, Node: "*", Role: boardv1.Role_ROLE_ADMIN})
			if up.GetId() != put.GetId() || up.GetRole() != boardv1.Role_ROLE_ADMIN || len(up.GetPeople()) != 0 || up.GetQuorum() != 1 || up.GetTimeLimit() != nil ||
				!up.GetCreateTime().AsTime().Equal(put.GetCreateTime().AsTime()) || up.GetUpdateTime().AsTime().Before(put.GetUpdateTime().AsTime()) {
				t.Errorf("upsert = %v, want the rule replaced under %s, created kept", up, put.GetId())
			}
			// An id nobody has yet is created under that id.
			named := putRule(t, c, &boardv1.Rule{Id: "named-" + proto, Agent: "other-" + proto, Node: "*", Role: boardv1.Role_ROLE_APPROVER})
			if named.GetId() != "named-"+proto {
				t.Errorf("PutRule with a new id = %s, want named-%s", named.GetId(), proto)
			}
			// A second rule for the same agent and node is refused.
			_, err := c.PutRule(ctx, &boardv1.PutRuleRequest{Rule: &boardv1.Rule{Agent: "other-" + proto, Node: "*", Role: boardv1.Role_ROLE_ADMIN}})
			if connect.CodeOf(err) != connect.CodeAlreadyExists {
				t.Errorf("PutRule duplicate = %v, want already_exists", err)
			}

			for _, id := range []string{put.GetId(), named.GetId()} {
				if _, err := c.DeleteRule(ctx, &boardv1.DeleteRuleRequest{Id: id}); err != nil {
					t.Fatalf("DeleteRule(%s): %v", id, err)
				}
				if _, err := c.DeleteRule(ctx, &boardv1.DeleteRuleRequest{Id: id}); connect.CodeOf(err) != connect.CodeNotFound {
					t.Errorf("DeleteRule(%s) again = %v, want not_found", id, err)
				}
			}
			for _, r := range listRules(t, c) {
				if r.GetId() == put.GetId() || r.GetId() == named.GetId() {
					t.Errorf("ListRules after delete still has %s", r.GetId())
				}
			}
		})
	}
}

// TestRuleRefused: every invalid rule is refused with invalid_argument
// naming the field.
func TestRuleRefused(t *testing.T) {
	t.Parallel()
	bt := boardtest.Start(t, boardtest.Options{})
	c := approvalsClient(bt, bt.OperatorToken("root", identity.RoleAdmin))
	ok := func(edit func(r *boardv1.Rule)) *boardv1.Rule {
		r := &boardv1.Rule{Agent: "*", Node: "*", Role: boardv1.Role_ROLE_APPROVER}
		edit(r)
		return r
	}
	tests := []struct {
		name string
		rule *boardv1.Rule
		want string // the message begins with it
	}{
		{"no rule", nil, "rule: required"},
		{"no agent", ok(func(r *boardv1.Rule) { r.Agent = "" }), "rule.agent: required"},
		{"bad agent glob", ok(func(r *boardv1.Rule) { r.Agent = "refund-[" }), "rule.agent: not a valid glob"},
		{"bad node glob", ok(func(r *boardv1.Rule) { r.Node = `x\` }), "rule.node: not a valid glob"},
		{"no node", ok(func(r *boardv1.Rule) { r.Node = "" }), "rule.node: required"},
		{"role and people", ok(func(r *boardv1.Rule) { r.People = []string{"ann"} }), "rule: give a role or people, not both"},
		{"neither role nor people", ok(func(r *boardv1.Rule) { r.Role = boardv1.Role_ROLE_UNSPECIFIED }), "rule: give a role or people"},
		{"viewer decides", ok(func(r *boardv1.Rule) { r.Role = boardv1.Role_ROLE_VIEWER }), "rule.role: must be ROLE_APPROVER or ROLE_ADMIN, not ROLE_VIEWER"},
		{"unknown role", ok(func(r *boardv1.Rule) { r.Role = 42 }), "rule.role: unknown value 42"},
		{"empty person", ok(func(r *boardv1.Rule) { r.Role, r.People = boardv1.Role_ROLE_UNSPECIFIED, []string{"ann", ""} }), "rule.people[1]: empty"},
		{"person twice", ok(func(r *boardv1.Rule) { r.Role, r.People = boardv1.Role_ROLE_UNSPECIFIED, []string{"ann", "bob", "ann"} }), "rule.people[2]:"},
		{"bad person", ok(func(r *boardv1.Rule) { r.Role, r.People = boardv1.Role_ROLE_UNSPECIFIED, []string{" ann"} }), "rule.people[0]:"},
		{"zero quorum", ok(func(r *boardv1.Rule) { r.Quorum = quorum(0) }), "rule.quorum: must be at least 1"},
		{"negative quorum", ok(func(r *boardv1.Rule) { r.Quorum = quorum(-1) }), "rule.quorum: must be at least 1"},
		{"quorum above people", ok(func(r *boardv1.Rule) {
			r.Role, r.People, r.Quorum = boardv1.Role_ROLE_UNSPECIFIED, []string{"ann"}, quorum(2)
		}), "rule.quorum:"},
		{"one person twice, in two cases", ok(func(r *boardv1.Rule) {
			r.Role, r.People, r.Quorum = boardv1.Role_ROLE_UNSPECIFIED, []string{"ann@example.com", "Ann@Example.COM"}, quorum(2)
		}), `rule.people[1]: "ann@example.com" is rule.people[0] too`},
		{"not an address", ok(func(r *boardv1.Rule) { r.Role, r.People = boardv1.Role_ROLE_UNSPECIFIED, []string{"ann@"} }), `rule.people[0]: "ann@" is not an email address`},
		{"a huge quorum", ok(func(r *boardv1.Rule) { r.Quorum = quorum(1 << 30) }), "rule.quorum: 1073741824, more than 100"},
		{"zero time limit", ok(func(r *boardv1.Rule) { r.TimeLimit = durationpb.New(0) }), "rule.time_limit: must be positive"},
		{"negative time limit", ok(func(r *boardv1.Rule) { r.TimeLimit = durationpb.New(-time.Second) }), "rule.time_limit: must be positive"},
		{"huge time limit", ok(func(r *boardv1.Rule) { r.TimeLimit = durationpb.New(400 * 24 * time.Hour) }), "rule.time_limit: at most"},
		{"malformed time limit", ok(func(r *boardv1.Rule) { r.TimeLimit = &durationpb.Duration{Seconds: 1, Nanos: -1} }), "rule.time_limit:"},
		{"bad id", ok(func(r *boardv1.Rule) { r.Id = "a b" }), "rule.id:"},
		{"long description", ok(func(r *boardv1.Rule) { r.Description = strings.Repeat("x", 1001) }), "rule.description:"},
	}
	for _, tt := range tests {
		_, err := c.PutRule(t.Context(), &boardv1.PutRuleRequest{Rule: tt.rule})
		var ce *connect.Error
		if connect.CodeOf(err) != connect.CodeInvalidArgument || !asConnect(err, &ce) || !strings.HasPrefix(ce.Message(), tt.want) {
			t.Errorf("%s: PutRule = %v, want invalid_argument %q…", tt.name, err, tt.want)
		}
	}
	if _, err := c.DeleteRule(t.Context(), &boardv1.DeleteRuleRequest{}); connect.CodeOf(err) != connect.CodeInvalidArgument {
		t.Errorf("DeleteRule without id = %v, want invalid_argument", err)
	}
	if rules := listRules(t, c); len(rules) != 0 {
		t.Errorf("after refusals ListRules = %v, want none", rules)
	}
}

func asConnect(err error, ce **connect.Error) bool { return errors.As(err, ce) }

// TestRuleAccess: only an admin changes rules; a viewer or approver reads
// them; an agent token is not an operator at all.
func TestRuleAccess(t *testing.T) {
	t.Parallel()
	bt := boardtest.Start(t, boardtest.Options{})
	admin := approvalsClient(bt, bt.OperatorToken("root", identity.RoleAdmin))
	existing := putRule(t, admin, &boardv1.Rule{Agent: "*", Node: "*", Role: boardv1.Role_ROLE_APPROVER})
	for proto, opts := range boardtest.Protocols {
		for _, role := range []identity.Role{identity.RoleViewer, identity.RoleApprover} {
			c := approvalsClient(bt, bt.OperatorToken("someone", role), opts...)
			_, err := c.PutRule(t.Context(), &boardv1.PutRuleRequest{Rule: &boardv1.Rule{Agent: "x", Node: "*", Role: boardv1.Role_ROLE_APPROVER}})
			if connect.CodeOf(err) != connect.CodePermissionDenied {
				t.Errorf("%s %s: PutRule = %v, want permission_denied", proto, role, err)
			}
			_, err = c.DeleteRule(t.Context(), &boardv1.DeleteRuleRequest{Id: existing.GetId()})
			if connect.CodeOf(err) != connect.CodePermissionDenied {
				t.Errorf("%s %s: DeleteRule = %v, want permission_denied", proto, role, err)
			}
			if rules := listRules(t, c); len(rules) != 1 || rules[0].GetId() != existing.GetId() {
				t.Errorf("%s %s: ListRules = %v, want the one rule", proto, role, rules)
			}
		}
		agent := approvalsClient(bt, bt.AgentToken("refund-desk"), opts...)
		if _, err := agent.ListRules(t.Context(), &boardv1.ListRulesRequest{}); connect.CodeOf(err) != connect.CodeUnauthenticated {
			t.Errorf("%s agent: ListRules = %v, want unauthenticated", proto, err)
		}
		if _, err := agent.PutRule(t.Context(), &boardv1.PutRuleRequest{Rule: &boardv1.Rule{Agent: "*", Node: "x", Role: boardv1.Role_ROLE_APPROVER}}); connect.CodeOf(err) != connect.CodeUnauthenticated {
			t.Errorf("%s agent: PutRule = %v, want unauthenticated", proto, err)
		}
	}
}

// TestRuleAudited: every put and delete is in the audit log, by the
// caller, with the rule's fields, and the chain verifies.
func TestRuleAudited(t *testing.T) {
	t.Parallel()
	bt := boardtest.Start(t, boardtest.Options{})
	c := approvalsClient(bt, bt.OperatorToken("root", identity.RoleAdmin))
	r := putRule(t, c, &boardv1.Rule{Agent: "desk", Node: "pay", People: []string{"ann", "bob"}, TimeLimit: durationpb.New(90 * time.Minute)})
	putRule(t, c, &boardv1.Rule{Id: r.GetId(), Agent: "desk", Node: "pay", Role: boardv1.Role_ROLE_ADMIN, RequireReason: true})
	if _, err := c.DeleteRule(t.Context(), &boardv1.DeleteRuleRequest{Id: r.GetId()}); err != nil {
		t.Fatal(err)
	}
	// A refused change writes nothing.
	if _, err := c.PutRule(t.Context(), &boardv1.PutRuleRequest{Rule: &boardv1.Rule{Agent: "[", Node: "*", Role: boardv1.Role_ROLE_ADMIN}}); err == nil {
		t.Fatal("bad rule accepted")
	}
	trail := audit.New(bt.Store)
	entries, err := trail.List(t.Context(), 0, 1000)
	if err != nil {
		t.Fatal(err)
	}
	type seen struct{ Actor, Action, Subject, Detail string }
	var got []seen
	for _, e := range entries {
		if strings.HasPrefix(e.Action, "rule.") {
			got = append(got, seen{e.Actor, e.Action, e.Subject, string(e.Detail)})
		}
	}
	id := r.GetId()
	want := []seen{
		{"root", "rule.put", id, `{"agent":"desk","node":"pay","people":["ann","bob"],"quorum":1,"require_reason":false,"time_limit":"5400s"}`},
		{"root", "rule.put", id, `{"agent":"desk","node":"pay","quorum":1,"require_reason":true,"role":"admin"}`},
		{"root", "rule.delete", id, `{"agent":"desk","node":"pay","quorum":1,"require_reason":true,"role":"admin"}`},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("rule audit entries (-want +got):\n%s", diff)
	}
	v, err := trail.Verify(t.Context())
	if err != nil || !v.OK() || v.Entries != int64(len(entries)) {
		t.Errorf("Verify = %+v, %v; want OK over %d entries", v, err, len(entries))
	}
}

// TestRulesSurviveRestart: rules live in the store, not in the board.
func TestRulesSurviveRestart(t *testing.T) {
	t.Parallel()
	bt := boardtest.Start(t, boardtest.Options{})
	token := bt.OperatorToken("root", identity.RoleAdmin)
	put := putRule(t, approvalsClient(bt, token), &boardv1.Rule{Agent: "desk", Node: "*", People: []string{"ann"}, TimeLimit: durationpb.New(time.Hour)})
	bt.Restart()
	rules := listRules(t, approvalsClient(bt, token))
	if len(rules) != 1 {
		t.Fatalf("after restart ListRules = %v, want one rule", rules)
	}
	if diff := cmp.Diff(put, rules[0], protocmp.Transform()); diff != "" {
		t.Errorf("after restart (-before +after):\n%s", diff)
	}
	if got, err := bt.Board.RuleForTest(t.Context(), "desk", "n"); err != nil || got == nil || got.ID != put.GetId() {
		t.Errorf("after restart ruleFor(desk, n) = %v, %v; want %s", got, err, put.GetId())
	}
}
