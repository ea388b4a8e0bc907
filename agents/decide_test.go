package agents_test

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/symphonix/symphonix/agents"
	"github.com/symphonix/symphonix/llm"
)

// provider is an OpenAI-compatible server that answers every completion
// with answer, and keeps the prompts it was sent.
type provider struct {
	mu      sync.Mutex
	answer  string
	prompts []string
}

func (p *provider) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Messages []struct {
			Content string `json:"content"`
		} `json:"messages"`
	}
	b, _ := io.ReadAll(r.Body)
	_ = json.Unmarshal(b, &req)
	p.mu.Lock()
	for _, m := range req.Messages {
		p.prompts = append(p.prompts, m.Content)
	}
	answer := p.answer
	p.mu.Unlock()
	out, _ := json.Marshal(map[string]any{"choices": []any{map[string]any{"index": 0, "finish_reason": "stop",
		"message": map[string]any{"role": "assistant", "content": answer}}}})
	w.Header().Set("Content-Type", "application/json")
	w.Write(out)
}

func TestModelChoosesAgent(t *testing.T) {
	tests := []struct {
		name    string
		answer  string
		want    string // code, or "" for a run that finishes
		lookups int64  // beyond the two the offer makes
	}{
		// Invoke's lookup, and the test's graph builder's.
		{"a listed agent", `{"agent":"researcher","input":{"subject":"otters"}}`, "", 2},
		{"in a code fence", "Here:\n```json\n{\"agent\":\"researcher\",\"input\":{\"subject\":\"otters\"}}\n```", "", 2},
		{"a path", `{"agent":"../x","input":{}}`, agents.CodeDecisionInvalid, 0},
		{"an unlisted agent", `{"agent":"silent","input":{"subject":"x"}}`, agents.CodeNotPermitted, 0},
		{"not JSON", `I would ask the researcher.`, agents.CodeDecisionInvalid, 0},
		{"no agent", `{"input":{"subject":"x"}}`, agents.CodeDecisionInvalid, 0},
		{"input not an object", `{"agent":"researcher","input":"otters"}`, agents.CodeDecisionInvalid, 0},
		{"undeclared input", `{"agent":"researcher","input":{"subject":"x","token":"y"}}`, agents.CodeInputInvalid, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := researcherWorld(t, 0)
			p := &provider{answer: tt.answer}
			srv := httptest.NewServer(p)
			t.Cleanup(srv.Close)
			m, err := llm.NewOpenAI(llm.OpenAIConfig{BaseURL: srv.URL})
			if err != nil {
				t.Fatal(err)
			}
			w.model = m
			g := w.root(rootFlow(map[string]any{"id": "choose", "type": "agent", "agents": []any{"researcher", "broken"},
				"prompt": "Find out about {{topic}}.", "output": "result"}))
			before := agents.Lookups(w.reg)
			res, err := g.Invoke(t.Context(), "t1", map[string]any{"topic": "otters"})
			got := codes(err)
			switch {
			case tt.want == "" && err != nil:
				t.Fatalf("Invoke = %v, want it to finish", err)
			case tt.want == "":
				if diff := cmp.Diff(map[string]any{"findings": "all about otters"}, res.State["result"]); diff != "" {
					t.Errorf("result (-want +got):\n%s", diff)
				}
			case len(got) == 0 || got[0] != tt.want:
				t.Fatalf("Invoke = %v (codes %v), want %s", err, got, tt.want)
			}
			if n := agents.Lookups(w.reg) - before; n != 2+tt.lookups {
				t.Errorf("registry lookups = %d, want %d: the offer's two, and one only for a name that is a listed agent", n, 2+tt.lookups)
			}
			p.mu.Lock()
			defer p.mu.Unlock()
			if len(p.prompts) != 1 || !strings.Contains(p.prompts[0], "Find out about otters.") ||
				!strings.Contains(p.prompts[0], "- researcher: Research a subject.") || !strings.Contains(p.prompts[0], "- broken: Always fails.") ||
				strings.Contains(p.prompts[0], "silent") {
				t.Errorf("prompts = %q, want the node's prompt and the listed agents' contracts only", p.prompts)
			}
		})
	}
}

func TestDescribe(t *testing.T) {
	got := agents.Describe([]agents.Contract{{Name: "sql", Description: "Answers from\n the database.",
		Inputs:  []agents.Field{{Name: "question", Type: "string", Description: "What to ask."}},
		Outputs: []agents.Field{{Name: "answer"}}}})
	want := "- sql: Answers from the database.\n  takes:\n    - question (string): What to ask.\n  gives back:\n    - answer\n"
	if got != want {
		t.Errorf("Describe = %q, want %q", got, want)
	}
}

func TestDecide(t *testing.T) {
	name, input, err := agents.Decide(`{"agent":"sql","input":{"q":1}}`, "")
	if err != nil || name != "sql" || input["q"] != float64(1) {
		t.Errorf("Decide = %q, %v, %v", name, input, err)
	}
	_, _, err = agents.Decide(strings.Repeat(" ", agents.MaxDecisionBytes+1), "")
	if err == nil || err.Code != agents.CodeDecisionInvalid {
		t.Errorf("Decide(too long) = %v, want AGENT_DECISION_INVALID", err)
	}
}
