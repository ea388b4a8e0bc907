package ui_test

import (
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	boardv1 "github.com/symphonix/symphonix/api/symphonix/board/v1"
	"github.com/symphonix/symphonix/identity"
	"github.com/symphonix/symphonix/internal/browsertest"
)

const (
	originBoard = boardv1.PauseOrigin_PAUSE_ORIGIN_BOARD
	originLocal = boardv1.PauseOrigin_PAUSE_ORIGIN_LOCAL
)

// pauseShows: the agent's page shows its pause as kind ("paused",
// "pausing", "resuming", "running"), the word first.
const pauseShows = `(kind) => {
	const p = document.getElementById("pause-state");
	const word = {paused: "paused", pausing: "pausing…", resuming: "resuming…", running: "taking work"}[kind];
	return p.dataset.pause === kind && p.textContent.startsWith(word);
}`

// visible says whether the element with id is shown.
func visible(t *testing.T, b *browsertest.Tab, id string) bool {
	t.Helper()
	return b.Eval(`(() => { const e = document.getElementById("`+id+`"); return e !== null && e.offsetParent !== null ? "shown" : "hidden"; })()`) == "shown"
}

// TestBrowserPause: an admin pauses an agent from its page with a reason;
// the agent's link gets the pause with it and who; the page says pausing…
// until the agent answers, then paused, here and in the agents table.
// Resuming goes the same way. A pause without a reason is not sent; one
// the board refuses shows the board's word.
func TestBrowserPause(t *testing.T) {
	bt := linkBoard(t)
	desk := openRawLink(t, bt, "desk", "health", "pause")

	b := browsertest.New(t)
	signInTo(t, b, bt, bt.OperatorToken("root", identity.RoleAdmin), "agents")
	openAgentPage(t, b, "desk")
	b.Until("desk taking work", pauseShows, "running")
	if !visible(t, b, "pause-button") || visible(t, b, "resume-button") {
		t.Fatal("an admin on a running agent's page: want Pause, and no Resume")
	}

	// Without a reason nothing is sent.
	b.RecordFetches()
	b.Do("pause without a reason", chromedp.Click(chromedp.ID("pause-button")))
	b.Until("the reason asked for", `() => {
		const e = document.getElementById("pause-error");
		return !e.hidden && e.textContent.includes("the reason is required") &&
			document.getElementById("pause-reason").getAttribute("aria-invalid") === "true";
	}`)
	for _, path := range b.Fetched() {
		if strings.HasSuffix(path, "/PauseAgent") {
			t.Errorf("a pause without a reason sent %s", path)
		}
	}

	// One the board refuses shows what the board said, in the error style.
	b.Do("pause with a control character in the reason",
		chromedp.SetValue(chromedp.ID("pause-reason"), "tab\x07bell"),
		chromedp.Click(chromedp.ID("pause-button")),
	)
	b.Until("the board's refusal shown", `() => {
		const e = document.getElementById("pause-error");
		return !e.hidden && e.classList.contains("error") && e.textContent.includes("invalid_argument") &&
			e.textContent.includes("reason: control characters");
	}`)

	const reason = "the refunds API is down <b>since noon</b>"
	b.Do("pause with a reason",
		chromedp.SetValue(chromedp.ID("pause-reason"), reason),
		chromedp.Click(chromedp.ID("pause-button")),
	)
	p := desk.pauseNext()
	if !p.GetPaused() || p.GetReason() != reason || p.GetBy() != "root" || p.GetTime() == nil {
		t.Fatalf("the link got %v, want a pause by root with the reason", p)
	}
	// The board has sent it: until the agent answers, the page waits.
	b.Until("pausing…", pauseShows, "pausing")
	if got := b.Eval(`document.getElementById("pause-error").hidden ? "" : document.getElementById("pause-error").textContent`); got != "" {
		t.Errorf("error shown after a pause that went through: %q", got)
	}
	b.Do("the agents table", chromedp.Click(chromedp.ID("tab-agents")))
	b.Until("desk pausing… in the table", rowPause, "desk", "pausing")
	desk.state(true, originBoard, p.GetReason(), p.GetBy())
	b.Until("desk paused in the table", rowPause, "desk", "paused")
	if got := b.Eval(`document.querySelector('tr[data-agent="desk"] .badge.pause').title`); !strings.Contains(got, reason) || !strings.Contains(got, "root") {
		t.Errorf("the marker's title = %q, want who and why", got)
	}
	openAgentPage(t, b, "desk")
	b.Until("paused", pauseShows, "paused")
	said := b.Eval(`document.getElementById("pause-state").textContent`)
	for _, want := range []string{"Paused by root on the board at ", reason} {
		if !strings.Contains(said, want) {
			t.Errorf("pause = %q, want it to contain %q", said, want)
		}
	}
	if got := b.Eval(`document.querySelector("#agent b") === null ? "text" : "markup"`); got != "text" {
		t.Errorf("a reason with <b>: drawn as %s, want text", got)
	}
	if visible(t, b, "pause-button") || !visible(t, b, "resume-button") {
		t.Error("a paused agent's page: want Resume, and no Pause")
	}

	b.Do("resume", chromedp.Click(chromedp.ID("resume-button")))
	if p := desk.pauseNext(); p.GetPaused() || p.GetBy() != "root" {
		t.Fatalf("the link got %v, want a resume by root", p)
	}
	b.Until("resuming…", pauseShows, "resuming")
	desk.state(false, originBoard, "", "root")
	b.Until("taking work again", pauseShows, "running")
	b.Until("no marker in the table", rowPause, "desk", "none")

	// A pause set on the agent's machine is shown as the agent's.
	desk.state(true, originLocal, "disk full", "ops@box")
	b.Until("paused on the agent's machine", pauseShows, "paused")
	if got := b.Eval(`document.getElementById("pause-state").textContent`); !strings.Contains(got, "by ops@box on the agent's machine") || !strings.Contains(got, "disk full") {
		t.Errorf("a local pause = %q, want who, where and why", got)
	}
	noEnumNames(t, b, "the agent's page")
}

