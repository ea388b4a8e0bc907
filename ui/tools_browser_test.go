package ui_test

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/google/go-cmp/cmp"

	"github.com/symphonix/symphonix/agentlink"
	boardv1 "github.com/symphonix/symphonix/api/symphonix/board/v1"
	"github.com/symphonix/symphonix/api/symphonix/board/v1/boardv1connect"
	"github.com/symphonix/symphonix/identity"
	"github.com/symphonix/symphonix/internal/boardtest"
	"github.com/symphonix/symphonix/internal/browsertest"
)

// word is what an agent was told it is switched on for.
type word struct {
	On     []string
	Spoken bool
}

// switchAgent links an agent declaring tools; the words it receives
// arrive on the channel, the first one (after the welcome) already read.
func switchAgent(t *testing.T, bt *boardtest.Board, name string, tools []string) <-chan word {
	t.Helper()
	words := make(chan word, 16)
	linkAgent(t, bt, agentlink.Config{
		Identity: agentlink.Identity{Name: name, Tools: tools},
		OnSwitches: func(on []string, spoken bool) {
			words <- word{On: slices.Clone(on), Spoken: spoken}
		},
	})
	if got, want := nextWord(t, words), (word{Spoken: false}); !cmp.Equal(got, want, cmp.Comparer(sameNames)) {
		t.Fatalf("%s: first word = %+v, want %+v", name, got, want)
	}
	return words
}

func sameNames(a, b []string) bool { return slices.Equal(a, b) }

func nextWord(t *testing.T, words <-chan word) word {
	t.Helper()
	select {
	case w := <-words:
		return w
	case <-time.After(browsertest.Ceiling):
		t.Fatalf("no word on the switches within %s", browsertest.Ceiling)
		return word{}
	}
}

// toolSwitch is the selector of agent's switch for tool.
func toolSwitch(agent, tool string) string {
	return `input.switch[data-agent="` + agent + `"][data-tool="` + tool + `"]`
}

// flipSwitch clicks agent's switch for tool. The query and the click are
// one step in the page: the view redraws its switches when the board's
// answer changes, so a node found in one step may be gone in the next.
func flipSwitch(t *testing.T, b *browsertest.Tab, agent, tool string) {
	t.Helper()
	if got := b.Eval(`(() => {
		const box = document.querySelector('` + toolSwitch(agent, tool) + `');
		if (box === null) return "missing";
		box.click();
		return "clicked";
	})()`); got != "clicked" {
		t.Fatalf("flip %s for %s: %s", tool, agent, got)
	}
}

// switchIs is a predicate on the page: the switch of agent for tool shows
// state ("on", "off", "unspoken"), and is not waiting for the board.
const switchIs = `(agent, tool, state) => {
	const box = document.querySelector('input.switch[data-agent="' + agent + '"][data-tool="' + tool + '"]');
	if (box === null) return false;
	const li = box.closest("li");
	return li.dataset.state === state && box.checked === (state === "on");
}`

