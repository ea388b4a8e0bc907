package flow_test

import (
	"strings"
	"testing"

	"github.com/symphonix/symphonix/flow"
)

// TestChannelRouter: "=channel.field" routes by the value in state, with
// no Go code; a value that is not a declared route is the usual error.
func TestChannelRouter(t *testing.T) {
	t.Parallel()
	f := load(t, `{
  "version": "0.17", "start": "decide",
  "state": { "decision": {}, "done": {} },
  "nodes": [
    { "id": "decide", "handler": "decide" },
    { "id": "yes", "handler": "yes" },
    { "id": "no", "handler": "no" }
  ],
  "edges": [
    { "from": "decide", "type": "conditional", "router": "=decision.action", "routes": { "refund": "yes", "deny": "no" } },
    { "from": "yes", "to": "END" },
    { "from": "no", "to": "END" }
  ]
}`)
	for action, want := range map[string]string{"refund": "yes", "deny": "no"} {
		g := build(t, f, flow.BuildOptions{Registry: flow.Registry{Handlers: map[string]flow.Handler{
			"decide": set(flow.Update{"decision": map[string]any{"action": action}}),
			"yes":    set(flow.Update{"done": "yes"}),
			"no":     set(flow.Update{"done": "no"}),
		}}})
		res, err := g.Invoke(t.Context(), "t-"+action, nil)
		if err != nil {
			t.Fatal(err)
		}
		if got := res.State["done"]; got != want {
			t.Errorf("action %s: done = %v, want %s", action, got, want)
		}
	}
	g := build(t, f, flow.BuildOptions{Registry: flow.Registry{Handlers: map[string]flow.Handler{
		"decide": set(flow.Update{"decision": map[string]any{"action": "shrug"}}),
		"yes":    set(nil), "no": set(nil),
	}}})
	if _, err := g.Invoke(t.Context(), "t-shrug", nil); err == nil || !strings.Contains(err.Error(), "shrug") {
		t.Errorf("an undeclared route: %v, want an error naming it", err)
	}
}
