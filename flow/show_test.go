package flow_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/symphonix/symphonix/approvals"
	"github.com/symphonix/symphonix/flow"
	"github.com/symphonix/symphonix/text"
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

// TestApprovalCarriesAmounts: an approval's Pending carries the amounts
// written in its question and its account, read whole (6000, never 600),
// and they are no part of the digest, which stays approvals.Digest(show,
// account).
func TestApprovalCarriesAmounts(t *testing.T) {
	t.Parallel()
	f := load(t, `{
  "version": "0.17", "start": "pay",
  "state": { "order": {}, "why": {}, "paid": {} },
  "nodes": [ { "id": "pay", "handler": "pay",
    "approval": { "ask": "Refund {{order.total}} for order A-1042?", "show": ["order.id"], "why": "why" } } ],
  "edges": [ { "from": "pay", "to": "END" } ]
}`)
	g := build(t, f, flow.BuildOptions{
		Checkpointer: &flow.MemoryCheckpointer{},
		Registry:     flow.Registry{Handlers: map[string]flow.Handler{"pay": set(flow.Update{"paid": true})}},
	})
	res, err := g.Invoke(t.Context(), "t", map[string]any{
		"order": map[string]any{"id": "A-1042", "total": "6000 EUR"},
		"why":   "The customer paid $1,234.56 twice; 50% of it is due.",
	})
	if err != nil {
		t.Fatal(err)
	}
	p := res.Pending
	if p == nil {
		t.Fatal("the run did not pause for the approval")
	}
	want := []text.Amount{
		{Value: 6000, Currency: "EUR", Text: "6000 EUR"},
		{Value: 1234.56, Currency: "USD", Text: "$1,234.56"},
	}
	if diff := cmp.Diff(want, p.Amounts); diff != "" {
		t.Errorf("Amounts (-want +got):\n%s", diff)
	}
	digest, err := approvals.Digest(p.Show, p.Account)
	if err != nil {
		t.Fatal(err)
	}
	if p.Digest != digest {
		t.Errorf("Digest = %s, want approvals.Digest(show, account) = %s: amounts are not in the digest", p.Digest, digest)
	}
}
