package flow_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/symphonix/symphonix/flow"
)

// toolBox is a ToolCaller for tests that keeps every call it was given.
type toolBox struct {
	mu    sync.Mutex
	calls []string
	args  []map[string]any
}

func (b *toolBox) call(_ context.Context, name string, args map[string]any) (any, error) {
	b.mu.Lock()
	b.calls = append(b.calls, name)
	b.args = append(b.args, args)
	b.mu.Unlock()
	switch name {
	case "getCustomerDetails":
		return map[string]any{"id": args["customerId"], "name": "Ada"}, nil
	case "getCustomerOrder":
		return struct {
			Order string `json:"order"`
			Total int    `json:"total"`
		}{"A-1", 12}, nil
	case "addOrder":
		return nil, errors.New("orders are closed")
	}
	return nil, fmt.Errorf("no tool %q", name)
}

func (b *toolBox) called() []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]string(nil), b.calls...)
}

func TestToolAndToolsNodes(t *testing.T) {
	t.Parallel()
	box := &toolBox{}
	m := &testModel{script: map[string][]string{"decide": {`[
		{"name": "getCustomerOrder", "args": {"customerId": 5}, "id": "c1"},
		{"name": "addOrder", "args": {"sku": "x"}, "id": "c2"},
		{"name": "getCustomerDetails", "args": "{\"customerId\": 7}", "id": "c3"},
		{"args": {}, "id": "c4"}
	]`}}}
	// decide writes the queue as JSON; the list channel reads it.
	f := loadFile(t, "order-desk.json")
	f.Version, f.State["pendingCalls"].Type = "0.7", "list"
	g := build(t, f, flow.BuildOptions{Model: m, Tools: box.call})
	res, err := g.Invoke(t.Context(), "", map[string]any{"customerId": 5})
	if err != nil {
		t.Fatal(err)
	}
	// A lone placeholder passes the channel's value: 5, not "5".
	if diff := cmp.Diff(map[string]any{"customerId": float64(5)}, box.args[0]); diff != "" {
		t.Errorf("lookup's args (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(map[string]any{"id": float64(5), "name": "Ada"}, res.State["customer"]); diff != "" {
		t.Errorf("customer (-want +got):\n%s", diff)
	}
	want := []any{
		map[string]any{"id": "c1", "name": "getCustomerOrder", "result": map[string]any{"order": "A-1", "total": float64(12)}, "error": nil},
		map[string]any{"id": "c2", "name": "addOrder", "result": nil, "error": `tool "addOrder": orders are closed`},
		map[string]any{"id": "c3", "name": "getCustomerDetails", "result": map[string]any{"id": float64(7), "name": "Ada"}, "error": nil},
		map[string]any{"id": "c4", "name": nil, "result": nil, "error": "a call needs a name"},
	}
	if diff := cmp.Diff(want, res.State["toolResults"]); diff != "" {
		t.Errorf("toolResults (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]any{}, res.State["pendingCalls"]); diff != "" {
		t.Errorf("pendingCalls after running them (-want +got):\n%s", diff)
	}
	if n := len(box.called()); n != 4 {
		t.Errorf("tool calls = %v, want 4: the lookup and three queued", box.called())
	}
	if p := m.prompts("decide"); len(p) != 1 || p[0] != `Customer: {"id":5,"name":"Ada"}. Which calls next?` {
		t.Errorf("decide's prompt = %q", p)
	}
}

func TestToolsQueueEmptiedPastItsReducer(t *testing.T) {
	t.Parallel()
	// The queue appends, and running it still empties it: a loop does not
	// call the same tools twice.
	f := load(t, `{
		"version": "0.4", "start": "queue",
		"state": { "calls": { "reducer": "append", "default": [] }, "results": { "reducer": "append", "default": [] } },
		"nodes": [ { "id": "queue", "handler": "queue" }, { "id": "run", "type": "tools", "calls": "calls", "output": "results" } ],
		"edges": [ { "from": "queue", "to": "run" }, { "from": "run", "type": "conditional", "router": "more",
			"routes": { "again": "queue", "done": "END" } } ]
	}`)
	var c counter
	reg := flow.Registry{
		Handlers: map[string]flow.Handler{"queue": set(flow.Update{"calls": map[string]any{"name": "getCustomerDetails", "args": map[string]any{"customerId": 1}, "id": "x"}})},
		Routers: map[string]flow.Router{"more": func(_ context.Context, s flow.State) (string, error) {
			c.add("round")
			if c.get("round") < 3 {
				return "again", nil
			}
			return "done", nil
		}},
	}
	box := &toolBox{}
	res, err := build(t, f, flow.BuildOptions{Registry: reg, Tools: box.call}).Invoke(t.Context(), "", nil)
	if err != nil {
		t.Fatal(err)
	}
	if n := len(box.called()); n != 3 {
		t.Errorf("tool calls = %d, want 3, one a round", n)
	}
	if n := len(res.State["results"].([]any)); n != 3 {
		t.Errorf("results = %d, want 3", n)
	}
}

func TestGate(t *testing.T) {
	t.Parallel()
	errClosed := errors.New("switched off on the board")
	gate := func(_ context.Context, name string, args map[string]any) error {
		if name == "getCustomerDetails" && args["customerId"] == float64(5) {
			return errClosed
		}
		if name == "addOrder" {
			return errClosed
		}
		return nil
	}
	box := &toolBox{}
	m := &testModel{}

	// A tool node's refused call is the node's failure, with the gate's error.
	g := build(t, loadFile(t, "order-desk.json"), flow.BuildOptions{Model: m, Tools: box.call, Gate: gate})
	_, err := g.Invoke(t.Context(), "", map[string]any{"customerId": 5})
	var ne *flow.NodeError
	if !errors.Is(err, errClosed) || !errors.As(err, &ne) || ne.Node != "lookup" {
		t.Fatalf("Invoke = %v, want node lookup to fail with the gate's error", err)
	}
	if len(box.called()) != 0 {
		t.Errorf("tools called = %v, want none: the gate refused before the call", box.called())
	}

	// In a tools node, the refused call reports its own error and the
	// others run.
	f := load(t, `{
		"version": "0.4", "start": "run",
		"state": { "calls": {}, "results": {} },
		"nodes": [ { "id": "run", "type": "tools", "calls": "calls", "output": "results" } ],
		"edges": [ { "from": "run", "to": "END" } ]
	}`)
	g = build(t, f, flow.BuildOptions{Tools: box.call, Gate: gate})
	res, err := g.Invoke(t.Context(), "", map[string]any{"calls": []any{
		map[string]any{"name": "addOrder", "id": "1"},
		map[string]any{"name": "getCustomerDetails", "args": map[string]any{"customerId": 6}, "id": "2"},
	}})
	if err != nil {
		t.Fatal(err)
	}
	results := res.State["results"].([]any)
	if got := results[0].(map[string]any)["error"]; got != `tool "addOrder" refused: switched off on the board` {
		t.Errorf("refused call's error = %q", got)
	}
	if got := results[1].(map[string]any)["error"]; got != nil {
		t.Errorf("allowed call's error = %v, want none", got)
	}
	if diff := cmp.Diff([]string{"getCustomerDetails"}, box.called()); diff != "" {
		t.Errorf("tools called (-want +got):\n%s", diff)
	}
}

func TestFanout(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name   string
		docs   []any
		route  string
		grades []any
		report any
	}{
		{"three items", []any{"alpha", "beta", "gamma"}, "review",
			[]any{"Grade this document:", "Grade this document:", "Grade this document:"}, "Write a report from these grades:"},
		// An empty list sends nothing, and a branch that sends nothing ends:
		// what follows the copies does not run, and that is no error.
		{"empty list, routed into the fanout", []any{}, "review", []any{}, nil},
		// Routed around from the node in front, the tail runs.
		{"empty list, routed around", []any{}, "none", []any{}, "Write a report from these grades:"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			reg := flow.Registry{
				Handlers: map[string]flow.Handler{"gather": set(flow.Update{"documents": tt.docs})},
				Routers:  map[string]flow.Router{"routeBatch": route(tt.route)},
			}
			m := &testModel{}
			res, err := build(t, loadFile(t, "parallel-review.json"), flow.BuildOptions{Registry: reg, Model: m}).Invoke(t.Context(), "", nil)
			if err != nil {
				t.Fatal(err)
			}
			if !res.Finished() {
				t.Fatal("run paused")
			}
			if diff := cmp.Diff(tt.grades, res.State["summary"]); diff != "" {
				t.Errorf("summary (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.report, res.State["report"]); diff != "" {
				t.Errorf("report (-want +got):\n%s", diff)
			}
			// Each copy read its own item; summarize ran once, after all of them.
			var items []string
			for _, p := range m.prompts("grade") {
				items = append(items, strings.TrimPrefix(p, "Grade this document:\n\n"))
			}
			want := make([]string, 0, len(tt.docs))
			for _, d := range tt.docs {
				want = append(want, d.(string))
			}
			if diff := cmp.Diff(want, items, cmp.Comparer(func(a, b []string) bool { return sameSet(a, b) })); diff != "" {
				t.Errorf("items the copies read (-want +got):\n%s", diff)
			}
			if tt.report != nil && len(m.prompts("summarize")) != 1 {
				t.Errorf("summarize ran %d times, want once", len(m.prompts("summarize")))
			}
			// The item channel is each copy's own: the run's is untouched.
			if res.State["document"] != nil {
				t.Errorf("document = %v, want nothing: a copy's item is not written", res.State["document"])
			}
		})
	}
}

func sameSet(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	n := map[string]int{}
	for _, s := range a {
		n[s]++
	}
	for _, s := range b {
		n[s]--
	}
	for _, v := range n {
		if v != 0 {
			return false
		}
	}
	return true
}

func TestFanoutCopiesMergeInItemOrder(t *testing.T) {
	t.Parallel()
	f := load(t, `{
		"version": "0.6", "start": "spread",
		"state": { "docs": {}, "doc": {}, "out": { "reducer": "append", "default": [] } },
		"nodes": [ { "id": "spread", "type": "fanout", "over": "docs", "to": "work", "as": "doc" },
		           { "id": "work", "handler": "work" } ],
		"edges": [ { "from": "work", "to": "END" } ]
	}`)
	reg := flow.Registry{Handlers: map[string]flow.Handler{"work": func(_ context.Context, s flow.State) (flow.Update, error) {
		return flow.Update{"out": strings.ToUpper(s["doc"].(string))}, nil
	}}}
	res, err := build(t, f, flow.BuildOptions{Registry: reg}).Invoke(t.Context(), "", map[string]any{"docs": []any{"a", "b", "c", "d"}})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]any{"A", "B", "C", "D"}, res.State["out"]); diff != "" {
		t.Errorf("out (-want +got):\n%s", diff)
	}
	if res.Steps != 2 {
		t.Errorf("Steps = %d, want 2: the copies run in one step", res.Steps)
	}
}

