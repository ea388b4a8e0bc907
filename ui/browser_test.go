package ui_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"google.golang.org/protobuf/encoding/protojson"

	"github.com/symphonix/symphonix/agentlink"
	boardv1 "github.com/symphonix/symphonix/api/symphonix/board/v1"
	"github.com/symphonix/symphonix/api/symphonix/board/v1/boardv1connect"
	"github.com/symphonix/symphonix/approvals"
	"github.com/symphonix/symphonix/identity"
	"github.com/symphonix/symphonix/internal/boardtest"
	"github.com/symphonix/symphonix/internal/browsertest"
	"github.com/symphonix/symphonix/ui"
)

// scripts is how index.html loads the scripts: deferred, the shared part
// first, then the words for the API's enums, then signing in and out, then
// the words for an agent's health and pause and for runs, each view's
// after them, and last the dashboard's charting library and the dashboard.
const scripts = `<script src="board.js" defer></script>
<script src="enums.js" defer></script>
<script src="session.js" defer></script>
<script src="health.js" defer></script>
<script src="runs.js" defer></script>
<script src="agents.js" defer></script>
<script src="agent.js" defer></script>
<script src="chat.js" defer></script>
<script src="runlist.js" defer></script>
<script src="fire.js" defer></script>
<script src="triggers.js" defer></script>
<script src="evals.js" defer></script>
<script src="builds.js" defer></script>
<script src="forget.js" defer></script>
<script src="runtree.js" defer></script>
<script src="run.js" defer></script>
<script src="alerts.js" defer></script>
<script src="approvals.js" defer></script>
<script src="approval.js" defer></script>
<script src="notify.js" defer></script>
<script src="rules.js" defer></script>
<script src="consents.js" defer></script>
<script src="tools.js" defer></script>
<script src="conversations.js" defer></script>
<script src="library.js" defer></script>
<script src="package.js" defer></script>
<script src="people.js" defer></script>
<script src="audit.js" defer></script>
<script src="me.js" defer></script>
<script src="approvalsearch.js" defer></script>
<script src="act.js" defer></script>
<script src="person.js" defer></script>
<script src="vendor/uPlot.iife.min.js" defer></script>
<script src="dashboard.js" defer></script>`

