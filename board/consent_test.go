package board_test

import (
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"connectrpc.com/connect/v2"
	"google.golang.org/protobuf/types/known/durationpb"

	boardv1 "github.com/symphonix/symphonix/api/symphonix/board/v1"
	"github.com/symphonix/symphonix/identity"
	"github.com/symphonix/symphonix/internal/boardtest"
	"github.com/symphonix/symphonix/receipts"
)

// yesWith says yes to approval id with standing consent terms.
func yesWith(t *testing.T, bt *boardtest.Board, who, id string, d int, terms *boardv1.StandingConsent) error {
	t.Helper()
	_, err := approver(bt, who).Decide(t.Context(), &boardv1.DecideRequest{Id: id, Say: boardv1.Say_SAY_YES, Digest: digestOf(d), Consent: terms})
	return err
}

// TestStandingConsent: a yes with standing consent for two uses approves,
// at their raise, the next two operations of the same agent with the same
// digest — by its maker, with a receipt naming the consent — and not a
// third, nor one with another digest; a revoked consent approves nothing
// more; and a consent is refused with a no, under a quorum above one,
// under a rule that forbids it, and above the rule's amount, the yes not
// recorded either.
func TestStandingConsent(t *testing.T) {
	t.Parallel()
	bt, admin := decideBoard(t, &boardv1.Rule{Id: "refunds", Agent: "*", Node: "*", Role: boardv1.Role_ROLE_APPROVER, StandingConsentMaxAmount: 10000},
		boardtest.Options{})
	l := openLink(t, bt, "desk")
	first := l.raised(refund("run-1", 1))
	if err := yesWith(t, bt, "ann", first.GetApprovalId(), 1, &boardv1.StandingConsent{Uses: 2}); err != nil {
		t.Fatal(err)
	}
	if d, _ := l.nextDecision(within); d.GetSay() != boardv1.Say_SAY_YES || d.GetConsentId() != "" {
		t.Fatalf("the yes itself: %v, want ann's yes, no consent", d)
	}
	res, err := admin.ListConsents(t.Context(), &boardv1.ListConsentsRequest{Agent: "desk"})
	if err != nil || len(res.GetConsents()) != 1 {
		t.Fatalf("ListConsents: %v, %v", res, err)
	}
	c := res.GetConsents()[0]
	if c.GetState() != "active" || c.GetUsesAllowed() != 2 || c.GetUses() != 0 || c.GetCreatedBy() != "ann" || c.GetDigest() != digestOf(1) || c.GetRuleId() != "refunds" {
		t.Fatalf("consent: %v", c)
	}
	keys := receiptKeys(t, bt)
	for i, run := range []string{"run-2", "run-3"} {
		r := l.raised(refund(run, 1))
		d := r.GetDecision()
		if r.GetState() != boardv1.ApprovalState_APPROVAL_STATE_APPROVED || d.GetSay() != boardv1.Say_SAY_YES || d.GetConsentId() != c.GetId() || strings.Join(d.GetWho(), ",") != "ann" {
			t.Fatalf("raise %d of the consented digest: %v, want approved at once by ann's consent", i+1, r)
		}
		rc, err := receipts.Verify(d.GetReceipt(), keys)
		if err != nil || rc.Consent != c.GetId() || rc.Binds(r.GetApprovalId(), run, "pay", digestOf(1), "yes") != nil {
			t.Errorf("receipt of the consented yes: %+v, %v; want it to name consent %s", rc, err, c.GetId())
		}
	}
	if r := l.raised(refund("run-4", 1)); r.GetState() != boardv1.ApprovalState_APPROVAL_STATE_PENDING {
		t.Errorf("a third raise of a consent of two uses: %v, want pending", r)
	}
	if r := l.raised(refund("run-5", 2)); r.GetState() != boardv1.ApprovalState_APPROVAL_STATE_PENDING {
		t.Errorf("another digest (another amount): %v, want pending", r)
	}
	res, _ = admin.ListConsents(t.Context(), &boardv1.ListConsentsRequest{Agent: "desk"})
	if c := res.GetConsents()[0]; c.GetState() != "used" || c.GetUses() != 2 {
		t.Errorf("consent after its uses: %v, want used, 2", c)
	}
	boardtest.Eventually(t, within, "the consent's creation audited", func() bool {
		return auditCounts(t, bt)["consent.create"] == 1
	})

	// A consent for an hour, revoked: the next raise waits for people.
	second := l.raised(refund("run-6", 3))
	if err := yesWith(t, bt, "ann", second.GetApprovalId(), 3, &boardv1.StandingConsent{Duration: durationpb.New(time.Hour)}); err != nil {
		t.Fatal(err)
	}
	l.nextDecision(within)
	if r := l.raised(refund("run-7", 3)); r.GetState() != boardv1.ApprovalState_APPROVAL_STATE_APPROVED {
		t.Fatalf("a raise under the hour's consent: %v, want approved", r)
	}
	res, _ = admin.ListConsents(t.Context(), &boardv1.ListConsentsRequest{Agent: "desk", ActiveOnly: true})
	if len(res.GetConsents()) != 1 {
		t.Fatalf("active consents: %v, want the hour's", res)
	}
	viewer := approvalsClient(bt, bt.OperatorToken("vic", identity.RoleViewer))
	if _, err := viewer.RevokeConsent(t.Context(), &boardv1.RevokeConsentRequest{Id: res.GetConsents()[0].GetId()}); connect.CodeOf(err) != connect.CodePermissionDenied {
		t.Errorf("a viewer's RevokeConsent: %v, want permission_denied", err)
	}
	if _, err := approver(bt, "bob").RevokeConsent(t.Context(), &boardv1.RevokeConsentRequest{Id: res.GetConsents()[0].GetId(), Reason: "not without asking"}); err != nil {
		t.Fatalf("RevokeConsent by another approver the rule lets decide: %v", err)
	}
	if r := l.raised(refund("run-8", 3)); r.GetState() != boardv1.ApprovalState_APPROVAL_STATE_PENDING {
		t.Errorf("a raise after the revocation: %v, want pending", r)
	}
	boardtest.Eventually(t, within, "the revocation audited", func() bool {
		return auditCounts(t, bt)["consent.revoke"] == 1
	})

	// Refusals: nothing recorded, the approval still pending.
	p := l.raised(refund("run-9", 9))
	for name, tc := range map[string]struct {
		req  *boardv1.DecideRequest
		code connect.Code
		says string
	}{
		"with a no":     {&boardv1.DecideRequest{Id: p.GetApprovalId(), Say: boardv1.Say_SAY_NO, Digest: digestOf(9), Consent: &boardv1.StandingConsent{Uses: 1}}, connect.CodeInvalidArgument, "consent: only with SAY_YES"},
		"no terms":      {&boardv1.DecideRequest{Id: p.GetApprovalId(), Say: boardv1.Say_SAY_YES, Digest: digestOf(9), Consent: &boardv1.StandingConsent{}}, connect.CodeInvalidArgument, "consent: want a duration"},
		"too long":      {&boardv1.DecideRequest{Id: p.GetApprovalId(), Say: boardv1.Say_SAY_YES, Digest: digestOf(9), Consent: &boardv1.StandingConsent{Duration: durationpb.New(200 * time.Hour)}}, connect.CodeInvalidArgument, "consent.duration:"},
		"too many uses": {&boardv1.DecideRequest{Id: p.GetApprovalId(), Say: boardv1.Say_SAY_YES, Digest: digestOf(9), Consent: &boardv1.StandingConsent{Uses: 5000}}, connect.CodeInvalidArgument, "consent.uses:"},
	} {
		if _, err := approver(bt, "ann").Decide(t.Context(), tc.req); connect.CodeOf(err) != tc.code || !strings.Contains(err.Error(), tc.says) {
			t.Errorf("%s: %v, want %s saying %q", name, err, tc.code, tc.says)
		}
	}
	putRule(t, admin, &boardv1.Rule{Id: "refunds", Agent: "*", Node: "*", Role: boardv1.Role_ROLE_APPROVER, StandingConsentMaxAmount: 1000})
	if err := yesWith(t, bt, "ann", p.GetApprovalId(), 9, &boardv1.StandingConsent{Uses: 1}); connect.CodeOf(err) != connect.CodeFailedPrecondition || !strings.Contains(err.Error(), "above rule \"refunds\"'s standing consent limit") {
		t.Errorf("consent above the rule's amount: %v, want failed_precondition", err)
	}
	putRule(t, admin, &boardv1.Rule{Id: "refunds", Agent: "*", Node: "*", Role: boardv1.Role_ROLE_APPROVER, NoStandingConsent: true})
	if err := yesWith(t, bt, "ann", p.GetApprovalId(), 9, &boardv1.StandingConsent{Uses: 1}); connect.CodeOf(err) != connect.CodeFailedPrecondition || !strings.Contains(err.Error(), "does not allow standing consent") {
		t.Errorf("consent under a rule forbidding it: %v, want failed_precondition", err)
	}
	two := int32(2)
	putRule(t, admin, &boardv1.Rule{Id: "refunds", Agent: "*", Node: "*", Role: boardv1.Role_ROLE_APPROVER, Quorum: &two})
	if err := yesWith(t, bt, "ann", p.GetApprovalId(), 9, &boardv1.StandingConsent{Uses: 1}); connect.CodeOf(err) != connect.CodeFailedPrecondition || !strings.Contains(err.Error(), "wants 2 people's yes") {
		t.Errorf("consent under a quorum of two: %v, want failed_precondition", err)
	}
	if got := stateOf(t, admin, p.GetApprovalId()); got.GetState() != boardv1.ApprovalState_APPROVAL_STATE_PENDING || len(got.GetVotes()) != 0 {
		t.Errorf("after the refused consents: %v, want pending with no vote", got)
	}
}

