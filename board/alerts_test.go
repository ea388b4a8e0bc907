package board_test

import (
	"strings"
	"testing"
	"time"

	"connectrpc.com/connect/v2"
	"github.com/google/go-cmp/cmp"
	"google.golang.org/protobuf/types/known/durationpb"

	boardv1 "github.com/symphonix/symphonix/api/symphonix/board/v1"
	"github.com/symphonix/symphonix/api/symphonix/board/v1/boardv1connect"
	"github.com/symphonix/symphonix/audit"
	"github.com/symphonix/symphonix/identity"
	"github.com/symphonix/symphonix/internal/boardtest"
)

func alertsClient(bt *boardtest.Board, token string) boardv1connect.AlertServiceClient {
	return boardv1connect.NewAlertServiceClient(bt.Client(token))
}

func cycleRule(id, agent string, window time.Duration) *boardv1.AlertRule {
	r := &boardv1.AlertRule{Id: id, Agent: agent, Condition: boardv1.AlertCondition_ALERT_CONDITION_DELEGATION_CYCLE}
	if window > 0 {
		r.Window = durationpb.New(window)
	}
	return r
}

// TestAlertRuleValidation: each bad rule is refused with an
// invalid_argument naming its field; a viewer cannot put one.
func TestAlertRuleValidation(t *testing.T) {
	t.Parallel()
	bt := boardtest.Start(t, boardtest.Options{})
	c := alertsClient(bt, bt.OperatorToken("root", identity.RoleAdmin))
	for _, tc := range []struct {
		name, field string
		r           *boardv1.AlertRule
	}{
		{"no rule", "rule:", nil},
		{"id shape", "rule.id", cycleRule("a b", "*", 0)},
		{"id long", "rule.id", cycleRule(strings.Repeat("x", 65), "*", 0)},
		{"agent missing", "rule.agent", cycleRule("", "", 0)},
		{"agent glob", "rule.agent", cycleRule("", "[", 0)},
		{"condition missing", "rule.condition", &boardv1.AlertRule{Agent: "*"}},
		{"condition unknown", "rule.condition", &boardv1.AlertRule{Agent: "*", Condition: 9}},
		{"window short", "rule.window", cycleRule("", "*", 30*time.Second)},
		{"window long", "rule.window", cycleRule("", "*", 31*24*time.Hour)},
		{"description long", "rule.description", &boardv1.AlertRule{Agent: "*", Condition: boardv1.AlertCondition_ALERT_CONDITION_DELEGATION_CYCLE, Description: strings.Repeat("d", 1001)}},
	} {
		_, err := c.PutAlertRule(t.Context(), &boardv1.PutAlertRuleRequest{Rule: tc.r})
		if connect.CodeOf(err) != connect.CodeInvalidArgument || !strings.Contains(err.Error(), tc.field) {
			t.Errorf("%s: %v, want invalid_argument naming %s", tc.name, err, tc.field)
		}
	}
	res, err := c.PutAlertRule(t.Context(), &boardv1.PutAlertRuleRequest{Rule: cycleRule("", "*", 0)})
	if err != nil {
		t.Fatal(err)
	}
	if r := res.GetRule(); r.GetId() == "" || r.GetWindow().AsDuration() != 24*time.Hour || r.GetUpdatedBy() != "root" || r.GetCreateTime() == nil {
		t.Errorf("stored rule %v, want an id, 24h, root, times", r)
	}
	viewer := alertsClient(bt, bt.OperatorToken("vic", identity.RoleViewer))
	if _, err := viewer.PutAlertRule(t.Context(), &boardv1.PutAlertRuleRequest{Rule: cycleRule("v", "*", 0)}); connect.CodeOf(err) != connect.CodePermissionDenied {
		t.Errorf("viewer PutAlertRule: %v, want permission_denied", err)
	}
	if _, err := viewer.DeleteAlertRule(t.Context(), &boardv1.DeleteAlertRuleRequest{Id: res.GetRule().GetId()}); connect.CodeOf(err) != connect.CodePermissionDenied {
		t.Errorf("viewer DeleteAlertRule: %v, want permission_denied", err)
	}
	if l, err := viewer.ListAlertRules(t.Context(), &boardv1.ListAlertRulesRequest{}); err != nil || len(l.GetRules()) != 1 {
		t.Errorf("viewer ListAlertRules = %v %v, want the one rule", l, err)
	}
	if _, err := c.DeleteAlertRule(t.Context(), &boardv1.DeleteAlertRuleRequest{Id: "nope"}); connect.CodeOf(err) != connect.CodeNotFound {
		t.Errorf("DeleteAlertRule(nope): %v, want not_found", err)
	}
}