func TestHandler(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(ui.Handler())
	t.Cleanup(srv.Close)

	tests := []struct {
		name        string
		method      string
		path        string
		status      int
		contentType string // a prefix
		body        string // a substring
	}{
		{name: "index", method: http.MethodGet, path: "/", status: http.StatusOK, contentType: "text/html", body: scripts},
		{name: "board", method: http.MethodGet, path: "/board.js", status: http.StatusOK, contentType: "text/javascript", body: "Connect-Protocol-Version"},
		{name: "enums", method: http.MethodGet, path: "/enums.js", status: http.StatusOK, contentType: "text/javascript", body: `APPROVAL_STATE_PENDING: "pending"`},
		{name: "session", method: http.MethodGet, path: "/session.js", status: http.StatusOK, contentType: "text/javascript", body: "/auth/signin"},
		{name: "health", method: http.MethodGet, path: "/health.js", status: http.StatusOK, contentType: "text/javascript", body: "pauseWord"},
		{name: "agents", method: http.MethodGet, path: "/agents.js", status: http.StatusOK, contentType: "text/javascript", body: "WatchAgents"},
		{name: "agent", method: http.MethodGet, path: "/agent.js", status: http.StatusOK, contentType: "text/javascript", body: "GetHealthHistory"},
		{name: "chat", method: http.MethodGet, path: "/chat.js", status: http.StatusOK, contentType: "text/javascript", body: "ChatService"},
		{name: "runs", method: http.MethodGet, path: "/runs.js", status: http.StatusOK, contentType: "text/javascript", body: "WatchRuns"},
		{name: "runlist", method: http.MethodGet, path: "/runlist.js", status: http.StatusOK, contentType: "text/javascript", body: `"ListRuns"`},
		{name: "triggers", method: http.MethodGet, path: "/triggers.js", status: http.StatusOK, contentType: "text/javascript", body: `"ListTriggers"`},
		{name: "evals", method: http.MethodGet, path: "/evals.js", status: http.StatusOK, contentType: "text/javascript", body: `"ListEvalScores"`},
		{name: "builds", method: http.MethodGet, path: "/builds.js", status: http.StatusOK, contentType: "text/javascript", body: `"ListAgentBuilds"`},
		{name: "forget", method: http.MethodGet, path: "/forget.js", status: http.StatusOK, contentType: "text/javascript", body: `"ForgetAgent"`},
		{name: "fire", method: http.MethodGet, path: "/fire.js", status: http.StatusOK, contentType: "text/javascript", body: `"StartRun"`},
		{name: "run", method: http.MethodGet, path: "/run.js", status: http.StatusOK, contentType: "text/javascript", body: `"StopRun"`},
		{name: "approvals", method: http.MethodGet, path: "/approvals.js", status: http.StatusOK, contentType: "text/javascript", body: "Decide"},
		{name: "rules", method: http.MethodGet, path: "/rules.js", status: http.StatusOK, contentType: "text/javascript", body: `"PreviewRule"`},
		{name: "consents", method: http.MethodGet, path: "/consents.js", status: http.StatusOK, contentType: "text/javascript", body: `"RevokeConsent"`},
		{name: "tools", method: http.MethodGet, path: "/tools.js", status: http.StatusOK, contentType: "text/javascript", body: `"SetToolSwitch"`},
		{name: "conversations", method: http.MethodGet, path: "/conversations.js", status: http.StatusOK, contentType: "text/javascript", body: "ListConversations"},
		{name: "library", method: http.MethodGet, path: "/library.js", status: http.StatusOK, contentType: "text/javascript", body: `"ListPackages"`},
		{name: "package", method: http.MethodGet, path: "/package.js", status: http.StatusOK, contentType: "text/javascript", body: `"Yank"`},
		{name: "people", method: http.MethodGet, path: "/people.js", status: http.StatusOK, contentType: "text/javascript", body: "AddUser"},
		{name: "me", method: http.MethodGet, path: "/me.js", status: http.StatusOK, contentType: "text/javascript", body: "EnterPairingCode"},
		{name: "dashboard", method: http.MethodGet, path: "/dashboard.js", status: http.StatusOK, contentType: "text/javascript", body: `"GetFleetHistory"`},
		{name: "uplot", method: http.MethodGet, path: "/vendor/uPlot.iife.min.js", status: http.StatusOK, contentType: "text/javascript", body: "uPlot"},
		{name: "uplot style", method: http.MethodGet, path: "/vendor/uPlot.min.css", status: http.StatusOK, contentType: "text/css", body: ".uplot"},
		{name: "setup page", method: http.MethodGet, path: "/setup", status: http.StatusOK, contentType: "text/html", body: `id="setup-form"`},
		{name: "setup below", method: http.MethodGet, path: "/setup/x", status: http.StatusNotFound},
		{name: "old script", method: http.MethodGet, path: "/app.js", status: http.StatusNotFound},
		{name: "style", method: http.MethodGet, path: "/style.css", status: http.StatusOK, contentType: "text/css"},
		{name: "missing", method: http.MethodGet, path: "/nothing-here", status: http.StatusNotFound},
		{name: "post", method: http.MethodPost, path: "/", status: http.StatusMethodNotAllowed},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			req, err := http.NewRequestWithContext(t.Context(), tt.method, srv.URL+tt.path, nil)
			if err != nil {
				t.Fatal(err)
			}
			res, err := srv.Client().Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer res.Body.Close()
			body, err := io.ReadAll(res.Body)
			if err != nil {
				t.Fatal(err)
			}
			if res.StatusCode != tt.status {
				t.Errorf("%s %s: status %d, want %d", tt.method, tt.path, res.StatusCode, tt.status)
			}
			csp := res.Header.Get("Content-Security-Policy")
			for _, want := range []string{"default-src 'self'", "script-src 'self'", "style-src 'self'", "connect-src 'self'"} {
				if !strings.Contains(csp, want) {
					t.Errorf("%s %s: Content-Security-Policy %q, want it to contain %q", tt.method, tt.path, csp, want)
				}
			}
			if got := res.Header.Get("X-Content-Type-Options"); got != "nosniff" {
				t.Errorf("%s %s: X-Content-Type-Options %q, want nosniff", tt.method, tt.path, got)
			}
			if ct := res.Header.Get("Content-Type"); tt.contentType != "" && !strings.HasPrefix(ct, tt.contentType) {
				t.Errorf("%s %s: Content-Type %q, want %s", tt.method, tt.path, ct, tt.contentType)
			}
			if !strings.Contains(string(body), tt.body) {
				t.Errorf("%s %s: body does not contain %q", tt.method, tt.path, tt.body)
			}
		})
	}
}

