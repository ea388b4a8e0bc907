package ui_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	boardv1 "github.com/symphonix/symphonix/api/symphonix/board/v1"
	"github.com/symphonix/symphonix/api/symphonix/board/v1/boardv1connect"
	"github.com/symphonix/symphonix/identity"
	"github.com/symphonix/symphonix/internal/browsertest"
)

// pages are the views an admin signed in with a password reaches, each
// by its address, with what shows that the view has drawn what it reads.
var pages = []struct{ name, hash, drawn string }{
	{"agents", "#agents", `document.querySelector('#agents tr[data-agent="payer"]') !== null`},
	{"dashboard", "#dashboard?window=1h", `document.querySelector("#dashboard canvas") !== null`},
	{"agent", "#agent/payer", `document.getElementById("agent-title").textContent.includes("payer")`},
	{"agent", "#agent/builder", `document.querySelector('#build-rows tr[data-current="true"]') !== null`},
	{"approvals", "#approvals", `document.querySelector('#queue li[data-approval]') !== null`},
	{"approvals", "#approval/", `!document.getElementById("approval-page").hidden && document.querySelector("#approval-page-facts dd") !== null`},
	{"rules", "#rules", `document.querySelector('#rules tr, #rules li') !== null`},
	{"rule", "#rules/", `!document.getElementById("rules").hidden`},
	{"consents", "#consents", `!document.getElementById("consents").hidden`},
	{"tools", "#tools", `!document.getElementById("tools").hidden`},
	{"conversations", "#conversations", `!document.getElementById("conversations").hidden`},
	{"alerts", "#alerts", `!document.getElementById("alerts").hidden`},
	{"library", "#library", `!document.getElementById("library").hidden`},
	{"people", "#people", `document.querySelector('#people tr[data-email], #people li') !== null`},
	{"person", "#person/ada%40example.com", `document.querySelector('#person-facts dd') !== null`},
	{"audit", "#audit", `document.querySelector('#audit tbody tr') !== null`},
	{"me", "#me", `document.querySelector('#me-facts dd') !== null`},
}

// TestBrowserAccessible: every view, in light and dark, breaks no WCAG 2.2
// A or AA rule that axe-core rates serious or critical, and at 360 px
// wide none scrolls sideways. With SYMPHONIX_SCREENSHOTS set, each view is
// also kept as a screenshot at 1400 and 360 px.
func TestBrowserAccessible(t *testing.T) {
	bt, payer, _ := approvalBoard(t, `{"rule":{"agent":"*","node":"*","role":"ROLE_APPROVER","quorum":1}}`)
	approvalID, _ := raise(t, payer, "run-1", "Refund order 1042?", map[string]any{"order": "1042", "amount": 5000}, "The parcel arrived broken.")
	const email, password = "ada@example.com", "a long enough password"
	bt.AddUser(email, identity.RoleAdmin, password)

	admin := boardv1connect.NewApprovalServiceClient(bt.Client(bt.OperatorToken("root", identity.RoleAdmin)))
	rules, err := admin.ListRules(t.Context(), &boardv1.ListRulesRequest{})
	if err != nil || len(rules.GetRules()) == 0 {
		t.Fatalf("ListRules: %v, %v", rules, err)
	}
	ruleID := rules.GetRules()[0].GetId()
	linkBuilds(t, bt, "builder", fmt.Sprintf("sha256:%064x", 1), fmt.Sprintf("sha256:%064x", 2))

	b := browsertest.New(t)
	// The sign-in page, before anyone is signed in.
	b.Do("open the board", chromedp.Navigate(bt.URL), chromedp.WaitVisible(chromedp.ID("email")))
	for _, width := range []int64{1400, 360} {
		b.Viewport(width, 900, width < 600)
		b.Screenshot(fmt.Sprintf("sign-in-%d", width))
		if got := b.Eval(tooWide); !fits(got) {
			t.Errorf("sign-in at %d px: scrolls sideways (%s)", width, got)
		}
		for _, v := range browsertest.Serious(b.Axe()) {
			t.Errorf("sign-in at %d px: %s", width, v)
		}
	}
	b.Viewport(1400, 900, false)
	signInWithPassword(t, b, bt, email, password)
	for _, scheme := range []string{"light", "dark"} {
		b.ColorScheme(scheme)
		for _, width := range []int64{1400, 360} {
			b.Viewport(width, 900, width < 600)
			for _, p := range pages {
				if p.hash == "#approval/" {
					p.hash += approvalID
				}
				if p.name == "rule" {
					p.hash += ruleID
					p.name = "rules"
				}
				where := fmt.Sprintf("%s at %d px, %s", p.name, width, scheme)
				b.Eval(`location.hash = ` + browsertest.Quote(p.hash) + `; "ok"`)
				b.Until(where+" drawn", `() => !document.getElementById(`+browsertest.Quote(p.name)+`).hidden && (`+p.drawn+`)`)
				b.Screenshot(fmt.Sprintf("%s-%d-%s", p.name, width, scheme))
				if width < 600 {
					if got := b.Eval(tooWide); !fits(got) {
						t.Errorf("%s: scrolls sideways (scroll width, window width: %s)", where, got)
					}
				}
				for _, v := range browsertest.Serious(b.Axe()) {
					t.Errorf("%s: %s", where, v)
				}
			}
		}
	}
}

// tooWide is, as "scrollWidth clientWidth", how wide the page is and how
// wide its layout viewport; then the elements that reach past it.
const tooWide = `(() => {
	const root = document.documentElement;
	const over = [];
	for (const e of document.querySelectorAll("body *")) {
		const r = e.getBoundingClientRect();
		if (r.width > 0 && r.right > root.clientWidth + 1 && e.offsetParent !== null) {
			let clipped = false;
			for (let p = e.parentElement; p && p !== document.body; p = p.parentElement) {
				const o = getComputedStyle(p).overflowX;
				if (o === "auto" || o === "scroll" || o === "hidden") { clipped = true; break; }
			}
			if (!clipped) over.push((e.id ? "#" + e.id : e.tagName.toLowerCase() + (e.className ? "." + String(e.className).split(" ")[0] : "")) + ":" + Math.round(r.right));
		}
	}
	return root.scrollWidth + " " + root.clientWidth + (over.length ? " " + over.slice(0, 8).join(" ") : "");
})()`

// fits says whether "scrollWidth innerWidth" has the page no wider than
// the window.
func fits(s string) bool {
	var scroll, inner int
	if _, err := fmt.Sscan(strings.TrimSpace(s), &scroll, &inner); err != nil {
		return false
	}
	return scroll <= inner
}
