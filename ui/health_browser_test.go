package ui_test

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/symphonix/symphonix/agentlink"
	"github.com/symphonix/symphonix/ent"
	"github.com/symphonix/symphonix/identity"
	"github.com/symphonix/symphonix/internal/boardtest"
	"github.com/symphonix/symphonix/internal/browsertest"
)

// Predicates on the agents view and an agent's page, JavaScript functions.
const (
	// rowHealth: the agent's row shows health word (its data-health, the
	// badge's text, and its class), "none" for —.
	rowHealth = `(name, word) => {
		const row = Array.from(document.querySelectorAll("tr[data-agent]")).find((r) => r.dataset.agent === name);
		if (row === undefined || row.dataset.health !== word) return false;
		const b = row.querySelector(".health");
		return b !== null && b.textContent === (word === "none" ? "—" : word) &&
			(word === "none" || b.classList.contains(word));
	}`
	// rowPause: the agent's row shows pause kind ("paused", "pausing",
	// "resuming", "none") and, when it is not none, its marker.
	rowPause = `(name, kind) => {
		const row = Array.from(document.querySelectorAll("tr[data-agent]")).find((r) => r.dataset.agent === name);
		if (row === undefined || row.dataset.pause !== (kind === "none" ? "" : kind)) return false;
		const m = row.querySelector(".badge.pause");
		if (kind === "none") return m === null;
		return m !== null && m.textContent === (kind === "paused" ? "paused" : kind + "…");
	}`
	// pageShows: the agent's page is shown, for name, drawn.
	pageShows = `(name) => !document.getElementById("agent").hidden &&
		document.getElementById("agent-name").textContent === name &&
		!document.getElementById("agent-body").hidden`
	// checkShown: the page's latest round lists check with status.
	checkShown = `(name, status) => {
		const tr = Array.from(document.querySelectorAll("#check-rows tr")).find((r) => r.dataset.check === name);
		return tr !== undefined && tr.dataset.status === status;
	}`
)

// openAgentPage opens the page of the agent name from its link in the
// agents table, and waits until it is drawn.
func openAgentPage(t *testing.T, b *browsertest.Tab, name string) {
	t.Helper()
	b.Until("a link to "+name+"'s page", `(name) => {
		const row = Array.from(document.querySelectorAll("tr[data-agent]")).find((r) => r.dataset.agent === name);
		const a = row && row.querySelector("a.name");
		if (!a || a.getAttribute("href") !== "#agent/" + encodeURIComponent(name)) return false;
		a.click();
		return true;
	}`, name)
	b.Until(name+"'s page drawn", pageShows, name)
}

// TestBrowserFleetHealth: the agents table shows each agent's health and
// follows it as the agent reports, without a reload: ok, degraded with the
// failing check named on hover, ok again; an agent that never reports
// shows —.
func TestBrowserFleetHealth(t *testing.T) {
	bt := linkBoard(t)
	desk := openRawLink(t, bt, "desk", "health", "pause")
	startAgent(t, bt, agentlink.Identity{Name: "plain"})
	desk.report(time.Now(), check("mcp:orders", checkOK, ""), check("waiting", checkOK, ""))

	b := browsertest.New(t)
	signInTo(t, b, bt, bt.OperatorToken("vic", identity.RoleViewer), "agents")
	b.Until("desk ok", rowHealth, "desk", "ok")
	b.Until("plain without health", rowHealth, "plain", "none")
	if got := b.Eval(`document.querySelector('tr[data-agent="plain"] .health').title`); !strings.Contains(got, "does not announce health") {
		t.Errorf("plain's health title = %q, want it to say it does not announce health", got)
	}
	if got := b.Eval(`Array.from(document.querySelectorAll("#agent-table thead th")).map((th) => th.textContent).join(",")`); !strings.Contains(got, "Status,Health,") {
		t.Errorf("columns = %s, want Health after Status", got)
	}
	b.Eval(`window.sameDocument = "yes"; "set"`)

	desk.report(time.Now(), check("mcp:orders", checkError, "no answer within 5s"), check("waiting", checkOK, ""))
	b.Until("desk degraded", rowHealth, "desk", "degraded")
	title := b.Eval(`document.querySelector('tr[data-agent="desk"] .health').title`)
	if !strings.Contains(title, "mcp:orders failed (no answer within 5s)") || strings.Contains(title, "waiting") {
		t.Errorf("desk's health title = %q, want it to name mcp:orders failing, and not waiting", title)
	}
	desk.report(time.Now(), check("mcp:orders", checkOK, ""), check("waiting", checkOK, ""))
	b.Until("desk ok again", rowHealth, "desk", "ok")

	if got := b.Eval(`window.sameDocument || "reloaded"`); got != "yes" {
		t.Errorf("page: %s, want the same document throughout", got)
	}
	noEnumNames(t, b, "agents")
}