// TestStaticHasNoInlineCode keeps the pages within the CSP: no inline
// script, no inline style, nothing loaded from another origin.
func TestStaticHasNoInlineCode(t *testing.T) {
	t.Parallel()
	names, err := filepath.Glob("static/*")
	if err != nil {
		t.Fatal(err)
	}
	vendored, err := filepath.Glob("static/vendor/*")
	if err != nil {
		t.Fatal(err)
	}
	names = append(slices.DeleteFunc(names, func(n string) bool { return n == "static/vendor" }), vendored...)
	if len(names) < 3 {
		t.Fatalf("static files = %v, want the page, its style and its scripts", names)
	}
	for _, name := range names {
		b, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		s := string(b)
		// A vendored script's banner names where it comes from; nothing
		// is loaded from there.
		s = strings.Replace(s, "/*! https://github.com/leeoniya/uPlot ", "", 1)
		for _, bad := range []string{"<script>", "style=\"", "<style", "onclick=", "onload=", "http://", "https://", ".innerHTML", "insertAdjacentHTML", "document.write", "localStorage", "eval("} {
			// The one thing the page keeps beyond its tab is the opt-in to
			// notifications, the word "on" (notify.js): never a credential.
			if bad == "localStorage" && name == "static/notify.js" {
				continue
			}
			if strings.Contains(s, bad) {
				t.Errorf("%s contains %q", name, bad)
			}
		}
	}
}

// agent is one agent linked to the board under test.
type agent struct {
	link *agentlink.Link
	stop func() // makes it leave and waits until it has
}

// startAgent links an agent and waits until the board has welcomed it.
func startAgent(t *testing.T, bt *boardtest.Board, id agentlink.Identity) *agent {
	t.Helper()
	return linkAgent(t, bt, agentlink.Config{Identity: id})
}

// linkAgent links the agent cfg.Identity names, with the board's URL and
// an agent token filled in, and waits until the board has welcomed it.
func linkAgent(t *testing.T, bt *boardtest.Board, cfg agentlink.Config) *agent {
	t.Helper()
	id := cfg.Identity
	up := make(chan struct{}, 1)
	cfg.BoardURL = bt.URL
	cfg.Token = bt.AgentToken(id.Name)
	cfg.OnState = func(s agentlink.State) {
		if s.Up {
			select {
			case up <- struct{}{}:
			default:
			}
		}
	}
	link, err := agentlink.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- link.Run(ctx) }()
	a := &agent{link: link, stop: sync.OnceFunc(func() {
		cancel()
		<-done
	})}
	t.Cleanup(a.stop)
	select {
	case <-up:
	case <-time.After(browsertest.Ceiling):
		t.Fatalf("agent %s: not welcomed within %s", id.Name, browsertest.Ceiling)
	}
	return a
}

