package serve_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/symphonix/symphonix/agent"
	"github.com/symphonix/symphonix/secrets"
	"github.com/symphonix/symphonix/serve"
	"github.com/symphonix/symphonix/transcript"
)

// openTranscript opens a transcript in a temporary folder.
func openTranscript(t *testing.T) *transcript.Transcript {
	t.Helper()
	tr, err := transcript.Open(transcript.Config{Path: filepath.Join(t.TempDir(), "transcript.jsonl"), Secrets: secrets.NewSet(nil)})
	if err != nil {
		t.Fatal(err)
	}
	return tr
}

// TestTranscript: a run that finishes writes its turn to the transcript; a
// run that waits has said nothing yet. GET /api/conversation reads the
// thread back, and GET /api/conversations counts its turns.
func TestTranscript(t *testing.T) {
	t.Parallel()
	tr := openTranscript(t)
	s, err := serve.New(t.Context(), serve.Config{Agent: desk.agent, Conversations: filepath.Join(t.TempDir(), "c.json"), Transcript: tr})
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(s)
	t.Cleanup(ts.Close)
	thread := threadName(t)
	turn(t, ts, "/api/threads/"+thread+"/messages", message("A-1002"))
	if got, _ := tr.Thread(thread, 10); len(got) != 0 {
		t.Errorf("a run waiting at its approval wrote %v; want nothing yet", got)
	}
	done := turn(t, ts, "/api/threads/"+thread+"/answer", `{"answer": "no"}`)

	status, b := do(t, ts, http.MethodGet, "/api/conversation?thread="+thread, "")
	if status != http.StatusOK {
		t.Fatalf("GET /api/conversation = %d %s", status, b)
	}
	var c serve.ConversationTurns
	if err := json.Unmarshal(b, &c); err != nil {
		t.Fatal(err)
	}
	if c.Thread != thread || len(c.Turns) != 1 {
		t.Fatalf("conversation = %s, want one turn", b)
	}
	got := c.Turns[0]
	asked, _ := got.Asked.(map[string]any)
	if asked["order_id"] != "A-1002" || got.Answered != done.Reply || got.At.IsZero() {
		t.Errorf("turn = %+v; want what was asked (the inputs), the reply, and when", got)
	}
	if got, _ := done.State["history"]; got != nil {
		t.Errorf("the refund desk is not a conversation, and its state has a history: %v", got)
	}

	var l struct{ Conversations []serve.Conversation }
	if status, b := do(t, ts, http.MethodGet, "/api/conversations", ""); status != http.StatusOK || json.Unmarshal(b, &l) != nil {
		t.Fatalf("GET /api/conversations = %d %s", status, b)
	}
	found := false
	for _, c := range l.Conversations {
		if c.Thread == thread {
			found = true
			if c.Turns != 1 {
				t.Errorf("conversation %+v, want 1 turn", c)
			}
		}
	}
	if !found {
		t.Errorf("conversations = %+v, want %s among them", l.Conversations, thread)
	}

	for _, bad := range []struct{ query, field string }{
		{"", "thread"}, {"?thread=a/b", "thread"}, {"?thread=" + thread + "&limit=0", "limit"}, {"?thread=" + thread + "&limit=x", "limit"},
	} {
		status, b := do(t, ts, http.MethodGet, "/api/conversation"+bad.query, "")
		var e struct{ Field string }
		if _ = json.Unmarshal(b, &e); status != http.StatusBadRequest || e.Field != bad.field {
			t.Errorf("GET /api/conversation%s = %d %s, want 400 naming %s", bad.query, status, b, bad.field)
		}
	}
	if status, b := do(t, ts, http.MethodGet, "/api/conversation?thread=nobody-"+thread, ""); status != http.StatusNotFound {
		t.Errorf("a thread the agent holds nothing of = %d %s, want 404", status, b)
	}
}

// TestDoorTranscript: behind the door, a visitor reads their own
// conversation; another's is 404 exactly like one that does not exist,
// and the list shows only their own.
func TestDoorTranscript(t *testing.T) {
	t.Parallel()
	tr := openTranscript(t)
	d := newDoorServer(t, doorOptions{transcript: tr})
	ann, bob := newBrowser(t, d.ts), newBrowser(t, d.ts)
	tAnn, tBob := threadName(t)+"-ann", threadName(t)+"-bob"
	ann.start(tAnn)
	bob.start(tBob)
	var done serve.Turn
	ann.decode(http.MethodPost, "/api/threads/"+tAnn+"/answer", `{"answer": "no"}`, http.StatusOK, &done)
	bob.decode(http.MethodPost, "/api/threads/"+tBob+"/answer", `{"answer": "no"}`, http.StatusOK, &done)

	var c serve.ConversationTurns
	ann.decode(http.MethodGet, "/api/conversation?thread="+tAnn, "", http.StatusOK, &c)
	if len(c.Turns) != 1 || c.Thread != tAnn {
		t.Errorf("ann's conversation = %+v, want her one turn", c)
	}
	_, notFound := bob.do(http.MethodGet, "/api/conversation?thread=nobody", "")
	status, b := bob.do(http.MethodGet, "/api/conversation?thread="+tAnn, "")
	if status != http.StatusNotFound || !bytes.Equal(b, notFound) {
		t.Errorf("bob reading ann's conversation = %d %s, want 404 %s as for one that does not exist", status, b, notFound)
	}
	if got := mine(bob.threads(), tAnn, tBob); len(got) != 1 || got[0] != tBob {
		t.Errorf("bob's conversations = %v, want only his", got)
	}
}

