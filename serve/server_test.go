package serve_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/symphonix/symphonix/flow"
	"github.com/symphonix/symphonix/journal"
	"github.com/symphonix/symphonix/serve"
)

// TestApprovedRefund: a message stops at the refund's approval, showing
// the order and its digest; yes refunds and replies. The journal has a
// line for each of the four calls, without payloads.
func TestApprovedRefund(t *testing.T) {
	t.Parallel()
	a, jpath := openDesk(t, journal.DetailMetadata)
	ts := newServer(t, a)
	thread := threadName(t)

	first := turn(t, ts, "/api/threads/"+thread+"/messages", message("A-1001"))
	p := first.Pending
	if p == nil || first.State != nil || first.Reply != "" {
		t.Fatalf("message = %+v, want a pending approval and no state or reply", first)
	}
	if p.Kind != flow.PendingApproval || p.Node != "pay" || p.Show["order.amount"] != 49.9 || p.Show["order_id"] != "A-1001" ||
		!strings.HasPrefix(p.Digest, "sha256:") || !strings.Contains(p.Question, "Refund 49.9 EUR on order A-1001") {
		t.Errorf("pending = %+v, want the approval at pay showing 49.9 for A-1001 with a digest", p)
	}

	status, b := do(t, ts, http.MethodGet, "/api/threads/"+thread, "")
	var th serve.Thread
	if err := json.Unmarshal(b, &th); status != http.StatusOK || err != nil {
		t.Fatalf("GET thread = %d %s (%v)", status, b, err)
	}
	if !th.Waiting || th.Pending == nil || th.Pending.Digest != p.Digest {
		t.Errorf("GET thread = %+v, want it waiting with digest %s", th, p.Digest)
	}

	done := turn(t, ts, "/api/threads/"+thread+"/answer", `{"answer": "yes"}`)
	refund, _ := done.State["refund"].(map[string]any)
	if done.Pending != nil || refund["status"] != "refunded" || refund["amount"] != 49.9 || done.Reply == "" || done.Reply != done.State["reply"] {
		t.Errorf("answer yes = %+v, want the refund of 49.9 in state and the reply", done)
	}

	lines := journalLines(t, jpath, thread)
	var calls []string
	for _, e := range lines {
		calls = append(calls, e["kind"].(string)+" "+e["name"].(string))
		for _, payload := range []string{"prompt", "reply", "args", "result"} {
			if _, ok := e[payload]; ok {
				t.Errorf("journal line %v holds %s; the default journal withholds payloads", e, payload)
			}
		}
		if e["ok"] != true || e["at"] == nil || e["duration_ms"] == nil {
			t.Errorf("journal line %v, want ok, at and duration_ms", e)
		}
	}
	want := []string{"tool orders.lookup_order", "llm decide", "tool orders.refund", "llm answer"}
	if !slices.Equal(calls, want) {
		t.Fatalf("journal calls = %q, want %q", calls, want)
	}
	for i, wantWithheld := range []string{"args result", "prompt reply", "args result", "prompt reply"} {
		if got := withheld(lines[i]); got != wantWithheld {
			t.Errorf("journal line %d withheld %q, want %q", i, got, wantWithheld)
		}
	}
	if lines[1]["node"] != "decide" {
		t.Errorf("model line = %v, want node decide", lines[1])
	}
}

func withheld(e map[string]any) string {
	var out []string
	list, _ := e["withheld"].([]any)
	for _, w := range list {
		out = append(out, w.(string))
	}
	return strings.Join(out, " ")
}

// TestRejectedRefund: no goes to onReject: a reply, and no refund made.
func TestRejectedRefund(t *testing.T) {
	t.Parallel()
	ts := newServer(t, desk.agent)
	thread := threadName(t)
	if first := turn(t, ts, "/api/threads/"+thread+"/messages", message("A-1002")); first.Pending == nil || first.Pending.Show["order.amount"] != 5000.0 {
		t.Fatalf("message = %+v, want the approval of 5000", first)
	}
	done := turn(t, ts, "/api/threads/"+thread+"/answer", `{"answer": "no"}`)
	if _, refunded := done.State["refund"]; refunded || done.Pending != nil || done.Reply == "" {
		t.Errorf("answer no = %+v, want a reply and no refund", done)
	}
	for _, e := range journalLines(t, desk.journal, thread) {
		if e["name"] == "orders.refund" {
			t.Errorf("journal has a refund call after a no: %v", e)
		}
	}
}