func TestBrowser(t *testing.T) {
	bt := boardtest.Start(t, boardtest.Options{OfflineGrace: 100 * time.Millisecond})
	b := browsertest.New(t)
	do, eval, until := b.Do, b.Eval, b.Until
	const rowOnline = `(name, online) => {
		const row = Array.from(document.querySelectorAll("tr[data-agent]")).find((r) => r.dataset.agent === name);
		return row !== undefined && row.dataset.online === online;
	}`

	do("open the board",
		chromedp.Navigate(bt.URL),
		chromedp.WaitVisible(chromedp.ID("token")),
	)
	if got := eval(`document.getElementById("agents").hidden ? "hidden" : "shown"`); got != "hidden" {
		t.Errorf("agents before sign-in: %s, want hidden", got)
	}

	// Wrong tokens are refused, and the page stays on sign-in.
	for _, wrong := range []string{"not-a-token", bt.AgentToken("some-agent")} {
		do("sign in with a wrong token",
			chromedp.SetValue(chromedp.ID("token"), wrong),
			chromedp.Click(chromedp.ID("sign-in-button")),
			chromedp.WaitVisible(chromedp.ID("sign-in-error")),
		)
		msg := browsertest.Run(b, "read the refusal", chromedp.Text(chromedp.ID("sign-in-error")))
		if !strings.Contains(msg, "That token was not accepted") {
			t.Errorf("refusal = %q, want it to say %q", msg, "That token was not accepted")
		}
		if got := eval(`sessionStorage.length + " " + document.getElementById("agents").hidden`); got != "0 true" {
			t.Errorf("after a refused token: storage entries and agents hidden = %s, want 0 true", got)
		}
	}

	// The right token signs in; the empty board says how to connect an agent.
	token := bt.OperatorToken("ada", identity.RoleViewer)
	do("sign in",
		chromedp.SetValue(chromedp.ID("token"), token),
		chromedp.Click(chromedp.ID("sign-in-button")),
		chromedp.WaitVisible(chromedp.ID("empty")),
		chromedp.WaitNotVisible(chromedp.ID("sign-in")),
	)
	until("connection indicator live",
		`() => document.getElementById("conn").dataset.state === "live"`)
	if got := eval(`sessionStorage.getItem("symphonix.operatorToken") === ` + browsertest.Quote(token) + ` && localStorage.length === 0 ? "ok" : "wrong"`); got != "ok" {
		t.Errorf("token storage: %s, want it in sessionStorage only", got)
	}
	if hint := eval(`document.getElementById("empty").textContent`); !strings.Contains(hint, "go run ./cmd/agent --monitor "+bt.URL+" --token TOKEN DIR") {
		t.Errorf("empty board = %q, want the command that connects an agent", hint)
	}
	// A reload would drop this.
	eval(`window.sameDocument = "yes"; "set"`)

	// Agents that connect appear online, without a reload.
	build := "sha256:" + strings.Repeat("ab", 32)
	beta := startAgent(t, bt, agentlink.Identity{Name: "beta"})
	until("beta online", rowOnline, "beta", "true")
	alpha := linkAgent(t, bt, agentlink.Config{
		Identity: agentlink.Identity{
			Name:        "alpha",
			Description: `<img src=x id=injected>`,
			Build:       build,
			Tools:       []string{"files.read", "web.fetch"},
		},
		Capabilities: []string{agentlink.CapabilityUsers, agentlink.CapabilityPairing},
	})
	until("alpha online", rowOnline, "alpha", "true")

	if got := eval(`Array.from(document.querySelectorAll("tr[data-agent]")).map((r) => r.dataset.agent).join(",")`); got != "alpha,beta" {
		t.Errorf("rows = %s, want alpha,beta", got)
	}
	row := `document.querySelector('tr[data-agent="alpha"]')`
	text := eval(row + `.textContent`)
	for _, want := range []string{"alpha", "<img src=x id=injected>", "online", "users", "pairing", "files.read", "web.fetch", "ababababab", "now"} {
		if !strings.Contains(text, want) {
			t.Errorf("alpha's row = %q, want it to contain %q", text, want)
		}
	}
	if got := eval(row + `.querySelector("code.build").title`); got != build {
		t.Errorf("build title = %q, want %q", got, build)
	}
	if got := eval(`document.getElementById("injected") === null ? "escaped" : "injected"`); got != "escaped" {
		t.Errorf("description: %s, want escaped", got)
	}
	noEnumNames(t, b, "agents")
	if got := eval(`document.getElementById("who").textContent`); got != "signed in as ada (viewer)" {
		t.Errorf("who = %q, want signed in as ada (viewer)", got)
	}

	// An agent that leaves shows offline; the other stays online.
	alpha.stop()
	until("alpha offline", rowOnline, "alpha", "false")
	until("beta still online", rowOnline, "beta", "true")
	if got := eval(row + `.querySelector(".last-seen").textContent`); !strings.HasSuffix(got, " s ago") {
		t.Errorf("alpha last seen = %q, want seconds ago", got)
	}
	beta.stop()
	until("beta offline", rowOnline, "beta", "false")

	// The board restarts: the page says so, comes back by itself, and is
	// live again.
	eval(`window.connStates = [];
		new MutationObserver((records) => {
			for (const r of records) window.connStates.push(r.target.dataset.state);
		}).observe(document.getElementById("conn"), {attributes: true, attributeFilter: ["data-state"]});
		"observing"`)
	bt.Restart()
	until("connection indicator reconnecting, then live",
		`() => window.connStates.includes("reconnecting") && document.getElementById("conn").dataset.state === "live"`)
	startAgent(t, bt, agentlink.Identity{Name: "gamma"})
	until("gamma online after the restart", rowOnline, "gamma", "true")
	until("alpha still listed after the restart", rowOnline, "alpha", "false")

	if got := eval(`window.sameDocument || "reloaded"`); got != "yes" {
		t.Errorf("page: %s, want the same document throughout", got)
	}

	// Sign out forgets the token.
	do("sign out",
		chromedp.Click(chromedp.ID("sign-out")),
		chromedp.WaitVisible(chromedp.ID("token")),
		chromedp.WaitNotVisible(chromedp.ID("agents")),
	)
	if got := eval(`String(sessionStorage.length)`); got != "0" {
		t.Errorf("after sign-out: %s stored entries, want 0", got)
	}
}

// approvalBoard is a board with one rule, put by an admin from its JSON
// form, and the agent "payer" linked to it; the decisions the agent
// receives arrive on the channel.
func approvalBoard(t *testing.T, ruleJSON string) (*boardtest.Board, *agent, <-chan agentlink.Decision) {
	t.Helper()
	bt := boardtest.Start(t, boardtest.Options{})
	var req boardv1.PutRuleRequest
	if err := protojson.Unmarshal([]byte(ruleJSON), &req); err != nil {
		t.Fatalf("rule %s: %v", ruleJSON, err)
	}
	admin := boardv1connect.NewApprovalServiceClient(bt.Client(bt.OperatorToken("root", identity.RoleAdmin)))
	if _, err := admin.PutRule(t.Context(), &req); err != nil {
		t.Fatalf("PutRule(%s): %v", ruleJSON, err)
	}
	decisions := make(chan agentlink.Decision, 16)
	a := linkAgent(t, bt, agentlink.Config{
		Identity:   agentlink.Identity{Name: "payer"},
		OnDecision: func(d agentlink.Decision) { decisions <- d },
	})
	return bt, a, decisions
}

