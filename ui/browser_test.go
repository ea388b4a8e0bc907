package ui_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/symphonix/symphonix/agentlink"
	"github.com/symphonix/symphonix/board"
	"github.com/symphonix/symphonix/internal/boardtest"
	"github.com/symphonix/symphonix/ui"
)

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
		{name: "index", method: http.MethodGet, path: "/", status: http.StatusOK, contentType: "text/html", body: `<script src="app.js" defer></script>`},
		{name: "script", method: http.MethodGet, path: "/app.js", status: http.StatusOK, contentType: "text/javascript", body: "WatchAgents"},
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
	for _, name := range []string{"static/index.html", "static/app.js", "static/style.css"} {
		b, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		s := string(b)
		for _, bad := range []string{"<script>", "style=\"", "<style", "onclick=", "onload=", "http://", "https://", ".innerHTML", "insertAdjacentHTML", "document.write", "localStorage", "eval("} {
			if strings.Contains(s, bad) {
				t.Errorf("%s contains %q", name, bad)
			}
		}
	}
}

// browser finds Chromium or Chrome. Without one the test is skipped, except
// in CI, where a missing browser is a failure.
func browser(t *testing.T) string {
	t.Helper()
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	if os.Getenv("CI") == "true" {
		t.Fatal("no chromium, chromium-browser or google-chrome on PATH; CI must have one (apt-get install chromium)")
	}
	t.Skip("no chromium, chromium-browser or google-chrome on PATH (outside CI): install one (apt-get install chromium) to run the browser test")
	return ""
}

// agent is one agent linked to the board under test.
type agent struct {
	stop func() // makes it leave and waits until it has
}

// startAgent links an agent and waits until the board has welcomed it.
func startAgent(t *testing.T, bt *boardtest.Board, id agentlink.Identity) *agent {
	t.Helper()
	up := make(chan struct{}, 1)
	link, err := agentlink.New(agentlink.Config{
		BoardURL: bt.URL,
		Token:    bt.AgentToken(id.Name),
		Identity: id,
		OnState: func(s agentlink.State) {
			if s.Up {
				select {
				case up <- struct{}{}:
				default:
				}
			}
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- link.Run(ctx) }()
	a := &agent{stop: sync.OnceFunc(func() {
		cancel()
		<-done
	})}
	t.Cleanup(a.stop)
	select {
	case <-up:
	case <-time.After(5 * time.Second):
		t.Fatalf("agent %s: not welcomed within 5s", id.Name)
	}
	return a
}

func TestBrowser(t *testing.T) {
	exe := browser(t)
	bt := boardtest.Start(t, boardtest.Options{OfflineGrace: 100 * time.Millisecond})

	parent, cancelAll := context.WithTimeout(t.Context(), 30*time.Second)
	t.Cleanup(cancelAll)
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(exe),
		chromedp.Headless,
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.NoFirstRun,
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.UserDataDir(t.TempDir()),
	)
	actx, cancelAlloc := chromedp.NewExecAllocator(parent, opts...)
	t.Cleanup(cancelAlloc) // waits for the browser to exit, before the TempDir goes
	ctx, cancelTab := chromedp.NewContext(actx)
	t.Cleanup(cancelTab)

	do := func(what string, steps ...chromedp.Action[chromedp.Void]) {
		t.Helper()
		if err := chromedp.Do(ctx, steps...); err != nil {
			t.Fatalf("%s: %v", what, err)
		}
	}
	eval := func(expr string) string {
		t.Helper()
		s, err := chromedp.Run(ctx, chromedp.Evaluate[string](expr))
		if err != nil {
			t.Fatalf("evaluate %s: %v", expr, err)
		}
		return s
	}
	// within waits until predicate, a JavaScript function of args, returns true.
	within := func(d time.Duration, what, predicate string, args ...any) {
		t.Helper()
		_, err := chromedp.Run(ctx, chromedp.PollFunction[bool](predicate,
			chromedp.WithPollingInterval(10*time.Millisecond),
			chromedp.WithPollingTimeout(d),
			chromedp.WithPollingArgs(args...)))
		if errors.Is(err, chromedp.ErrPollingTimeout) {
			t.Fatalf("%s: not within %s", what, d)
		}
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
	}
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
		msg, err := chromedp.Run(ctx, chromedp.Text(chromedp.ID("sign-in-error")))
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(msg, "That token was not accepted") {
			t.Errorf("refusal = %q, want it to say %q", msg, "That token was not accepted")
		}
		if got := eval(`sessionStorage.length + " " + document.getElementById("agents").hidden`); got != "0 true" {
			t.Errorf("after a refused token: storage entries and agents hidden = %s, want 0 true", got)
		}
	}

	// The right token signs in; the empty board says how to connect an agent.
	token := bt.OperatorToken("ada", board.RoleViewer)
	do("sign in",
		chromedp.SetValue(chromedp.ID("token"), token),
		chromedp.Click(chromedp.ID("sign-in-button")),
		chromedp.WaitVisible(chromedp.ID("empty")),
		chromedp.WaitNotVisible(chromedp.ID("sign-in")),
	)
	within(5*time.Second, "connection indicator live",
		`() => document.getElementById("conn").dataset.state === "live"`)
	if got := eval(`sessionStorage.getItem("symphonix.operatorToken") === ` + jsString(token) + ` && localStorage.length === 0 ? "ok" : "wrong"`); got != "ok" {
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
	within(time.Second, "beta online", rowOnline, "beta", "true")
	alpha := startAgent(t, bt, agentlink.Identity{
		Name:        "alpha",
		Description: `<img src=x id=injected>`,
		Build:       build,
		Tools:       []string{"files.read", "web.fetch"},
	})
	within(time.Second, "alpha online", rowOnline, "alpha", "true")

	if got := eval(`Array.from(document.querySelectorAll("tr[data-agent]")).map((r) => r.dataset.agent).join(",")`); got != "alpha,beta" {
		t.Errorf("rows = %s, want alpha,beta", got)
	}
	row := `document.querySelector('tr[data-agent="alpha"]')`
	text := eval(row + `.textContent`)
	for _, want := range []string{"alpha", "<img src=x id=injected>", "online", "runs", "pairing", "files.read", "web.fetch", "ababababab", "now"} {
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

	// An agent that leaves shows offline; the other stays online.
	alpha.stop()
	within(time.Second, "alpha offline", rowOnline, "alpha", "false")
	within(time.Second, "beta still online", rowOnline, "beta", "true")
	if got := eval(row + `.querySelector(".last-seen").textContent`); !strings.HasSuffix(got, " s ago") {
		t.Errorf("alpha last seen = %q, want seconds ago", got)
	}
	beta.stop()
	within(time.Second, "beta offline", rowOnline, "beta", "false")

	// The board restarts: the page says so, comes back by itself, and is
	// live again.
	eval(`window.connStates = [];
		new MutationObserver((records) => {
			for (const r of records) window.connStates.push(r.target.dataset.state);
		}).observe(document.getElementById("conn"), {attributes: true, attributeFilter: ["data-state"]});
		"observing"`)
	bt.Restart()
	within(5*time.Second, "connection indicator reconnecting, then live",
		`() => window.connStates.includes("reconnecting") && document.getElementById("conn").dataset.state === "live"`)
	startAgent(t, bt, agentlink.Identity{Name: "gamma"})
	within(time.Second, "gamma online after the restart", rowOnline, "gamma", "true")
	within(time.Second, "alpha still listed after the restart", rowOnline, "alpha", "false")

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

// jsString quotes s as a JavaScript string literal.
func jsString(s string) string {
	r := strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`)
	return `"` + r.Replace(s) + `"`
}
