package flow_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/symphonix/symphonix/flow"
)

func TestInvokeHandlersAndRoutes(t *testing.T) {
	t.Parallel()
	var c counter
	reg := flow.Registry{
		Handlers: map[string]flow.Handler{
			"classifyRequest": counted(&c, "classify", set(flow.Update{"category": "BILLING"})),
			"solveTechnical":  counted(&c, "technical", set(flow.Update{"answer": "reboot"})),
			"answerGeneral":   counted(&c, "general", set(flow.Update{"answer": "hello"})),
			"solveBilling": func(_ context.Context, s flow.State) (flow.Update, error) {
				c.add("billing")
				checks, _ := s["checks"].(float64)
				return flow.Update{"checks": checks + 1, "answer": "refunded"}, nil
			},
		},
		Routers: map[string]flow.Router{
			"routeRequest": func(_ context.Context, s flow.State) (string, error) {
				switch s["category"] {
				case "TECHNICAL":
					return "technical", nil
				case "BILLING":
					return "billing", nil
				}
				return "general", nil
			},
		},
	}
	g := build(t, loadFile(t, "classify.json"), flow.BuildOptions{Registry: reg})
	res, err := g.Invoke(t.Context(), "", map[string]any{"question": "I was charged twice"})
	if err != nil {
		t.Fatal(err)
	}
	if !res.Finished() {
		t.Fatalf("Invoke paused at %+v, want it finished", res.Pending)
	}
	want := flow.State{"question": "I was charged twice", "category": "BILLING", "checks": float64(2), "answer": "refunded"}
	if diff := cmp.Diff(want, res.State); diff != "" {
		t.Errorf("final state (-want +got):\n%s", diff)
	}
	if res.Steps != 3 {
		t.Errorf("Steps = %d, want 3 (classify, billingSupport, billingSecondCheck)", res.Steps)
	}
	if c.get("technical")+c.get("general") != 0 || c.get("billing") != 2 {
		t.Errorf("handler calls = %v, want billing twice and nothing else", c.n)
	}
}

// parallel is a flow whose start fans out to a and b with two plain edges,
// both writing notes, then joins at done.
func parallel(reducer string) string {
	r := ""
	if reducer != "" {
		r = `"reducer": "` + reducer + `", `
	}
	return `{
		"version": "0.2", "start": "split",
		"state": { "notes": {` + r + `"default": []} },
		"nodes": [
			{ "id": "split", "handler": "nothing" },
			{ "id": "a", "handler": "a" },
			{ "id": "b", "handler": "b" },
			{ "id": "done", "handler": "done" }
		],
		"edges": [
			{ "from": "split", "to": "a" }, { "from": "split", "to": "b" },
			{ "from": "a", "to": "done" }, { "from": "b", "to": "done" },
			{ "from": "done", "to": "END" }
		]
	}`
}

func TestSuperstepMergesInNodeOrder(t *testing.T) {
	t.Parallel()
	bDone := make(chan struct{})
	var c counter
	reg := flow.Registry{Handlers: map[string]flow.Handler{
		"nothing": set(nil),
		// a waits for b: the two run at the same time, and b finishes first.
		"a": func(ctx context.Context, _ flow.State) (flow.Update, error) {
			select {
			case <-bDone:
			case <-ctx.Done():
				return nil, ctx.Err()
			case <-time.After(10 * time.Second):
				return nil, errors.New("b never ran: the step's nodes did not run at the same time")
			}
			return flow.Update{"notes": "from a"}, nil
		},
		"b": func(context.Context, flow.State) (flow.Update, error) {
			close(bDone)
			return flow.Update{"notes": []any{"from b", "and b again"}}, nil
		},
		"done": counted(&c, "done", set(nil)),
	}}
	g := build(t, load(t, parallel("append")), flow.BuildOptions{Registry: reg})
	res, err := g.Invoke(t.Context(), "", nil)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]any{"from a", "from b", "and b again"}, res.State["notes"]); diff != "" {
		t.Errorf("notes (-want +got):\n%s", diff)
	}
	if n := c.get("done"); n != 1 {
		t.Errorf("done ran %d times, want once: a node two edges trigger in one step runs once", n)
	}
	if res.Steps != 3 {
		t.Errorf("Steps = %d, want 3", res.Steps)
	}
}

