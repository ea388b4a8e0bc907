package node_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	boardv1 "github.com/symphonix/symphonix/api/symphonix/board/v1"
	"github.com/symphonix/symphonix/api/symphonix/board/v1/boardv1connect"
	"github.com/symphonix/symphonix/approvals"
	"github.com/symphonix/symphonix/identity"
	"github.com/symphonix/symphonix/internal/boardtest"
	"github.com/symphonix/symphonix/node"
	"github.com/symphonix/symphonix/runs"
)

const delegatingDesk = `{
  "version": "0.17", "name": "desk", "description": "Hands research on.",
  "inputs": ["topic"], "outputs": ["result"],
  "state": { "topic": { "type": "string", "description": "What about." }, "result": { "type": "object" }, "other": { "type": "object" } },
  "start": "hand-over",
  "nodes": [
    { "id": "hand-over", "type": "agent", "agent": "researcher", "input": { "subject": "{{topic}}" }, "output": "result" },
    { "id": "ask-ghost", "type": "agent", "agent": "ghost", "input": {}, "output": "other", "onError": "END" }
  ],
  "edges": [ { "from": "hand-over", "to": "ask-ghost" }, { "from": "ask-ghost", "to": "END" } ]
}`

const researcherChild = `{
  "version": "0.17", "description": "Research a subject.", "inputs": ["subject"], "outputs": ["findings"],
  "state": { "subject": { "type": "string" }, "findings": { "type": "string" } },
  "start": "research",
  "nodes": [ { "id": "research", "type": "llm", "prompt": "Tell me about {{subject}}.", "output": "findings" } ],
  "edges": [ { "from": "research", "to": "END" } ]
}`

// TestDelegationOnTheBoard: a run at a terminal that delegates sends the
// board two runs — its own and the child's, the child started by
// "delegation" — and the child's summary, as the agent kept it for the
// board, names the run and node that started it.
func TestDelegationOnTheBoard(t *testing.T) {
	t.Parallel()
	bt := boardtest.Start(t, boardtest.Options{})
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "flow.json"), []byte(delegatingDesk), 0o644)
	os.MkdirAll(filepath.Join(dir, "researcher"), 0o755)
	os.WriteFile(filepath.Join(dir, "researcher", "flow.json"), []byte(researcherChild), 0o644)
	os.WriteFile(filepath.Join(dir, "agents.json"), []byte(`{"agents":{"researcher":"researcher"}}`), 0o644)

	// The outbox, as the agent fills it, before the board stores it.
	var stdout, stderr lines
	err := node.Run(t.Context(), node.Config{Dir: dir, BoardURL: bt.URL, Token: bt.AgentToken("desk"),
		Input: map[string]string{"topic": "otters"}, JSON: true, Stdout: &stdout, Stderr: &stderr})
	if err != nil {
		t.Fatalf("Run: %v; stderr:\n%s", err, &stderr)
	}

	rs := boardv1connect.NewRunServiceClient(bt.Client(bt.OperatorToken("ops", identity.RoleViewer)))
	var list []*boardv1.Run
	boardtest.Eventually(t, time.Minute, "both runs stored by the board", func() bool {
		res, err := rs.ListRuns(t.Context(), &boardv1.ListRunsRequest{Agent: "desk"})
		list = res.GetRuns()
		return err == nil && len(list) == 2 && list[0].GetState() == boardv1.RunState_RUN_STATE_FINISHED &&
			list[1].GetState() == boardv1.RunState_RUN_STATE_FINISHED
	})
	var by []string
	for _, r := range list {
		by = append(by, r.GetStartedBy())
	}
	slices.Sort(by)
	if !slices.Equal(by, []string{"cli", runs.ByDelegation}) {
		t.Errorf("the board's runs were started by %v, want cli and delegation", by)
	}
	var root, child *boardv1.Run
	for _, r := range list {
		if r.GetStartedBy() == runs.ByDelegation {
			child = r
		} else {
			root = r
		}
	}
	// What the agent sent for the child: the delegation, when the board
	// stores it.
	if d := child.GetDelegation(); d != nil && (d.GetParentRunId() != root.GetId() || d.GetParentNode() != "hand-over" || d.GetAgent() != "researcher") {
		t.Errorf("the child's delegation on the board = %v, want from %s's hand-over", d, root.GetId())
	}
}

// TestChildApprovalOnTheBoard: an approval inside a child is raised on the
// board as the parent run's, with the digest of exactly what the child
// shows; the board's yes resumes the child, then the parent finishes with
// the child's outputs.
func TestChildApprovalOnTheBoard(t *testing.T) {
	t.Parallel()
	g := startGovernance(t)
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "flow.json"), []byte(`{
  "version": "0.17", "name": "desk", "description": "Hands notes on.", "inputs": ["why"], "outputs": ["result"],
  "state": { "why": { "type": "string", "description": "Why." }, "result": { "type": "object" } },
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
	os.WriteFile(filepath.Join(dir, "agents.json"), []byte(`{"agents":{"keeper":"keeper"}}`), 0o644)

	var stdout, stderr lines
	done := make(chan error, 1)
	go func() {
		done <- node.Run(t.Context(), node.Config{Dir: dir, BoardURL: g.bt.URL, Token: g.bt.AgentToken("desk"), Thread: "gov", JSON: true,
			Input: map[string]string{"why": "otters"}, Stdin: strings.NewReader(""), Stdout: &stdout, Stderr: &stderr})
	}()
	var found *boardv1.Approval
	boardtest.Eventually(t, time.Minute, "the child's approval on the board", func() bool {
		res, err := g.approver.ListApprovals(t.Context(), &boardv1.ListApprovalsRequest{Agent: "desk", State: boardv1.ApprovalState_APPROVAL_STATE_PENDING})
		if err != nil {
			t.Fatal(err)
		}
		for _, a := range res.GetApprovals() {
			if a.GetThread() == "gov" {
				found = a
			}
		}
		return found != nil
	})
	want, _ := approvals.Digest(map[string]any{"why": "otters"}, "")
	if found.GetDigest() != want {
		t.Errorf("the approval's digest = %s, want %s: exactly what the child shows", found.GetDigest(), want)
	}
	select {
	case err := <-done:
		t.Fatalf("Run returned %v before the board decided; stderr:\n%s", err, &stderr)
	default:
	}
	g.approve(t, found)
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("Run after the board's yes = %v; stderr:\n%s", err, &stderr)
		}
	case <-time.After(time.Minute):
		t.Fatalf("Run did not finish within a minute of the board's yes; stderr:\n%s", &stderr)
	}
	var state map[string]any
	if err := json.Unmarshal([]byte(stdout.String()), &state); err != nil {
		t.Fatalf("stdout %q is not one JSON object: %v", stdout.String(), err)
	}
	if out, _ := state["result"].(map[string]any); out["note"] == nil {
		t.Errorf("result = %v, want the child's note", state["result"])
	}
}
