package runs_test

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/symphonix/symphonix/agents"
	"github.com/symphonix/symphonix/flow"
	"github.com/symphonix/symphonix/runs"
)

const deskFlow = `{
  "version": "0.17", "start": "hand-over",
  "state": { "topic": { "type": "string" }, "result": { "type": "object" }, "other": { "type": "object" } },
  "nodes": [
    { "id": "hand-over", "type": "agent", "agent": "researcher", "input": { "subject": "{{topic}}" }, "output": "result" },
    { "id": "ask-ghost", "type": "agent", "agent": "ghost", "input": {}, "output": "other", "onError": "END" }
  ],
  "edges": [ { "from": "hand-over", "to": "ask-ghost" }, { "from": "ask-ghost", "to": "END" } ]
}`

const researcherFlow = `{
  "version": "0.17", "description": "Research a subject.", "start": "research",
  "inputs": ["subject"], "outputs": ["findings"],
  "state": { "subject": { "type": "string" }, "findings": { "type": "string" } },
  "nodes": [ { "id": "research", "handler": "research" } ],
  "edges": [ { "from": "research", "to": "END" } ]
}`

// TestRecorderReportsDelegation: the child is a run of its own, started by
// delegation with the run and node that started it; a delegation refused
// is a delegation_failed event of the run that asked, its message without
// the agent's secrets.
func TestRecorderReportsDelegation(t *testing.T) {
	dir := t.TempDir()
	os.MkdirAll(filepath.Join(dir, "researcher"), 0o755)
	os.WriteFile(filepath.Join(dir, "researcher", "flow.json"), []byte(researcherFlow), 0o644)
	os.WriteFile(filepath.Join(dir, "agents.json"), []byte(`{"agents":{"researcher":"researcher"}}`), 0o644)
	reg, err := agents.Load(filepath.Join(dir, "agents.json"))
	if err != nil {
		t.Fatal(err)
	}
	box, err := runs.OpenOutbox(runs.OutboxPath(dir))
	if err != nil {
		t.Fatal(err)
	}
	var (
		mu     sync.Mutex
		events []runs.Event
	)
	rec, err := runs.NewRecorder(runs.Config{Outbox: box, Secrets: []string{"hunter2"}, OnEvent: func(e runs.Event) {
		mu.Lock()
		defer mu.Unlock()
		events = append(events, e)
	}})
	if err != nil {
		t.Fatal(err)
	}
	var child *flow.Graph
	del := &agents.Delegator{Registry: reg, Root: "desk", Graph: func(string) (*flow.Graph, error) { return child, nil }}
	opts := flow.BuildOptions{Watch: rec.Watch, Delegate: del.Delegate, Registry: flow.Registry{Handlers: map[string]flow.Handler{
		"research": func(_ context.Context, s flow.State) (flow.Update, error) {
			return flow.Update{"findings": "about " + s["subject"].(string)}, nil
		},
	}}}
	a, _ := reg.Agent("researcher")
	if child, err = flow.Build(a.Flow, opts); err != nil {
		t.Fatal(err)
	}
	f, err := flow.Load([]byte(deskFlow))
	if err != nil {
		t.Fatal(err)
	}
	g, err := flow.Build(f, opts)
	if err != nil {
		t.Fatal(err)
	}
	res, err := g.Invoke(runs.StartedBy(t.Context(), runs.ByCLI, ""), "", map[string]any{"topic": "otters hunter2"})
	if err != nil {
		t.Fatalf("Invoke: %v", err)
	}

	var childSum, rootSum *runs.Summary
	for box.Len() > 0 {
		s, ok := box.Next(func(string, uint32) bool { return false })
		if !ok {
			break
		}
		if s.Run.ID == res.Run {
			rootSum = &s
		} else {
			childSum = &s
		}
		box.Stored(s.Run.ID, s.Seq)
	}
	if rootSum == nil || rootSum.Run.StartedBy != runs.ByCLI || rootSum.Run.Delegation != nil {
		t.Errorf("root summary = %+v, want started by cli, no delegation", rootSum)
	}
	if childSum == nil {
		t.Fatal("no summary of the child run")
	}
	d := childSum.Run.Delegation
	if childSum.Run.StartedBy != runs.ByDelegation || d == nil || d.ParentRun != res.Run || d.ParentNode != "hand-over" ||
		d.Agent != "researcher" || d.Invocation == "" || !slices.Equal(d.Chain, []string{"desk", "researcher"}) || childSum.Run.State != runs.StateFinished {
		t.Errorf("child summary = %+v, delegation %+v; want started by delegation from %s's hand-over", childSum.Run, d, res.Run)
	}

	mu.Lock()
	defer mu.Unlock()
	var failed []runs.Event
	for _, e := range events {
		if e.Kind == runs.EventDelegationFailed {
			failed = append(failed, e)
		}
		if e.Kind == runs.EventStart && e.Run == childSum.Run.ID && (e.Delegation == nil || e.StartedBy != runs.ByDelegation) {
			t.Errorf("child's start event = %+v, want its delegation", e)
		}
	}
	if len(failed) != 1 {
		t.Fatalf("delegation_failed events = %+v, want one", failed)
	}
	fl := failed[0].Failure
	if failed[0].Run != res.Run || fl.Node != "ask-ghost" || fl.Target != "ghost" || fl.Code != agents.CodeUnknownAgent ||
		!slices.Equal(fl.Chain, []string{"desk"}) || !strings.Contains(fl.Message, `no agent "ghost" is registered`) || len(fl.Message) > runs.MaxError {
		t.Errorf("failure = %+v on run %s, want UNKNOWN_AGENT ghost from ask-ghost of %s", fl, failed[0].Run, res.Run)
	}
	// The root's summary lists the failure too, with when it happened: a
	// lost live event loses nothing.
	if fs := rootSum.Run.Failures; len(fs) != 1 || fs[0].Code != agents.CodeUnknownAgent || fs[0].Node != "ask-ghost" || fs[0].At.IsZero() {
		t.Errorf("the root summary's failures = %+v, want the one UNKNOWN_AGENT with its time", fs)
	}
	for _, e := range events {
		if e.Failure != nil && strings.Contains(e.Failure.Message, "hunter2") {
			t.Errorf("a failure's message holds the secret: %q", e.Failure.Message)
		}
	}
}