// A fan-out whose copies are llm nodes writing a typed list channel with
// the append reducer: a copy that answers in prose appends its answer as
// one item, and a copy that answers with a list appends its items.
func TestFanoutIntoTypedListTakesProse(t *testing.T) {
	t.Parallel()
	f := loadFile(t, "parallel-review.json")
	f.Version = "0.7"
	f.State["summary"].Type = "list"
	f.State["documents"].Type = "list"
	reg := flow.Registry{
		Handlers: map[string]flow.Handler{"gather": set(flow.Update{"documents": []any{"alpha"}})},
		Routers:  map[string]flow.Router{"routeBatch": route("review")},
	}
	for _, tt := range []struct {
		name, reply string
		want        []any
	}{
		{"prose", "A fine document, well argued.", []any{"A fine document, well argued."}},
		{"a list", `["good", "short"]`, []any{"good", "short"}},
		{"an object is prose too", `{"grade": "A"}`, []any{`{"grade": "A"}`}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			m := &testModel{script: map[string][]string{"grade": {tt.reply}}}
			res, err := build(t, f, flow.BuildOptions{Registry: reg, Model: m}).Invoke(t.Context(), "", nil)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, res.State["summary"]); diff != "" {
				t.Errorf("summary (-want +got):\n%s", diff)
			}
		})
	}
}

