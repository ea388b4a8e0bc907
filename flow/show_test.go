package flow_test

import (
	"testing"

	"github.com/symphonix/symphonix/flow"
)

// TestApprovalShowsFields: a card may show a field of a channel, and the
// digest covers what it shows.
func TestApprovalShowsFields(t *testing.T) {
	t.Parallel()
	f := load(t, `{
  "version": "0.17", "start": "lookup",
  "state": { "order": {}, "paid": {} },
  "nodes": [
    { "id": "lookup", "handler": "lookup" },
    { "id": "pay", "handler": "pay", "approval": { "ask": "Refund?", "show": ["order.amount", "order.id"] } }
  ],
  "edges": [ { "from": "lookup", "to": "pay" }, { "from": "pay", "to": "END" } ]
}`)
	digestFor := func(amount float64) string {
		g := build(t, f, flow.BuildOptions{
			Checkpointer: &flow.MemoryCheckpointer{},
			Registry: flow.Registry{Handlers: map[string]flow.Handler{
				"lookup": set(flow.Update{"order": map[string]any{"id": "A-1", "amount": amount, "note": "not shown"}}),
				"pay":    set(flow.Update{"paid": true}),
			}},
		})
		res, err := g.Invoke(t.Context(), "t", nil)
		if err != nil {
			t.Fatal(err)
		}
		p := res.Pending
		if p == nil || p.Show["order.amount"] != amount || p.Show["order.id"] != "A-1" || len(p.Show) != 2 {
			t.Fatalf("pending = %+v, want order.amount %v and order.id shown, nothing else", p, amount)
		}
		return p.Digest
	}
	if a, b := digestFor(5000), digestFor(50000); a == b || a == "" {
		t.Errorf("digests for 5,000 and 50,000: %s and %s, want two different ones", a, b)
	}
}