// raise has the agent raise an approval at node "pay" for run, digested
// as the agent's runtime digests it, and returns its id and digest.
func raise(t *testing.T, a *agent, run, ask string, show map[string]any, account string) (id, digest string) {
	t.Helper()
	digest, err := approvals.Digest(show, account)
	if err != nil {
		t.Fatal(err)
	}
	r, err := a.link.Raise(t.Context(), agentlink.Raise{
		Run: run, Node: "pay", Ask: ask, Show: show, Account: account, Digest: digest,
	})
	if err != nil {
		t.Fatalf("Raise(%s): %v", run, err)
	}
	if r.State != "pending" {
		t.Fatalf("Raise(%s): state %q, want pending", run, r.State)
	}
	return r.ApprovalID, digest
}

// signInToApprovals signs in with token and opens the approvals view.
func signInToApprovals(t *testing.T, b *browsertest.Tab, bt *boardtest.Board, token string) {
	t.Helper()
	signInTo(t, b, bt, token, "approvals")
}

// signInTo opens the board, signs in with token and opens view.
func signInTo(t *testing.T, b *browsertest.Tab, bt *boardtest.Board, token, view string) {
	t.Helper()
	b.Do("sign in and open the "+view,
		chromedp.Navigate(bt.URL),
		chromedp.WaitVisible(chromedp.ID("token")),
		chromedp.SetValue(chromedp.ID("token"), token),
		chromedp.Click(chromedp.ID("sign-in-button")),
		chromedp.WaitVisible(chromedp.ID("tab-"+view)),
		chromedp.Click(chromedp.ID("tab-"+view)),
		chromedp.WaitVisible(chromedp.ID(view)),
	)
}

// waitDecision waits for the agent to receive the decision on id.
func waitDecision(t *testing.T, decisions <-chan agentlink.Decision, id string) agentlink.Decision {
	t.Helper()
	timeout := time.After(browsertest.Ceiling)
	for {
		select {
		case d := <-decisions:
			if d.ApprovalID == id {
				return d
			}
		case <-timeout:
			t.Fatalf("decision on %s: not received within %s", id, browsertest.Ceiling)
		}
	}
}

// Predicates on the approvals view, JavaScript functions of an approval id.
const (
	queued    = `(id) => document.querySelector('#queue li[data-approval="' + id + '"]') !== null`
	gone      = `(id) => document.querySelector('#queue li[data-approval="' + id + '"]') === null`
	inHistory = `(id, state) => {
		const row = document.querySelector('#history-rows tr[data-approval="' + id + '"]');
		return row !== null && row.dataset.state === state;
	}`
)

func card(id string) string {
	return `document.querySelector('#queue li[data-approval="` + id + `"]')`
}