// A string channel never silently holds a list: an llm answer that reads
// as JSON stays the text as written, and a handler or a tool writing a
// list or an object to it fails the node.
func TestStringChannelHoldsNoList(t *testing.T) {
	t.Parallel()
	src := `{
		"version": "0.7", "start": "work",
		"state": { "out": { "type": "string" } },
		"nodes": [ %s ],
		"edges": [ { "from": "work", "to": "END" } ]
	}`
	t.Run("llm", func(t *testing.T) {
		t.Parallel()
		f := load(t, fmt.Sprintf(src, `{ "id": "work", "type": "llm", "prompt": "Say it", "output": "out" }`))
		for _, reply := range []string{`["a", "b"]`, `{"a": 1}`, "```json\n[1]\n```"} {
			m := &testModel{script: map[string][]string{"work": {reply}}}
			res, err := build(t, f, flow.BuildOptions{Model: m}).Invoke(t.Context(), "", nil)
			if err != nil {
				t.Fatal(err)
			}
			if res.State["out"] != reply {
				t.Errorf("out = %#v, want the reply as written, %q", res.State["out"], reply)
			}
		}
	})
	t.Run("handler", func(t *testing.T) {
		t.Parallel()
		f := load(t, fmt.Sprintf(src, `{ "id": "work", "handler": "work" }`))
		for _, v := range []any{[]any{"a"}, map[string]any{"a": 1}} {
			reg := flow.Registry{Handlers: map[string]flow.Handler{"work": set(flow.Update{"out": v})}}
			res, err := build(t, f, flow.BuildOptions{Registry: reg}).Invoke(t.Context(), "", nil)
			if err == nil {
				t.Fatalf("a handler writing %v to a string channel: no error, out = %#v", v, res.State["out"])
			}
			if !strings.Contains(err.Error(), `channel "out", which is a string`) {
				t.Errorf("error = %v, want it to name the channel and its type", err)
			}
		}
	})
	t.Run("tool", func(t *testing.T) {
		t.Parallel()
		f := load(t, fmt.Sprintf(src, `{ "id": "work", "type": "tool", "tool": "getCustomerDetails", "args": {}, "output": "out" }`))
		box := &toolBox{}
		if _, err := build(t, f, flow.BuildOptions{Tools: box.call}).Invoke(t.Context(), "", nil); err == nil {
			t.Fatal("a tool's object written to a string channel: no error")
		}
	})
}
