package ui_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/symphonix/symphonix/board"
	"github.com/symphonix/symphonix/identity"
	"github.com/symphonix/symphonix/internal/boardtest"
	"github.com/symphonix/symphonix/internal/browsertest"
)

// rowsShown is the names of the agents the table shows, in order, as one
// string.
const rowsShown = `Array.from(document.querySelectorAll("#agent-rows tr")).map((r) => r.dataset.agent).join(" ")`

// TestBrowserAgentFilters: the fleet is shown a page at a time, searched
// and filtered by status and health, with the filters and the page in the
// address, so that the address alone opens the same view elsewhere.
func TestBrowserAgentFilters(t *testing.T) {
	bt := boardtest.Start(t, boardtest.Options{
		OfflineGrace: 100 * time.Millisecond, PingInterval: 10 * time.Minute, LinksPerSecond: 10000,
		Limits: board.Limits{HealthEvery: time.Nanosecond},
	})
	for i := range 100 {
		openRawLink(t, bt, fmt.Sprintf("pay-%03d", i))
	}
	openRawLink(t, bt, "ship-1", "health").report(time.Now(), check("db", checkOK, ""))
	openRawLink(t, bt, "ship-2", "health").report(time.Now(), check("db", checkError, "the database is down"))
	gone := openRawLink(t, bt, "ship-3")
	gone.settle()
	_ = gone.s.CloseSend()
	token := bt.OperatorToken("vera", identity.RoleViewer)

	b := browsertest.New(t)
	signInTo(t, b, bt, token, "agents")
	b.UntilText("the first page", "#agents-count", "Agents 1–100 of 103 agents")
	if got := b.Eval(`document.querySelectorAll("#agent-rows tr").length + ""`); got != "100" {
		t.Errorf("rows on the first page: %s, want 100", got)
	}
	b.Click("the next page", "#agents-next")
	b.Until("the second page, in the address", `(want) => location.hash === "#agents?page=2" && (`+rowsShown+`) === want`, "ship-1 ship-2 ship-3")

	b.Do("search for ship", chromedp.SendKeys(chromedp.ID("agents-q"), "ship"))
	b.Until("three ships, from the first page", `() => location.hash === "#agents?q=ship" && (`+rowsShown+`) === "ship-1 ship-2 ship-3" &&
		document.getElementById("agents-count").textContent === "3 agents matching, of 103 the board knows." &&
		document.getElementById("agents-pager").hidden`)
	b.Do("only the degraded", chromedp.SetValue(chromedp.ID("agents-health"), "degraded"),
		chromedp.Evaluate[chromedp.Void](`document.getElementById("agents-health").dispatchEvent(new Event("change"))`))
	b.Until("ship-2 alone", `() => location.hash === "#agents?q=ship&health=degraded" && (`+rowsShown+`) === "ship-2"`)

	// The address alone, in another browser: the offline ones, then none.
	c := browsertest.New(t)
	c.Do("open the offline agents by their address", chromedp.Navigate(bt.URL+"/#agents?state=offline"),
		chromedp.WaitVisible(chromedp.ID("token")), chromedp.SetValue(chromedp.ID("token"), token),
		chromedp.Click(chromedp.ID("sign-in-button")))
	c.Until("ship-3 alone, the filter shown", `() => (`+rowsShown+`) === "ship-3" && document.getElementById("agents-state").value === "offline"`)
	c.Eval(`location.hash = "#agents?q=nothing-like-it"; "ok"`)
	c.Until("nothing matches, and it says so", `() => !document.getElementById("agents-none").hidden && document.getElementById("table-wrap").hidden`)
	c.Click("clear", "#agents-clear")
	c.Until("every agent again", `() => location.hash === "#agents" && document.querySelectorAll("#agent-rows tr").length === 100`)
}