// TestBrowserAgentPage: an agent's page lists the checks of its latest
// round, details as text; its strip and incidents follow the rounds, those
// the board kept before the page opened and those that come while it is
// open, without a reload.
func TestBrowserAgentPage(t *testing.T) {
	bt := linkBoard(t)
	desk := openRawLink(t, bt, "desk", "health", "pause")
	now := time.Now()
	const detail = "no answer within 5s <b>from orders</b>"
	desk.report(now.Add(-40*time.Minute), check("mcp:orders", checkOK, ""), check("waiting", checkOK, ""))
	desk.report(now.Add(-28*time.Minute), check("mcp:orders", checkError, detail), check("waiting", checkOK, ""))

	b := browsertest.New(t)
	signInTo(t, b, bt, bt.OperatorToken("vic", identity.RoleViewer), "agents")
	openAgentPage(t, b, "desk")
	b.Eval(`window.sameDocument = "yes"; "set"`)
	b.Until("mcp:orders shown failing", checkShown, "mcp:orders", "error")
	b.Until("waiting shown ok", checkShown, "waiting", "ok")
	if got := b.Eval(`document.querySelector('#check-rows tr[data-check="mcp:orders"] .detail').textContent`); got != detail {
		t.Errorf("mcp:orders' detail = %q, want %q as text", got, detail)
	}
	if got := b.Eval(`document.querySelector("#agent b") === null ? "text" : "markup"`); got != "text" {
		t.Errorf("a detail with <b>: drawn as %s, want text", got)
	}
	if got := b.Eval(`document.getElementById("health-summary").dataset.health`); got != "degraded" {
		t.Errorf("summary = %s, want degraded", got)
	}
	facts := b.Eval(`document.getElementById("agent-facts").textContent`)
	for _, want := range []string{"online", "health", "pause", "first seen", "last seen"} {
		if !strings.Contains(facts, want) {
			t.Errorf("facts = %q, want %q", facts, want)
		}
	}
	b.Until("the failure, still going, in the incidents", `() => {
		const li = document.querySelector('#incidents li[data-check="mcp:orders"]');
		return li !== null && li.dataset.ongoing === "true" && li.textContent.includes("has been failing since");
	}`)
	b.Until("the strip: ok, then degraded", `() =>
		Array.from(document.querySelectorAll("#strip .seg")).map((s) => s.dataset.status).join(",") === "ok,degraded"`)

	// It passes again: the page follows, and the incident has an end.
	desk.report(now, check("mcp:orders", checkOK, ""), check("waiting", checkOK, ""))
	b.Until("mcp:orders shown ok", checkShown, "mcp:orders", "ok")
	b.Until("the incident ended", `() => {
		const li = document.querySelector('#incidents li[data-check="mcp:orders"]');
		return li !== null && li.dataset.ongoing === "false";
	}`)
	incident := b.Eval(`document.querySelector('#incidents li[data-check="mcp:orders"]').textContent`)
	for _, want := range []string{"mcp:orders failed from ", "(28 min): ", detail} {
		if !strings.Contains(incident, want) {
			t.Errorf("incident = %q, want it to contain %q", incident, want)
		}
	}
	if n := b.Eval(`String(document.querySelectorAll("#incidents li").length)`); n != "1" {
		t.Errorf("%s incidents, want 1", n)
	}
	b.Until("the strip: ok, degraded, ok", `() =>
		Array.from(document.querySelectorAll("#strip .seg")).map((s) => s.dataset.status).join(",") === "ok,degraded,ok"`)
	if got := b.Eval(`document.querySelector('#strip .seg[data-status="degraded"]').title`); !strings.Contains(got, "(28 min): mcp:orders failed") {
		t.Errorf("the degraded stretch's title = %q, want how long and what failed", got)
	}
	if got := b.Eval(`window.sameDocument || "reloaded"`); got != "yes" {
		t.Errorf("page: %s, want the same document throughout", got)
	}
	if n := calls(t, b, "GetHealthHistory"); n != 1 {
		t.Errorf("GetHealthHistory called %d times, want once: the watch brings what comes after", n)
	}
	noEnumNames(t, b, "the agent's page")
}