func TestSuperstepReplaceConflict(t *testing.T) {
	t.Parallel()
	reg := flow.Registry{Handlers: map[string]flow.Handler{
		"nothing": set(nil),
		"a":       set(flow.Update{"notes": "a"}),
		"b":       set(flow.Update{"notes": "b"}),
		"done":    set(nil),
	}}
	g := build(t, load(t, parallel("")), flow.BuildOptions{Registry: reg})
	_, err := g.Invoke(t.Context(), "", nil)
	var wc *flow.WriteConflictError
	if !errors.As(err, &wc) {
		t.Fatalf("Invoke = %v, want a *WriteConflictError", err)
	}
	if wc.Channel != "notes" || wc.Nodes != [2]string{"a", "b"} {
		t.Errorf("WriteConflictError = %+v, want channel notes, nodes a and b", wc)
	}
	const want = `flow: channel "notes" was written by "a" and by "b" in one step, and it has no reducer to combine them`
	if err.Error() != want {
		t.Errorf("error = %q, want %q", err, want)
	}
}

const loopFlow = `{
	"version": "0.2", "start": "tick",
	"state": { "n": { "default": 0 } },
	"nodes": [ { "id": "tick", "handler": "tick" } ],
	"edges": [ { "from": "tick", "type": "conditional", "router": "again",
	             "routes": { "again": "tick", "done": "END" } } ]
}`

func tick(_ context.Context, s flow.State) (flow.Update, error) {
	return flow.Update{"n": s["n"].(float64) + 1}, nil
}

func TestStepLimit(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		limit, want int
	}{{0, flow.DefaultStepLimit}, {5, 5}} {
		var c counter
		reg := flow.Registry{
			Handlers: map[string]flow.Handler{"tick": counted(&c, "tick", tick)},
			Routers:  map[string]flow.Router{"again": route("again")},
		}
		g := build(t, load(t, loopFlow), flow.BuildOptions{Registry: reg, StepLimit: tt.limit})
		_, err := g.Invoke(t.Context(), "", nil)
		if !errors.Is(err, flow.ErrStepLimit) {
			t.Fatalf("StepLimit %d: Invoke = %v, want ErrStepLimit", tt.limit, err)
		}
		if !strings.Contains(err.Error(), fmt.Sprintf("%d steps", tt.want)) {
			t.Errorf("StepLimit %d: error %q does not name the limit %d", tt.limit, err, tt.want)
		}
		if n := c.get("tick"); n != tt.want {
			t.Errorf("StepLimit %d: tick ran %d times, want %d", tt.limit, n, tt.want)
		}
	}
	// A loop that ends within the limit is not stopped by it.
	reg := flow.Registry{
		Handlers: map[string]flow.Handler{"tick": tick},
		Routers: map[string]flow.Router{"again": func(_ context.Context, s flow.State) (string, error) {
			if s["n"].(float64) >= 25 {
				return "done", nil
			}
			return "again", nil
		}},
	}
	g := build(t, load(t, loopFlow), flow.BuildOptions{Registry: reg})
	res, err := g.Invoke(t.Context(), "", nil)
	if err != nil || res.State["n"] != float64(25) {
		t.Errorf("25-step loop = %v, %v; want n = 25 and no error", res.State, err)
	}
}

func TestUndeclaredRoute(t *testing.T) {
	t.Parallel()
	reg := flow.Registry{
		Handlers: map[string]flow.Handler{
			"classifyRequest": set(nil), "solveTechnical": set(nil), "solveBilling": set(nil), "answerGeneral": set(nil),
		},
		Routers: map[string]flow.Router{"routeRequest": route("refunds")},
	}
	g := build(t, loadFile(t, "classify.json"), flow.BuildOptions{Registry: reg})
	_, err := g.Invoke(t.Context(), "", nil)
	var re *flow.RoutingError
	if !errors.As(err, &re) {
		t.Fatalf("Invoke = %v, want a *RoutingError", err)
	}
	const want = `flow: router "routeRequest" on the edge from "classify" returned "refunds", which is not one of its routes: billing, general, technical`
	if err.Error() != want {
		t.Errorf("error =\n%q, want\n%q", err, want)
	}
}