func TestBrowserApproveByClick(t *testing.T) {
	bt, payer, decisions := approvalBoard(t, `{"rule":{"agent":"*","node":"*","role":"ROLE_APPROVER","quorum":1}}`)
	b := browsertest.New(t)
	signInToApprovals(t, b, bt, bt.OperatorToken("ada", identity.RoleApprover))
	b.Until("the empty queue", `() => !document.getElementById("queue-empty").hidden`)

	const account = "Invoice A-17 matches purchase order PO-9; finance signed it off."
	id, digest := raise(t, payer, "run-1", "Pay the supplier for order A-17?",
		map[string]any{"amount": 5000, "order": "A-17"}, account)
	b.Until("the approval queued", queued, id)

	text := b.Eval(card(id) + `.textContent`)
	for _, want := range []string{"payer", "pay", "run-1", "Pay the supplier for order A-17?", account, "approver", "1 yes needed", "none yet"} {
		if !strings.Contains(text, want) {
			t.Errorf("card = %q, want it to contain %q", text, want)
		}
	}
	if got := b.Eval(`Array.from(` + card(id) + `.querySelectorAll("table.show tr")).map((tr) => tr.cells[0].textContent + "=" + tr.cells[1].textContent).join(", ")`); got != "amount=5000, order=A-17" {
		t.Errorf("shown = %s, want amount=5000, order=A-17", got)
	}
	if got := b.Eval(card(id) + `.querySelector(".age").textContent`); !strings.HasPrefix(got, "asked ") || !strings.HasSuffix(got, " s ago") {
		t.Errorf("age = %q, want asked N s ago", got)
	}
	if got := b.Eval(`document.getElementById("pending-count").textContent`); got != "1" {
		t.Errorf("pending count = %q, want 1", got)
	}

	const reason = "matches the purchase order"
	sel := `#queue li[data-approval="` + id + `"] `
	b.Do("approve with a reason",
		chromedp.SetValue(chromedp.CSS(sel+"textarea.reason"), reason),
		chromedp.Click(chromedp.CSS(sel+"button.approve")),
	)
	d := waitDecision(t, decisions, id)
	if d.Say != "yes" || d.Digest != digest || d.Reason != reason || strings.Join(d.Who, ",") != "ada" {
		t.Errorf("decision = %+v, want say yes, digest %s, reason %q, who ada", d, digest, reason)
	}
	b.Until("the approval leaves the queue", gone, id)
	b.Until("the approval in the history, approved", inHistory, id, "approved")
	row := b.Eval(`document.querySelector('#history-rows tr[data-approval="` + id + `"]').textContent`)
	for _, want := range []string{"approved", "ada", reason, "payer", "Pay the supplier for order A-17?", " s ago"} {
		if !strings.Contains(row, want) {
			t.Errorf("history row = %q, want it to contain %q", row, want)
		}
	}
	if got := b.Eval(`document.getElementById("approvals-status").textContent`); !strings.Contains(got, "Approved") {
		t.Errorf("status = %q, want it to say Approved", got)
	}
	// The signed receipt is downloadable from the history, as the board
	// keeps it.
	got, err := boardv1connect.NewApprovalServiceClient(bt.Client(bt.OperatorToken("vic", identity.RoleViewer))).GetApproval(t.Context(), &boardv1.GetApprovalRequest{Id: id})
	if err != nil {
		t.Fatal(err)
	}
	link := b.Eval(`(() => { const a = document.querySelector('#history-rows tr[data-approval="` + id + `"] a.receipt');
		return a ? a.download + " " + decodeURIComponent(a.href.slice(a.href.indexOf(",") + 1)) : "none"; })()`)
	if want := "receipt-" + id + ".jws " + got.GetApproval().GetDecision().GetReceipt(); got.GetApproval().GetDecision().GetReceipt() == "" || link != want {
		t.Errorf("the history's receipt link = %q, want %q", link, want)
	}
	noEnumNames(t, b, "approvals")
}

// TestBrowserApprovalsArePushed: what happens to approvals while the page
// is open reaches it by the watch, never by reading the list again: an
// approval raised appears, and one decided elsewhere moves to the history.
func TestBrowserApprovalsArePushed(t *testing.T) {
	bt, payer, _ := approvalBoard(t, `{"rule":{"agent":"*","node":"*","role":"ROLE_APPROVER","quorum":1}}`)
	b := browsertest.New(t)
	signInToApprovals(t, b, bt, bt.OperatorToken("ada", identity.RoleApprover))
	b.Until("the empty queue", `() => !document.getElementById("queue-empty").hidden`)

	id, digest := raise(t, payer, "run-1", "Pay order A-17?", map[string]any{"amount": 5000}, "")
	b.Until("the approval queued", queued, id)
	bob := boardv1connect.NewApprovalServiceClient(bt.Client(bt.OperatorToken("bob", identity.RoleApprover)))
	if _, err := bob.Decide(t.Context(), &boardv1.DecideRequest{Id: id, Say: boardv1.Say_SAY_NO, Digest: digest, Reason: "not today"}); err != nil {
		t.Fatal(err)
	}
	b.Until("the approval leaves the queue", gone, id)
	b.Until("the approval in the history, rejected", inHistory, id, "rejected")
	if got := b.Eval(`document.querySelector('#history-rows tr[data-approval="` + id + `"]').textContent`); !strings.Contains(got, "bob") || !strings.Contains(got, "not today") {
		t.Errorf("history row = %q, want bob and the reason", got)
	}
	if got := b.Eval(`String(performance.getEntriesByType("resource").filter((e) => e.name.includes("ListApprovals")).length)`); got != "0" {
		t.Errorf("ListApprovals called %s times, want none: the watch brings every change", got)
	}
}