// TestBrowserPauseNotOffered: a viewer sees an agent's pause but no button;
// an agent that does not announce pause cannot be paused, and its page
// says so, to an admin too.
func TestBrowserPauseNotOffered(t *testing.T) {
	bt := linkBoard(t)
	openRawLink(t, bt, "desk", "health", "pause")
	openRawLink(t, bt, "old", "health")

	b := browsertest.New(t)
	signInTo(t, b, bt, bt.OperatorToken("vic", identity.RoleViewer), "agents")
	openAgentPage(t, b, "desk")
	b.Until("desk taking work", pauseShows, "running")
	if visible(t, b, "pause-button") || visible(t, b, "resume-button") || visible(t, b, "pause-reason") {
		t.Error("a viewer: want no Pause, Resume or reason")
	}
	if !visible(t, b, "pause-readonly") {
		t.Error("a viewer: want the page to say only admins may pause")
	}

	b.Do("sign out",
		chromedp.Click(chromedp.ID("sign-out")),
		chromedp.WaitVisible(chromedp.ID("token")),
	)
	signInTo(t, b, bt, bt.OperatorToken("root", identity.RoleAdmin), "agents")
	openAgentPage(t, b, "old")
	b.UntilText("old cannot be paused", "#pause-unable", "cannot be paused from the board")
	if visible(t, b, "pause-button") || visible(t, b, "resume-button") || visible(t, b, "pause-readonly") {
		t.Error("an agent without pause: want no Pause, no Resume, and no word on roles")
	}
	// From one agent's page to another's, by the address.
	b.Eval(`location.hash = "#agent/desk"; "moved"`)
	b.Until("desk's page", pageShows, "desk")
	b.Until("desk taking work, and Pause offered", `() =>
		document.getElementById("pause-state").dataset.pause === "running" &&
		document.getElementById("pause-button").offsetParent !== null &&
		document.getElementById("pause-unable").hidden`)
}
