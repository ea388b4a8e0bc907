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
		return ["ListServers", "ListSwitches", "SetToolSwitch", "GetSwitches", "ReplaceSwitches"].filter((m) => called.has(m)).join(",");
	})()`); got != "ListServers,ListSwitches,SetToolSwitch" {
		t.Errorf("ToolService methods called = %q, want ListServers,ListSwitches,SetToolSwitch", got)
	}
	if got := b.Eval(`document.getElementById("tools-status").textContent`); !strings.Contains(got, "told at once") {
		t.Errorf("status = %q, want it to say the agent was told at once", got)
	}
	if got := b.Eval(`document.getElementById("tools-error").hidden ? "" : document.getElementById("tools-error").textContent`); got != "" {
		t.Errorf("error shown to an admin: %q", got)
	}
	noEnumNames(t, b, "tools")

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
	// A click sends its SetToolSwitch at once, if it sends one.
	for _, path := range b.Fetched() {
		if strings.HasSuffix(path, "/SetToolSwitch") {
			t.Errorf("a viewer's click sent %s", path)
		}
	}
	// The board tells the agent of each change in the order it makes them:
	// had the viewer's click switched anything, the agent would hear it
	// before an admin's change made now.
	admin := boardv1connect.NewToolServiceClient(bt.Client(bt.OperatorToken("root", identity.RoleAdmin)))
	if _, err := admin.SetToolSwitch(t.Context(), &boardv1.SetToolSwitchRequest{Agent: "clerk", Tool: "orders.refund", On: false}); err != nil {
		t.Fatalf("SetToolSwitch(clerk, orders.refund, off): %v", err)
	}
	if got, want := nextWord(t, words), (word{Spoken: true}); !cmp.Equal(got, want, cmp.Comparer(sameNames)) {
		t.Errorf("after a viewer's click and an admin's change: clerk first told %+v, want %+v", got, want)
	}
}

// TestBrowserToolSwitchesOffline: an agent that is not connected is shown
// with the tools its last hello declared, marked offline, and its switch
// flips; it hears the switch when it links again, and is then shown
// online.
func TestBrowserToolSwitchesOffline(t *testing.T) {
	bt := boardtest.Start(t, boardtest.Options{OfflineGrace: 100 * time.Millisecond})
	archivist := agentlink.Identity{Name: "archivist", Tools: []string{"files.read", "files.write"}}
	words := make(chan word, 16)
	withWords := agentlink.Config{
		Identity: archivist,
		OnSwitches: func(on []string, spoken bool) {
			words <- word{On: slices.Clone(on), Spoken: spoken}
		},
	}
	// archivist and courier declare their tools and leave; clerk stays.
	// archivist leaves once it has heard its first word (a word on its way
	// when it leaves is not heard).
	gone := linkAgent(t, bt, withWords)
	if got, want := nextWord(t, words), (word{Spoken: false}); !cmp.Equal(got, want, cmp.Comparer(sameNames)) {
		t.Fatalf("archivist: first word = %+v, want %+v", got, want)
	}
	gone.stop()
	startAgent(t, bt, agentlink.Identity{Name: "courier", Tools: []string{"mail.send"}}).stop()
	switchAgent(t, bt, "clerk", []string{"files.read"})

	b := browsertest.New(t)
	signInTo(t, b, bt, bt.OperatorToken("root", identity.RoleAdmin), "tools")
	const shown = `(agent, tool, online) => {
		const box = document.querySelector('input.switch[data-agent="' + agent + '"][data-tool="' + tool + '"]');
		if (box === null || box.disabled) return false;
		const li = box.closest("li");
		const badge = li.querySelector(".badge.offline");
		return li.dataset.online === online && (online === "true" ? badge === null : badge !== null && badge.textContent === "offline");
	}`
	b.Until("archivist's files.read switch, offline", shown, "archivist", "files.read", "false")
	b.Until("archivist's files.write switch, offline", shown, "archivist", "files.write", "false")
	b.Until("courier's mail.send switch, offline", shown, "courier", "mail.send", "false")
	b.Until("clerk's files.read switch, online", shown, "clerk", "files.read", "true")
	b.Until("archivist's switches unspoken", switchIs, "archivist", "files.write", "unspoken")
	// A server none of whose agents is connected says so; one that has a
	// connected agent does not.
	const allOffline = `(server) => {
		const s = document.querySelector('article.server[data-server="' + server + '"]');
		const n = s && s.querySelector(".all-offline");
		return n !== null && n.textContent.includes("No agent that declares it is connected") ? "said" : "not said";
	}`
	if got := b.Eval("(" + allOffline + `)("mail")`); got != "said" {
		t.Errorf("mail, whose only agent is offline: that none is connected %s", got)
	}
	if got := b.Eval("(" + allOffline + `)("files")`); got != "not said" {
		t.Errorf("files, with clerk connected: that none is connected %s", got)
	}

	flipSwitch(t, b, "archivist", "files.write")
	b.Until("archivist's files.write shown on", switchIs, "archivist", "files.write", "on")
	b.Until("the status says archivist is told when it next connects", `() =>
		document.getElementById("tools-status").textContent.includes("told when it next connects")`)
	if got := b.Eval(`document.getElementById("tools-error").hidden ? "" : document.getElementById("tools-error").textContent`); got != "" {
		t.Errorf("error shown flipping an offline agent's switch: %q", got)
	}

	// It hears the switch the moment it links again, and is shown online.
	linkAgent(t, bt, withWords)
	if got, want := nextWord(t, words), (word{On: []string{"files.write"}, Spoken: true}); !cmp.Equal(got, want, cmp.Comparer(sameNames)) {
		t.Errorf("archivist linking again: first word = %+v, want %+v", got, want)
	}
	b.Until("archivist's files.write switch, online", shown, "archivist", "files.write", "true")
	b.Until("archivist's files.write still on", switchIs, "archivist", "files.write", "on")
}