// TestTextGoesToTheFirstInput: {"text"} is written to the flow's first
// input channel (order_id), read by its type.
func TestTextGoesToTheFirstInput(t *testing.T) {
	t.Parallel()
	ts := newServer(t, desk.agent)
	thread := threadName(t)
	first := turn(t, ts, "/api/threads/"+thread+"/messages", `{"text": "A-1003"}`)
	if first.Pending == nil || first.Pending.Show["order_id"] != "A-1003" {
		t.Fatalf("text message = %+v, want the approval for A-1003", first)
	}
	if done := turn(t, ts, "/api/threads/"+thread+"/answer", `{"answer": {"approved": false}}`); done.Pending != nil {
		t.Errorf("answer = %+v, want the run ended", done)
	}
}

// TestConflicts: a message to a thread that waits, and an answer to one
// with nothing waiting, are 409.
func TestConflicts(t *testing.T) {
	t.Parallel()
	ts := newServer(t, desk.agent)
	thread := threadName(t)

	status, b := do(t, ts, http.MethodPost, "/api/threads/"+thread+"/answer", `{"answer": "yes"}`)
	if status != http.StatusConflict || !strings.Contains(string(b), `"error"`) {
		t.Errorf("answer with nothing waiting = %d %s, want 409 with an error", status, b)
	}
	turn(t, ts, "/api/threads/"+thread+"/messages", message("A-1002"))
	status, b = do(t, ts, http.MethodPost, "/api/threads/"+thread+"/messages", message("A-1002"))
	if status != http.StatusConflict || !strings.Contains(string(b), "/api/threads/"+thread+"/answer") {
		t.Errorf("message to a waiting thread = %d %s, want 409 saying where to answer", status, b)
	}
	turn(t, ts, "/api/threads/"+thread+"/answer", `{"answer": "no"}`)
	status, b = do(t, ts, http.MethodPost, "/api/threads/"+thread+"/answer", `{"answer": "no"}`)
	if status != http.StatusConflict {
		t.Errorf("a second answer = %d %s, want 409", status, b)
	}
}

// TestValidation: every request is checked on the way in, and a refusal
// names the field it is about.
func TestValidation(t *testing.T) {
	t.Parallel()
	ts := newServer(t, desk.agent)
	thread := threadName(t)
	msgs := "/api/threads/" + thread + "/messages"
	answer := "/api/threads/" + thread + "/answer"
	tests := []struct {
		name, method, path, body string
		contentType              string // "": application/json when there is a body
		status                   int
		field                    string
	}{
		{name: "thread too long", method: "POST", path: "/api/threads/" + strings.Repeat("t", 129) + "/messages", body: `{"text":"A-1001"}`, status: 400, field: "thread"},
		{name: "thread with a space", method: "GET", path: "/api/threads/a%20b", status: 400, field: "thread"},
		{name: "thread with a slash", method: "GET", path: "/api/threads/a%2Fb", status: 400, field: "thread"},
		{name: "not JSON", method: "POST", path: msgs, body: `{"text":`, status: 400, field: "body"},
		{name: "a list", method: "POST", path: msgs, body: `[1]`, status: 400, field: "body"},
		{name: "null", method: "POST", path: msgs, body: `null`, status: 400, field: "body"},
		{name: "two values", method: "POST", path: msgs, body: `{} {}`, status: 400, field: "body"},
		{name: "empty body", method: "POST", path: msgs, contentType: "application/json", status: 400, field: "body"},
		{name: "unknown field", method: "POST", path: msgs, body: `{"inptu": {}}`, status: 400, field: "inptu"},
		{name: "neither input nor text", method: "POST", path: msgs, body: `{}`, status: 400, field: "input"},
		{name: "input and text", method: "POST", path: msgs, body: `{"input": {}, "text": "x"}`, status: 400, field: "input"},
		{name: "input not an object", method: "POST", path: msgs, body: `{"input": "A-1001"}`, status: 400, field: "input"},
		{name: "undeclared channel", method: "POST", path: msgs, body: `{"input": {"nope": 1}}`, status: 400, field: "input.nope"},
		{name: "engine channel", method: "POST", path: msgs, body: `{"input": {"__error": {}}}`, status: 400, field: "input.__error"},
		{name: "wrong type", method: "POST", path: msgs, body: `{"input": {"order_id": 1001}}`, status: 400, field: "input.order_id"},
		{name: "text not a string", method: "POST", path: msgs, body: `{"text": 5}`, status: 400, field: "text"},
		{name: "empty text", method: "POST", path: msgs, body: `{"text": "  "}`, status: 400, field: "text"},
		{name: "no answer", method: "POST", path: answer, body: `{}`, status: 400, field: "answer"},
		{name: "empty answer", method: "POST", path: answer, body: `{"answer": ""}`, status: 400, field: "answer"},
		{name: "answer with another field", method: "POST", path: answer, body: `{"answer": "yes", "digest": "x"}`, status: 400, field: "digest"},
		{name: "not application/json", method: "POST", path: msgs, body: `{"text":"A-1001"}`, contentType: "text/plain", status: 415, field: "Content-Type"},
		{name: "too big", method: "POST", path: msgs, body: `{"text": "` + strings.Repeat("x", serve.MaxRequestBytes) + `"}`, status: 413, field: "body"},
		{name: "GET messages", method: "GET", path: msgs, status: 405, field: "method"},
		{name: "DELETE conversations", method: "DELETE", path: "/api/conversations", status: 405, field: "method"},
		{name: "no such API", method: "GET", path: "/api/nope", status: 404, field: "path"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			req, err := http.NewRequestWithContext(t.Context(), tt.method, ts.URL+tt.path, strings.NewReader(tt.body))
			if err != nil {
				t.Fatal(err)
			}
			ct := tt.contentType
			if ct == "" && tt.body != "" {
				ct = "application/json"
			}
			if ct != "" {
				req.Header.Set("Content-Type", ct)
			}
			res, err := ts.Client().Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer res.Body.Close()
			var e struct{ Error, Field string }
			if err := json.NewDecoder(res.Body).Decode(&e); err != nil {
				t.Fatalf("%s %s: the body is not JSON: %v", tt.method, tt.path, err)
			}
			if res.StatusCode != tt.status || e.Field != tt.field || !strings.HasPrefix(e.Error, tt.field+": ") {
				t.Errorf("%s %s = %d %+v, want %d naming %s", tt.method, tt.path, res.StatusCode, e, tt.status, tt.field)
			}
			if ct := res.Header.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
				t.Errorf("Content-Type = %q, want application/json", ct)
			}
		})
	}
}

