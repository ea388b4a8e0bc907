package flow_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/symphonix/symphonix/flow"
)

func TestBuildRefuses(t *testing.T) {
	t.Parallel()
	cp := &flow.MemoryCheckpointer{}
	m := &testModel{}
	tests := []struct {
		name  string
		flow  string // a file in testdata, or a flow
		opts  flow.BuildOptions
		is    error
		wants []string
	}{
		{
			name:  "handlers and router missing, every one named",
			flow:  "classify.json",
			opts:  flow.BuildOptions{Registry: flow.Registry{Handlers: map[string]flow.Handler{"solveTechnical": nil, "answerGeneral": set(nil)}}},
			is:    flow.ErrNotRegistered,
			wants: []string{`node "classify": handler "classifyRequest" is not in the registry`, `node "technicalSupport": handler "solveTechnical" is registered but is not a function`, `node "billingSupport": handler "solveBilling" is not in the registry`, `edge from "classify": router "routeRequest" is not in the registry`},
		},
		{
			name:  "reducer missing",
			flow:  parallel("sum"),
			opts:  flow.BuildOptions{Registry: flow.Registry{Handlers: map[string]flow.Handler{"nothing": set(nil), "a": set(nil), "b": set(nil), "done": set(nil)}}},
			is:    flow.ErrNotRegistered,
			wants: []string{`channel "notes": reducer "sum" is not in the registry`},
		},
		{
			name:  "llm node without a model",
			flow:  "clarify.json",
			opts:  flow.BuildOptions{Checkpointer: cp},
			is:    flow.ErrNoModel,
			wants: []string{`node "answer"`},
		},
		{
			name:  "tool nodes without a tool caller",
			flow:  "order-desk.json",
			opts:  flow.BuildOptions{Model: m},
			is:    flow.ErrNoToolCaller,
			wants: []string{`node "lookup"`, `node "runTools"`},
		},
		{
			name:  "approval without a checkpointer",
			flow:  "place-order.json",
			opts:  flow.BuildOptions{Registry: placeOrder(&counter{})},
			is:    flow.ErrApprovalNeedsCheckpointer,
			wants: []string{`node "place": flow: approval needs a checkpointer: a paused run lives in one, and without it the first approval would end the run rather than hold it`},
		},
		{
			name:  "ask without a checkpointer",
			flow:  "clarify.json",
			opts:  flow.BuildOptions{Model: m},
			is:    flow.ErrAskNeedsCheckpointer,
			wants: []string{`node "clarify": flow: an ask node needs a checkpointer to wait in`},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var f *flow.Flow
			if strings.HasSuffix(tt.flow, ".json") {
				f = loadFile(t, tt.flow)
			} else {
				f = load(t, tt.flow)
			}
			g, err := flow.Build(f, tt.opts)
			if !errors.Is(err, tt.is) || g != nil {
				t.Fatalf("Build = %v, %v; want %v", g, err, tt.is)
			}
			for _, w := range tt.wants {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("Build error\n%s\ndoes not say\n%s", err, w)
				}
			}
		})
	}
}

func TestBuildRefusesAnInvalidFlowWithEveryProblem(t *testing.T) {
	t.Parallel()
	f := load(t, `{
		"version": "0.1", "start": "a",
		"state": {},
		"nodes": [ { "id": "a", "handler": "a" }, { "id": "b", "handler": "b" } ],
		"edges": [ { "from": "a", "to": "nowhere" } ]
	}`)
	_, err := flow.Build(f, flow.BuildOptions{})
	var ve *flow.ValidationError
	if !errors.As(err, &ve) {
		t.Fatalf("Build = %v, want a *ValidationError", err)
	}
	if len(ve.Problems) != 3 {
		t.Errorf("problems = %v, want all three: state too new, unknown target, b unreachable", ve.Problems)
	}
}

// TestBuildRefusesArgsThatAreNotAnObject: a tool node's args name the
// tool's arguments, so anything but an object is refused when the graph is
// built, before any run calls the tool.
func TestBuildRefusesArgsThatAreNotAnObject(t *testing.T) {
	t.Parallel()
	tools := func(context.Context, string, map[string]any) (any, error) { return nil, nil }
	for _, args := range []string{`[1]`, `null`, `"customerId"`, `5`} {
		t.Run(args, func(t *testing.T) {
			t.Parallel()
			f := load(t, `{
				"version": "0.7", "start": "lookup",
				"state": { "customer": {} },
				"nodes": [ { "id": "lookup", "type": "tool", "tool": "getCustomerDetails", "args": `+args+`, "output": "customer" } ],
				"edges": [ { "from": "lookup", "to": "END" } ]
			}`)
			g, err := flow.Build(f, flow.BuildOptions{Tools: tools})
			if err == nil || g != nil {
				t.Fatalf("Build = %v, %v; want a refusal", g, err)
			}
			if want := `node "lookup": args must be an object`; !strings.Contains(err.Error(), want) {
				t.Errorf("Build error %q does not say %q", err, want)
			}
		})
	}
}
