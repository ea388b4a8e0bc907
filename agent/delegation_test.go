package agent_test

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/symphonix/symphonix/agent"
	"github.com/symphonix/symphonix/agents"
	"github.com/symphonix/symphonix/flow"
	"github.com/symphonix/symphonix/subscription"
)

const parentFlow = `{
  "version": "0.17",
  "name": "desk",
  "state": { "why": { "type": "string" }, "result": { "type": "object" } },
  "start": "hand-over",
  "nodes": [ { "id": "hand-over", "type": "agent", "agent": "keeper", "input": { "why": "{{why}}" }, "output": "result" } ],
  "edges": [ { "from": "hand-over", "to": "END" } ]
}`

// TestChildToolsObeyTheParentsSwitches: a child's own MCP server is
// started with the parent's, its tools are announced and switched by the
// parent's subscription, and a tool switched off is refused inside the
// child exactly as in the parent.
func TestChildToolsObeyTheParentsSwitches(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	calls := filepath.Join(dir, "calls.txt")
	vault := filepath.Join(dir, "mcp-vault")
	if out, err := exec.Command("go", "build", "-o", vault, "./testdata/mcp-vault").CombinedOutput(); err != nil {
		t.Fatalf("build mcp-vault: %v\n%s", err, out)
	}
	child, err := os.ReadFile("testdata/vault-flow.json")
	if err != nil {
		t.Fatal(err)
	}
	child = bytes.Replace(child, []byte(`"command": "go",
        "args": ["run", "./mcp-vault"],`), fmt.Appendf(nil, `"command": %q, "env": {"VAULT_CALLS": %q},`, vault, calls), 1)
	os.MkdirAll(filepath.Join(dir, "keeper"), 0o755)
	os.WriteFile(filepath.Join(dir, "keeper", "flow.json"), child, 0o644)
	os.WriteFile(filepath.Join(dir, "flow.json"), []byte(parentFlow), 0o644)
	os.WriteFile(filepath.Join(dir, agents.FileName), []byte(`{"agents":{"keeper":"keeper"}}`), 0o644)

	a, err := agent.Open(t.Context(), dir, agent.Config{Monitored: true})
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() { a.Close() })
	want := []string{"vault.empty", "vault.peek", "vault.sweep"}
	if got := a.Subscription.Declared(); !slices.Equal(got, want) {
		t.Errorf("Declared = %v, want the child's tools %v", got, want)
	}
	if got := agent.DelegatedTools(dir, nil); !slices.Equal(got, want) {
		t.Errorf("DelegatedTools = %v, want %v", got, want)
	}
	if a.Registry() == nil || !slices.Equal(a.Registry().Names(), []string{"keeper"}) {
		t.Errorf("Registry = %v, want keeper", a.Registry())
	}

	if _, err := a.Subscription.Set([]string{"vault.peek"}); err != nil {
		t.Fatal(err)
	}
	_, err = a.Graph.Invoke(t.Context(), "t1", map[string]any{"why": "count it"})
	var ae *agents.Error
	if !errors.Is(err, subscription.ErrRefused) || !errors.As(err, &ae) || ae.Code != agents.CodeFailed {
		t.Fatalf("Invoke with empty switched off = %v, want AGENT_FAILED with the tool refused", err)
	}
	if _, err := a.Subscription.Set([]string{"vault.peek", "vault.empty"}); err != nil {
		t.Fatal(err)
	}
	res, err := a.Graph.Invoke(t.Context(), "t2", map[string]any{"why": "count it"})
	if err != nil || !res.Finished() {
		t.Fatalf("Invoke with both on = %+v, %v", res, err)
	}
	out, _ := res.State["result"].(map[string]any)
	if _, ok := out["emptied"]; !ok || len(out) != 1 {
		t.Errorf("result = %v, want only the child's declared output emptied", res.State["result"])
	}
	b, _ := os.ReadFile(calls)
	if got := strings.Fields(string(b)); !slices.Equal(got, []string{"peek", "peek", "empty"}) {
		t.Errorf("the server received %v, want peek, peek, empty", got)
	}
}

func TestOpenRefusesABrokenRegistry(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, agents.FileName), []byte(`{"agents":[{"name":"a","flow":"missing"},{"name":"a","flow":"x"}]}`), 0o644)
	os.WriteFile(filepath.Join(dir, "flow.json"), []byte(parentFlow), 0o644)
	_, err := agent.Open(t.Context(), dir, agent.Config{})
	ps := agents.ProblemsOf(err)
	if len(ps) != 2 || ps[0].Code != agents.CodeFlowUnreadable || ps[1].Code != agents.CodeDuplicateAgent {
		t.Errorf("Open = %v, want AGENT_FLOW_UNREADABLE then DUPLICATE_AGENT", err)
	}
}

func TestOpenWithoutRegistryRefusesAnAgentNode(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "flow.json"), []byte(parentFlow), 0o644)
	if _, err := agent.Open(t.Context(), dir, agent.Config{}); !errors.Is(err, flow.ErrNoDelegate) {
		t.Errorf("Open = %v, want flow.ErrNoDelegate", err)
	}
}

// TestChildApprovalWaitsInTheFolder: a child's approval pauses the
// parent in the folder's store; the agent lists the parent's thread only,
// its Pending is the child's question, and answering the parent runs the
// child on and then the parent.
func TestChildApprovalWaitsInTheFolder(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "flow.json"), []byte(`{
  "version": "0.17", "name": "desk",
  "state": { "why": { "type": "string" }, "result": { "type": "object" } },
  "start": "hand-over",
  "nodes": [ { "id": "hand-over", "type": "agent", "agent": "keeper", "input": { "why": "{{why}}" }, "output": "result" } ],
  "edges": [ { "from": "hand-over", "to": "END" } ]
}`), 0o644)
	os.MkdirAll(filepath.Join(dir, "keeper"), 0o755)
	os.WriteFile(filepath.Join(dir, "keeper", "flow.json"), []byte(`{
  "version": "0.17", "description": "Writes a note once someone agrees.", "inputs": ["why"], "outputs": ["note"],
  "state": { "why": { "type": "string" }, "note": { "type": "string" } },
  "start": "write",
  "nodes": [ { "id": "write", "type": "llm", "prompt": "Note: {{why}}", "output": "note",
               "approval": { "ask": "Write a note about {{why}}?", "show": ["why"] } } ],
  "edges": [ { "from": "write", "to": "END" } ]
}`), 0o644)
	os.WriteFile(filepath.Join(dir, agents.FileName), []byte(`{"agents":{"keeper":"keeper"}}`), 0o644)
	a, err := agent.Open(t.Context(), dir, agent.Config{})
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() { a.Close() })
	res, err := a.Graph.Invoke(t.Context(), "t1", map[string]any{"why": "otters"})
	if err != nil || res.Pending == nil || res.Pending.Question != "Write a note about otters?" || res.Pending.Agent != "keeper" {
		t.Fatalf("Invoke = %+v, %v; want paused at the child's approval", res.Pending, err)
	}
	if threads, err := a.WaitingThreads(t.Context()); err != nil || !slices.Equal(threads, []string{"t1"}) {
		t.Errorf("WaitingThreads = %v, %v; want only the parent's t1", threads, err)
	}
	res, err = a.Graph.Resume(t.Context(), "t1", "yes")
	if err != nil || !res.Finished() {
		t.Fatalf("Resume = %+v, %v; want finished", res, err)
	}
	if out, _ := res.State["result"].(map[string]any); out["note"] == nil {
		t.Errorf("result = %v, want the child's note", res.State["result"])
	}
}
