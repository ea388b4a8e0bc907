package node_test

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	boardv1 "github.com/symphonix/symphonix/api/symphonix/board/v1"
	"github.com/symphonix/symphonix/api/symphonix/board/v1/boardv1connect"
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
