package ui_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"google.golang.org/protobuf/types/known/durationpb"

	boardv1 "github.com/symphonix/symphonix/api/symphonix/board/v1"
	"github.com/symphonix/symphonix/api/symphonix/board/v1/boardv1connect"
	"github.com/symphonix/symphonix/identity"
	"github.com/symphonix/symphonix/internal/boardtest"
	"github.com/symphonix/symphonix/internal/browsertest"
)

// consentRow is the CSS selector of the consents view's row of consent id.
func consentRow(id string) string {
	return `#consents-rows tr[data-consent="` + id + `"]`
}

// TestBrowserConsents: an approver's yes given on the page with a standing
// consent is listed on the Consents tab as active, with its agent, digest,
// approval and uses, and approves the agent's next ask of the same
// operation; the list's filter is kept in the address; revoked through the
// row's confirmation, it shows revoked, the board says so, and the next ask
// waits for people. A consent the rule's amount limit refuses is shown on
// the card's consent fields and nothing is decided; a revoke the board
// refuses is shown in the row. A viewer sees the consents without Revoke.
func TestBrowserConsents(t *testing.T) {
	bt := boardtest.Start(t, boardtest.Options{})
	root := boardv1connect.NewApprovalServiceClient(bt.Client(bt.OperatorToken("root", identity.RoleAdmin)))
	for _, r := range []*boardv1.Rule{
		{Id: "desks", Agent: "desk-*", Node: "pay", Role: boardv1.Role_ROLE_APPROVER},
		{Id: "capped", Agent: "desk-b", Node: "pay", Role: boardv1.Role_ROLE_APPROVER, StandingConsentMaxAmount: 100},
		{Id: "sealed", Agent: "desk-d", Node: "pay", Role: boardv1.Role_ROLE_APPROVER, NoStandingConsent: true},
	} {
		if _, err := root.PutRule(t.Context(), &boardv1.PutRuleRequest{Rule: r}); err != nil {
			t.Fatal(err)
		}
	}
	// consents is what ListConsents says, newest first.
	consents := func() []*boardv1.Consent {
		t.Helper()
		res, err := root.ListConsents(t.Context(), &boardv1.ListConsentsRequest{})
		if err != nil {
			t.Fatal(err)
		}
		return res.GetConsents()
	}
	approval := func(id string) *boardv1.Approval {
		t.Helper()
		res, err := root.GetApproval(t.Context(), &boardv1.GetApprovalRequest{Id: id})
		if err != nil {
			t.Fatal(err)
		}
		return res.GetApproval()
	}

	deskA := openRawLink(t, bt, "desk-a")
	first := deskA.raise("run-1", "pay", "Pay 5,000?")
	digest := approval(first).GetDigest()

	// The yes, with its consent, given on the approval's card.
	b := browsertest.New(t)
	signInToApprovals(t, b, bt, bt.OperatorToken("ada", identity.RoleApprover))
	b.Until("the approval queued", queued, first)
	sel := `#queue li[data-approval="` + first + `"] `
	if got := b.Eval(`(() => { const f = ` + card(first) + `.querySelector("fieldset.consent"); const l = (i) => document.querySelector('label[for="' + i.id + '"]');
		return [f.disabled, l(f.querySelector("input.consent-hours"))?.textContent, l(f.querySelector("input.consent-uses"))?.textContent].join("|"); })()`); got != "false|Hours (at most 168)|Times (at most 1,000)" {
		t.Errorf("the card's consent fields: disabled|hours label|times label = %q", got)
	}
	b.Do("approve for 2 hours or 2 times",
		chromedp.SetValue(chromedp.CSS(sel+"input.consent-hours"), "2"),
		chromedp.SetValue(chromedp.CSS(sel+"input.consent-uses"), "2"),
		chromedp.Click(chromedp.CSS(sel+"button.approve")),
	)
	b.Until("the approval in the history, approved", inHistory, first, "approved")
	b.UntilText("the status says the yes stands", "#approvals-status",
		"Approved “Pay 5,000?”. The yes stands for 2 hours or 2 times, whichever ends first, for the same operation of desk-a: see the Consents tab.")
	list := consents()
	if len(list) != 1 {
		t.Fatalf("ListConsents = %v, want the one given", list)
	}
	c := list[0]
	if c.GetAgent() != "desk-a" || c.GetDigest() != digest || c.GetApprovalId() != first || c.GetCreatedBy() != "ada" ||
		c.GetUsesAllowed() != 2 || c.GetState() != "active" || c.GetRuleId() != "desks" {
		t.Fatalf("the consent = %v, want ada's, active, for desk-a's %s on %s under desks, 2 uses", c, digest, first)
	}
	if d := c.GetExpireTime().AsTime().Sub(c.GetCreateTime().AsTime()); d != 2*time.Hour {
		t.Errorf("the consent lasts %s, want 2h", d)
	}

	// It approves the next ask of the same operation at once.
	second := deskA.raise("run-2", "pay", "Pay 5,000?")
	if a := approval(second); a.GetState() != boardv1.ApprovalState_APPROVAL_STATE_APPROVED || a.GetDecision().GetConsentId() != c.GetId() {
		t.Fatalf("the next ask = %v, want approved by %s", a, c.GetId())
	}

	// Listed on the Consents tab, active, with what it is.
	b.Click("the consents tab", "#tab-consents")
	row := consentRow(c.GetId())
	b.UntilText("listed as active", row+" .consent-state", "active")
	b.UntilText("one of its two uses", row+" .uses", "1 of 2")
	if got := b.Eval(`(() => { const r = document.querySelector(` + browsertest.Quote(row) + `), d = r.querySelector(".digest");
		return [r.querySelector(".agent").textContent, d.title, d.dataset.digest, d.textContent, r.querySelector(".consent-approval a").getAttribute("href"),
			r.querySelector(".consent-rule a").getAttribute("href"), r.querySelector(".given .created-by").textContent].join("|"); })()`); got !=
		strings.Join([]string{"desk-a", digest, digest, digest[:len("sha256:")+12] + "…", "#approval/" + first, "#rules/desks", "ada"}, "|") {
		t.Errorf("the row: agent|digest title|digest|shown|approval link|rule link|given by = %q", got)
	}

	// The agent filter is kept in the address, and the board does the picking.
	b.Do("filter on desk-b", chromedp.SetValue(chromedp.ID("consents-agent"), "desk-b"))
	b.Click("show", "#consents-apply")
	b.Until("desk-b has none", `() => location.hash === "#consents?agent=desk-b" && !document.getElementById("consents-empty").hidden &&
		document.querySelectorAll("#consents-rows tr").length === 0`)
	b.Do("filter on desk-a's active ones",
		chromedp.SetValue(chromedp.ID("consents-agent"), "desk-a"),
		chromedp.Click(chromedp.ID("consents-active")),
	)
	b.Click("show", "#consents-apply")
	b.Until("desk-a's consent", `(row) => location.hash === "#consents?agent=desk-a&active=true" && document.querySelector(row) !== null`, row)
	b.Do("reload", chromedp.Reload(), chromedp.WaitVisible(chromedp.ID("consents-rows")))
	b.Until("the same after a reload", `(row) => document.querySelector(row + " .consent-state")?.textContent === "active" &&
		document.getElementById("consents-agent").value === "desk-a" && document.getElementById("consents-active").checked`, row)

	// Revoke asks first; Keep it keeps it.
	b.Click("revoke", row+" button.revoke")
	b.Until("the confirmation, focused on yes", `(row) => !document.querySelector(row + " .revoke-confirm").hidden &&
		document.activeElement === document.querySelector(row + " .revoke-yes")`, row)
	if s := consents()[0].GetState(); s != "active" {
		t.Fatalf("before the confirmation the consent is %s", s)
	}
	b.Click("keep it", row+" .revoke-no")
	b.Until("the confirmation gone", `(row) => document.querySelector(row + " .revoke-confirm").hidden &&
		!document.querySelector(row + " button.revoke").hidden`, row)
	b.Click("revoke", row+" button.revoke")
	b.Do("give a reason", chromedp.SetValue(chromedp.CSS(row+" input.revoke-reason"), "the supplier changed"))
	b.Click("yes, revoke", row+" .revoke-yes")
	b.Until("shown revoked, by ada, without Revoke", `(row) => document.querySelector(row + " .consent-state")?.textContent === "revoked" &&
		document.querySelector(row + " .revoked-by")?.textContent === "ada" && document.querySelector(row + " button.revoke") === null`, row)
	if got := consents()[0]; got.GetState() != "revoked" || got.GetRevokedBy() != "ada" || got.GetRevokeTime() == nil {
		t.Fatalf("ListConsents after the revoke = %v, want revoked by ada", got)
	}
	third := deskA.raise("run-3", "pay", "Pay 5,000?")
	if s := approval(third).GetState(); s != boardv1.ApprovalState_APPROVAL_STATE_PENDING {
		t.Fatalf("the ask after the revoke is %v, want pending", s)
	}

	// A consent above the rule's amount limit: the board's refusal on the
	// card's consent fields, and nothing decided.
	deskB := openRawLink(t, bt, "desk-b")
	capped := deskB.raise("run-1", "pay", "Pay 5,000?")
	b.Click("the approvals tab", "#tab-approvals")
	b.Until("desk-b's approval queued", queued, capped)
	csel := `#queue li[data-approval="` + capped + `"] `
	b.Do("approve for 1 hour", chromedp.SetValue(chromedp.CSS(csel+"input.consent-hours"), "1"))
	b.Click("approve", csel+"button.approve")
	b.Until("the refusal on the consent fields", `(sel) => {
		const e = document.querySelector(sel + ".consent-error"), h = document.querySelector(sel + "input.consent-hours");
		return !e.hidden && e.textContent.includes("failed_precondition") && e.textContent.includes("standing consent limit of 100") &&
			h.getAttribute("aria-invalid") === "true" && document.querySelector(sel + ".card-error").hidden;
	}`, csel)
	if s := approval(capped).GetState(); s != boardv1.ApprovalState_APPROVAL_STATE_PENDING {
		t.Fatalf("after the refused consent the approval is %v, want pending", s)
	}
	if n := len(consents()); n != 1 {
		t.Fatalf("after the refused consent ListConsents has %d, want 1", n)
	}

	// A rule that forbids standing consent: the card says so, its fields
	// disabled.
	deskD := openRawLink(t, bt, "desk-d")
	sealed := deskD.raise("run-1", "pay", "Pay 5,000?")
	b.Until("desk-d's approval queued", queued, sealed)
	if got := b.Eval(`(() => { const f = ` + card(sealed) + `.querySelector("fieldset.consent");
		return f.disabled + "|" + f.querySelector(".consent-note").textContent; })()`); got != "true|Rule sealed does not let a yes stand for later operations." {
		t.Errorf("the consent fields under a rule that forbids it: disabled|note = %q", got)
	}

	// A revoke the board refuses is shown in the row: one revoked
	// elsewhere while the page showed it active.
	deskC := openRawLink(t, bt, "desk-c")
	other := deskC.raise("run-1", "pay", "Pay 5,000?")
	if _, err := root.Decide(t.Context(), &boardv1.DecideRequest{Id: other, Say: boardv1.Say_SAY_YES, Digest: digest,
		Consent: &boardv1.StandingConsent{Duration: durationpb.New(time.Hour)}}); err != nil {
		t.Fatal(err)
	}
	oc := consents()[0]
	orow := consentRow(oc.GetId())
	b.Click("the consents tab", "#tab-consents")
	b.Do("every agent's", chromedp.Click(chromedp.ID("consents-clear")))
	b.UntilText("desk-c's consent listed", orow+" .consent-state", "active")
	if _, err := root.RevokeConsent(t.Context(), &boardv1.RevokeConsentRequest{Id: oc.GetId()}); err != nil {
		t.Fatal(err)
	}
	b.Click("revoke", orow+" button.revoke")
	b.Click("yes, revoke", orow+" .revoke-yes")
	b.Until("the refusal in the row", `(row) => {
		const e = document.querySelector(row + " .revoke-error");
		return !e.hidden && e.textContent.includes("failed_precondition") && e.textContent.includes("already revoked");
	}`, orow)

	// A viewer reads the consents, an active one too, without Revoke,
	// which the approver has.
	again := deskC.raise("run-2", "pay", "Pay 5,000?")
	if _, err := root.Decide(t.Context(), &boardv1.DecideRequest{Id: again, Say: boardv1.Say_SAY_YES, Digest: digest,
		Consent: &boardv1.StandingConsent{Uses: 1}}); err != nil {
		t.Fatal(err)
	}
	arow := consentRow(consents()[0].GetId())
	b.Click("the consents tab again", "#tab-consents")
	b.Until("the approver's Revoke on the active one", `(row) => document.querySelector(row + " button.revoke") !== null`, arow)
	v := browsertest.New(t)
	signInTo(t, v, bt, bt.OperatorToken("vera", identity.RoleViewer), "consents")
	v.UntilText("the active consent listed", arow+" .consent-state", "active")
	v.UntilText("its uses", arow+" .uses", "0 of 1")
	v.Until("the notice", `() => !document.getElementById("consents-readonly").hidden`)
	if got := v.Eval(`String(document.querySelectorAll("#consents-rows tr").length) + "," + document.querySelectorAll("#consents-rows button.revoke").length`); got != "3,0" {
		t.Errorf("a viewer's consents: rows,revoke buttons = %s; want 3,0", got)
	}
}

