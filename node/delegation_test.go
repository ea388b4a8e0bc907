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
	// What the agent sent for the child: the delegation, as the board
	// stores it, and the tree it draws.
	if d := child.GetDelegation(); d.GetParentRunId() != root.GetId() || d.GetParentNode() != "hand-over" || d.GetAgent() != "researcher" ||
		!slices.Equal(d.GetChain(), []string{"desk", "researcher"}) {
		t.Errorf("the child's delegation on the board = %v, want from %s's hand-over, chain desk, researcher", d, root.GetId())
	}
	tree, err := rs.GetRunTree(t.Context(), &boardv1.GetRunTreeRequest{Agent: "desk", Id: child.GetId()})
	if err != nil {
		t.Fatalf("GetRunTree: %v", err)
	}
	if r := tree.GetRoot(); r.GetRun().GetId() != root.GetId() || len(r.GetChildren()) != 1 || r.GetChildren()[0].GetRun().GetId() != child.GetId() {
		t.Errorf("the tree from the child = %v, want the root with the child under it", r)
	}
	// The delegation nothing registers was reported as refused, with its
	// code, and the board tells an agent that announces delegation-cycle
	// and reported none from one that cannot tell.
	var failures []*boardv1.DelegationFailure
	boardtest.Eventually(t, 10*time.Second, "the refused delegation stored", func() bool {
		res, err := rs.ListDelegationFailures(t.Context(), &boardv1.ListDelegationFailuresRequest{Agent: "desk"})
		failures = res.GetFailures()
		return err == nil && len(failures) > 0
	})
	if f := failures[0]; len(failures) != 1 || f.GetCode() != "UNKNOWN_AGENT" || f.GetTarget() != "ghost" || f.GetNode() != "ask-ghost" || f.GetRunId() != root.GetId() {
		t.Errorf("failures = %v, want the one UNKNOWN_AGENT of ask-ghost in %s", failures, root.GetId())
	}
	as := boardv1connect.NewAgentServiceClient(bt.Client(bt.OperatorToken("ops", identity.RoleViewer)))
	got, err := as.GetAgent(t.Context(), &boardv1.GetAgentRequest{Name: "desk"})
	if err != nil {
		t.Fatal(err)
	}
	if k := got.GetAgent().GetDelegationCycles().GetKnowledge(); k != boardv1.CycleKnowledge_CYCLE_KNOWLEDGE_NONE_REPORTED {
		t.Errorf("the desk's cycles = %v, want none reported", k)
	}
}

// pingChild and pongChild delegate to each other: pong's call back to
// ping closes a cycle, refused before ping runs again.
const (
	loopDesk = `{
  "version": "0.17", "name": "loop", "description": "Starts a ping.", "inputs": ["topic"], "outputs": ["result"],
  "state": { "topic": { "type": "string" }, "result": { "type": "object" } },
  "start": "start-ping",
  "nodes": [ { "id": "start-ping", "type": "agent", "agent": "ping", "input": { "topic": "{{topic}}" }, "output": "result" } ],
  "edges": [ { "from": "start-ping", "to": "END" } ]
}`
	pingChild = `{
  "version": "0.17", "description": "Hands the topic to pong.", "inputs": ["topic"], "outputs": ["out"],
  "state": { "topic": { "type": "string" }, "out": { "type": "object" } },
  "start": "call-pong",
  "nodes": [ { "id": "call-pong", "type": "agent", "agent": "pong", "input": { "topic": "{{topic}}" }, "output": "out" } ],
  "edges": [ { "from": "call-pong", "to": "END" } ]
}`
	pongChild = `{
  "version": "0.17", "description": "Answers, then calls ping back.", "inputs": ["topic"], "outputs": ["said"],
  "state": { "topic": { "type": "string" }, "said": { "type": "string" }, "back": { "type": "object" } },
  "start": "say",
  "nodes": [
    { "id": "say", "type": "llm", "prompt": "Say something about {{topic}}.", "output": "said" },
    { "id": "call-ping", "type": "agent", "agent": "ping", "input": { "topic": "{{topic}}" }, "output": "back", "onError": "END" }
  ],
  "edges": [ { "from": "say", "to": "call-ping" }, { "from": "call-ping", "to": "END" } ]
}`
)

// TestDelegationCycleOnTheBoard: a cycle (loop → ping → pong → ping) is
// refused in the agent before ping runs again, reported to the board as
// AGENT_RECURSION with its chain, and the board's agent and an alert rule
// about circular delegation say so.
func TestDelegationCycleOnTheBoard(t *testing.T) {
	t.Parallel()
	bt := boardtest.Start(t, boardtest.Options{})
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "flow.json"), []byte(loopDesk), 0o644)
	for name, f := range map[string]string{"ping": pingChild, "pong": pongChild} {
		os.MkdirAll(filepath.Join(dir, name), 0o755)
		os.WriteFile(filepath.Join(dir, name, "flow.json"), []byte(f), 0o644)
	}
	os.WriteFile(filepath.Join(dir, "agents.json"), []byte(`{"agents":{"ping":"ping","pong":"pong"}}`), 0o644)
	var stdout, stderr lines
	err := node.Run(t.Context(), node.Config{Dir: dir, BoardURL: bt.URL, Token: bt.AgentToken("loop"),
		Input: map[string]string{"topic": "echoes"}, JSON: true, Stdout: &stdout, Stderr: &stderr})
	if err != nil {
		t.Fatalf("Run: %v; stderr:\n%s", err, &stderr)
	}
	rs := boardv1connect.NewRunServiceClient(bt.Client(bt.OperatorToken("ops", identity.RoleViewer)))
	var failures []*boardv1.DelegationFailure
	boardtest.Eventually(t, time.Minute, "the cycle stored", func() bool {
		res, err := rs.ListDelegationFailures(t.Context(), &boardv1.ListDelegationFailuresRequest{Agent: "loop", Code: "AGENT_RECURSION"})
		failures = res.GetFailures()
		return err == nil && len(failures) == 1
	})
	if f := failures[0]; f.GetTarget() != "ping" || f.GetNode() != "call-ping" || !slices.Equal(f.GetChain(), []string{"loop", "ping", "pong"}) {
		t.Errorf("the cycle = %v, want pong's call-ping back to ping, chain loop, ping, pong", f)
	}
	admin := bt.Client(bt.OperatorToken("root", identity.RoleAdmin))
	al := boardv1connect.NewAlertServiceClient(admin)
	if _, err := al.PutAlertRule(t.Context(), &boardv1.PutAlertRuleRequest{Rule: &boardv1.AlertRule{
		Id: "cycles", Agent: "*", Condition: boardv1.AlertCondition_ALERT_CONDITION_DELEGATION_CYCLE}}); err != nil {
		t.Fatal(err)
	}
	res, err := al.ListAlerts(t.Context(), &boardv1.ListAlertsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if a := res.GetAlerts(); len(a) != 1 || a[0].GetAgent() != "loop" || a[0].GetState() != boardv1.AlertState_ALERT_STATE_FIRING {
		t.Errorf("alerts = %v, want the rule firing for loop", a)
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