// TestConsentUsesUnderConcurrentRaises: a consent of five uses approves
// exactly five of twenty operations with its digest raised at once, ten
// through each of two boards of one store (the agent linked to both, as
// while it moves between them).
func TestConsentUsesUnderConcurrentRaises(t *testing.T) {
	t.Parallel()
	boards := boardsOnOneStore(t, 2, &boardv1.Rule{Id: "refunds", Agent: "*", Node: "*", Role: boardv1.Role_ROLE_APPROVER})
	la := openLink(t, boards[0], "desk")
	first := la.raised(refund("run-0", 1))
	if err := yesWith(t, boards[0], "ann", first.GetApprovalId(), 1, &boardv1.StandingConsent{Uses: 5}); err != nil {
		t.Fatal(err)
	}
	la.nextDecision(within)
	lb := openLink(t, boards[1], "desk")
	states := make(chan boardv1.ApprovalState, 20)
	var wg sync.WaitGroup
	for k, l := range []*rawLink{la, lb} {
		wg.Go(func() {
			for i := range 10 {
				r := refund(fmt.Sprintf("run-%d-%d", k, i), 1)
				r.RequestId = l.requestID()
				l.send(&boardv1.LinkRequest{Kind: &boardv1.LinkRequest_Raise{Raise: r}})
				for {
					m, err := l.s.Receive()
					if err != nil {
						t.Error(err)
						return
					}
					if m.GetRaised().GetRequestId() == r.RequestId {
						states <- m.GetRaised().GetState()
						break
					}
				}
			}
		})
	}
	wg.Wait()
	close(states)
	approved, pending := 0, 0
	for s := range states {
		switch s {
		case boardv1.ApprovalState_APPROVAL_STATE_APPROVED:
			approved++
		case boardv1.ApprovalState_APPROVAL_STATE_PENDING:
			pending++
		}
	}
	if approved != 5 || pending != 15 {
		t.Errorf("of 20 raised at once under a consent of 5 uses: %d approved, %d pending; want 5 and 15", approved, pending)
	}
}
