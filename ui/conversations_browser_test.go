package ui_test

import (
	"regexp"
	"strings"
	"testing"
	"time"

	boardv1 "github.com/symphonix/symphonix/api/symphonix/board/v1"

	"github.com/chromedp/chromedp"

	"github.com/symphonix/symphonix/agentlink"
	"github.com/symphonix/symphonix/api/symphonix/board/v1/boardv1connect"
	"github.com/symphonix/symphonix/identity"
	"github.com/symphonix/symphonix/internal/boardtest"
	"github.com/symphonix/symphonix/internal/browsertest"
)

// report has a linked agent report pointers to the board.
func report(t *testing.T, a *agent, pointers []agentlink.ConversationPointer, full bool) {
	t.Helper()
	if err := a.link.ReportConversations(t.Context(), pointers, full); err != nil {
		t.Fatalf("ReportConversations: %v", err)
	}
}

// conversationRows is a predicate on the page: the conversations table
// shows exactly want, "agent/thread" joined by commas, in that order.
const conversationRows = `(want) => {
	if (document.getElementById("conversations-wrap").hidden) return want === "";
	return Array.from(document.querySelectorAll("#conversation-rows tr"))
		.map((tr) => tr.dataset.agent + "/" + tr.dataset.thread).join(",") === want;
}`

// conversationCells is the text of the cells of the row of agent's
// thread, joined by " | ", a list's items by ", ".
func conversationCells(t *testing.T, b *browsertest.Tab, agent, thread string) string {
	t.Helper()
	return b.Eval(`(() => {
		const tr = Array.from(document.querySelectorAll("#conversation-rows tr"))
			.find((tr) => tr.dataset.agent === ` + browsertest.Quote(agent) + ` && tr.dataset.thread === ` + browsertest.Quote(thread) + `);
		if (tr === undefined) return "missing";
		return Array.from(tr.cells).map((c) => {
			const items = Array.from(c.querySelectorAll("li"));
			return items.length > 0 ? items.map((li) => li.textContent).join(", ") : c.textContent.trim();
		}).join(" | ");
	})()`)
}

// pairWith pairs the person email, signed in with password, with the
// agent's thread, through a code the agent asks for and the person enters:
// the board names in a pointer only the people it identified for the
// agent.
func pairWith(t *testing.T, bt *boardtest.Board, a *agent, thread, email, password string) {
	t.Helper()
	code, _, err := a.link.Pair(t.Context(), thread)
	if err != nil {
		t.Fatalf("pair %s: %v", thread, err)
	}
	users := boardv1connect.NewUserServiceClient(bt.SessionClient(bt.SignIn(email, password)))
	if _, err := users.EnterPairingCode(t.Context(), &boardv1.EnterPairingCodeRequest{Code: code}); err != nil {
		t.Fatalf("%s enters the code for %s: %v", email, thread, err)
	}
}

