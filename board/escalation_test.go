package board_test

import (
	"strings"
	"testing"
	"time"

	"connectrpc.com/connect/v2"
	"google.golang.org/protobuf/types/known/durationpb"

	boardv1 "github.com/symphonix/symphonix/api/symphonix/board/v1"
	"github.com/symphonix/symphonix/identity"
	"github.com/symphonix/symphonix/internal/boardtest"
)

// TestEscalation: under a rule only admins decide, escalating to approvers
// after 300 ms, an approver is refused at first and may decide once the
// step is reached; with two boards of one store looking for due steps
// every 20 ms, the step is reached, audited and announced once.
func TestEscalation(t *testing.T) {
	t.Parallel()
	dsn := boardtest.PostgresDSN(t)
	opts := boardtest.Options{DSN: dsn, RevocationPoll: 20 * time.Millisecond}
	a, b := boardtest.Start(t, opts), boardtest.Start(t, opts)
	admin := approvalsClient(a, a.OperatorToken("root", identity.RoleAdmin))
	putRule(t, admin, &boardv1.Rule{Id: "big", Agent: "*", Node: "*", Role: boardv1.Role_ROLE_ADMIN, TimeLimit: durationpb.New(time.Minute),
		Escalation: []*boardv1.EscalationStep{{After: durationpb.New(300 * time.Millisecond), Role: boardv1.Role_ROLE_APPROVER}}})
	w := watchApprovals(t, approvalsClient(b, b.OperatorToken("vic", identity.RoleViewer)), &boardv1.WatchApprovalsRequest{History: ptr(int32(0))})
	l := openLink(t, a, "desk")
	raised := l.raised(refund("run-1", 1))
	bob := approver(b, "bob")
	if _, err := decide(bob, t, raised.GetApprovalId(), "yes", digestOf(1), ""); connect.CodeOf(err) != connect.CodePermissionDenied {
		t.Fatalf("an approver before the escalation: %v, want permission_denied", err)
	}
	for {
		m := w.next()
		if m.GetEvent() == boardv1.ApprovalEvent_APPROVAL_EVENT_ESCALATED && m.GetApproval().GetId() == raised.GetApprovalId() {
			if m.GetApproval().GetEscalationLevel() != 1 {
				t.Fatalf("escalated: %v, want level 1", m.GetApproval())
			}
			break
		}
	}
	if _, err := decide(bob, t, raised.GetApprovalId(), "yes", digestOf(1), ""); err != nil {
		t.Fatalf("an approver after the escalation: %v", err)
	}
	time.Sleep(100 * time.Millisecond) // both boards had passes after the step
	var steps []string
	for _, e := range auditEntries(t, a, "approval.escalate") {
		steps = append(steps, e.Subject)
	}
	if len(steps) != 1 || steps[0] != raised.GetApprovalId() {
		t.Errorf("approval.escalate entries: %v, want one for %s", steps, raised.GetApprovalId())
	}
}

// TestEscalationRefused: a rule's escalation is checked, naming the step
// and field at fault.
func TestEscalationRefused(t *testing.T) {
	t.Parallel()
	bt := boardtest.Start(t, boardtest.Options{})
	admin := approvalsClient(bt, bt.OperatorToken("root", identity.RoleAdmin))
	step := func(after time.Duration, role boardv1.Role, people ...string) *boardv1.EscalationStep {
		return &boardv1.EscalationStep{After: durationpb.New(after), Role: role, People: people}
	}
	for name, tc := range map[string]struct {
		steps []*boardv1.EscalationStep
		limit time.Duration
		says  string
	}{
		"no after":       {[]*boardv1.EscalationStep{{Role: boardv1.Role_ROLE_APPROVER}}, 0, "rule.escalation[0].after: want a duration above zero"},
		"not later":      {[]*boardv1.EscalationStep{step(time.Hour, boardv1.Role_ROLE_APPROVER), step(time.Minute, boardv1.Role_ROLE_ADMIN)}, 0, "rule.escalation[1].after: 1m0s, want later than the step before"},
		"past the limit": {[]*boardv1.EscalationStep{step(2*time.Hour, boardv1.Role_ROLE_APPROVER)}, time.Hour, "want before the rule's time_limit"},
		"nobody":         {[]*boardv1.EscalationStep{step(time.Minute, boardv1.Role_ROLE_UNSPECIFIED)}, 0, "rule.escalation[0]: give a role or people"},
		"both":           {[]*boardv1.EscalationStep{step(time.Minute, boardv1.Role_ROLE_ADMIN, "ann@example.com")}, 0, "give a role or people, not both"},
		"not an address": {[]*boardv1.EscalationStep{step(time.Minute, boardv1.Role_ROLE_UNSPECIFIED, "ann@")}, 0, "rule.escalation[0].people[0]"},
		"viewer":         {[]*boardv1.EscalationStep{step(time.Minute, boardv1.Role_ROLE_VIEWER)}, 0, "rule.escalation[0].role"},
		"too many steps": {[]*boardv1.EscalationStep{step(1*time.Minute, 1), step(2*time.Minute, 1), step(3*time.Minute, 1), step(4*time.Minute, 1), step(5*time.Minute, 1), step(6*time.Minute, 1)}, 0, "rule.escalation: 6 steps, at most 5"},
	} {
		r := &boardv1.Rule{Agent: "*", Node: "*", Role: boardv1.Role_ROLE_APPROVER, Escalation: tc.steps}
		if tc.limit > 0 {
			r.TimeLimit = durationpb.New(tc.limit)
		}
		_, err := admin.PutRule(t.Context(), &boardv1.PutRuleRequest{Rule: r})
		if connect.CodeOf(err) != connect.CodeInvalidArgument || !strings.Contains(err.Error(), tc.says) {
			t.Errorf("%s: %v, want invalid_argument saying %q", name, err, tc.says)
		}
	}
	// Put with steps, then again without: the steps are gone.
	with := &boardv1.Rule{Id: "esc", Agent: "*", Node: "*", Role: boardv1.Role_ROLE_APPROVER,
		Escalation: []*boardv1.EscalationStep{step(time.Minute, boardv1.Role_ROLE_ADMIN)}}
	if res, err := admin.PutRule(t.Context(), &boardv1.PutRuleRequest{Rule: with}); err != nil || len(res.GetRule().GetEscalation()) != 1 {
		t.Fatalf("PutRule with a step: %v, %v", res, err)
	}
	with.Escalation = nil
	if res, err := admin.PutRule(t.Context(), &boardv1.PutRuleRequest{Rule: with}); err != nil || len(res.GetRule().GetEscalation()) != 0 {
		t.Errorf("PutRule without steps: %v, %v; want the steps gone", res, err)
	}
}