// TestBrowserConsentsPaging: the Consents view reads the consents a page
// at a time, newest first as ListConsents gives them, More the next page,
// and says each one's state in words.
func TestBrowserConsentsPaging(t *testing.T) {
	bt := boardtest.Start(t, boardtest.Options{})
	now := time.Now().UTC().Truncate(time.Microsecond)
	var want []string
	for i := range 60 {
		id := fmt.Sprintf("con-%03d", i)
		at := now.Add(time.Duration(i-60) * time.Minute)
		c := bt.Store.Consent.Create().SetID(id).SetAgent("desk-a").SetDigest(fmt.Sprintf("sha256:%064d", i)).SetRuleID("desks").
			SetApprovalID(fmt.Sprintf("apr-%d", i)).SetCreatedBy("ada").SetCreatedAt(at).SetExpiresAt(now.Add(time.Hour)).SetUsesAllowed(0)
		switch i {
		case 59: // the newest: expired
			c.SetExpiresAt(now.Add(-time.Second))
		case 58: // used up
			c.SetUsesAllowed(2).SetUses(2)
		case 57:
			c.SetRevokedAt(now).SetRevokedBy("bo")
		}
		if err := c.Exec(t.Context()); err != nil {
			t.Fatal(err)
		}
		want = append([]string{id}, want...)
	}
	api := boardv1connect.NewApprovalServiceClient(bt.Client(bt.OperatorToken("vic", identity.RoleViewer)))
	var listed []string
	for token := ""; ; {
		res, err := api.ListConsents(t.Context(), &boardv1.ListConsentsRequest{PageSize: 7, PageToken: token})
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range res.GetConsents() {
			listed = append(listed, c.GetId())
		}
		if token = res.GetNextPageToken(); token == "" {
			break
		}
	}
	if strings.Join(listed, ",") != strings.Join(want, ",") {
		t.Fatalf("ListConsents = %v, want %v", listed, want)
	}

	b := browsertest.New(t)
	signInTo(t, b, bt, bt.OperatorToken("ada", identity.RoleApprover), "consents")
	const ids = `Array.from(document.querySelectorAll("#consents-rows tr")).map((r) => r.dataset.consent).join(",")`
	b.Until("the first page, newest first", `(want) => `+ids+` === want && !document.getElementById("consents-more").hidden`,
		strings.Join(want[:50], ","))
	if got := b.Eval(`["con-059", "con-058", "con-057", "con-056"].map((id) => document.querySelector('#consents-rows tr[data-consent="' + id + '"] .consent-state').textContent).join(",")`); got != "expired,used up,revoked,active" {
		t.Errorf("the states shown = %s, want expired,used up,revoked,active", got)
	}
	b.Click("more", "#consents-more")
	b.Until("every consent, More gone", `(want) => `+ids+` === want && document.getElementById("consents-more").hidden`,
		strings.Join(want, ","))
}