func TestLimits(t *testing.T) {
	t.Parallel()
	var c counter
	reg := flow.Registry{
		Handlers: map[string]flow.Handler{
			"research": func(_ context.Context, s flow.State) (flow.Update, error) {
				c.add("research")
				return flow.Update{"notes": "note"}, nil
			},
			"evaluate":       counted(&c, "evaluate", set(nil)),
			"generateAnswer": counted(&c, "answer", set(nil)),
		},
		// The router never says done: the limit is the budget.
		Routers: map[string]flow.Router{"routeEvaluation": route("retry")},
	}
	g := build(t, loadFile(t, "research-loop.json"), flow.BuildOptions{Registry: reg})
	res, err := g.Invoke(t.Context(), "", map[string]any{"question": "why"})
	if err != nil {
		t.Fatal(err)
	}
	// retry at most 3 times: evaluate's visits 1, 2 and 3 take it; the
	// fourth takes done.
	if r, e, a := c.get("research"), c.get("evaluate"), c.get("answer"); r != 4 || e != 4 || a != 1 {
		t.Errorf("research, evaluate, generateAnswer ran %d, %d, %d times; want 4, 4, 1", r, e, a)
	}
	if n := len(res.State["notes"].([]any)); n != 4 {
		t.Errorf("notes holds %d, want 4", n)
	}
}

func TestLimitPer(t *testing.T) {
	t.Parallel()
	words := []string{"cat", "dog"}
	var c counter
	reg := flow.Registry{
		Handlers: map[string]flow.Handler{
			"pickWord": func(context.Context, flow.State) (flow.Update, error) {
				c.add("pick")
				i := c.get("pick") - 1
				if i >= len(words) {
					return flow.Update{"word": nil}, nil
				}
				return flow.Update{"word": words[i]}, nil
			},
			"checkAnswer": counted(&c, "check", set(nil)),
			"reveal":      counted(&c, "reveal", set(nil)),
		},
		Routers: map[string]flow.Router{"routeAnswer": func(_ context.Context, s flow.State) (string, error) {
			if s["word"] == nil {
				return "finished", nil
			}
			return "again", nil // every answer is wrong
		}},
	}
	m := &testModel{}
	g := build(t, loadFile(t, "word-tutor.json"), flow.BuildOptions{Registry: reg, Model: m})
	if _, err := g.Invoke(t.Context(), "", nil); err != nil {
		t.Fatal(err)
	}
	// max 2 per pickWord: one first attempt and two retries per word, then
	// reveal; counted again from scratch for the next word.
	if got := len(m.prompts("giveHint")); got != 4 {
		t.Errorf("hints given = %d, want 2 per word, 4", got)
	}
	if r, ch := c.get("reveal"), c.get("check"); r != 2 || ch != 7 {
		t.Errorf("reveal ran %d times and check %d; want 2 and 7 (3 per word, 1 to finish)", r, ch)
	}
}

func TestLLMNode(t *testing.T) {
	t.Parallel()
	f := load(t, `{
		"version": "0.7", "start": "answer",
		"state": { "question": {"type": "string"}, "documents": {"type": "list"}, "notes": {}, "answer": {"type": "string"} },
		"nodes": [ { "id": "answer", "type": "llm",
			"prompt": "Q: {{question}}\nDocs: {{documents}}\nNotes: [{{notes}}]", "output": "answer" } ],
		"edges": [ { "from": "answer", "to": "END" } ]
	}`)
	m := &testModel{script: map[string][]string{"answer": {"\n  It is 42.  \n"}}}
	g := build(t, f, flow.BuildOptions{Model: m})
	res, err := g.Invoke(t.Context(), "", map[string]any{"question": "What?", "documents": []any{"a", map[string]any{"n": 1}}})
	if err != nil {
		t.Fatal(err)
	}
	if got := res.State["answer"]; got != "It is 42." {
		t.Errorf("answer = %q, want the reply trimmed", got)
	}
	want := "Q: What?\nDocs: [\"a\",{\"n\":1}]\nNotes: []"
	if diff := cmp.Diff([]string{want}, m.prompts("answer")); diff != "" {
		t.Errorf("prompt (-want +got):\n%s", diff)
	}
}

