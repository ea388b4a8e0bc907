package agents_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/symphonix/symphonix/agents"
	"github.com/symphonix/symphonix/flow"
	"github.com/symphonix/symphonix/llm"
	"github.com/symphonix/symphonix/waiting"
)

// world is a folder of agents, built to run on the real engine with a real
// waiting store in a temp dir: the root flow and every registered child.
type world struct {
	t        *testing.T
	dir      string
	reg      *agents.Registry
	del      *agents.Delegator
	store    *waiting.Store
	handlers map[string]flow.Handler
	model    flow.Model

	mu     sync.Mutex
	events []flow.Event
	graphs map[string]*flow.Graph
}

// writeFlow writes a flow file at dir/rel.
func writeFlow(t *testing.T, dir, rel string, f map[string]any) {
	t.Helper()
	b, err := json.MarshalIndent(f, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, rel)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// child is a delegatable flow: one handler node writing its outputs.
func child(desc string, inputs, outputs []string, node map[string]any) map[string]any {
	state := map[string]any{}
	for _, c := range append(append([]string{}, inputs...), outputs...) {
		state[c] = map[string]any{"type": "string", "description": "the " + c}
	}
	state["extra"] = map[string]any{"type": "string"}
	return map[string]any{
		"version": "0.17", "description": desc, "inputs": inputs, "outputs": outputs,
		"state": state, "start": node["id"], "nodes": []any{node},
		"edges": []any{map[string]any{"from": node["id"], "to": "END"}},
	}
}

// newWorld writes registry (agents.json) into a temp dir with the flows
// given, loads it, and builds every child with one Delegator.
func newWorld(t *testing.T, registry map[string]any, flows map[string]map[string]any, limit time.Duration) *world {
	t.Helper()
	dir := t.TempDir()
	for rel, f := range flows {
		writeFlow(t, dir, rel, f)
	}
	b, _ := json.Marshal(registry)
	if err := os.WriteFile(filepath.Join(dir, agents.FileName), b, 0o644); err != nil {
		t.Fatal(err)
	}
	reg, err := agents.Load(filepath.Join(dir, agents.FileName))
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	store, err := waiting.Open(t.Context(), dir, waiting.Config{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	w := &world{t: t, dir: dir, reg: reg, store: store, handlers: map[string]flow.Handler{}, model: llm.StandIn{}, graphs: map[string]*flow.Graph{}}
	w.del = &agents.Delegator{Registry: reg, Root: "root", TimeLimit: limit, Graph: w.graph}
	return w
}

func (w *world) watch(_ context.Context, e flow.Event) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.events = append(w.events, e)
}

func (w *world) opts() flow.BuildOptions {
	return flow.BuildOptions{
		Registry:     flow.Registry{Handlers: w.handlers},
		Model:        w.model,
		Checkpointer: w.store,
		Delegate:     w.del.Delegate,
		Watch:        w.watch,
	}
}

// graph builds a registered agent's graph once.
func (w *world) graph(name string) (*flow.Graph, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if g := w.graphs[name]; g != nil {
		return g, nil
	}
	a, ok := w.reg.Agent(name)
	if !ok {
		return nil, errors.New("not registered")
	}
	g, err := flow.Build(a.Flow, w.opts())
	if err != nil {
		return nil, err
	}
	w.graphs[name] = g
	return g, nil
}

// root builds the root flow.
func (w *world) root(f map[string]any) *flow.Graph {
	w.t.Helper()
	b, _ := json.Marshal(f)
	fl, err := flow.Load(b)
	if err != nil {
		w.t.Fatal(err)
	}
	g, err := flow.Build(fl, w.opts())
	if err != nil {
		w.t.Fatalf("Build: %v", err)
	}
	return g
}

// rootFlow is a flow whose one node is node, writing channel result.
func rootFlow(node map[string]any, extra ...map[string]any) map[string]any {
	nodes := []any{node}
	edges := []any{map[string]any{"from": node["id"], "to": "END"}}
	for _, n := range extra {
		nodes = append(nodes, n)
		edges = append(edges, map[string]any{"from": n["id"], "to": "END"})
	}
	return map[string]any{
		"version": "0.17", "start": node["id"],
		"state": map[string]any{
			"topic": map[string]any{"type": "string"}, "result": map[string]any{"type": "object"},
			"fallback": map[string]any{"type": "string"},
		},
		"nodes": nodes, "edges": edges,
	}
}

// codes is every agents code in err's chain, outermost first.
func codes(err error) []string {
	var out []string
	for err != nil {
		var e *agents.Error
		if !errors.As(err, &e) {
			break
		}
		out = append(out, e.Code)
		err = e.Err
	}
	return out
}

// runsOf counts the runs each agent started, from the events.
func (w *world) runsOf(agent string) int {
	w.mu.Lock()
	defer w.mu.Unlock()
	n := 0
	for _, e := range w.events {
		if e.Kind == flow.EventRunStarted && e.Delegation != nil && e.Delegation.Agent == agent {
			n++
		}
	}
	return n
}

func (w *world) eventsCopy() []flow.Event {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]flow.Event(nil), w.events...)
}

func flowJSON(f map[string]any) ([]byte, error) { return json.Marshal(f) }
