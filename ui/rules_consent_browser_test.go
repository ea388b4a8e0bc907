package ui_test

import (
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	boardv1 "github.com/symphonix/symphonix/api/symphonix/board/v1"
	"github.com/symphonix/symphonix/api/symphonix/board/v1/boardv1connect"
	"github.com/symphonix/symphonix/identity"
	"github.com/symphonix/symphonix/internal/boardtest"
	"github.com/symphonix/symphonix/internal/browsertest"
)

// TestBrowserRuleConsentAndEscalation: the rule form sets whether a yes
// may stand, up to what amount, and the escalation's steps; the board's
// refusal of a step is shown on the escalation's field; editing the rule
// shows them as stored.
func TestBrowserRuleConsentAndEscalation(t *testing.T) {
	bt := boardtest.Start(t, boardtest.Options{})
	api := boardv1connect.NewApprovalServiceClient(bt.Client(bt.OperatorToken("ops", identity.RoleAdmin)))
	stored := func() *boardv1.Rule {
		t.Helper()
		res, err := api.ListRules(t.Context(), &boardv1.ListRulesRequest{})
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range res.GetRules() {
			if r.GetId() == "refunds" {
				return r
			}
		}
		return nil
	}

	a := browsertest.New(t)
	signInTo(t, a, bt, bt.OperatorToken("ops", identity.RoleAdmin), "rules")
	a.Click("new rule", "#rule-new")
	a.Until("the form", `() => !document.getElementById("rule-detail").hidden`)
	a.Do("a rule with a consent limit and two steps, the second before the first",
		chromedp.SetValue(chromedp.ID("rule-id"), "refunds"),
		chromedp.SetValue(chromedp.ID("rule-agent"), "*"),
		chromedp.SetValue(chromedp.ID("rule-node"), "pay"),
		chromedp.SetValue(chromedp.ID("rule-consent-max"), "500"),
		chromedp.SetValue(chromedp.ID("rule-escalation"), "30 lead@example.com\n20 admin"),
	)
	a.Click("save", "#rule-save")
	a.Until("the step refused on the escalation field", `() => document.getElementById("rule-escalation").getAttribute("aria-invalid") === "true" &&
		document.getElementById("rule-escalation-error").textContent.startsWith("rule.escalation[1].after:")`)
	if stored() != nil {
		t.Fatal("a refused rule is stored")
	}
	a.Do("the steps in order", chromedp.SetValue(chromedp.ID("rule-escalation"), "30 lead@example.com, cfo@example.com\n60 admin"))
	a.Click("save", "#rule-save")
	a.Until("saved", `() => document.querySelector('#rules-rows tr[data-rule="refunds"]') !== null && document.getElementById("rule-detail").hidden`)
	r := stored()
	if r.GetStandingConsentMaxAmount() != 500 || r.GetNoStandingConsent() || len(r.GetEscalation()) != 2 ||
		r.GetEscalation()[0].GetAfter().AsDuration() != 30*time.Minute || len(r.GetEscalation()[0].GetPeople()) != 2 ||
		r.GetEscalation()[1].GetRole() != boardv1.Role_ROLE_ADMIN || r.GetEscalation()[1].GetAfter().AsDuration() != time.Hour {
		t.Fatalf("stored %v, want a limit of 500 and the two steps", r)
	}

	a.Click("edit refunds", `#rules-rows tr[data-rule="refunds"] a.edit`)
	a.Until("the form holds them", `() => document.getElementById("rule-consent-max").value === "500" &&
		document.getElementById("rule-escalation").value === "30 lead@example.com cfo@example.com\n60 admin" &&
		!document.getElementById("rule-no-standing-consent").checked`)
	a.Click("forbid standing consent", "#rule-no-standing-consent")
	a.Eval(`document.getElementById("rule-escalation").value = ""; "and no escalation"`)
	a.Click("save", "#rule-save")
	a.Until("saved again", `() => document.getElementById("rule-detail").hidden`)
	if r := stored(); !r.GetNoStandingConsent() || len(r.GetEscalation()) != 0 {
		t.Fatalf("stored %v, want no standing consent and no escalation", r)
	}
}
