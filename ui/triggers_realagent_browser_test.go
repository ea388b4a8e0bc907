package ui_test

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/symphonix/symphonix/identity"
	"github.com/symphonix/symphonix/internal/boardtest"
	"github.com/symphonix/symphonix/internal/browsertest"
	"github.com/symphonix/symphonix/node"
)

// lockedBuffer is an agent's output, written by it and read by the test.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// watchmanTriggers: a weekday schedule, and two webhooks whose results go
// to a local endpoint that takes them and to one that refuses them.
const watchmanTriggers = `{"flow": "flow.json", "triggers": [
  {"id": "morning", "kind": "schedule", "schedule": "0 9 * * 1-5", "timeZone": "Europe/Paris", "input": {"question": "What happened on {{time.date}}?"}},
  {"id": "ask", "kind": "webhook", "path": "/hooks/ask", "input": {"question": "{{body.q}}"}, "deliver": {"urlEnv": "ASK_URL"}},
  {"id": "alarm", "kind": "webhook", "path": "/hooks/alarm", "input": {"question": "{{body.q}}"}, "deliver": {"urlEnv": "ALARM_URL", "attempts": 2}}
]}`

// TestBrowserRealAgentTriggers: a real agent, served with node.Serve and
// linked to the board, runs a trigger file; two webhook calls over
// loopback each start a run whose result is delivered to a real local
// endpoint, one of which refuses it. The agent's page lists the three
// triggers as the agent reported them — the schedule in words with its
// next run, each webhook's latest run and where its delivery stands — and
// the run's page says which trigger started it.
func TestBrowserRealAgentTriggers(t *testing.T) {
	delivered := make(chan map[string]any, 4)
	takes := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var b map[string]any
		_ = json.NewDecoder(r.Body).Decode(&b)
		delivered <- b
	}))
	defer takes.Close()
	refuses := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "no such channel", http.StatusNotFound)
	}))
	defer refuses.Close()

	bt := linkBoard(t)
	dir := filepath.Join(t.TempDir(), "watchman")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for name, text := range map[string]string{"flow.json": watchman, "triggers.json": watchmanTriggers} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	env := map[string]string{"ASK_URL": takes.URL, "ALARM_URL": refuses.URL}
	var out lockedBuffer
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() {
		served <- node.Serve(ctx, node.Config{Dir: dir, BoardURL: bt.URL, Token: bt.AgentToken("watchman"),
			Getenv: func(k string) string { return env[k] }, Stdout: &out, Stderr: &out, NoHealthChecks: true})
	}()
	t.Cleanup(func() {
		cancel()
		select {
		case err := <-served:
			if err != nil {
				t.Errorf("Serve: %v", err)
			}
		case <-time.After(browsertest.Ceiling):
			t.Errorf("Serve did not return within %s of its context ending", browsertest.Ceiling)
		}
	})
	hooksLine := regexp.MustCompile(`(?m)^agent watchman: triggers: webhooks on (http://127\.0\.0\.1:\d+)$`)
	var hooks string
	boardtest.Eventually(t, browsertest.Ceiling, "the agent serving its webhooks, linked", func() bool {
		m := hooksLine.FindStringSubmatch(out.String())
		if m != nil {
			hooks = m[1]
		}
		return m != nil && strings.Contains(out.String(), "agent watchman: linked to ")
	})
	post := func(path, q string) string {
		t.Helper()
		resp, err := http.Post(hooks+path, "application/json", strings.NewReader(`{"q": "`+q+`"}`))
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var a struct {
			RunID string `json:"run_id"`
		}
		_ = json.NewDecoder(resp.Body).Decode(&a)
		if resp.StatusCode != http.StatusOK || a.RunID == "" {
			t.Fatalf("POST %s: %d, run %q; want 200 with the run's id", path, resp.StatusCode, a.RunID)
		}
		return a.RunID
	}
	askRun := post("/hooks/ask", "is the ledger up?")
	alarmRun := post("/hooks/alarm", "why the alarm?")
	select {
	case b := <-delivered:
		if text, _ := b["text"].(string); text == "" {
			t.Errorf("delivered %v: want the answer as text", b)
		}
	case <-time.After(browsertest.Ceiling):
		t.Fatal("nothing delivered")
	}

	b := browsertest.New(t)
	signInTo(t, b, bt, bt.OperatorToken("root", identity.RoleAdmin), "agents")
	openAgentPage(t, b, "watchman")
	b.Until("three triggers", `() => Array.from(document.querySelectorAll("#trigger-rows tr")).map((r) => r.dataset.trigger).join(",") === "alarm,ask,morning"`)
	rowHas := `(id, run, want) => {
		const r = document.querySelector('#trigger-rows tr[data-trigger="' + id + '"]');
		const a = r && r.querySelector("a.trigger-run");
		return r !== null && a !== null && a.getAttribute("href") === "#run/watchman/" + run && r.textContent.includes(want);
	}`
	b.Until("ask's run, its result delivered", rowHas, "ask", askRun, "result delivered")
	b.Until("alarm's run, its delivery failed", rowHas, "alarm", alarmRun, "delivery failed")
	morning := b.Eval(`document.querySelector('#trigger-rows tr[data-trigger="morning"]').textContent`)
	if !strings.Contains(morning, "Every weekday at 09:00 (Europe/Paris)") || strings.Contains(morning, "cannot tell") {
		t.Errorf("morning's row = %q, want the schedule in words with its zone, and a next run", morning)
	}

	b.Click("ask's run", `#trigger-rows tr[data-trigger="ask"] a.trigger-run`)
	b.Until("the trigger on top of the run", `() => {
		const p = document.getElementById("run-trigger");
		return p !== null && !p.hidden && p.textContent.startsWith("Started by trigger ask (webhook) on POST /hooks/ask at ") &&
			p.textContent.includes("result delivered");
	}`)
}