func TestBrowserConversations(t *testing.T) {
	bt := boardtest.Start(t, boardtest.Options{})
	bt.AddUser("ann@example.com", identity.RoleViewer, "ann's password!")
	bt.AddUser("bob@example.com", identity.RoleViewer, "bob's password!")
	bt.AddUser("cy@example.com", identity.RoleViewer, "cy's password!!")
	b := browsertest.New(t)

	// An admin, before any agent has reported: the empty state says so.
	signInTo(t, b, bt, bt.OperatorToken("root", identity.RoleAdmin), "conversations")
	b.Until("the admin's empty state", `() => {
		const e = document.getElementById("conversations-empty");
		return !e.hidden && e.textContent.includes("No agent has reported a conversation") &&
			document.getElementById("conversations-wrap").hidden &&
			document.getElementById("conversations-scope").textContent.includes("every conversation");
	}`)

	// An agent reports three pointers, one with Ann in it; the open view
	// shows them, newest first, without a reload.
	now := time.Now()
	concierge := startAgent(t, bt, agentlink.Identity{Name: "concierge"})
	pairWith(t, bt, concierge, "t-ann", "ann@example.com", "ann's password!")
	pairWith(t, bt, concierge, "t-bob", "bob@example.com", "bob's password!")
	pairWith(t, bt, concierge, "t-bob", "cy@example.com", "cy's password!!")
	report(t, concierge, []agentlink.ConversationPointer{
		{Thread: "t-ann", Updated: now.Add(-3*time.Minute - 5*time.Second), People: []string{"Ann@Example.com"}},
		{Thread: "t-bob", Updated: now.Add(-10 * time.Second), Waiting: true, People: []string{"bob@example.com", "cy@example.com"}},
		{Thread: "<b>t-nobody</b>", Updated: now.Add(-2 * time.Hour)},
	}, true)
	b.Until("the admin sees all three, newest first", conversationRows,
		"concierge/t-bob,concierge/t-ann,concierge/<b>t-nobody</b>")
	for _, tt := range []struct{ thread, want string }{
		{thread: "t-ann", want: `^concierge \| t-ann \| 3 min ago \| no \| ann@example\.com$`},
		{thread: "t-bob", want: `^concierge \| t-bob \| \d+ s ago \| yes \| bob@example\.com, cy@example\.com$`},
		{thread: "<b>t-nobody</b>", want: `^concierge \| <b>t-nobody</b> \| 2 h ago \| no \| —$`},
	} {
		if got := conversationCells(t, b, "concierge", tt.thread); !regexp.MustCompile(tt.want).MatchString(got) {
			t.Errorf("row of %s = %q, want it to match %s", tt.thread, got, tt.want)
		}
	}
	if got := b.Eval(`String(document.querySelectorAll("#conversation-rows b").length)`); got != "0" {
		t.Errorf("a thread's name became %s element(s): want it shown as text", got)
	}

	// A second agent reports; the pointer appears within a few seconds, on
	// top, and the filter offers both agents.
	helpdesk := startAgent(t, bt, agentlink.Identity{Name: "helpdesk"})
	pairWith(t, bt, helpdesk, "t-new", "ann@example.com", "ann's password!")
	report(t, helpdesk, []agentlink.ConversationPointer{
		{Thread: "t-new", Updated: time.Now(), People: []string{"ann@example.com"}},
	}, true)
	b.Until("the new report, on top", conversationRows,
		"helpdesk/t-new,concierge/t-bob,concierge/t-ann,concierge/<b>t-nobody</b>")
	b.Until("the filter offers both agents", `() =>
		Array.from(document.getElementById("conversations-agent").options).map((o) => o.value).join(",") === ",concierge,helpdesk"`)
	b.Eval(`(() => {
		const s = document.getElementById("conversations-agent");
		s.value = "helpdesk";
		s.dispatchEvent(new Event("change"));
		return "";
	})()`)
	b.Until("only helpdesk's", conversationRows, "helpdesk/t-new")

	// Ann, a viewer signed in with her password, sees only the
	// conversations she is in.
	b.Do("sign out",
		chromedp.Click(chromedp.ID("sign-out")),
		chromedp.WaitVisible(chromedp.ID("email")),
	)
	signInWithPassword(t, b, bt, "ann@example.com", "ann's password!")
	open(t, b, "conversations")
	b.Until("Ann sees hers", conversationRows, "helpdesk/t-new,concierge/t-ann")
	if got := b.Eval(`document.getElementById("conversations-scope").textContent`); !strings.Contains(got, "You see the conversations you are in") {
		t.Errorf("scope = %q, want it to say Ann sees the conversations she is in", got)
	}
	if got := b.Eval(`document.getElementById("conversations-agent").value`); got != "" {
		t.Errorf("filter after signing in again = %q, want every agent", got)
	}

	// A new report with Ann in it appears without a reload; one without
	// her does not.
	report(t, concierge, []agentlink.ConversationPointer{
		{Thread: "t-ann-2", Updated: time.Now(), Waiting: true, People: []string{"ann@example.com"}},
		{Thread: "t-bob-2", Updated: time.Now(), People: []string{"bob@example.com"}},
	}, false)
	b.Until("Ann's new conversation, on top", conversationRows,
		"concierge/t-ann-2,helpdesk/t-new,concierge/t-ann")
	if got, want := conversationCells(t, b, "concierge", "t-ann-2"), "concierge | t-ann-2 | "; !strings.HasPrefix(got, want) || !strings.HasSuffix(got, "| yes | ann@example.com") {
		t.Errorf("row of t-ann-2 = %q, want it waiting, with ann@example.com in it", got)
	}
}
