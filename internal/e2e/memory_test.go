package e2e

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
)

// chatFlow is a conversation whose one llm node reads the history and a
// name the thread remembers.
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

// modelServer speaks OpenAI's chat completions, recording every prompt and
// answering the Nth "answer N", with usage that includes cached tokens.
type modelServer struct {
	*httptest.Server
	mu      sync.Mutex
	prompts []string
}

func newModelServer(t *testing.T) *modelServer {
	t.Helper()
	m := &modelServer{}
	m.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			Messages []struct{ Content string } `json:"messages"`
		}
		body, _ := io.ReadAll(r.Body)
		if r.URL.Path != "/v1/chat/completions" || json.Unmarshal(body, &req) != nil || len(req.Messages) != 1 {
			http.Error(w, `{"error": {"message": "not a chat completion"}}`, http.StatusBadRequest)
			return
		}
		m.mu.Lock()
		m.prompts = append(m.prompts, req.Messages[0].Content)
		n := len(m.prompts)
		m.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"id": "c%d", "object": "chat.completion", "choices": [{"index": 0, "message": {"role": "assistant", "content": "answer %d"}, "finish_reason": "stop"}],
			"usage": {"prompt_tokens": 100, "completion_tokens": 5, "total_tokens": 105, "prompt_tokens_details": {"cached_tokens": 64}}}`, n, n)
	}))
	t.Cleanup(m.Close)
	return m
}

func (m *modelServer) last() string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.prompts[len(m.prompts)-1]
}

// TestConversationSurvivesKill: a served conversation is killed with
// SIGKILL between turns and started again on the same folder; the next
// answer's prompt sees every earlier turn, the last one included, and the
// name the thread remembers. Killed again and started without its waiting
// store (the thread's memory gone), the agent is shown the conversation
// again out of its transcript. The journal, read back over HTTP, has the
// provider's tokens.
func TestConversationSurvivesKill(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "chat")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "flow.json"), []byte(chatFlow), 0o644); err != nil {
		t.Fatal(err)
	}
	model := newModelServer(t)
	env := []string{"OPENAI_API_KEY=sk-e2e-memory-test-key", "OPENAI_BASE_URL=" + model.URL + "/v1", "OPENAI_MODEL=", "TRANSCRIPT_DAYS="}
	serving := regexp.MustCompile(`^serving .* on (http://127\.0\.0\.1:\d+)$`)
	type turn struct {
		Reply string
		State map[string]any
	}
	post := func(url, body string) turn {
		t.Helper()
		var tr turn
		if status := callAgent(t, "POST", url+"/api/threads/t1/messages", body, &tr); status != http.StatusOK {
			t.Fatalf("POST %s = %d %+v", body, status, tr)
		}
		return tr
	}
	seesOnce := func(prompt string, want ...string) {
		t.Helper()
		for _, w := range want {
			if n := strings.Count(prompt, w); n != 1 {
				t.Errorf("the prompt shows %q %d times, want once:\n%s", w, n, prompt)
			}
		}
	}

	agent := startWithEnv(t, env, "agent", "serve", dir)
	agent.waitLine(t, regexp.MustCompile(`^what threads remember is kept in .*waiting\.db$`))
	url := agent.waitLine(t, serving)[1]
	post(url, `{"input": {"question": "first question", "name": "Ada"}}`)
	post(url, `{"text": "second question"}`)
	_ = agent.stop(t, syscall.SIGKILL)

	agent = startWithEnv(t, env, "agent", "serve", dir)
	url = agent.waitLine(t, serving)[1]
	third := post(url, `{"text": "third question"}`)
	seesOnce(model.last(), "Talking with Ada.", "first question", "second question", `"answer 1"`, `"answer 2"`, "Now: third question")
	if h, _ := third.State["history"].([]any); len(h) != 3 {
		t.Errorf("history after the restart holds %d turns, want 3", len(h))
	}

	var calls struct {
		Calls []struct {
			Kind, Thread, Run string
			Tokens            *struct{ Input, Output, Cached, Total int }
		}
	}
	if status := callAgent(t, "GET", url+"/api/calls?kind=llm&limit=1", "", &calls); status != http.StatusOK || len(calls.Calls) != 1 {
		t.Fatalf("GET /api/calls = %d %+v", status, calls)
	}
	if c := calls.Calls[0]; c.Thread != "t1" || c.Run == "" || c.Tokens == nil || *c.Tokens != (struct{ Input, Output, Cached, Total int }{100, 5, 64, 105}) {
		t.Errorf("the newest llm call = %+v (tokens %+v), want thread t1, a run, and the provider's tokens", c, c.Tokens)
	}
	_ = agent.stop(t, syscall.SIGKILL)

	// The thread's memory gone with the store: the transcript still has
	// what was said.
	for _, suffix := range []string{"", "-wal", "-shm"} {
		if err := os.Remove(filepath.Join(dir, ".symphonix", "waiting.db"+suffix)); err != nil && !os.IsNotExist(err) {
			t.Fatal(err)
		}
	}
	agent = startWithEnv(t, env, "agent", "serve", dir)
	url = agent.waitLine(t, serving)[1]
	post(url, `{"text": "fourth question"}`)
	seesOnce(model.last(), "first question", "second question", "third question", `"answer 3"`, "Now: fourth question")
	if err := agent.stop(t, syscall.SIGTERM); err != nil {
		t.Errorf("SIGTERM: %v", err)
	}
}