// storeRounds puts n rounds of agent in the board's store, every apart,
// the newest every ago, oldest first, as the board keeps them: every
// other one degraded, the newest big of them with lines so large that a
// page of GetHealthHistory holds only some of them.
func storeRounds(t *testing.T, bt *boardtest.Board, agent string, n, big int, every time.Duration) {
	t.Helper()
	type line struct {
		Name       string `json:"name"`
		Status     string `json:"status"`
		DurationNS int64  `json:"duration_ns"`
		Detail     string `json:"detail,omitempty"`
	}
	now := time.Now()
	var rows []*ent.HealthRoundCreate
	flush := func() {
		if err := bt.Store.HealthRound.CreateBulk(rows...).Exec(t.Context()); err != nil {
			t.Fatalf("store rounds: %v", err)
		}
		rows = rows[:0]
	}
	for i := n; i >= 1; i-- {
		status, check := "ok", "ok"
		if i%2 == 0 {
			status, check = "degraded", "error"
		}
		lines := []line{{Name: "mcp:orders", Status: check, DurationNS: int64(time.Millisecond)}}
		if i <= big {
			for j := range 99 {
				lines = append(lines, line{Name: fmt.Sprintf("line-%02d", j), Status: "ok", Detail: strings.Repeat("d", 1000)})
			}
		}
		js, err := json.Marshal(lines)
		if err != nil {
			t.Fatal(err)
		}
		at := now.Add(-time.Duration(i) * every)
		rows = append(rows, bt.Store.HealthRound.Create().SetAgent(agent).SetStatus(status).SetChecks(js).SetStarted(at).SetReceived(at))
		if len(rows) == 100 {
			flush()
		}
	}
	if len(rows) > 0 {
		flush()
	}
}

// TestBrowserAgentHistoryPaged: the page reads an agent's history a page at
// a time, the newest 1,000 rounds at most, and says when the board keeps
// older ones; the strip spans the last 24 hours, or 7 days.
func TestBrowserAgentHistoryPaged(t *testing.T) {
	bt := linkBoard(t)
	desk := openRawLink(t, bt, "desk", "health")
	storeRounds(t, bt, "desk", 1600, 60, 2*time.Minute)          // 53 h of rounds; 60 of about 100 KB each
	desk.report(time.Now(), check("mcp:orders", checkError, "")) // the newest stored is ok

	b := browsertest.New(t)
	signInTo(t, b, bt, bt.OperatorToken("vic", identity.RoleViewer), "agents")
	openAgentPage(t, b, "desk")
	b.Until("the newest 1,000 rounds read", `() => document.getElementById("strip").dataset.rounds === "1000"`)
	if n := calls(t, b, "GetHealthHistory"); n < 2 {
		t.Errorf("GetHealthHistory called %d times, want a page at a time: at least 2 for pages cut at 4 MiB", n)
	}
	if got := b.Eval(`document.getElementById("strip-note").textContent`); !strings.Contains(got, "newest 1,000 rounds; the board keeps older ones") {
		t.Errorf("strip note = %q, want it to say only the newest 1,000 rounds are drawn", got)
	}
	// Every round is its own stretch (each differs from the one before), so
	// the strip has one segment per round in its span: in 24 h, about 720
	// of the 1,000 (the newest 999 stored, 33 h, and the one reported).
	if n := segments(t, b); n < 700 || n > 750 {
		t.Errorf("segments in 24 h = %d, want about 720", n)
	}
	b.Until("the last 7 d", `() => {
		const b = document.querySelector('#agent .range[data-hours="168"]');
		b.click();
		return b.getAttribute("aria-pressed") === "true" &&
			document.querySelector("#strip .strip-axis").textContent.startsWith("7 d ago");
	}`)
	if n := segments(t, b); n != 1000 {
		t.Errorf("segments in 7 d = %d, want 1000", n)
	}
}

// segments is how many stretches the strip draws.
func segments(t *testing.T, b *browsertest.Tab) int {
	t.Helper()
	n, err := strconv.Atoi(b.Eval(`String(document.querySelectorAll("#strip .seg").length)`))
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// TestBrowserAgentPageByAddress: an agent's page opened by its address, for
// an agent the board has never seen, says so; when the agent links and
// reports, the page shows it, without a reload.
func TestBrowserAgentPageByAddress(t *testing.T) {
	bt := linkBoard(t)
	b := browsertest.New(t)
	b.Do("open a page by its address and sign in",
		chromedp.Navigate(bt.URL+"/#agent/ghost"),
		chromedp.WaitVisible(chromedp.ID("token")),
		chromedp.SetValue(chromedp.ID("token"), bt.OperatorToken("vic", identity.RoleViewer)),
		chromedp.Click(chromedp.ID("sign-in-button")),
		chromedp.WaitVisible(chromedp.ID("agent-title")),
	)
	b.UntilText("never seen", "#agent-error", "The board has never seen an agent named ghost.")
	if got := b.Eval(`document.getElementById("tab-agents").getAttribute("aria-current") || ""`); got != "page" {
		t.Errorf("the Agents tab on an agent's page: aria-current %q, want page", got)
	}

	ghost := openRawLink(t, bt, "ghost", "health")
	ghost.report(time.Now(), check("disk", checkError, "98% full"))
	b.Until("ghost's page", pageShows, "ghost")
	b.Until("disk shown failing", checkShown, "disk", "error")
	b.Until("the incident", `() => {
		const li = document.querySelector('#incidents li[data-check="disk"]');
		return li !== null && li.textContent.includes("98% full");
	}`)
	if got := b.Eval(`document.getElementById("agent-error").hidden ? "hidden" : "shown"`); got != "hidden" {
		t.Errorf("the error once the agent is known: %s, want hidden", got)
	}
}