func TestBrowserRejectByKeyboard(t *testing.T) {
	bt, payer, decisions := approvalBoard(t, `{"rule":{"agent":"*","node":"*","role":"ROLE_APPROVER","quorum":1,"requireReason":true}}`)
	first, _ := raise(t, payer, "run-1", "Pay order A-17?", map[string]any{"amount": 5000, "order": "A-17"}, "")
	second, digest := raise(t, payer, "run-2", "Pay order B-2?", map[string]any{"amount": 70, "order": "B-2"}, "")

	b := browsertest.New(t)
	signInToApprovals(t, b, bt, bt.OperatorToken("ada", identity.RoleApprover))
	b.Until("both queued", `(a, b) => {
		const ids = Array.from(document.querySelectorAll("#queue li")).map((li) => li.dataset.approval);
		return ids.join(",") === a + "," + b;
	}`, first, second)
	if got := b.Eval(`document.querySelector("#queue li").querySelector(".account") === null ? "none" : "drawn"`); got != "none" {
		t.Errorf("empty account: %s, want none", got)
	}
	if got := b.Eval(`document.getElementById("shortcuts").textContent`); !strings.Contains(got, "approve") || !strings.Contains(got, "reject") {
		t.Errorf("legend = %q, want it to name approve and reject", got)
	}
	const selected = `(document.querySelector("#queue li.is-selected") || {dataset: {}}).dataset.approval || ""`
	if got := b.Eval(selected); got != first {
		t.Errorf("selected = %q, want the oldest, %s", got, first)
	}

	// j selects the next; r without the reason the rule requires is refused,
	// and the board's refusal is shown.
	b.Do("j, then r", chromedp.KeyEvent("j"), chromedp.KeyEvent("r"))
	if got := b.Eval(selected); got != second {
		t.Errorf("selected after j = %q, want %s", got, second)
	}
	b.Until("the refusal shown", `(id) => {
		const e = document.querySelector('#queue li[data-approval="' + id + '"] .card-error');
		return e !== null && !e.hidden && e.textContent.includes("invalid_argument") && e.textContent.includes("reason: required");
	}`, second)

	// While the reason has the focus, keys are typing, not shortcuts.
	b.Do("type a reason", chromedp.KeyEvent("wrong amount, r"))
	if got := b.Eval(`document.activeElement.classList.contains("reason") ? document.activeElement.value : "not in the reason"`); got != "wrong amount, r" {
		t.Errorf("reason = %q, want what was typed", got)
	}
	if got := b.Eval(card(second) + ` === null ? "gone" : "queued"`); got != "queued" {
		t.Errorf("after typing r in the reason: %s, want still queued", got)
	}

	// Esc leaves the reason; r rejects the selected one.
	b.Do("Esc, then r", chromedp.KeyEvent("\x1b"), chromedp.KeyEvent("r"))
	d := waitDecision(t, decisions, second)
	if d.Say != "no" || d.Digest != digest || d.Reason != "wrong amount, r" {
		t.Errorf("decision = %+v, want say no, digest %s, the reason typed", d, digest)
	}
	b.Until("rejected, in the history", inHistory, second, "rejected")
	b.Until("gone from the queue", gone, second)
	if got := b.Eval(selected); got != first {
		t.Errorf("selected after the reject = %q, want %s", got, first)
	}
	if got := b.Eval(card(first) + ` === null ? "gone" : "queued"`); got != "queued" {
		t.Errorf("the other approval: %s, want still queued", got)
	}
}

func TestBrowserApprovalIsText(t *testing.T) {
	bt, payer, _ := approvalBoard(t, `{"rule":{"agent":"*","node":"*","role":"ROLE_APPROVER","quorum":1}}`)
	const img = `<img src=x onerror="window.injected='yes'" id=injected>`
	id, _ := raise(t, payer, "run-1", img, map[string]any{
		"note":  img,
		"lines": []any{map[string]any{"sku": "X-1", "qty": 2}, "loose"},
		"ship":  map[string]any{"to": map[string]any{"city": "Oslo"}},
		img:     true,
	}, img)

	// A viewer sees the queue, and cannot decide.
	b := browsertest.New(t)
	signInToApprovals(t, b, bt, bt.OperatorToken("vic", identity.RoleViewer))
	b.Until("the approval queued", queued, id)
	text := b.Eval(card(id) + `.textContent`)
	if n := strings.Count(text, img); n != 4 {
		t.Errorf("card = %q: the markup appears as text %d times, want 4 (ask, value, key, account)", text, n)
	}
	for _, want := range []string{"X-1", "loose", "Oslo"} {
		if !strings.Contains(text, want) {
			t.Errorf("card = %q, want it to contain %q", text, want)
		}
	}
	if strings.Contains(text, "[object Object]") {
		t.Errorf("card = %q, want nested values drawn, not [object Object]", text)
	}
	if got := b.Eval(`(document.getElementById("injected") === null && document.querySelector("#approvals img") === null && window.injected === undefined) ? "escaped" : "injected"`); got != "escaped" {
		t.Errorf("shown markup: %s, want escaped", got)
	}

	if got := b.Eval(card(id) + `.querySelector("button.approve").disabled && ` + card(id) + `.querySelector("button.reject").disabled ? "disabled" : "enabled"`); got != "disabled" {
		t.Errorf("a viewer's approve and reject: %s, want disabled", got)
	}
	b.Do("approve as a viewer, by keyboard", chromedp.KeyEvent("a"))
	b.Until("the refusal shown", `(id) => {
		const e = document.querySelector('#queue li[data-approval="' + id + '"] .card-error');
		return e !== null && !e.hidden && e.textContent.includes("may not decide");
	}`, id)
	if got := b.Eval(card(id) + ` === null ? "gone" : "queued"`); got != "queued" {
		t.Errorf("after a refusal: %s, want still queued", got)
	}
}

