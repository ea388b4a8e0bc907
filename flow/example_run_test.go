package flow_test

import (
	"context"
	"fmt"

	"github.com/symphonix/symphonix/flow"
)

func ExampleBuild() {
	f, _ := flow.Load([]byte(`{
		"version": "0.2", "start": "research",
		"state": { "notes": { "reducer": "append", "default": [] } },
		"nodes": [ { "id": "research", "handler": "research" }, { "id": "answer", "handler": "answer" } ],
		"edges": [
			{ "from": "research", "type": "conditional", "router": "enough",
			  "routes": { "retry": "research", "done": "answer" },
			  "limits": { "retry": { "max": 2, "then": "done" } } },
			{ "from": "answer", "to": "END" }
		]
	}`))
	g, err := flow.Build(f, flow.BuildOptions{Registry: flow.Registry{
		Handlers: map[string]flow.Handler{
			"research": func(_ context.Context, s flow.State) (flow.Update, error) {
				return flow.Update{"notes": fmt.Sprintf("note %d", len(s["notes"].([]any))+1)}, nil
			},
			"answer": func(context.Context, flow.State) (flow.Update, error) { return nil, nil },
		},
		// The router never thinks it has enough: the limit is the budget.
		Routers: map[string]flow.Router{
			"enough": func(context.Context, flow.State) (string, error) { return "retry", nil },
		},
	}})
	if err != nil {
		fmt.Println(err)
		return
	}
	res, err := g.Invoke(context.Background(), "", nil)
	fmt.Println(res.State["notes"], res.Steps, err)
	// Output:
	// [note 1 note 2 note 3] 4 <nil>
}

func ExampleGraph_Resume() {
	f, _ := flow.Load([]byte(`{
		"version": "0.5", "start": "place",
		"state": { "order": {}, "receipt": {} },
		"nodes": [ { "id": "place", "handler": "placeOrder",
		             "approval": { "ask": "Place this order?", "show": ["order"] } } ],
		"edges": [ { "from": "place", "to": "END" } ]
	}`))
	opts := flow.BuildOptions{
		Registry: flow.Registry{Handlers: map[string]flow.Handler{
			"placeOrder": func(context.Context, flow.State) (flow.Update, error) {
				return flow.Update{"receipt": "R-1"}, nil
			},
		}},
		Checkpointer: &flow.MemoryCheckpointer{},
	}
	g, _ := flow.Build(f, opts)
	ctx := context.Background()
	res, _ := g.Invoke(ctx, "thread-1", map[string]any{"order": map[string]any{"sku": "x", "qty": 2}})
	fmt.Println(res.Pending.Kind, res.Pending.Question, res.Pending.Show)

	// Another Graph over the same checkpointer — after a restart — answers it.
	g2, _ := flow.Build(f, opts)
	res, _ = g2.Resume(ctx, "thread-1", "yes")
	fmt.Println(res.Finished(), res.State["receipt"])
	// Output:
	// approval Place this order? map[order:map[qty:2 sku:x]]
	// true R-1
}
