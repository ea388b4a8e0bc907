package evals

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
)

// fakeModel is an OpenAI-compatible chat-completions server: the model
// outside us. answer is asked for the reply's text for each prompt, and a
// reply of "" waits until the request is cancelled (a model that hangs).
type fakeModel struct {
	*httptest.Server
	mu      sync.Mutex
	prompts []string
}

func newFakeModel(t *testing.T, answer func(prompt string, structured bool) string) *fakeModel {
	t.Helper()
	f := &fakeModel{}
	f.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/v1/chat/completions" || r.Header.Get("Authorization") != "Bearer test-key-0123456789" {
			http.Error(w, `{"error":{"message":"not found","type":"invalid_request_error"}}`, http.StatusNotFound)
			return
		}
		var req struct {
			Messages []struct {
				Content any `json:"content"`
			} `json:"messages"`
			ResponseFormat *struct {
				Type string `json:"type"`
			} `json:"response_format"`
		}
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil || len(req.Messages) == 0 {
			http.Error(w, `{"error":{"message":"bad request"}}`, http.StatusBadRequest)
			return
		}
		prompt, _ := req.Messages[0].Content.(string)
		f.mu.Lock()
		f.prompts = append(f.prompts, prompt)
		f.mu.Unlock()
		text := answer(prompt, req.ResponseFormat != nil && req.ResponseFormat.Type == "json_schema")
		if text == "" {
			<-r.Context().Done()
			return
		}
		json.NewEncoder(w).Encode(map[string]any{
			"choices": []any{map[string]any{"message": map[string]any{"role": "assistant", "content": text}}},
			"usage":   map[string]any{"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15},
		})
	}))
	t.Cleanup(f.Close)
	return f
}

// count is how many prompts so far contained s.
func (f *fakeModel) count(s string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	n := 0
	for _, p := range f.prompts {
		if strings.Contains(p, s) {
			n++
		}
	}
	return n
}

// isJudge tells the judge's prompt from the agent's.
func isJudge(prompt string) bool { return strings.HasPrefix(prompt, "You judge how well") }

// refundDesk answers the refund desk's llm nodes: decide refunds, answer
// writes a reply naming the order.
func refundDesk(prompt string) string {
	if strings.Contains(prompt, "Decide whether to refund") {
		return `{"action":"refund","reason":"The customer reports a problem with a delivered order."}`
	}
	return "We are sorry: your order has been looked at and we will be in touch."
}

// scores is a judge's reply giving every criterion of the refund desk's
// suite the score s.
func scores(s string) string {
	one := `{"score":` + s + `,"reason":"The reply matches the order."}`
	return `{"grounded":` + one + `,"kind":` + one + `,"resolves":` + one + `}`
}

func fakeEnv(url string) func(string) string {
	return env(map[string]string{"OPENAI_API_KEY": "test-key-0123456789", "OPENAI_BASE_URL": url + "/v1", "OPENAI_MODEL": "fake-agent-model"})
}
