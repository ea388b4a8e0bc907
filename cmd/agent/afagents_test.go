package main

import (
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/symphonix/symphonix/agentflow"
	"github.com/symphonix/symphonix/journal"
)

// triageFlow is a flow agent: one llm node that labels a ticket, told the
// task and the ticket's text.
const triageFlow = `{
  "version": "0.17",
  "name": "triage",
  "description": "Labels a support ticket.",
  "inputs": ["text", "task"],
  "outputs": ["label"],
  "state": {
    "text": { "type": "string", "description": "The ticket's text." },
    "task": { "type": "string", "description": "What to do with it." },
    "label": { "type": "string", "description": "The ticket's label." }
  },
  "nodes": [
    { "id": "classify", "type": "llm", "output": "label", "description": "Label the ticket.",
      "prompt": "{{task}} (triage flow): {{text}}" }
  ],
  "edges": [ { "from": "classify", "to": "END" } ],
  "start": "classify"
}
`

// deskAF is a workflow whose one agent() call is answered by the agent
// the resource RESOURCE names, its answer held to EXPECT, with RETRY.
const deskAF = `workflow desk(input: Ticket) -> any {
  use agent "RESOURCE" as triager
  type Ticket { text: text }
  type Label { label: text }
  type Score { label: number }
  pipeline {
    stage labelled -> EXPECT {
      return agent(triager) {
        task "Label the ticket"
        input { text: input.text }
        expect EXPECT
        RETRY
      }
    }
    return { label: labelled.label, text: input.text }
  }
}
`

func deskSource(resource, expect, retry string) string {
	return strings.NewReplacer("RESOURCE", resource, "EXPECT", expect, "RETRY", retry).Replace(deskAF)
}

// scriptedProvider is an OpenAI-compatible chat-completions server: it
// answers with the statuses of fail first, one a request (a 5xx or 429
// with an error body), then with answer; it keeps every prompt.
type scriptedProvider struct {
	answer  string
	mu      sync.Mutex
	fail    []int
	prompts []string
}

func (p *scriptedProvider) start(t *testing.T) map[string]string {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var body struct {
			Messages []struct{ Content string } `json:"messages"`
		}
		if r.URL.Path != "/v1/chat/completions" || r.Header.Get("Authorization") != "Bearer sk-test-afuse" || json.NewDecoder(r.Body).Decode(&body) != nil || len(body.Messages) == 0 {
			http.Error(w, `{"error":{"message":"bad request"}}`, http.StatusBadRequest)
			return
		}
		p.mu.Lock()
		p.prompts = append(p.prompts, body.Messages[len(body.Messages)-1].Content)
		status := 0
		if len(p.fail) > 0 {
			status, p.fail = p.fail[0], p.fail[1:]
		}
		p.mu.Unlock()
		if status != 0 {
			w.WriteHeader(status)
			w.Write([]byte(`{"error":{"message":"the provider failed","type":"server_error"}}`))
			return
		}
		json.NewEncoder(w).Encode(map[string]any{
			"choices": []any{map[string]any{"message": map[string]any{"role": "assistant", "content": p.answer}}},
			"usage":   map[string]any{"prompt_tokens": 5, "completion_tokens": 1, "total_tokens": 6},
		})
	}))
	t.Cleanup(srv.Close)
	return map[string]string{"OPENAI_API_KEY": "sk-test-afuse", "OPENAI_BASE_URL": srv.URL + "/v1", "OPENAI_MODEL": "gpt-test"}
}

func (p *scriptedProvider) asked() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]string(nil), p.prompts...)
}

// writeFiles writes files (by path relative to dir) into dir.
func writeFiles(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for name, content := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o750); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o640); err != nil {
			t.Fatal(err)
		}
	}
}