func TestBrowserToolSwitches(t *testing.T) {
	bt := boardtest.Start(t, boardtest.Options{OfflineGrace: 100 * time.Millisecond})
	// An agent declares files.read and leaves: nobody runs "files" now.
	startAgent(t, bt, agentlink.Identity{Name: "archivist", Tools: []string{"files.read"}}).stop()
	words := switchAgent(t, bt, "clerk", []string{"orders.lookup_order", "orders.refund"})

	b := browsertest.New(t)
	signInTo(t, b, bt, bt.OperatorToken("root", identity.RoleAdmin), "tools")
	b.Until("orders with both tools, clerk's switches unspoken", `() => {
		const s = document.querySelector('article.server[data-server="orders"]');
		if (s === null) return false;
		const tools = Array.from(s.querySelectorAll("tbody tr")).map((tr) => tr.dataset.tool).join(",");
		return tools === "orders.lookup_order,orders.refund" &&
			s.querySelectorAll('li[data-agent="clerk"][data-state="unspoken"]').length === 2;
	}`)
	orders := b.Eval(`document.querySelector('article.server[data-server="orders"]').textContent`)
	for _, want := range []string{"lookup_order", "refund", "clerk", "nobody decided: nothing on"} {
		if !strings.Contains(orders, want) {
			t.Errorf("orders = %q, want it to contain %q", orders, want)
		}
	}
	b.Until("files: no connected agent runs it", `() => {
		const s = document.querySelector('article.server[data-server="files"]');
		return s !== null && s.querySelector("tbody") === null && s.textContent.includes("No connected agent runs it") &&
			s.textContent.includes("archivist");
	}`)

	// Each flip changes that one tool: the agent is told the tool flipped,
	// and the others as they were.
	flips := []struct {
		tool string
		want []string
	}{
		{tool: "orders.lookup_order", want: []string{"orders.lookup_order"}},
		{tool: "orders.refund", want: []string{"orders.lookup_order", "orders.refund"}},
		{tool: "orders.lookup_order", want: []string{"orders.refund"}},
	}
	for _, f := range flips {
		flipSwitch(t, b, "clerk", f.tool)
		if got, want := nextWord(t, words), (word{On: f.want, Spoken: true}); !cmp.Equal(got, want, cmp.Comparer(sameNames)) {
			t.Fatalf("after flipping %s: clerk told %+v, want %+v", f.tool, got, want)
		}
		for _, tool := range []string{"orders.lookup_order", "orders.refund"} {
			state := "off"
			if slices.Contains(f.want, tool) {
				state = "on"
			}
			b.Until(tool+" shown "+state, switchIs, "clerk", tool, state)
		}
	}
	// The view read every agent's switches in one call and flipped one tool
	// at a time: it never asked for one agent's switches, nor sent a whole
	// list.
	if got := b.Eval(`(() => {
		const called = new Set(performance.getEntriesByType("resource").map((e) => new URL(e.name).pathname.split("/").pop()));
		return ["ListServers", "ListSwitches", "SetSwitch", "GetSwitches", "SetSwitches"].filter((m) => called.has(m)).join(",");
	})()`); got != "ListServers,ListSwitches,SetSwitch" {
		t.Errorf("ToolService methods called = %q, want ListServers,ListSwitches,SetSwitch", got)
	}
	if got := b.Eval(`document.getElementById("tools-status").textContent`); !strings.Contains(got, "told at once") {
		t.Errorf("status = %q, want it to say the agent was told at once", got)
	}
	if got := b.Eval(`document.getElementById("tools-error").hidden ? "" : document.getElementById("tools-error").textContent`); got != "" {
		t.Errorf("error shown to an admin: %q", got)
	}

	// A viewer sees the switches, read-only from the start: a click flips
	// nothing, and the agent hears nothing.
	b.Do("sign out",
		chromedp.Click(chromedp.ID("sign-out")),
		chromedp.WaitVisible(chromedp.ID("token")),
	)
	signInTo(t, b, bt, bt.OperatorToken("vic", identity.RoleViewer), "tools")
	b.Until("the viewer sees refund on", switchIs, "clerk", "orders.refund", "on")
	b.Until("the viewer sees lookup_order off", switchIs, "clerk", "orders.lookup_order", "off")
	b.Until("the switches read-only, as they were", `() => {
		const boxes = Array.from(document.querySelectorAll("#servers input.switch"));
		return boxes.length === 2 && boxes.every((b) => b.disabled) &&
			!document.getElementById("tools-readonly").hidden &&
			boxes.map((b) => b.dataset.tool + "=" + b.checked).join(",") === "orders.lookup_order=false,orders.refund=true";
	}`)
	b.RecordFetches()
	flipSwitch(t, b, "clerk", "orders.lookup_order")
	if got := b.Eval(`document.querySelector('` + toolSwitch("clerk", "orders.lookup_order") + `').checked ? "on" : "off"`); got != "off" {
		t.Errorf("a viewer's click: lookup_order %s, want off", got)
	}
	// A click sends its SetSwitch at once, if it sends one.
	for _, path := range b.Fetched() {
		if strings.HasSuffix(path, "/SetSwitch") {
			t.Errorf("a viewer's click sent %s", path)
		}
	}
	// The board tells the agent of each change in the order it makes them:
	// had the viewer's click switched anything, the agent would hear it
	// before an admin's change made now.
	admin := boardv1connect.NewToolServiceClient(bt.Client(bt.OperatorToken("root", identity.RoleAdmin)))
	if _, err := admin.SetSwitch(t.Context(), &boardv1.SetSwitchRequest{Agent: "clerk", Tool: "orders.refund", On: false}); err != nil {
		t.Fatalf("SetSwitch(clerk, orders.refund, off): %v", err)
	}
	if got, want := nextWord(t, words), (word{Spoken: true}); !cmp.Equal(got, want, cmp.Comparer(sameNames)) {
		t.Errorf("after a viewer's click and an admin's change: clerk first told %+v, want %+v", got, want)
	}
}
