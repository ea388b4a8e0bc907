package flow_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/symphonix/symphonix/flow"
)

// BenchmarkLoop runs a loop of 1,000 steps with trivial handlers: what the
// engine itself costs a step.
func BenchmarkLoop(b *testing.B) {
	const steps = 1000
	reg := flow.Registry{
		Handlers: map[string]flow.Handler{"tick": tick},
		Routers: map[string]flow.Router{"again": func(_ context.Context, s flow.State) (string, error) {
			if s["n"].(float64) >= steps {
				return "done", nil
			}
			return "again", nil
		}},
	}
	g := build(b, load(b, loopFlow), flow.BuildOptions{Registry: reg, StepLimit: 2 * steps})
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		res, err := g.Invoke(ctx, "", nil)
		if err != nil {
			b.Fatal(err)
		}
		if res.Steps != steps {
			b.Fatalf("Steps = %d, want %d", res.Steps, steps)
		}
	}
	b.ReportMetric(float64(steps*b.N)/b.Elapsed().Seconds(), "steps/s")
}

// BenchmarkPausedRun pauses runs of an order flow at its approval, each on
// its own thread, and reports how many bytes a paused run takes in the
// checkpointer.
func BenchmarkPausedRun(b *testing.B) {
	lines := make([]any, 5)
	for i := range lines {
		lines[i] = map[string]any{"sku": fmt.Sprintf("SKU-%04d", i), "qty": i + 1, "price": 19.99, "name": "A thing to buy"}
	}
	reg := flow.Registry{Handlers: map[string]flow.Handler{
		"draftOrder": set(flow.Update{
			"order":   map[string]any{"id": "A-7", "customer": "ada@example.com", "lines": lines, "total": 299.85, "currency": "EUR"},
			"reasons": []any{"the customer asked twice", "stock is there", "the total is under the limit"},
		}),
		"placeOrder":  set(nil),
		"cancelOrder": set(nil),
	}}
	cp := &flow.MemoryCheckpointer{}
	g := build(b, load(b, approvalFlow), flow.BuildOptions{Registry: reg, Checkpointer: cp})
	ctx := context.Background()
	b.ReportAllocs()
	n := 0
	for b.Loop() {
		res, err := g.Invoke(ctx, fmt.Sprint("t", n), nil)
		if err != nil || res.Pending == nil {
			b.Fatalf("Invoke = %+v, %v; want a pause", res, err)
		}
		n++
	}
	var total int
	ts, _ := cp.Threads(ctx)
	for _, th := range ts {
		data, _, _ := cp.Get(ctx, th)
		total += len(data)
	}
	b.ReportMetric(float64(total)/float64(len(ts)), "bytes/paused-run")
}
