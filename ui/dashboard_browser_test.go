package ui_test

import (
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/symphonix/symphonix/ent"
	"github.com/symphonix/symphonix/identity"
	"github.com/symphonix/symphonix/internal/boardtest"
	"github.com/symphonix/symphonix/internal/browsertest"
)

// TestBrowserDashboard: a viewer opens #dashboard?window=1h and finds its
// five charts drawn by uPlot, on canvas, each with a caption giving the
// latest values the board holds and a hidden table of its series; picking
// another window puts it in the address and reads that window's samples.
func TestBrowserDashboard(t *testing.T) {
	bt := boardtest.Start(t, boardtest.Options{})
	ctx := t.Context()
	now := time.Now().UTC().Truncate(time.Minute)
	var creates []*ent.FleetSampleCreate
	for i := range 30 { // the last 30 minutes, the newest the latest
		creates = append(creates, bt.Store.FleetSample.Create().SetResolution("minute").SetAt(now.Add(-time.Duration(i+1)*time.Minute)).
			SetAgentsOnline(7+i).SetApprovalsPending(3).SetHealthOk(5).SetHealthDegraded(1).SetHealthUnknown(0).SetHealthNone(1).
			SetDecisions(4).SetLatencyP50Ms(20_000).SetLatencyP99Ms(179_000).SetRunsStarted(12).SetRunsEnded(10).SetRunsFailed(2))
	}
	for i := range 3 { // three hours, for the 7 days' window
		creates = append(creates, bt.Store.FleetSample.Create().SetResolution("hour").SetAt(now.Truncate(time.Hour).Add(-time.Duration(i+1)*time.Hour)).
			SetMinutes(60).SetAgentsOnline(6).SetRunsStarted(600).SetRunsEnded(600).SetRunsFailed(6))
	}
	if err := bt.Store.FleetSample.CreateBulk(creates...).Exec(ctx); err != nil {
		t.Fatal(err)
	}

	b := browsertest.New(t)
	b.Do("open the dashboard over an hour and sign in", chromedp.Navigate(bt.URL+"/#dashboard?window=1h"),
		chromedp.WaitVisible(chromedp.ID("token")),
		// What the page's Content-Security-Policy refuses, if anything.
		chromedp.Evaluate[chromedp.Void](`window.refused = []; document.addEventListener("securitypolicyviolation",
			(e) => window.refused.push(e.effectiveDirective + " " + e.blockedURI))`),
		chromedp.SetValue(chromedp.ID("token"), bt.OperatorToken("vera", identity.RoleViewer)),
		chromedp.Click(chromedp.ID("sign-in-button")), chromedp.WaitVisible(chromedp.ID("dashboard")))
	b.Until("five charts drawn on canvas by uPlot", `() => typeof uPlot === "function" &&
		document.querySelectorAll("#dashboard-charts figure.chart").length === 5 &&
		Array.from(document.querySelectorAll("#dashboard-charts figure.chart")).every((f) =>
			f.querySelector(".uplot canvas") !== null && f.dataset.points === "30")`)
	if got := b.Eval(`location.hash`); got != "#dashboard?window=1h" {
		t.Errorf("address %q, want #dashboard?window=1h", got)
	}
	if got := b.Eval(`document.getElementById("tab-dashboard").getAttribute("aria-current") || ""`); got != "page" {
		t.Errorf("the dashboard's tab is not the current one: %q", got)
	}
	for id, want := range map[string]string{
		"online":  "Agents online now: 7.",
		"pending": "Approvals pending now: 3.",
		"latency": "Decisions in the latest minute: 4, p50 20 s, p99 2 min 59 s.",
		"health":  "Agents online by health now: ok 5, degraded 1, unknown 0, none reported 1.",
		"runs":    "Runs in the latest minute: 12 started, 2 of 10 ended failed.",
	} {
		if got := b.Eval(`document.getElementById("dashboard-` + id + `-caption").textContent`); got != want {
			t.Errorf("caption of %s: %q, want %q", id, got, want)
		}
	}
	// The hidden table of the online chart: latest 7, lowest 7, highest 36.
	row := b.Eval(`Array.from(document.querySelectorAll('#dashboard-online-table tr[data-series="online"] > *')).map((c) => c.textContent).join("|")`)
	if !strings.HasPrefix(row, "online|7|7|36|") {
		t.Errorf("the online chart's table row: %q, want latest 7, lowest 7, highest 36", row)
	}
	// The health series differ by dash, not by colour alone, and are named.
	if got := b.Eval(`Array.from(document.querySelectorAll("#dashboard-health .u-legend .u-series .u-label")).map((l) => l.textContent).join(",")`); !strings.Contains(got, "ok,degraded,unknown,none reported") {
		t.Errorf("the health chart's legend: %q", got)
	}

	b.Do("pick the last 7 days", chromedp.SetValue(chromedp.ID("dashboard-window"), "7d"),
		chromedp.Evaluate[chromedp.Void](`document.getElementById("dashboard-window").dispatchEvent(new Event("change"))`))
	b.Until("the address and the charts follow", `() => location.hash === "#dashboard?window=7d" &&
		document.getElementById("dashboard").dataset.resolution === "hour" &&
		document.getElementById("dashboard-runs").dataset.points === "3"`)
	if got := b.Eval(`document.getElementById("dashboard-online-caption").textContent`); got != "Agents online now: 7." {
		t.Errorf("over 7 days, the caption says %q, want the latest minute's", got)
	}
	if got := b.Eval(`window.refused.join("; ")`); got != "" {
		t.Errorf("the Content-Security-Policy refused: %s", got)
	}
	b.Do("go back", chromedp.NavigateBack())
	b.Until("back to the hour", `() => location.hash === "#dashboard?window=1h" &&
		document.getElementById("dashboard-window").value === "1h" &&
		document.getElementById("dashboard").dataset.resolution === "minute"`)
}
