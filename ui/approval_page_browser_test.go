package ui_test

import (
	"testing"

	"github.com/chromedp/chromedp"

	boardv1 "github.com/symphonix/symphonix/api/symphonix/board/v1"
	"github.com/symphonix/symphonix/api/symphonix/board/v1/boardv1connect"
	"github.com/symphonix/symphonix/identity"
	"github.com/symphonix/symphonix/internal/browsertest"
)

// fact is the text of a fact on the approval's page.
func fact(name string) string {
	return `(document.querySelector('#approval-page-facts dd[data-fact="` + name + `"]') || {}).textContent`
}

// TestBrowserApprovalPage: an approval's address opens its page, which
// says where it stands, who voted, and its trail in the audit log, and
// follows it live to its decision, with the receipt to download; a viewer
// sees the page without the trail (the audit log is the admins').
func TestBrowserApprovalPage(t *testing.T) {
	bt, payer, decisions := approvalBoard(t, `{"rule":{"id":"refunds","agent":"*","node":"*","role":"ROLE_APPROVER","quorum":2}}`)
	id, digest := raise(t, payer, "run-1", "Refund order 9?", map[string]any{"order": "9", "amount": 90}, "")
	vote := func(who string) {
		c := boardv1connect.NewApprovalServiceClient(bt.Client(bt.OperatorToken(who, identity.RoleApprover)))
		if _, err := c.Decide(t.Context(), &boardv1.DecideRequest{Id: id, Say: boardv1.Say_SAY_YES, Digest: digest}); err != nil {
			t.Fatal(err)
		}
	}
	vote("ann")

	b := browsertest.New(t)
	b.Do("open the approval's address", chromedp.Navigate(bt.URL+"/#approval/"+id), chromedp.WaitVisible(chromedp.ID("token")),
		chromedp.SetValue(chromedp.ID("token"), bt.OperatorToken("root", identity.RoleAdmin)), chromedp.Click(chromedp.ID("sign-in-button")))
	b.Until("its page: pending, ann's vote, its rule and digest", `() => !document.getElementById("approval-page").hidden &&
		`+fact("state")+` === "pending" && `+fact("votes")+` === "ann" && `+fact("rule")+` === "refunds" &&
		`+fact("digest")+` === `+browsertest.Quote(digest)+` && document.querySelector("#approval-page-shown .show") !== null`)
	b.Until("its trail: raised, then ann's vote", `() => Array.from(document.querySelectorAll("#approval-page-trail tr")).map((r) => r.dataset.action).join(" ") === "approval.raise approval.vote"`)

	vote("bob")
	waitDecision(t, decisions, id)
	b.Until("decided, live, with its receipt", `() => `+fact("state")+` === "approved" && `+fact("decided by")+` === "ann, bob" &&
		document.querySelector('#approval-page-facts dd[data-fact="receipt"] a.receipt') !== null &&
		Array.from(document.querySelectorAll("#approval-page-trail tr")).map((r) => r.dataset.action).join(" ") === "approval.raise approval.vote approval.decide"`)
	if got := b.Eval(`document.getElementById("approval-page-audit").getAttribute("href")`); got != "#audit?object="+id {
		t.Errorf("the link to its audit entries: %q", got)
	}
	b.Click("all approvals", `#approval-page a[href="#approvals"]`)
	b.Until("the page gone", `() => document.getElementById("approval-page").hidden && !document.getElementById("approvals").hidden`)

	v := browsertest.New(t)
	signInTo(t, v, bt, bt.OperatorToken("vera", identity.RoleViewer), "approvals")
	v.Eval(`location.hash = "#approval/` + id + `"; "ok"`)
	v.Until("a viewer sees the page, without the trail", `() => `+fact("state")+` === "approved" &&
		document.getElementById("approval-page-trail-wrap").hidden && document.getElementById("approval-page-trail-empty").hidden`)
}
