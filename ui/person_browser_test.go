package ui_test

import (
	"testing"

	"github.com/chromedp/chromedp"

	boardv1 "github.com/symphonix/symphonix/api/symphonix/board/v1"
	"github.com/symphonix/symphonix/api/symphonix/board/v1/boardv1connect"
	"github.com/symphonix/symphonix/identity"
	"github.com/symphonix/symphonix/internal/browsertest"
)

// TestBrowserPersonPage: from the People view an admin opens a person's
// page, by the link on their address, and sees who they are, the approval
// they decided among what they did, and their being added among what was
// done to them, each linked to its object; the address alone opens it in
// another tab.
func TestBrowserPersonPage(t *testing.T) {
	bt, payer, decisions := approvalBoard(t, `{"rule":{"agent":"*","node":"*","role":"ROLE_APPROVER","quorum":1}}`)
	id, digest := raise(t, payer, "run-1", "Refund order 7?", map[string]any{"order": "7"}, "")
	const password = "a long enough password"
	bt.AddUser("ann@example.com", identity.RoleApprover, password)
	bt.AddUser("ada@example.com", identity.RoleAdmin, password)
	ann := boardv1connect.NewApprovalServiceClient(bt.SessionClient(bt.SignIn("ann@example.com", password)))
	if _, err := ann.Decide(t.Context(), &boardv1.DecideRequest{Id: id, Say: boardv1.Say_SAY_YES, Digest: digest}); err != nil {
		t.Fatal(err)
	}
	waitDecision(t, decisions, id)

	b := browsertest.New(t)
	signInWithPassword(t, b, bt, "ada@example.com", password)
	open(t, b, "people")
	b.Click("ann's address", `#people-rows tr[data-email="ann@example.com"] a.name`)
	b.Until("ann's page", `() => location.hash === "#person/ann%40example.com" && !document.getElementById("person").hidden &&
		document.querySelector('#person-facts dd[data-fact="role"]')?.textContent === "approver"`)
	b.Until("her decision among what she did, linked to the approval", `(id) => {
		const row = document.querySelector('#person-did-rows tr[data-action="approval.decide"]');
		const a = row && row.querySelector("a.subject-link");
		return a !== null && a.getAttribute("href") === "#approval/" + id;
	}`, id)
	b.Until("her being added among what was done to her", `() =>
		document.querySelector('#person-done-rows tr[data-action^="user."]') !== null &&
		document.querySelector('#person-done-rows tr[data-action="approval.decide"]') === null`)
	if got := b.Eval(`document.getElementById("person-did-all").getAttribute("href")`); got != "#audit?actor=ann%40example.com" {
		t.Errorf("the link to all she did: %q", got)
	}
	if got := b.Eval(`document.getElementById("tab-people").getAttribute("aria-current") || ""`); got != "page" {
		t.Errorf("the People tab is not the current one on a person's page: %q", got)
	}

	// The address alone, in another browser, after sign-in.
	c := browsertest.New(t)
	c.Do("open ada's page by its address", chromedp.Navigate(bt.URL+"/#person/ada%40example.com"), chromedp.WaitVisible(chromedp.ID("email")))
	typePassword(t, c, "ada@example.com", password)
	c.Until("ada's page", `() => !document.getElementById("person").hidden &&
		document.querySelector('#person-facts dd[data-fact="role"]')?.textContent === "admin"`)
	// An address nobody has.
	c.Eval(`location.hash = "#person/nobody%40example.com"; "ok"`)
	c.UntilText("nobody is known", "#person-error", "knows nobody with the address nobody@example.com")
}