// chatFlow is a conversation whose one llm node reads the history and a
// remembered name.
const chatFlow = `{
  "version": "0.17", "name": "chat", "description": "Talks, remembering.",
  "conversation": true, "inputs": ["question"], "outputs": ["answer"],
  "state": {
    "question": {"type": "string", "description": "What is asked now."},
    "name": {"type": "string", "description": "Who is talking.", "remembers": true, "default": ""},
    "answer": {"type": "string", "description": "The reply."}
  },
  "start": "reply",
  "nodes": [{"id": "reply", "type": "llm", "output": "answer", "prompt": "Talking with {{name}}.\nSo far: {{history}}\nNow: {{question}}"}],
  "edges": [{"from": "reply", "to": "END"}]
}`

// promptServer speaks OpenAI's chat completions: it records every prompt
// and answers "answer N" to the Nth.
type promptServer struct {
	*httptest.Server
	mu      sync.Mutex
	prompts []string
}

func newPromptServer(t *testing.T) *promptServer {
	t.Helper()
	p := &promptServer{}
	p.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			Messages []struct{ Content string } `json:"messages"`
		}
		body, _ := io.ReadAll(r.Body)
		if r.URL.Path != "/v1/chat/completions" || json.Unmarshal(body, &req) != nil || len(req.Messages) != 1 {
			http.Error(w, `{"error": {"message": "not a chat completion"}}`, http.StatusBadRequest)
			return
		}
		p.mu.Lock()
		p.prompts = append(p.prompts, req.Messages[0].Content)
		n := len(p.prompts)
		p.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"id": "c%d", "object": "chat.completion", "choices": [{"index": 0, "message": {"role": "assistant", "content": "answer %d"}, "finish_reason": "stop"}],
			"usage": {"prompt_tokens": 10, "completion_tokens": 2, "total_tokens": 12}}`, n, n)
	}))
	t.Cleanup(p.Close)
	return p
}

func (p *promptServer) last() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.prompts) == 0 {
		return ""
	}
	return p.prompts[len(p.prompts)-1]
}

// TestHistoryFromTheTranscript: the first turn of a thread this server has
// not talked on is shown the thread's turns out of the transcript as its
// history — the thread's memory here holds none of them — and each only
// once, on that turn and the ones after.
func TestHistoryFromTheTranscript(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "flow.json"), []byte(chatFlow), 0o600); err != nil {
		t.Fatal(err)
	}
	model := newPromptServer(t)
	env := map[string]string{"OPENAI_API_KEY": "sk-test", "OPENAI_BASE_URL": model.URL + "/v1"}
	a, err := agent.Open(t.Context(), dir, agent.Config{Getenv: func(k string) string { return env[k] }})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { a.Close() })
	tr := openTranscript(t)
	start := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
	for i := range 3 {
		tr.Write(t.Context(), transcript.Turn{At: start.Add(time.Duration(i) * time.Minute), Thread: "t1",
			Asked: fmt.Sprintf("earlier question %d", i), Answered: fmt.Sprintf("earlier answer %d", i)})
	}
	s, err := serve.New(t.Context(), serve.Config{Agent: a, Conversations: filepath.Join(t.TempDir(), "c.json"), Transcript: tr})
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(s)
	t.Cleanup(ts.Close)

	turn(t, ts, "/api/threads/t1/messages", `{"text": "what did I ask first?"}`)
	p := model.last()
	for i := range 3 {
		if n := strings.Count(p, fmt.Sprintf("earlier question %d", i)); n != 1 {
			t.Errorf("the first prompt shows earlier question %d %d times, want once:\n%s", i, n, p)
		}
	}
	done := turn(t, ts, "/api/threads/t1/messages", `{"text": "and then?"}`)
	p = model.last()
	for _, want := range []string{"earlier question 0", "earlier question 2", "what did I ask first?", `"answer 1"`} {
		if n := strings.Count(p, want); n != 1 {
			t.Errorf("the second prompt shows %q %d times, want once:\n%s", want, n, p)
		}
	}
	if h, _ := done.State["history"].([]any); len(h) != 5 {
		t.Errorf("history after two turns holds %d, want 5 (3 from the transcript and 2): %v", len(h), h)
	}
	// The transcript's copy of the new turns and the history's agree.
	turns, err := tr.Thread("t1", 10)
	if err != nil {
		t.Fatal(err)
	}
	h := done.State["history"].([]any)
	last, _ := h[len(h)-1].(map[string]any)
	if len(turns) != 5 || last["at"] != turns[4].At.Format(time.RFC3339Nano) {
		t.Errorf("transcript has %d turns, last at %v; history's last at %v", len(turns), turns[len(turns)-1].At, last["at"])
	}
}