// TestBrowserCardShowsAmounts: the board's approval card lists the
// amounts written in the question and the account, each as written and as
// a value with its currency, and not an order's number.
func TestBrowserCardShowsAmounts(t *testing.T) {
	bt, payer, _ := approvalBoard(t, `{"rule":{"agent":"*","node":"*","role":"ROLE_APPROVER","quorum":1}}`)
	id, _ := raise(t, payer, "run-1", "Refund €6,000 for order A-1043?", map[string]any{"order": "A-1043"},
		"The customer paid 6.000,50 EUR twice.")
	b := browsertest.New(t)
	signInToApprovals(t, b, bt, bt.OperatorToken("ada", identity.RoleApprover))
	b.Until("the approval queued", queued, id)
	const amounts = `Array.from(%s.querySelectorAll("ul.amounts li")).map((li) => li.textContent).join(" | ")`
	if got, want := b.Eval(fmt.Sprintf(amounts, card(id))), "€6,000 = 6000 EUR | 6.000,50 EUR = 6000.5 EUR"; got != want {
		t.Errorf("the card's amounts = %q, want %q", got, want)
	}
}

// TestBrowserShowsNumbersAsSent: the shown values are drawn from the text
// the agent sent, so an integer beyond 2^53 and a price's trailing zero
// read as written, in the queue and in the history, not as doubles.
func TestBrowserShowsNumbersAsSent(t *testing.T) {
	bt, payer, decisions := approvalBoard(t, `{"rule":{"agent":"*","node":"*","role":"ROLE_APPROVER","quorum":1}}`)
	id, _ := raise(t, payer, "run-1", "Pay order A-17?", map[string]any{
		"amount": json.Number("12345678901234567890"),
		"price":  json.Number("49.90"),
		"lines":  []any{map[string]any{"qty": json.Number("1.0e2")}},
	}, "")

	b := browsertest.New(t)
	signInToApprovals(t, b, bt, bt.OperatorToken("ada", identity.RoleApprover))
	b.Until("the approval queued", queued, id)
	const rows = `Array.from(%s.querySelector("table.show").tBodies[0].rows).map((tr) => tr.cells[0].textContent + "=" + tr.cells[1].textContent).join(", ")`
	const want = "amount=12345678901234567890, lines=qty1.0e2, price=49.90"
	if got := b.Eval(fmt.Sprintf(rows, card(id))); got != want {
		t.Errorf("shown = %s, want %s", got, want)
	}

	b.Do("approve", chromedp.Click(chromedp.CSS(`#queue li[data-approval="`+id+`"] button.approve`)))
	waitDecision(t, decisions, id)
	b.Until("the approval in the history, approved", inHistory, id, "approved")
	history := `document.querySelector('#history-rows tr[data-approval="` + id + `"] details')`
	if got := b.Eval(fmt.Sprintf(rows, history)); got != want {
		t.Errorf("shown in the history = %s, want %s", got, want)
	}
}

// TestBrowserEscalation: under a rule only admins decide, escalating to
// approvers after 3 s, an approver's card first says the escalation to
// come and cannot be decided; once the step is reached it says so, and the
// approver's yes goes through.
func TestBrowserEscalation(t *testing.T) {
	bt, payer, decisions := approvalBoard(t, `{"rule":{"agent":"*","node":"*","role":"ROLE_ADMIN","escalation":[{"after":"3s","role":"ROLE_APPROVER"}]}}`)
	b := browsertest.New(t)
	signInToApprovals(t, b, bt, bt.OperatorToken("ada", identity.RoleApprover))
	id, digest := raise(t, payer, "run-1", "Pay order A-17?", map[string]any{"amount": 5000}, "")
	b.Until("the approval queued", queued, id)
	if got := b.Eval(card(id) + `.textContent + " " + ` + card(id) + `.querySelector("button.approve").disabled`); !strings.Contains(got, "1 step if nobody decides") || !strings.HasSuffix(got, " true") {
		t.Errorf("card before the escalation = %q, want the escalation to come and approve disabled", got)
	}
	b.Until("the step reached", `(id) => {
		const c = document.querySelector('#queue li[data-approval="' + id + '"]');
		return c !== null && c.textContent.includes("step 1 of 1: approver role may decide too") && !c.querySelector("button.approve").disabled;
	}`, id)
	sel := `#queue li[data-approval="` + id + `"] `
	b.Do("approve", chromedp.Click(chromedp.CSS(sel+"button.approve")))
	if d := waitDecision(t, decisions, id); d.Say != "yes" || d.Digest != digest || strings.Join(d.Who, ",") != "ada" {
		t.Errorf("decision = %+v, want ada's yes", d)
	}
}
