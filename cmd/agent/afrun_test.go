package main

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/google/go-cmp/cmp"
)

const afReview = `workflow review(input: Change) -> Report {
  use team "reviewers@1" as reviewer
  type Change { title: text, files: text[] }
  type Verdict { ok: bool, score: number }
  type Report { title: text, ok: bool, score: number }
  limits { agent_runs: 3 }
  pipeline {
    require input.files.any else fail "a change has files"
    stage verdict -> Verdict {
      emit progress { asking: "reviewer" }
      return agent(reviewer.main) {
        task "Review the change"
        input { title: input.title, files: input.files }
        expect Verdict
        retry { attempts: 1, on: [rate_limit] }
      }
    }
    return { title: input.title, ok: verdict.ok, score: verdict.score }
  }
}
`

// afProvider is an OpenAI-compatible chat-completions server: it answers
// every request with answer, first with a 429 when limited is set, and
// keeps the requests it read.
type afProvider struct {
	answer  string
	limited atomic.Bool
	bodies  []map[string]any
}

func (p *afProvider) start(t *testing.T) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var body map[string]any
		if r.URL.Path != "/v1/chat/completions" || r.Header.Get("Authorization") != "Bearer sk-test-af" || json.NewDecoder(r.Body).Decode(&body) != nil {
			http.Error(w, `{"error":{"message":"bad request"}}`, http.StatusBadRequest)
			return
		}
		p.bodies = append(p.bodies, body)
		if p.limited.CompareAndSwap(true, false) {
			w.WriteHeader(http.StatusTooManyRequests)
			w.Write([]byte(`{"error":{"message":"Rate limit reached","type":"requests"}}`))
			return
		}
		json.NewEncoder(w).Encode(map[string]any{"choices": []any{map[string]any{"message": map[string]any{"role": "assistant", "content": p.answer}}}})
	}))
	t.Cleanup(srv.Close)
	return srv
}

func TestAgentRunAF(t *testing.T) {
	t.Parallel()
	paths := afFiles(t, map[string]string{"review.af": afReview, "broken.af": "workflow w(input: any) -> number {\n  pipeline {\n    return nope\n  }\n}\n"})
	review := paths["review.af"]
	env := func(srv *httptest.Server) map[string]string {
		return map[string]string{"OPENAI_API_KEY": "sk-test-af", "OPENAI_BASE_URL": srv.URL + "/v1", "OPENAI_MODEL": "gpt-test"}
	}

	t.Run("runs", func(t *testing.T) {
		t.Parallel()
		p := &afProvider{answer: `{"ok":true,"score":0.75}`}
		p.limited.Store(true)
		srv := p.start(t)
		r := runAgent(t, env(srv), "", "run", review, "--input", `{"title":"fix","files":["a.go"]}`)
		if r.code != 0 {
			t.Fatalf("agent run: exit %d, stderr %s", r.code, r.stderr)
		}
		var out map[string]any
		if err := json.Unmarshal([]byte(r.stdout), &out); err != nil {
			t.Fatalf("stdout %q: %v", r.stdout, err)
		}
		if diff := cmp.Diff(map[string]any{"title": "fix", "ok": true, "score": 0.75}, out); diff != "" {
			t.Errorf("output (-want +got):\n%s", diff)
		}
		if !strings.Contains(r.stderr, `progress: {"asking":"reviewer"}`) {
			t.Errorf("stderr %q, want the progress line", r.stderr)
		}
		if len(p.bodies) != 2 {
			t.Fatalf("the provider was asked %d times, want 2 (a 429, then the retry)", len(p.bodies))
		}
		want := map[string]any{
			"model":    "gpt-test",
			"messages": []any{map[string]any{"role": "user", "content": "Review the change\n\nInput (JSON):\n" + `{"files":["a.go"],"title":"fix"}`}},
			"response_format": map[string]any{"type": "json_schema", "json_schema": map[string]any{"name": "reply", "strict": false, "schema": map[string]any{
				"type": "object", "additionalProperties": false, "required": []any{"ok", "score"},
				"properties": map[string]any{"ok": map[string]any{"type": "boolean"}, "score": map[string]any{"type": "number"}},
			}}},
		}
		if diff := cmp.Diff(want, p.bodies[1]); diff != "" {
			t.Errorf("request (-want +got):\n%s", diff)
		}
	})

	t.Run("wrong answer", func(t *testing.T) {
		t.Parallel()
		srv := (&afProvider{answer: `{"ok":"yes","score":1}`}).start(t)
		r := runAgent(t, env(srv), "", "run", review, "--input", `{"title":"fix","files":["a.go"]}`)
		if r.code != 1 || r.stdout != "" || !strings.Contains(r.stderr+errText(r), "the answer of agent(reviewer).ok is text, want bool") {
			t.Errorf("agent run: exit %d, stdout %q, stderr %q; want 1 naming .ok", r.code, r.stdout, r.stderr)
		}
	})

	t.Run("require fails", func(t *testing.T) {
		t.Parallel()
		srv := (&afProvider{answer: `{}`}).start(t)
		r := runAgent(t, env(srv), "", "run", review, "--input", `{"title":"fix","files":[]}`)
		if r.code != 1 || !strings.Contains(errText(r), "review.af:8:5: a change has files") {
			t.Errorf("agent run: exit %d, stderr %q, error %v; want 1 and the require's message at 8:5", r.code, r.stderr, r.err)
		}
	})

	t.Run("refusals", func(t *testing.T) {
		t.Parallel()
		for _, tt := range []struct {
			name string
			args []string
			code int
			want string
		}{
			{"not an object", []string{review, "--input", `[1]`}, 2, "--input: want a JSON object, not an array"},
			{"not JSON", []string{review, "--input", `{"title":`}, 2, "--input: not JSON"},
			{"does not fit", []string{review, "--input", `{"title":"fix","files":[1]}`}, 2, "input.files[0] is number, want text"},
			{"two inputs", []string{review, "--input", `{}`, "--input", `{}`}, 2, "takes one input"},
			{"checker errors", []string{paths["broken.af"]}, 1, "broken.af:3:12: error: unknown-variable: unknown variable nope"},
			{"--thread", []string{review, "--thread", "x"}, 2, "--thread: not for an Agent Flow file"},
		} {
			r := runAgent(t, map[string]string{}, "", append([]string{"run"}, tt.args...)...)
			if r.code != tt.code || r.stdout != "" || !strings.Contains(r.stderr+errText(r), tt.want) {
				t.Errorf("%s: exit %d, stdout %q, stderr %q, error %v; want %d saying %q", tt.name, r.code, r.stdout, r.stderr, r.err, tt.code, tt.want)
			}
		}
	})
}

// errText is what the command would print of its error.
func errText(r result) string {
	if r.err == nil {
		return ""
	}
	return r.err.Error()
}
