package e2e

import (
	"regexp"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	boardv1 "github.com/symphonix/symphonix/api/symphonix/board/v1"
	"github.com/symphonix/symphonix/internal/browsertest"
	"github.com/symphonix/symphonix/internal/exampletest"
)

// TestBrowserApprovesRefundDesk: the refund desk, served and governed by a
// board process, waits at its refund; an approver signs in to the web board
// the board process serves, with a token minted on the command line, sees
// the refund in the queue and approves it with a reason by click; the
// agent's run goes on by itself and the orders server makes the refund.
func TestBrowserApprovesRefundDesk(t *testing.T) {
	t.Parallel()
	g := startGovernance(t)
	desk := governedDesk(t)
	agent, api := g.serveDesk(t, desk)
	thread := threadName(t)
	turn := askForRefund(t, api, thread, g.rule)
	id := g.approvalOf(t, thread).GetId()

	b := browsertest.New(t)
	b.Do("sign in and open the approvals",
		chromedp.Navigate(g.url),
		chromedp.WaitVisible(chromedp.ID("token")),
		chromedp.SetValue(chromedp.ID("token"), g.operatorToken(t, "grace", "approver")),
		chromedp.Click(chromedp.ID("sign-in-button")),
		chromedp.WaitVisible(chromedp.ID("tab-approvals")),
		chromedp.Click(chromedp.ID("tab-approvals")),
		chromedp.WaitVisible(chromedp.ID("approvals")),
	)
	card := `#queue li[data-approval="` + id + `"]`
	b.Until("the refund queued", `(sel) => document.querySelector(sel) !== null`, card)
	text := b.Eval(`document.querySelector(` + browsertest.Quote(card) + `).textContent`)
	for _, want := range []string{"refund-desk", "pay", "Refund 49.9 EUR on order A-1001 to Ada Lovelace?", "Ada Lovelace", "49.9", "approver"} {
		if !strings.Contains(text, want) {
			t.Errorf("card = %q, want it to contain %q", text, want)
		}
	}
	if refunds := exampletest.Refunds(t, desk); len(refunds) != 0 {
		t.Fatalf("refunds made before the approval = %v, want none", refunds)
	}

	const reason = "the customer sent a photo of the broken mug"
	b.Do("approve with a reason",
		chromedp.SetValue(chromedp.CSS(card+" textarea.reason"), reason),
		chromedp.Click(chromedp.CSS(card+" button.approve")),
	)
	agent.waitLine(t, regexp.MustCompile(`^thread `+regexp.QuoteMeta(thread)+`: the board decided; the run finished$`))
	b.Until("the refund approved, in the history", `(id) => {
		const row = document.querySelector('#history-rows tr[data-approval="' + id + '"]');
		return row !== null && row.dataset.state === "approved";
	}`, id)

	checkFinishedByTheBoard(t, api, thread)
	exampletest.CheckRefundedOnce(t, desk)
	got, err := g.approver.GetApproval(t.Context(), &boardv1.GetApprovalRequest{Id: id})
	d := got.GetApproval().GetDecision()
	if err != nil || got.GetApproval().GetState() != boardv1.ApprovalState_APPROVAL_STATE_APPROVED || d.GetSay() != boardv1.Say_SAY_YES || d.GetReason() != reason ||
		strings.Join(d.GetWho(), ",") != "grace" || d.GetDigest() != turn.Pending.Digest {
		t.Errorf("approval = %v, %v; want approved by grace with the reason, for digest %s", got, err, turn.Pending.Digest)
	}
}