func TestLLMNodeReadsJSONForAListChannel(t *testing.T) {
	t.Parallel()
	f := load(t, `{
		"version": "0.7", "start": "plan",
		"state": { "steps": {"type": "list"} },
		"nodes": [ { "id": "plan", "type": "llm", "prompt": "Plan it.", "output": "steps" } ],
		"edges": [ { "from": "plan", "to": "END" } ]
	}`)
	m := &testModel{script: map[string][]string{"plan": {"Here you go:\n```json\n[\"one\", \"two\"]\n```"}}}
	res, err := build(t, f, flow.BuildOptions{Model: m}).Invoke(t.Context(), "", nil)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]any{"one", "two"}, res.State["steps"]); diff != "" {
		t.Errorf("steps (-want +got):\n%s", diff)
	}
}

const structured = `{
	"version": "0.15", "start": "classify",
	"state": {
		"question": { "type": "string" },
		"classification": { "type": "object" },
		"seen": { "reducer": "append", "default": [] }
	},
	"nodes": [
		{ "id": "classify", "type": "llm", "prompt": "Classify this request:\n\n{{question}}",
		  "output": "classification", "retry": { "maxAttempts": 2 }, "onError": "apologize",
		  "schema": { "type": "object", "required": ["category", "confidence"], "properties": {
			"category": { "type": "string", "enum": ["technical", "billing", "general"] },
			"confidence": { "type": "number", "minimum": 0, "maximum": 1 } } } },
		{ "id": "apologize", "handler": "apologize" },
		{ "id": "answer", "handler": "answer" }
	],
	"edges": [
		{ "from": "classify", "to": "answer" },
		{ "from": "answer", "to": "END" },
		{ "from": "apologize", "to": "classify" }
	]
}`

func TestStructuredOutputRetryOnErrorAndCleared(t *testing.T) {
	t.Parallel()
	var c counter
	var sawError any
	reg := flow.Registry{Handlers: map[string]flow.Handler{
		"apologize": func(_ context.Context, s flow.State) (flow.Update, error) {
			sawError = s["__error"]
			return flow.Update{"seen": "sorry"}, nil
		},
		"answer": func(_ context.Context, s flow.State) (flow.Update, error) {
			c.add("answer")
			if s["__error"] != nil {
				t.Errorf("answer saw __error = %v, want it cleared by classify's success", s["__error"])
			}
			return nil, nil
		},
	}}
	// Two answers of the wrong shape — a go and a retry — then one that fits.
	m := &testModel{script: map[string][]string{"classify": {
		`{"category": "refunds", "confidence": 0.9}`,
		`Sure: {"category": "refunds", "confidence": 0.9}`,
		"```json\n{\"category\": \"billing\", \"confidence\": 0.94, \"reason\": \"charged twice\"}\n```",
	}}}
	g := build(t, load(t, structured), flow.BuildOptions{Registry: reg, Model: m})
	res, err := g.Invoke(t.Context(), "", map[string]any{"question": "I was charged twice"})
	if err != nil {
		t.Fatal(err)
	}
	wantErr := map[string]any{"node": "classify", "message": "classification.category must be one of: technical, billing, general"}
	if diff := cmp.Diff(wantErr, sawError); diff != "" {
		t.Errorf("__error apologize saw (-want +got):\n%s", diff)
	}
	if _, ok := res.State["__error"]; ok {
		t.Errorf("final __error = %v, want it cleared", res.State["__error"])
	}
	want := map[string]any{"category": "billing", "confidence": 0.94, "reason": "charged twice"}
	if diff := cmp.Diff(want, res.State["classification"]); diff != "" {
		t.Errorf("classification (-want +got):\n%s", diff)
	}
	if n := len(m.prompts("classify")); n != 3 {
		t.Errorf("model asked %d times, want 3 (two attempts, then one more after apologize)", n)
	}
	p := m.prompts("classify")[0]
	if !strings.HasPrefix(p, "Classify this request:\n\nI was charged twice\n\n") || !strings.Contains(p, `"enum":["technical","billing","general"]`) {
		t.Errorf("prompt = %q, want the prompt and then the schema", p)
	}
	if m.asked[0].Schema == nil || m.asked[0].Schema.Type != "object" {
		t.Errorf("ModelRequest.Schema = %+v, want the node's schema handed to the model", m.asked[0].Schema)
	}
	if c.get("answer") != 1 {
		t.Errorf("answer ran %d times, want 1", c.get("answer"))
	}
}