// TestRecorderParentWaitsOnChild: a parent that waits on its child's
// question is paused at its own agent node, waiting for an ask, and so is
// that node's step; the child is paused at its own.
func TestRecorderParentWaitsOnChild(t *testing.T) {
	dir := t.TempDir()
	os.MkdirAll(filepath.Join(dir, "asker"), 0o755)
	os.WriteFile(filepath.Join(dir, "asker", "flow.json"), []byte(`{
  "version": "0.17", "description": "Asks.", "start": "which", "inputs": ["subject"], "outputs": ["findings"],
  "state": { "subject": { "type": "string" }, "findings": { "type": "string" } },
  "nodes": [ { "id": "which", "type": "ask", "ask": "Which {{subject}}?", "output": "findings" } ],
  "edges": [ { "from": "which", "to": "END" } ]
}`), 0o644)
	os.WriteFile(filepath.Join(dir, "agents.json"), []byte(`{"agents":{"asker":"asker"}}`), 0o644)
	reg, err := agents.Load(filepath.Join(dir, "agents.json"))
	if err != nil {
		t.Fatal(err)
	}
	rec, err := runs.NewRecorder(runs.Config{})
	if err != nil {
		t.Fatal(err)
	}
	var child *flow.Graph
	del := &agents.Delegator{Registry: reg, Graph: func(string) (*flow.Graph, error) { return child, nil }}
	opts := flow.BuildOptions{Watch: rec.Watch, Delegate: del.Delegate, Checkpointer: &flow.MemoryCheckpointer{}}
	a, _ := reg.Agent("asker")
	if child, err = flow.Build(a.Flow, opts); err != nil {
		t.Fatal(err)
	}
	f, err := flow.Load([]byte(`{"version": "0.17", "start": "hand-over",
	  "state": { "topic": { "type": "string" }, "result": { "type": "object" } },
	  "nodes": [ { "id": "hand-over", "type": "agent", "agent": "asker", "input": { "subject": "{{topic}}" }, "output": "result" } ],
	  "edges": [ { "from": "hand-over", "to": "END" } ]}`))
	if err != nil {
		t.Fatal(err)
	}
	g, err := flow.Build(f, opts)
	if err != nil {
		t.Fatal(err)
	}
	res, err := g.Invoke(t.Context(), "t1", map[string]any{"topic": "colour"})
	if err != nil || res.Pending == nil {
		t.Fatalf("Invoke = %+v, %v; want paused", res, err)
	}
	parent, ok := rec.Get(res.Run)
	if !ok || parent.State != runs.StatePaused || parent.PausedAt != "hand-over" || parent.Pause != runs.PauseAsk ||
		len(parent.Steps) != 1 || parent.Steps[0].Pause != runs.PauseAsk {
		t.Errorf("parent record = %+v, want paused at hand-over for an ask", parent)
	}
	var kid runs.Run
	for _, id := range rec.Active() {
		if id != res.Run {
			kid, _ = rec.Get(id)
		}
	}
	if kid.State != runs.StatePaused || kid.PausedAt != "which" || kid.StartedBy != runs.ByDelegation {
		t.Errorf("child record = %+v, want paused at which, started by delegation", kid)
	}
}
