package serve_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/symphonix/symphonix/internal/browsertest"
	"github.com/symphonix/symphonix/pause"
	"github.com/symphonix/symphonix/serve"
)

// switchable is a pause a test turns on and off.
type switchable struct {
	mu sync.Mutex
	s  pause.State
}

func (p *switchable) set(s pause.State) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.s = s
}

func (p *switchable) get() pause.State {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.s
}

func newPausable(t *testing.T, p *switchable) *httptest.Server {
	t.Helper()
	a, _ := openDesk(t, "")
	s, err := serve.New(t.Context(), serve.Config{Agent: a, Conversations: filepath.Join(t.TempDir(), "conversations.json"), Paused: p.get})
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(s)
	t.Cleanup(ts.Close)
	return ts
}

var migrating = pause.State{Paused: true, Reason: "the order system is being migrated", By: "ann",
	Time: time.Date(2026, 12, 2, 9, 0, 0, 0, time.UTC), Origin: pause.Board}

// TestPausedRefusesNewMessages: while paused a new message is 503 with
// Retry-After and the pause, and nothing is started; an answer to a run in
// flight goes on; GET /api/agent says it is paused.
func TestPausedRefusesNewMessages(t *testing.T) {
	t.Parallel()
	p := &switchable{}
	ts := newPausable(t, p)
	inFlight := threadName(t)
	if tr := turn(t, ts, "/api/threads/"+inFlight+"/messages", message("A-1001")); tr.Pending == nil {
		t.Fatalf("message = %+v, want the refund's approval", tr)
	}
	p.set(migrating)

	req, err := http.NewRequestWithContext(t.Context(), "POST", ts.URL+"/api/threads/"+threadName(t)+"/messages", strings.NewReader(message("A-1002")))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	res, err := ts.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var body struct {
		Error  string
		Paused *serve.Paused
	}
	if err := json.NewDecoder(res.Body).Decode(&body); err != nil {
		t.Fatal(err)
	}
	if res.StatusCode != 503 || res.Header.Get("Retry-After") != "60" || body.Paused == nil || *body.Paused != (serve.Paused{
		Reason: migrating.Reason, By: "ann", At: migrating.Time, Origin: "board"}) ||
		body.Error != "this agent is paused: the order system is being migrated (by ann, since 2026-12-02T09:00:00Z, on the board); "+
			"it finishes what it started, and takes new messages once it is resumed" {
		t.Errorf("a new message while paused = %d, Retry-After %q, %+v %+v", res.StatusCode, res.Header.Get("Retry-After"), body, body.Paused)
	}

	if status, b := do(t, ts, "GET", "/api/agent", ""); status != 200 || !strings.Contains(string(b), `"paused":{"reason":"the order system is being migrated"`) {
		t.Errorf("GET /api/agent while paused = %d %s, want the pause", status, b)
	}
	if tr := turn(t, ts, "/api/threads/"+inFlight+"/answer", `{"answer": "yes"}`); tr.Pending != nil || tr.Reply == "" {
		t.Errorf("the answer to the run in flight while paused = %+v, want it finished", tr)
	}

	p.set(pause.State{By: "ann", Time: migrating.Time.Add(time.Hour), Origin: pause.Local})
	if tr := turn(t, ts, "/api/threads/"+threadName(t)+"/messages", message("A-1002")); tr.Pending == nil {
		t.Errorf("a new message after the resume = %+v, want the refund's approval", tr)
	}
	if status, b := do(t, ts, "GET", "/api/agent", ""); status != 200 || strings.Contains(string(b), `"paused"`) {
		t.Errorf("GET /api/agent after the resume = %d %s, want no pause", status, b)
	}
}

// TestBrowserShowsThePause: the chat page of a paused agent says so, and
// why, above the message form.
func TestBrowserShowsThePause(t *testing.T) {
	t.Parallel()
	p := &switchable{}
	p.set(migrating)
	ts := newPausable(t, p)
	b := browsertest.New(t)
	b.Do("open the page", chromedp.Navigate(ts.URL), chromedp.WaitVisible(chromedp.ID("paused")))
	if got := b.Eval(`document.getElementById("paused").textContent`); !strings.Contains(got, "paused") || !strings.Contains(got, migrating.Reason) || !strings.Contains(got, "by ann") {
		t.Errorf("the pause on the page = %q, want it saying why and who", got)
	}
}