// TestRefusesOtherSites: a request another site's page could send — from
// another origin, or to a name rebound to loopback — is refused.
func TestRefusesOtherSites(t *testing.T) {
	t.Parallel()
	ts := newServer(t, desk.agent)
	thread := threadName(t)
	tests := []struct {
		name   string
		method string
		header map[string]string
		host   string
		field  string
	}{
		{name: "another origin", method: "POST", header: map[string]string{"Origin": "http://evil.example"}, field: "Origin"},
		{name: "cross-site fetch", method: "POST", header: map[string]string{"Sec-Fetch-Site": "cross-site"}, field: "Origin"},
		{name: "rebound name", method: "GET", host: "evil.example", field: "Host"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			req, err := http.NewRequestWithContext(t.Context(), tt.method, ts.URL+"/api/threads/"+thread+"/answer", strings.NewReader(`{"answer": "yes"}`))
			if err != nil {
				t.Fatal(err)
			}
			req.Header.Set("Content-Type", "application/json")
			for k, v := range tt.header {
				req.Header.Set(k, v)
			}
			if tt.host != "" {
				req.Host = tt.host
			}
			res, err := ts.Client().Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer res.Body.Close()
			var e struct{ Error, Field string }
			_ = json.NewDecoder(res.Body).Decode(&e)
			if res.StatusCode != http.StatusForbidden || e.Field != tt.field {
				t.Errorf("%s = %d %+v, want 403 naming %s", tt.name, res.StatusCode, e, tt.field)
			}
		})
	}
	// The page itself, from its own origin, gets through.
	req, _ := http.NewRequestWithContext(t.Context(), "POST", ts.URL+"/api/threads/"+thread+"/answer", strings.NewReader(`{"answer": "yes"}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Origin", ts.URL)
	req.Header.Set("Sec-Fetch-Site", "same-origin")
	res, err := ts.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusConflict {
		t.Errorf("same-origin answer = %d, want 409 (it got through; nothing waits)", res.StatusCode)
	}
}

// TestConversations: the list holds the threads the server ran and the
// ones waiting in the store, pointers only, and outlives the server.
func TestConversations(t *testing.T) {
	t.Parallel()
	index := filepath.Join(t.TempDir(), "conversations.json")
	ts := newServerAt(t, desk.agent, index)
	finished, waits, elsewhere := threadName(t)+"-finished", threadName(t)+"-waits", threadName(t)+"-elsewhere"

	turn(t, ts, "/api/threads/"+finished+"/messages", message("A-1002"))
	turn(t, ts, "/api/threads/"+finished+"/answer", `{"answer": "no"}`)
	turn(t, ts, "/api/threads/"+waits+"/messages", message("A-1002"))
	// A run another process left waiting in the folder's store.
	if _, err := desk.agent.Graph.Invoke(t.Context(), elsewhere, map[string]any{"order_id": "A-1002", "request": "x"}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		for _, th := range []string{waits, elsewhere} {
			if err := desk.agent.Graph.Cancel(context.Background(), th); err != nil && !errors.Is(err, flow.ErrNothingPending) {
				t.Error(err)
			}
		}
	})

	check := func(who string, list []serve.Conversation, want map[string]bool) {
		t.Helper()
		got := map[string]bool{}
		for _, c := range list {
			if _, ok := want[c.Thread]; ok {
				got[c.Thread] = c.Waiting
				if c.Updated.IsZero() {
					t.Errorf("%s: %s has no updated time", who, c.Thread)
				}
			}
		}
		for th, w := range want {
			if g, ok := got[th]; !ok || g != w {
				t.Errorf("%s: conversation %s listed %v waiting %v, want listed, waiting %v", who, th, ok, g, w)
			}
		}
	}
	list := conversations(t, ts)
	check("first server", list, map[string]bool{finished: false, waits: true, elsewhere: true})
	for i := 1; i < len(list); i++ {
		if list[i].Updated.After(list[i-1].Updated) {
			t.Errorf("conversations not most recent first: %v after %v", list[i], list[i-1])
		}
	}

	// A new server on the same index still knows the finished one.
	ts2 := newServerAt(t, desk.agent, index)
	check("second server", conversations(t, ts2), map[string]bool{finished: false, waits: true, elsewhere: true})
}

func conversations(t *testing.T, ts *httptest.Server) []serve.Conversation {
	t.Helper()
	status, b := do(t, ts, http.MethodGet, "/api/conversations", "")
	if status != http.StatusOK {
		t.Fatalf("GET conversations = %d %s", status, b)
	}
	var body map[string]json.RawMessage
	if err := json.Unmarshal(b, &body); err != nil {
		t.Fatal(err)
	}
	if len(body) != 1 {
		t.Errorf("GET conversations = %s, want only the list", b)
	}
	var list []serve.Conversation
	if err := json.Unmarshal(body["conversations"], &list); err != nil {
		t.Fatal(err)
	}
	// Pointers only: thread, updated, waiting.
	var raw struct{ Conversations []map[string]any }
	_ = json.Unmarshal(b, &raw)
	for _, c := range raw.Conversations {
		if len(c) != 3 {
			t.Errorf("conversation %v, want thread, updated and waiting only", c)
		}
	}
	return list
}

// TestPage: the chat page, its script and its style come from the binary
// under a strict Content-Security-Policy, with nothing inline.
func TestPage(t *testing.T) {
	t.Parallel()
	ts := newServer(t, desk.agent)
	status, b := do(t, ts, http.MethodGet, "/", "")
	if status != http.StatusOK || !strings.Contains(string(b), `<script src="chat.js"`) {
		t.Fatalf("GET / = %d %s, want the page", status, b)
	}
	if regexp.MustCompile(`<script>|<style|\sstyle=|\son[a-z]+=`).Match(b) {
		t.Errorf("the page has inline script or style:\n%s", b)
	}
	for _, path := range []string{"/chat.js", "/chat.css"} {
		if status, _ := do(t, ts, http.MethodGet, path, ""); status != http.StatusOK {
			t.Errorf("GET %s = %d, want 200", path, status)
		}
	}
	res, err := ts.Client().Get(ts.URL + "/")
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	csp := res.Header.Get("Content-Security-Policy")
	for _, want := range []string{"default-src 'none'", "script-src 'self'", "style-src 'self'", "frame-ancestors 'none'"} {
		if !strings.Contains(csp, want) {
			t.Errorf("Content-Security-Policy = %q, want %s", csp, want)
		}
	}
	status, b = do(t, ts, http.MethodGet, "/api/agent", "")
	var d serve.Description
	if err := json.Unmarshal(b, &d); status != http.StatusOK || err != nil || d.Name != "refund-desk" || len(d.Inputs) != 2 || d.Inputs[0].Name != "order_id" || d.Inputs[0].Type != "string" {
		t.Errorf("GET /api/agent = %d %s, want the refund desk's inputs", status, b)
	}
}

// TestCheckListen: loopback is served; anything else only with public.
func TestCheckListen(t *testing.T) {
	t.Parallel()
	tests := []struct {
		addr   string
		public bool
		want   error // nil, ErrNotLoopback, or errAny
	}{
		{addr: "127.0.0.1:0"},
		{addr: "127.0.0.2:8080"},
		{addr: "localhost:8080"},
		{addr: "[::1]:0"},
		{addr: ":8080", want: serve.ErrNotLoopback},
		{addr: "0.0.0.0:8080", want: serve.ErrNotLoopback},
		{addr: "192.168.1.10:80", want: serve.ErrNotLoopback},
		{addr: "0.0.0.0:8080", public: true},
		{addr: "127.0.0.1", want: errAny},
	}
	for _, tt := range tests {
		err := serve.CheckListen(tt.addr, tt.public)
		switch {
		case tt.want == nil && err != nil,
			tt.want == errAny && err == nil,
			tt.want == serve.ErrNotLoopback && !errors.Is(err, serve.ErrNotLoopback):
			t.Errorf("CheckListen(%q, %v) = %v, want %v", tt.addr, tt.public, err, tt.want)
		}
	}
}

var errAny = errors.New("any error")