// TestAgentRunAFUseFolder: use agent "./triage" names the flow agent in
// the folder beside the file; the agent() call runs it — its own llm
// node's prompt, given the call's task and input — and its declared
// output is the call's answer, which reaches the pipeline's return. Its
// model call is journalled under its own node.
func TestAgentRunAFUseFolder(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{"desk.af": deskSource("./triage", "Label", ""), "triage/flow.json": triageFlow})
	p := &scriptedProvider{answer: "bug"}
	r := runAgent(t, p.start(t), "", "run", filepath.Join(dir, "desk.af"), "--input", `{"text":"it crashes"}`)
	if r.code != 0 {
		t.Fatalf("agent run: exit %d, stderr %s, error %v", r.code, r.stderr, r.err)
	}
	var out map[string]any
	if err := json.Unmarshal([]byte(r.stdout), &out); err != nil {
		t.Fatalf("stdout %q: %v", r.stdout, err)
	}
	if diff := cmp.Diff(map[string]any{"label": "bug", "text": "it crashes"}, out); diff != "" {
		t.Errorf("output (-want +got):\n%s", diff)
	}
	if got := p.asked(); len(got) != 1 || got[0] != "Label the ticket (triage flow): it crashes" {
		t.Errorf("the provider was asked %q; want the triage flow's own prompt, once, with the task and the input", got)
	}
	es, err := journal.Read(journal.Path(dir), 0, journal.KindLLM)
	if err != nil {
		t.Fatal(err)
	}
	if len(es) != 1 || es[0].Name != "classify" || !es[0].OK || es[0].Tokens == nil || es[0].Tokens.Total != 6 {
		t.Errorf("journal = %+v; want the triage flow's one model call, named for its node", es)
	}
}

// TestAgentRunAFUseRegistered: a resource that is no folder is looked up
// in the file's folder's agents.json; its version suffix is not part of
// the name.
func TestAgentRunAFUseRegistered(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{
		"desk.af":                 deskSource("triager@1", "Label", ""),
		"agents/triage/flow.json": triageFlow,
		"agents.json":             `{ "agents": { "triager": "agents/triage" } }`,
	})
	p := &scriptedProvider{answer: "billing"}
	r := runAgent(t, p.start(t), "", "run", filepath.Join(dir, "desk.af"), "--input", `{"text":"charged twice"}`)
	if r.code != 0 || !strings.Contains(r.stdout, `"label": "billing"`) {
		t.Fatalf("agent run: exit %d, stdout %q, stderr %s, error %v; want the registered agent's label", r.code, r.stdout, r.stderr, r.err)
	}
	if got := p.asked(); len(got) != 1 || !strings.Contains(got[0], "(triage flow): charged twice") {
		t.Errorf("the provider was asked %q; want the registered flow's prompt", got)
	}
}

// TestAgentRunAFUseUnknown: a use agent that names neither a folder nor a
// registered agent is refused before anything runs, at the use's
// position; the provider is never asked.
func TestAgentRunAFUseUnknown(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name, resource string
		files          map[string]string
		want           []string
	}{
		{"nothing", "nobody@1", nil, []string{`desk.af:2:3: use agent "nobody@1": no agent folder "`, `nobody" and no registered agent "nobody"`}},
		{"a registry without it", "nobody", map[string]string{"agents/triage/flow.json": triageFlow, "agents.json": `{ "agents": { "triager": "agents/triage" } }`},
			[]string{`desk.af:2:3: use agent "nobody": no agent folder "`, `and no registered agent "nobody"`}},
		{"a folder without a flow", "./empty", map[string]string{"empty/notes.txt": "x"}, []string{`desk.af:2:3: use agent "./empty": no agent folder "`}},
		{"outside the folder", "../triage", nil, []string{`desk.af:2:3: use agent "../triage": the folder "../triage" is not inside the file's folder`}},
		{"no contract", "./bare", map[string]string{"bare/flow.json": strings.Replace(triageFlow, `"description": "Labels a support ticket.",`, "", 1)},
			[]string{`desk.af:2:3: use agent "./bare":`, "description"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			files := map[string]string{"desk.af": deskSource(tt.resource, "Label", "")}
			for k, v := range tt.files {
				files[k] = v
			}
			writeFiles(t, dir, files)
			p := &scriptedProvider{answer: "bug"}
			r := runAgent(t, p.start(t), "", "run", filepath.Join(dir, "desk.af"), "--input", `{"text":"x"}`)
			if r.code != 1 || r.stdout != "" {
				t.Errorf("agent run: exit %d, stdout %q, error %v; want 1 and nothing on stdout", r.code, r.stdout, r.err)
			}
			for _, w := range tt.want {
				if !strings.Contains(errText(r), w) {
					t.Errorf("error %q; want it to say %q", errText(r), w)
				}
			}
			if got := p.asked(); len(got) != 0 {
				t.Errorf("the provider was asked %q; want nothing asked", got)
			}
		})
	}
}

