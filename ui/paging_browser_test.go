package ui_test

import (
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/symphonix/symphonix/agentlink"
	boardv1 "github.com/symphonix/symphonix/api/symphonix/board/v1"
	"github.com/symphonix/symphonix/api/symphonix/board/v1/boardv1connect"
	"github.com/symphonix/symphonix/ent"
	"github.com/symphonix/symphonix/identity"
	"github.com/symphonix/symphonix/internal/boardtest"
	"github.com/symphonix/symphonix/internal/browsertest"
)

// The web board's paging, as ui/static/board.js and the views set it.
const (
	pageSize = 1000   // the page a view asks for when it reads a whole set
	listMax  = 10_000 // the most of a whole set a view reads
)

// noEnumNames fails the test when the page shows an enum's name where a
// person should read a word ("ROLE_ADMIN" for "admin").
func noEnumNames(t *testing.T, b *browsertest.Tab, where string) {
	t.Helper()
	if got := b.Eval(`(document.body.innerText.match(/\b(ROLE|CALLER_KIND|DOOR|AGENT_STATE|APPROVAL_STATE|APPROVAL_EVENT|SAY|HEALTH_STATUS|CHECK_STATUS|PAUSE_ORIGIN|TRIGGER_KIND|DELIVERY_STATE|EVAL_SOURCE|EVAL_FLAG)_[A-Z_]+/) || [""])[0]`); got != "" {
		t.Errorf("%s: the page shows the enum name %s, want its word", where, got)
	}
}