// TestAlertRuleLimit: at most 100 rules; one more is refused, one put
// again in its own place is not.
func TestAlertRuleLimit(t *testing.T) {
	t.Parallel()
	bt := boardtest.Start(t, boardtest.Options{})
	c := alertsClient(bt, bt.OperatorToken("root", identity.RoleAdmin))
	for range 100 {
		if _, err := c.PutAlertRule(t.Context(), &boardv1.PutAlertRuleRequest{Rule: cycleRule("", "*", 0)}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := c.PutAlertRule(t.Context(), &boardv1.PutAlertRuleRequest{Rule: cycleRule("", "*", 0)}); connect.CodeOf(err) != connect.CodeResourceExhausted {
		t.Errorf("the 101st rule: %v, want resource_exhausted", err)
	}
	l, err := c.ListAlertRules(t.Context(), &boardv1.ListAlertRulesRequest{})
	if err != nil || len(l.GetRules()) != 100 {
		t.Fatalf("ListAlertRules: %d %v, want 100", len(l.GetRules()), err)
	}
	if _, err := c.PutAlertRule(t.Context(), &boardv1.PutAlertRuleRequest{Rule: cycleRule(l.GetRules()[0].GetId(), "desk", 0)}); err != nil {
		t.Errorf("a rule put again at the limit: %v", err)
	}
}

// TestAlertRuleAudited: put and delete are in the audit log, by the
// caller, with the rule's fields.
func TestAlertRuleAudited(t *testing.T) {
	t.Parallel()
	bt := boardtest.Start(t, boardtest.Options{})
	c := alertsClient(bt, bt.OperatorToken("root", identity.RoleAdmin))
	if _, err := c.PutAlertRule(t.Context(), &boardv1.PutAlertRuleRequest{Rule: cycleRule("loops", "desk-*", time.Hour)}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.DeleteAlertRule(t.Context(), &boardv1.DeleteAlertRuleRequest{Id: "loops"}); err != nil {
		t.Fatal(err)
	}
	entries, err := audit.New(bt.Store).List(t.Context(), 0, 1000)
	if err != nil {
		t.Fatal(err)
	}
	type seen struct{ Actor, Action, Subject, Detail string }
	var got []seen
	for _, e := range entries {
		if strings.HasPrefix(e.Action, "alert_rule.") {
			got = append(got, seen{e.Actor, e.Action, e.Subject, string(e.Detail)})
		}
	}
	d := `{"agent":"desk-*","condition":"delegation_cycle","window":"3600s"}`
	want := []seen{{"root", "alert_rule.put", "loops", d}, {"root", "alert_rule.delete", "loops", d}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("alert rule audit entries (-want +got):\n%s", diff)
	}
}

// TestListAlerts: a rule fires for an agent that reported a cycle within
// its window, is quiet for one announcing delegation-cycle that reported
// none, and cannot tell for one that does not announce it; a cycle older
// than the window does not fire.
func TestListAlerts(t *testing.T) {
	t.Parallel()
	clk := &clock{}
	bt := boardtest.Start(t, boardtest.Options{Now: clk.Now})
	c := alertsClient(bt, bt.OperatorToken("root", identity.RoleAdmin))
	for _, r := range []*boardv1.AlertRule{cycleRule("all", "*", time.Hour), cycleRule("day", "loop*", 0)} {
		if _, err := c.PutAlertRule(t.Context(), &boardv1.PutAlertRuleRequest{Rule: r}); err != nil {
			t.Fatal(err)
		}
	}
	loop := runsLink(t, bt, "loopy", delegCaps...)
	runsLink(t, bt, "calm", delegCaps...)
	runsLink(t, bt, "older", "runs", "live-runs", "delegation")
	loop.send(startOf("r", 1, ""))
	loop.send(failureOf("r", 2, cycle(1)))
	loop.ping(1)
	agents := bt.Agents(bt.OperatorToken("vic", identity.RoleViewer))
	boardtest.Eventually(t, 5*time.Second, "loopy's cycle", func() bool { return cyclesOf(t, agents, "loopy").GetCount() == 1 })

	viewer := alertsClient(bt, bt.OperatorToken("vic", identity.RoleViewer))
	list := func(req *boardv1.ListAlertsRequest) []string {
		t.Helper()
		var out []string
		for {
			res, err := viewer.ListAlerts(t.Context(), req)
			if err != nil {
				t.Fatal(err)
			}
			for _, a := range res.GetAlerts() {
				if a.GetReason() == "" {
					t.Errorf("alert %v has no reason", a)
				}
				if a.GetState() == boardv1.AlertState_ALERT_STATE_FIRING && (a.GetCount() != 1 || a.GetLastTime() == nil) {
					t.Errorf("firing alert %v, want count 1 and a last time", a)
				}
				out = append(out, a.GetRuleId()+"/"+a.GetAgent()+"="+strings.TrimPrefix(a.GetState().String(), "ALERT_STATE_"))
			}
			if req.PageToken = res.GetNextPageToken(); req.PageToken == "" {
				return out
			}
		}
	}
	want := []string{"all/calm=QUIET", "all/loopy=FIRING", "all/older=CANNOT_TELL", "day/loopy=FIRING"}
	if got := list(&boardv1.ListAlertsRequest{IncludeQuiet: true, PageSize: 1}); !cmp.Equal(got, want) {
		t.Errorf("ListAlerts(quiet too, pages of 1) = %v, want %v", got, want)
	}
	want = []string{"all/loopy=FIRING", "all/older=CANNOT_TELL", "day/loopy=FIRING"}
	if got := list(&boardv1.ListAlertsRequest{}); !cmp.Equal(got, want) {
		t.Errorf("ListAlerts() = %v, want %v", got, want)
	}
	if got := list(&boardv1.ListAlertsRequest{RuleId: "day", Agent: "loopy"}); !cmp.Equal(got, []string{"day/loopy=FIRING"}) {
		t.Errorf("ListAlerts(day, loopy) = %v", got)
	}
	// Two hours on: past the hour of "all", within the day of "day".
	clk.add(2 * time.Hour)
	want = []string{"all/calm=QUIET", "all/loopy=QUIET", "all/older=CANNOT_TELL", "day/loopy=FIRING"}
	if got := list(&boardv1.ListAlertsRequest{IncludeQuiet: true}); !cmp.Equal(got, want) {
		t.Errorf("ListAlerts two hours on = %v, want %v", got, want)
	}
}