// TestAgentRunAFUseExpect: an agent's output that does not fit the call's
// expect type fails the run with ErrAnswer naming the field.
func TestAgentRunAFUseExpect(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{"desk.af": deskSource("./triage", "Score", ""), "triage/flow.json": triageFlow})
	p := &scriptedProvider{answer: "bug"}
	r := runAgent(t, p.start(t), "", "run", filepath.Join(dir, "desk.af"), "--input", `{"text":"it crashes"}`)
	if r.code != 1 || !errors.Is(r.err, agentflow.ErrAnswer) || !strings.Contains(errText(r), "desk.af:8:14: the answer of agent(triager).label is text, want number") {
		t.Errorf("agent run: exit %d, error %v; want 1, ErrAnswer naming .label at the call", r.code, r.err)
	}
}

// TestAgentRunAFUseRetry: a delegated run that fails on a provider's 5xx
// is the code transient — retried by default, not when on names only
// rate_limit; a 429 is rate_limit.
func TestAgentRunAFUseRetry(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name, retry string
		fail        []int
		code, asked int
	}{
		{"transient retried", "retry { attempts: 2 }", []int{502, 500}, 0, 3},
		{"no retry", "", []int{502}, 1, 1},
		{"transient not in on", "retry { attempts: 2, on: [rate_limit] }", []int{503}, 1, 1},
		{"rate_limit retried", "retry { attempts: 1, on: [rate_limit] }", []int{429}, 0, 2},
		{"retries run out", "retry { attempts: 1 }", []int{500, 500, 500}, 1, 2},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			writeFiles(t, dir, map[string]string{"desk.af": deskSource("./triage", "Label", tt.retry), "triage/flow.json": triageFlow})
			p := &scriptedProvider{answer: "bug", fail: tt.fail}
			r := runAgent(t, p.start(t), "", "run", filepath.Join(dir, "desk.af"), "--input", `{"text":"it crashes"}`)
			if r.code != tt.code {
				t.Errorf("agent run: exit %d, stdout %q, error %v; want %d", r.code, r.stdout, r.err, tt.code)
			}
			if tt.code == 0 && !strings.Contains(r.stdout, `"label": "bug"`) {
				t.Errorf("stdout %q; want the label", r.stdout)
			}
			if tt.code != 0 && !strings.Contains(errText(r), "desk.af:8:14: agent(triager) failed") {
				t.Errorf("error %q; want the call's failure at its position", errText(r))
			}
			if got := p.asked(); len(got) != tt.asked {
				t.Errorf("the provider was asked %d times; want %d", len(got), tt.asked)
			}
		})
	}
}

// TestAgentRunAFUseScalar: when expect is not an object type, an agent
// that wrote one output answers with that output's value.
func TestAgentRunAFUseScalar(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{"one.af": `workflow one(input: any) -> text {
  use agent "triage" as triager
  pipeline {
    return agent(triager) {
      task "Label it"
      input { text: "slow page" }
      expect text
    }
  }
}
`, "triage/flow.json": triageFlow})
	p := &scriptedProvider{answer: "performance"}
	r := runAgent(t, p.start(t), "", "run", filepath.Join(dir, "one.af"))
	if r.code != 0 || strings.TrimSpace(r.stdout) != `"performance"` {
		t.Errorf("agent run: exit %d, stdout %q, error %v; want the label alone", r.code, r.stdout, r.err)
	}
}
