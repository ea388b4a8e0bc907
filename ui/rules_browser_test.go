package ui_test

import (
	"testing"

	"github.com/chromedp/chromedp"

	boardv1 "github.com/symphonix/symphonix/api/symphonix/board/v1"
	"github.com/symphonix/symphonix/api/symphonix/board/v1/boardv1connect"
	"github.com/symphonix/symphonix/identity"
	"github.com/symphonix/symphonix/internal/boardtest"
	"github.com/symphonix/symphonix/internal/browsertest"
)

// ruleRow is the CSS selector of the rules list's row of the rule id.
func ruleRow(id string) string {
	return `#rules-rows tr[data-rule="` + id + `"]`
}

// previewRow is the CSS selector of the preview's row of agent and node.
func previewRow(agent, node string) string {
	return `#rule-preview-rows tr[data-agent="` + agent + `"][data-node="` + node + `"] .governed`
}

// TestBrowserRules: an admin puts a rule from the page: a bad pattern is
// shown on the agent field; fixed, its preview says who governs each node
// approvals came from today and whether the rule would; saved, it is in
// the list and the board's; edited, then deleted once confirmed. Back and
// forward move between the list and a rule. A viewer sees the rules
// without the controls, and a rule's address opens it after sign-in.
func TestBrowserRules(t *testing.T) {
	bt := boardtest.Start(t, boardtest.Options{})
	deskA := openRawLink(t, bt, "desk-a")
	deskB := openRawLink(t, bt, "desk-b")
	deskA.raise("run-1", "pay", "Pay 5,000?")
	deskA.raise("run-2", "wire", "Wire 5,000?")
	deskB.raise("run-1", "pay", "Pay 5,000?")
	api := boardv1connect.NewApprovalServiceClient(bt.Client(bt.OperatorToken("ops", identity.RoleAdmin)))
	if _, err := api.PutRule(t.Context(), &boardv1.PutRuleRequest{Rule: &boardv1.Rule{
		Id: "keep-wire", Agent: "desk-a", Node: "wire", Role: boardv1.Role_ROLE_APPROVER, Description: "wires by approvers",
	}}); err != nil {
		t.Fatal(err)
	}
	stored := func(id string) *boardv1.Rule {
		t.Helper()
		res, err := api.ListRules(t.Context(), &boardv1.ListRulesRequest{})
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range res.GetRules() {
			if r.GetId() == id {
				return r
			}
		}
		return nil
	}

	a := browsertest.New(t)
	signInTo(t, a, bt, bt.OperatorToken("ops", identity.RoleAdmin), "rules")
	a.UntilText("the stored rule listed", ruleRow("keep-wire")+" .description", "wires by approvers")

	// A bad pattern: the board's error on the agent field.
	a.Click("new rule", "#rule-new")
	a.Until("the form", `() => !document.getElementById("rule-detail").hidden`)
	a.Do("fill the form with a bad agent pattern",
		chromedp.SetValue(chromedp.ID("rule-id"), "desks"),
		chromedp.SetValue(chromedp.ID("rule-agent"), "desk-["),
		chromedp.SetValue(chromedp.ID("rule-node"), "*"),
	)
	a.Click("save", "#rule-save")
	a.Until("the error on the agent field", `() => {
		const f = document.getElementById("rule-agent"), e = document.getElementById("rule-agent-error");
		return f.getAttribute("aria-invalid") === "true" && !e.hidden && e.textContent.startsWith("rule.agent: ") &&
			document.getElementById("rule-form-error").hidden;
	}`)
	if stored("desks") != nil {
		t.Fatal("a refused rule is stored")
	}

	// Fixed and previewed.
	a.Do("fix the agent pattern", chromedp.SetValue(chromedp.ID("rule-agent"), "desk-*"))
	a.Click("preview", "#rule-preview-button")
	a.UntilText("desk-a's pay would be this rule's", previewRow("desk-a", "pay"), "today: no rule; would be: this rule")
	a.UntilText("desk-b's pay would be this rule's", previewRow("desk-b", "pay"), "today: no rule; would be: this rule")
	a.UntilText("desk-a's wire kept", previewRow("desk-a", "wire"), "kept by keep-wire")
	a.UntilText("both agents matched", "#rule-preview-agents", "desk-adesk-b")
	if got := a.Eval(`document.getElementById("rule-agent").getAttribute("aria-invalid") + ""`); got != "null" {
		t.Errorf("after the fix the agent field is still marked invalid (%s)", got)
	}
	if stored("desks") != nil {
		t.Fatal("a previewed rule is stored")
	}

	// Saved: in the list, in match order after the exact rule, and on the board.
	a.Click("save", "#rule-save")
	a.Until("the rule listed after keep-wire, the form closed", `() => {
		const rows = Array.from(document.querySelectorAll("#rules-rows tr")).map((r) => r.dataset.rule);
		return rows.join(",") === "keep-wire,desks" && document.getElementById("rule-detail").hidden;
	}`)
	if r := stored("desks"); r.GetAgent() != "desk-*" || r.GetNode() != "*" || r.GetRole() != boardv1.Role_ROLE_APPROVER {
		t.Fatalf("ListRules has %v, want desks for desk-* at * by approvers", r)
	}

	// Edited from its row: the form holds it; its preview knows it is itself.
	a.Click("edit desks", ruleRow("desks")+" a.edit")
	a.Until("the form holds desks", `() => location.hash === "#rules/desks" && !document.getElementById("rule-detail").hidden &&
		document.getElementById("rule-agent").value === "desk-*" && document.getElementById("rule-id").readOnly`)
	a.Click("preview", "#rule-preview-button")
	a.UntilText("desk-a's pay is this rule's", previewRow("desk-a", "pay"), "today: this rule; would be: this rule")
	a.Do("edit it",
		chromedp.SetValue(chromedp.ID("rule-description"), "every desk"),
		chromedp.SetValue(chromedp.ID("rule-role"), "ROLE_ADMIN"),
		chromedp.SetValue(chromedp.ID("rule-time-limit"), "90"),
	)
	a.Click("save", "#rule-save")
	a.Until("the edit listed", `() => location.hash === "#rules" && document.getElementById("rule-detail").hidden &&
		document.querySelector('#rules-rows tr[data-rule="desks"] .description')?.textContent === "every desk" &&
		document.querySelector('#rules-rows tr[data-rule="desks"] .time-limit')?.textContent === "90 min"`)
	if r := stored("desks"); r.GetDescription() != "every desk" || r.GetRole() != boardv1.Role_ROLE_ADMIN || r.GetTimeLimit().AsDuration().Minutes() != 90 {
		t.Fatalf("ListRules has %v, want the edit", r)
	}

	// Back opens the rule again, forward closes it.
	a.Eval(`history.back(), ""`)
	a.Until("back on desks", `() => location.hash === "#rules/desks" && !document.getElementById("rule-detail").hidden &&
		document.getElementById("rule-description").value === "every desk"`)
	a.Eval(`history.forward(), ""`)
	a.Until("forward to the list", `() => location.hash === "#rules" && document.getElementById("rule-detail").hidden`)

	// Deleted, once confirmed on the page.
	a.Click("open desks", ruleRow("desks")+" a.rule-link")
	a.Until("the form holds desks", `() => !document.getElementById("rule-detail").hidden && document.getElementById("rule-agent").value === "desk-*"`)
	a.Click("delete", "#rule-delete")
	a.Until("the confirmation", `() => !document.getElementById("rule-delete-confirm").hidden`)
	if stored("desks") == nil {
		t.Fatal("deleted before the confirmation")
	}
	a.Click("keep it", "#rule-delete-no")
	a.Until("the confirmation gone", `() => document.getElementById("rule-delete-confirm").hidden`)
	a.Click("delete", "#rule-delete")
	a.Click("yes, delete", "#rule-delete-yes")
	a.Until("desks gone from the list", `() => document.querySelector('#rules-rows tr[data-rule="desks"]') === null &&
		document.querySelector('#rules-rows tr[data-rule="keep-wire"]') !== null && document.getElementById("rule-detail").hidden`)
	if r := stored("desks"); r != nil {
		t.Fatalf("ListRules after delete has %v", r)
	}

	// A viewer reads the rules, without the controls.
	v := browsertest.New(t)
	viewer := bt.OperatorToken("vera", identity.RoleViewer)
	signInTo(t, v, bt, viewer, "rules")
	v.UntilText("the rule listed", ruleRow("keep-wire")+" .agent", "desk-a")
	if got := v.Eval(`[document.getElementById("rule-new").hidden, document.querySelector("#rules-rows a.edit") === null].join()`); got != "true,true" {
		t.Errorf("a viewer's controls: new hidden, no edit = %s; want true,true", got)
	}

	// A rule's address, opened before signing in, shows it after.
	w := browsertest.New(t)
	w.Do("open a rule's address and sign in",
		chromedp.Navigate(bt.URL+"/#rules/keep-wire"),
		chromedp.WaitVisible(chromedp.ID("token")),
		chromedp.SetValue(chromedp.ID("token"), viewer),
		chromedp.Click(chromedp.ID("sign-in-button")),
	)
	w.Until("keep-wire shown, read only", `() => !document.getElementById("rules").hidden &&
		!document.getElementById("rule-detail").hidden && document.getElementById("rule-agent").value === "desk-a" &&
		document.getElementById("rule-node").value === "wire" && document.getElementById("rule-fields").disabled &&
		document.getElementById("rule-save").hidden && document.getElementById("rule-delete").hidden`)
}