func TestStructuredOutputWithoutOnErrorEndsTheRun(t *testing.T) {
	t.Parallel()
	f := load(t, `{
		"version": "0.15", "start": "read",
		"state": { "reply": { "type": "object" } },
		"nodes": [ { "id": "read", "type": "llm", "prompt": "How much?", "output": "reply",
			"schema": { "type": "object", "properties": { "amount": { "type": "number" } } } } ],
		"edges": [ { "from": "read", "to": "END" } ]
	}`)
	m := &testModel{script: map[string][]string{"read": {`{"amount": "12 EUR"}`}}}
	_, err := build(t, f, flow.BuildOptions{Model: m}).Invoke(t.Context(), "", nil)
	var ne *flow.NodeError
	var se *flow.SchemaError
	if !errors.As(err, &ne) || !errors.As(err, &se) {
		t.Fatalf("Invoke = %v, want a *NodeError wrapping a *SchemaError", err)
	}
	const want = `flow: node "read" failed: reply.amount must be a number, and it is a string, "12 EUR"`
	if err.Error() != want || ne.Node != "read" || ne.Attempts != 1 {
		t.Errorf("error = %q (node %q, attempts %d), want %q", err, ne.Node, ne.Attempts, want)
	}
}

func TestRetryCountsEveryGo(t *testing.T) {
	t.Parallel()
	var c counter
	reg := flow.Registry{Handlers: map[string]flow.Handler{
		"retrieve": func(context.Context, flow.State) (flow.Update, error) {
			c.add("retrieve")
			if c.get("retrieve") < 3 {
				return nil, errors.New("index unreachable")
			}
			return flow.Update{"documents": []any{"doc"}}, nil
		},
	}}
	m := &testModel{}
	g := build(t, loadFile(t, "retrieve-escalate.json"), flow.BuildOptions{Registry: reg, Model: m})
	res, err := g.Invoke(t.Context(), "", nil)
	if err != nil {
		t.Fatal(err)
	}
	if c.get("retrieve") != 3 || len(m.prompts("gradeDocuments")) != 1 || len(m.prompts("escalate")) != 0 {
		t.Errorf("retrieve ran %d times, grade %d, escalate %d; want 3, 1, 0", c.get("retrieve"), len(m.prompts("gradeDocuments")), len(m.prompts("escalate")))
	}
	if _, ok := res.State["__error"]; ok {
		t.Errorf("__error = %v after success, want none", res.State["__error"])
	}

	// Failing every go: onError takes the run to escalate, which reads why.
	reg.Handlers["retrieve"] = fail("index unreachable")
	m = &testModel{}
	g = build(t, loadFile(t, "retrieve-escalate.json"), flow.BuildOptions{Registry: reg, Model: m})
	res, err = g.Invoke(t.Context(), "", nil)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{`Say sorry: {"message":"index unreachable","node":"retrieve"}`}, m.prompts("escalate")); diff != "" {
		t.Errorf("escalate's prompt (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(map[string]any{"node": "retrieve", "message": "index unreachable"}, res.State["__error"]); diff != "" {
		t.Errorf("__error (-want +got):\n%s", diff)
	}
}

func TestNodeFailureWithoutOnErrorEndsTheRun(t *testing.T) {
	t.Parallel()
	errBoom := errors.New("boom")
	reg := flow.Registry{
		Handlers: map[string]flow.Handler{"tick": func(context.Context, flow.State) (flow.Update, error) { return nil, errBoom }},
		Routers:  map[string]flow.Router{"again": route("done")},
	}
	_, err := build(t, load(t, loopFlow), flow.BuildOptions{Registry: reg}).Invoke(t.Context(), "", nil)
	if !errors.Is(err, errBoom) {
		t.Errorf("Invoke = %v, want it to wrap the handler's error", err)
	}
}

