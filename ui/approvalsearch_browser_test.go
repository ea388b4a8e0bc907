package ui_test

import (
	"testing"

	"github.com/chromedp/chromedp"

	boardv1 "github.com/symphonix/symphonix/api/symphonix/board/v1"
	"github.com/symphonix/symphonix/api/symphonix/board/v1/boardv1connect"
	"github.com/symphonix/symphonix/identity"
	"github.com/symphonix/symphonix/internal/browsertest"
)

// searchFound is the ids of the approvals the search shows, in order.
const searchFound = `Array.from(document.querySelectorAll("#search-rows > tr")).map((r) => r.dataset.approval).join(" ")`

// TestBrowserApprovalSearch: the approvals are searched by outcome, agent,
// rule and time, the search kept in the address (so Back and a pasted
// address return to it); a range the board refuses is shown on its field.
func TestBrowserApprovalSearch(t *testing.T) {
	bt, payer, decisions := approvalBoard(t, `{"rule":{"id":"refunds","agent":"*","node":"*","role":"ROLE_APPROVER","quorum":1}}`)
	ann := boardv1connect.NewApprovalServiceClient(bt.Client(bt.OperatorToken("ann", identity.RoleApprover)))
	var ids []string
	for i, say := range []boardv1.Say{boardv1.Say_SAY_YES, boardv1.Say_SAY_NO, boardv1.Say_SAY_YES, boardv1.Say_SAY_UNSPECIFIED} {
		id, digest := raise(t, payer, "run-"+string(rune('a'+i)), "Refund?", map[string]any{"n": i}, "")
		ids = append(ids, id)
		if say == boardv1.Say_SAY_UNSPECIFIED {
			continue
		}
		if _, err := ann.Decide(t.Context(), &boardv1.DecideRequest{Id: id, Say: say, Digest: digest}); err != nil {
			t.Fatal(err)
		}
		waitDecision(t, decisions, id)
	}

	b := browsertest.New(t)
	signInToApprovals(t, b, bt, bt.OperatorToken("vera", identity.RoleViewer))
	b.Do("search the approved", chromedp.SetValue(chromedp.ID("search-state"), "approved"), chromedp.Click(chromedp.ID("search-button")))
	b.Until("the two approved, newest first, in the address", `(want) => location.hash === "#approvals?state=approved" && (`+searchFound+`) === want`,
		ids[2]+" "+ids[0])
	b.Do("and of rule refunds", chromedp.SetValue(chromedp.ID("search-rule"), "refunds"), chromedp.Click(chromedp.ID("search-button")))
	b.Until("the same, the rule in the address", `() => location.hash === "#approvals?state=approved&rule=refunds" && document.querySelectorAll("#search-rows > tr").length === 2`)
	b.Do("of another agent", chromedp.SetValue(chromedp.ID("search-agent"), "nobody"), chromedp.Click(chromedp.ID("search-button")))
	b.UntilText("none", "#search-status", "No approval matches.")
	b.Do("back", chromedp.NavigateBack())
	b.Until("back to the rule's approved", `() => location.hash === "#approvals?state=approved&rule=refunds" && document.querySelectorAll("#search-rows > tr").length === 2 &&
		document.getElementById("search-agent").value === ""`)
	b.Eval(`document.getElementById("search-since").value = "2030-01-02T00:00:00";
		document.getElementById("search-until").value = "2030-01-01T00:00:00"; "set"`)
	b.Click("search a range backwards", "#search-button")
	b.Until("refused on its field", `() => document.getElementById("search-until").getAttribute("aria-invalid") === "true" &&
		document.getElementById("search-until-error").textContent.startsWith("until:")`)

	// The address alone, in another browser: the pending one.
	c := browsertest.New(t)
	c.Do("open a search by its address", chromedp.Navigate(bt.URL+"/#approvals?state=pending"),
		chromedp.WaitVisible(chromedp.ID("token")), chromedp.SetValue(chromedp.ID("token"), bt.OperatorToken("vera", identity.RoleViewer)),
		chromedp.Click(chromedp.ID("sign-in-button")))
	c.Until("the pending one", `(want) => !document.getElementById("approvals").hidden && (`+searchFound+`) === want &&
		document.getElementById("search-state").value === "pending"`, ids[3])
}