// calls is how many times the page has called method, by the browser's
// record of what it fetched.
func calls(t *testing.T, b *browsertest.Tab, method string) int {
	t.Helper()
	n, err := strconv.Atoi(b.Eval(`String(performance.getEntriesByType("resource").filter((e) => new URL(e.name).pathname.endsWith("/" + ` + browsertest.Quote(method) + `)).length)`))
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// storeAgents puts n agents, "agent-00000" and on, in the board's store
// as an agent that linked once and left would be.
func storeAgents(t *testing.T, bt *boardtest.Board, n int) {
	t.Helper()
	now := time.Now()
	for from := 0; from < n; from += 500 {
		var rows []*ent.AgentCreate
		for i := from; i < min(n, from+500); i++ {
			rows = append(rows, bt.Store.Agent.Create().
				SetName(fmt.Sprintf("agent-%05d", i)).
				SetProtocol("2").
				SetFirstSeen(now).
				SetLastSeen(now))
		}
		if err := bt.Store.Agent.CreateBulk(rows...).Exec(t.Context()); err != nil {
			t.Fatalf("store agents: %v", err)
		}
	}
}

// TestBrowserAgentsPaged: a fleet larger than a page is read page by page
// and shown whole, 100 to a page of the table, each agent's state in words.
func TestBrowserAgentsPaged(t *testing.T) {
	bt := boardtest.Start(t, boardtest.Options{OfflineGrace: 100 * time.Millisecond})
	const stored = pageSize + 2
	storeAgents(t, bt, stored)
	startAgent(t, bt, agentlink.Identity{Name: "zz-online"})

	b := browsertest.New(t)
	signInTo(t, b, bt, bt.OperatorToken("ada", identity.RoleViewer), "agents")
	b.UntilText("every agent listed, a page at a time", "#agents-count", "Agents 1–100 of 1,003 agents")
	if n := calls(t, b, "ListAgents"); n < 2 {
		t.Errorf("ListAgents called %d times, want a page at a time: at least 2 for %d agents", n, stored+1)
	}
	if got := b.Eval(`document.querySelector('tr[data-agent="agent-00000"] .badge').textContent`); got != "offline" {
		t.Errorf("agent-00000's badge = %s, want offline", got)
	}
	b.Eval(`location.hash = "#agents?page=11"; "ok"`)
	b.Until("the last page", `() => document.querySelectorAll("#agent-rows tr").length === 3`)
	if got := b.Eval(`Array.from(document.querySelectorAll("#agent-rows tr")).map((r) => r.dataset.state).filter((s, i, all) => all.indexOf(s) === i).join(",")`); got != "offline,online" {
		t.Errorf("states shown = %s, want offline,online", got)
	}
	if got := b.Eval(`document.querySelector('tr[data-agent="zz-online"] .badge').textContent`); got != "online" {
		t.Errorf("zz-online's badge = %s, want online", got)
	}
	if got := b.Eval(`document.getElementById("agents-more").hidden ? "hidden" : document.getElementById("agents-more").textContent`); got != "hidden" {
		t.Errorf("notice of a cut list = %q, want none: every agent is shown", got)
	}
	noEnumNames(t, b, "agents")
}

// storeUsers puts n people, "person-00000@example.com" and on, viewers,
// in the board's store, as AddUser would have.
func storeUsers(t *testing.T, bt *boardtest.Board, n int) {
	t.Helper()
	now := time.Now()
	for from := 0; from < n; from += 500 {
		var rows []*ent.UserCreate
		for i := from; i < min(n, from+500); i++ {
			rows = append(rows, bt.Store.User.Create().
				SetID(fmt.Sprintf("usr-test%05d", i)).
				SetEmail(fmt.Sprintf("person-%05d@example.com", i)).
				SetRole(identity.RoleViewer.String()).
				SetCreatedAt(now).
				SetUpdatedAt(now))
		}
		if err := bt.Store.User.CreateBulk(rows...).Exec(t.Context()); err != nil {
			t.Fatalf("store people: %v", err)
		}
	}
}

// TestBrowserPeopleBound: past the most a view reads of a whole set, the
// people view shows the first of them and says plainly that there are
// more.
func TestBrowserPeopleBound(t *testing.T) {
	bt := boardtest.Start(t, boardtest.Options{})
	storeUsers(t, bt, listMax+1)
	b := browsertest.New(t)
	signInTo(t, b, bt, bt.OperatorToken("root", identity.RoleAdmin), "people")
	b.Until("the first people listed, and the notice", `(n) => document.querySelectorAll("#people-rows tr").length === n &&
		!document.getElementById("people-more").hidden`, listMax)
	if got, want := b.Eval(`document.getElementById("people-more").textContent`), "This page shows the first 10,000 people by email: the board knows more."; got != want {
		t.Errorf("notice = %q, want %q", got, want)
	}
	if got := b.Eval(`(() => { const rows = document.querySelectorAll("#people-rows tr"); return rows[0].dataset.email + " " + rows[rows.length - 1].dataset.email + " " + rows[0].dataset.role; })()`); got != "person-00000@example.com person-09999@example.com viewer" {
		t.Errorf("first and last shown, and the first's role = %s, want person-00000, person-09999, viewer", got)
	}
	if n := calls(t, b, "ListUsers"); n < listMax/pageSize {
		t.Errorf("ListUsers called %d times, want a page at a time: at least %d", n, listMax/pageSize)
	}
	noEnumNames(t, b, "people")
}

// TestBrowserHistoryMore: the history shows the decided approvals the
// watch sends, and More reads the older ones from ListApprovals until
// there are none.
func TestBrowserHistoryMore(t *testing.T) {
	// Not approvalBoard: its agent keeps the decisions it hears, and this one
	// hears more than that keeps.
	bt := boardtest.Start(t, boardtest.Options{})
	admin := boardv1connect.NewApprovalServiceClient(bt.Client(bt.OperatorToken("root", identity.RoleAdmin)))
	if _, err := admin.PutRule(t.Context(), &boardv1.PutRuleRequest{Rule: &boardv1.Rule{
		Agent: "*", Node: "*", Role: boardv1.Role_ROLE_ADMIN,
	}}); err != nil {
		t.Fatal(err)
	}
	payer := startAgent(t, bt, agentlink.Identity{Name: "payer"})
	const history, decided = 100, 103 // the watch's history, as approvals.js asks for it
	var ids []string
	for i := range decided {
		id, _ := raise(t, payer, fmt.Sprintf("run-%03d", i), fmt.Sprintf("Pay order %03d?", i), map[string]any{"n": i}, "")
		if _, err := admin.Cancel(t.Context(), &boardv1.CancelRequest{Id: id, Reason: "test"}); err != nil {
			t.Fatalf("Cancel(%s): %v", id, err)
		}
		ids = append(ids, id)
	}
	pending, _ := raise(t, payer, "run-pending", "Pay the last order?", map[string]any{"n": decided}, "")

	b := browsertest.New(t)
	signInToApprovals(t, b, bt, bt.OperatorToken("ada", identity.RoleAdmin))
	b.Until("the newest decided in the history, More offered", `(n) => document.querySelectorAll("#history-rows > tr").length === n &&
		!document.getElementById("history-more").hidden`, history)
	b.Until("the pending one queued", queued, pending)
	if got := b.Eval(`document.querySelector("#queue li .who").textContent`); got != "admin role: admins" {
		t.Errorf("who decides = %q, want admin role: admins", got)
	}
	if n := calls(t, b, "ListApprovals"); n != 0 {
		t.Errorf("ListApprovals called %d times before More, want none", n)
	}
	for _, id := range ids[:decided-history] {
		if got := b.Eval(`document.querySelector('#history-rows tr[data-approval="` + id + `"]') === null ? "absent" : "shown"`); got != "absent" {
			t.Errorf("the older %s before More: %s, want absent", id, got)
		}
	}

	b.Do("More", chromedp.Click(chromedp.ID("history-more")))
	b.Until("every decided approval in the history, More gone", `(n) => document.querySelectorAll("#history-rows > tr").length === n &&
		document.getElementById("history-more").hidden`, decided)
	if got, want := b.Eval(`document.getElementById("history-more-status").textContent`), "3 older decided approvals added: that is every one the board has."; got != want {
		t.Errorf("status after More = %q, want %q", got, want)
	}
	if n := calls(t, b, "ListApprovals"); n < 2 {
		t.Errorf("ListApprovals called %d times, want a page at a time: at least 2", n)
	}
	var order []string
	for i := len(ids) - 1; i >= 0; i-- {
		order = append(order, ids[i])
	}
	if got, want := b.Eval(`Array.from(document.querySelectorAll("#history-rows > tr")).map((r) => r.dataset.approval).join(",")`), strings.Join(order, ","); got != want {
		t.Errorf("history = %s, want every decided one, newest first: %s", got, want)
	}
	if got := b.Eval(`Array.from(document.querySelectorAll("#history-rows .badge.outcome")).map((e) => e.textContent).filter((s, i, all) => all.indexOf(s) === i).join(",")`); got != "cancelled" {
		t.Errorf("outcomes shown = %s, want cancelled", got)
	}
	if got := b.Eval(card(pending) + ` === null ? "gone" : "queued"`); got != "queued" {
		t.Errorf("the pending one after More: %s, want still queued", got)
	}

	// A decision made now reaches the history at its top, and the older
	// ones stay.
	if _, err := admin.Cancel(t.Context(), &boardv1.CancelRequest{Id: pending, Reason: "test"}); err != nil {
		t.Fatal(err)
	}
	b.Until("the new decision on top, the older ones kept", `(id, n) => {
		const rows = document.querySelectorAll("#history-rows > tr");
		return rows.length === n && rows[0].dataset.approval === id && rows[0].dataset.state === "cancelled";
	}`, pending, decided+1)
	noEnumNames(t, b, "approvals")
}

// TestBrowserConversationsMore: the conversations view shows the first
// page of pointers and says there are more; More shows the next.
func TestBrowserConversationsMore(t *testing.T) {
	bt := boardtest.Start(t, boardtest.Options{})
	const page, reported = 100, 150 // conversations.js's first page
	concierge := startAgent(t, bt, agentlink.Identity{Name: "concierge"})
	now := time.Now()
	var pointers []agentlink.ConversationPointer
	for i := range reported {
		pointers = append(pointers, agentlink.ConversationPointer{
			Thread:  fmt.Sprintf("t-%03d", i),
			Updated: now.Add(-time.Duration(i) * time.Minute),
		})
	}
	report(t, concierge, pointers, true)

	b := browsertest.New(t)
	signInTo(t, b, bt, bt.OperatorToken("root", identity.RoleAdmin), "conversations")
	b.Until("the first page, and More", `(n) => document.querySelectorAll("#conversation-rows tr").length === n &&
		!document.getElementById("conversations-more").hidden && !document.getElementById("conversations-more-row").hidden`, page)
	if got, want := b.Eval(`document.getElementById("conversations-count").textContent`), "Showing the 100 conversations most recently updated: there are more."; got != want {
		t.Errorf("count = %q, want %q", got, want)
	}
	if got := b.Eval(`Array.from(document.querySelectorAll("#conversation-rows tr")).slice(-1)[0].dataset.thread`); got != "t-099" {
		t.Errorf("last shown = %s, want t-099", got)
	}

	b.Do("More", chromedp.Click(chromedp.ID("conversations-more")))
	b.Until("all of them, and no More", `(n) => document.querySelectorAll("#conversation-rows tr").length === n &&
		document.getElementById("conversations-more-row").hidden`, reported)
	var want []string
	for _, p := range pointers {
		want = append(want, p.Thread)
	}
	if got := b.Eval(`Array.from(document.querySelectorAll("#conversation-rows tr")).map((r) => r.dataset.thread).join(",")`); got != strings.Join(want, ",") {
		t.Errorf("threads = %s, want %s", got, strings.Join(want, ","))
	}

	// The filter starts again from the first page.
	b.Eval(`(() => {
		const s = document.getElementById("conversations-agent");
		s.value = "concierge";
		s.dispatchEvent(new Event("change"));
		return "";
	})()`)
	b.Until("the first page of concierge's, and More", `(n) => document.querySelectorAll("#conversation-rows tr").length === n &&
		!document.getElementById("conversations-more").hidden`, page)
}