func TestHandlerWrites(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		u    flow.Update
		want string
	}{
		{"undeclared", flow.Update{"nope": 1}, `wrote channel "nope", which is not declared in state`},
		{"engine's own", flow.Update{"__error": 1}, `wrote "__error", which is the engine's own channel`},
		{"not JSON", flow.Update{"n": make(chan int)}, `wrote channel "n": not a JSON value`},
	}
	for _, tt := range tests {
		reg := flow.Registry{
			Handlers: map[string]flow.Handler{"tick": set(tt.u)},
			Routers:  map[string]flow.Router{"again": route("done")},
		}
		_, err := build(t, load(t, loopFlow), flow.BuildOptions{Registry: reg}).Invoke(t.Context(), "", nil)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: Invoke = %v, want %q", tt.name, err, tt.want)
		}
	}
	// Go values are written as JSON values: an int comes back a float64.
	reg := flow.Registry{
		Handlers: map[string]flow.Handler{"tick": set(flow.Update{"n": 3})},
		Routers:  map[string]flow.Router{"again": route("done")},
	}
	res, err := build(t, load(t, loopFlow), flow.BuildOptions{Registry: reg}).Invoke(t.Context(), "", nil)
	if err != nil || res.State["n"] != float64(3) {
		t.Errorf("Invoke = %v, %v; want n = float64(3)", res.State, err)
	}
}

func TestInputAndDefaults(t *testing.T) {
	t.Parallel()
	f := load(t, `{
		"version": "0.2", "start": "add",
		"state": { "notes": { "reducer": "append", "default": ["first"] }, "q": {} },
		"nodes": [ { "id": "add", "handler": "add" } ],
		"edges": [ { "from": "add", "to": "END" } ]
	}`)
	reg := flow.Registry{Handlers: map[string]flow.Handler{"add": set(flow.Update{"notes": "added"})}}
	g := build(t, f, flow.BuildOptions{Registry: reg})
	for range 2 {
		// Defaults are cloned per run: one run's appends never leak into the next.
		res, err := g.Invoke(t.Context(), "", map[string]any{"notes": "given"})
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff([]any{"first", "given", "added"}, res.State["notes"]); diff != "" {
			t.Errorf("notes (-want +got):\n%s", diff)
		}
	}
	if _, err := g.Invoke(t.Context(), "", map[string]any{"nope": 1}); err == nil || !strings.Contains(err.Error(), `"nope", which is not declared`) {
		t.Errorf("Invoke with an undeclared channel = %v, want a refusal naming it", err)
	}
	if _, err := g.Invoke(t.Context(), "", map[string]any{"__error": 1}); err == nil {
		t.Error("Invoke writing __error = nil error, want a refusal")
	}
}

func TestRegistryReducer(t *testing.T) {
	t.Parallel()
	f := load(t, parallel("sum"))
	reg := flow.Registry{
		Handlers: map[string]flow.Handler{"nothing": set(nil), "a": set(flow.Update{"notes": 2}), "b": set(flow.Update{"notes": 3}), "done": set(nil)},
		Reducers: map[string]flow.Reducer{"sum": func(old, new any) (any, error) {
			o, _ := old.(float64)
			return int(o + new.(float64)), nil // an int: written back as a JSON number
		}},
	}
	res, err := build(t, f, flow.BuildOptions{Registry: reg}).Invoke(t.Context(), "", map[string]any{"notes": 1})
	if err != nil {
		t.Fatal(err)
	}
	if res.State["notes"] != float64(6) {
		t.Errorf("notes = %#v, want 6", res.State["notes"])
	}
}

func TestContextCancelled(t *testing.T) {
	t.Parallel()
	reg := flow.Registry{
		Handlers: map[string]flow.Handler{"tick": tick},
		Routers:  map[string]flow.Router{"again": route("again")},
	}
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	_, err := build(t, load(t, loopFlow), flow.BuildOptions{Registry: reg}).Invoke(ctx, "", nil)
	if !errors.Is(err, context.Canceled) {
		t.Errorf("Invoke = %v, want context.Canceled", err)
	}
}
