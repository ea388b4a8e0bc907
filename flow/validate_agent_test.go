package flow

import (
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestValidateAgentNode(t *testing.T) {
	t.Parallel()
	flowWith := func(node string) []byte {
		return []byte(`{"version":"0.17","start":"a","state":{"topic":{},"out":{}},"nodes":[` + node + `],"edges":[{"from":"a","to":"END"}]}`)
	}
	tests := []struct {
		name string
		node string
		want []Problem
	}{
		{"fixed target", `{"id":"a","type":"agent","agent":"researcher","input":{"subject":"{{topic}}"},"output":"out"}`, nil},
		{"model chooses", `{"id":"a","type":"agent","agents":["sql","documents"],"prompt":"Answer {{topic}}","output":"out"}`, nil},
		{"neither", `{"id":"a","type":"agent","output":"out"}`,
			[]Problem{{CodeMissingField, `Agent node "a" has neither "agent" nor "agents"`, "nodes[0].agent"}}},
		{"both", `{"id":"a","type":"agent","agent":"x","agents":["y"],"output":"out"}`,
			[]Problem{{CodeInvalidValue, `Agent node "a" has both "agent" and "agents": a node delegates to one agent it names, or lets a model choose from a list`, "nodes[0].agents"}}},
		{"a path for a name", `{"id":"a","type":"agent","agent":"../x","output":"out"}`,
			[]Problem{{CodeInvalidValue, `Agent node "a" names agent "../x", which is not an agent name (^[A-Za-z][A-Za-z0-9_-]{0,63}$)`, "nodes[0].agent"}}},
		{"a listed name twice and a bad one", `{"id":"a","type":"agent","agents":["sql","sql","a/b"],"prompt":"p","output":"out"}`,
			[]Problem{
				{CodeInvalidValue, `Agent node "a" lists agent "sql" twice`, "nodes[0].agents[1]"},
				{CodeInvalidValue, `Agent node "a" lists "a/b", which is not an agent name (^[A-Za-z][A-Za-z0-9_-]{0,63}$)`, "nodes[0].agents[2]"},
			}},
		{"an empty list", `{"id":"a","type":"agent","agents":[],"prompt":"p","output":"out"}`,
			[]Problem{{CodeMissingField, `Agent node "a" lists no agents to choose from`, "nodes[0].agents"}}},
		{"a list with no prompt", `{"id":"a","type":"agent","agents":["sql"],"output":"out"}`,
			[]Problem{{CodeMissingField, `Agent node "a" has no prompt: a model choosing between agents needs to be told what for`, "nodes[0].prompt"}}},
		{"input with a list", `{"id":"a","type":"agent","agents":["sql"],"prompt":"p","input":{},"output":"out"}`,
			[]Problem{{CodeMisplacedKey, `Agent node "a" lets a model choose, and the model writes the input: "input" belongs with "agent"`, "nodes[0].input"}}},
		{"input reads an undeclared channel", `{"id":"a","type":"agent","agent":"x","input":{"s":"{{nope}}"},"output":"out"}`,
			[]Problem{{CodeUndeclaredChannel, `Channel "nope" is not declared in state`, "nodes[0].input.s"}}},
		{"no output", `{"id":"a","type":"agent","agent":"x"}`,
			[]Problem{{CodeMissingField, `Agent node "a" has no output`, "nodes[0].output"}}},
		{"an unknown key", `{"id":"a","type":"agent","agent":"x","output":"out","agnet":"y"}`,
			[]Problem{{CodeUnknownKey, `Unknown key "agnet"`, "nodes[0].agnet"}}},
		{"a key of another kind", `{"id":"a","type":"agent","agent":"x","output":"out","tool":"t"}`,
			[]Problem{{CodeMisplacedKey, `Key "tool" does not belong on an agent node`, "nodes[0].tool"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got := Validate(load(t, flowWith(tt.node)))
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Validate (-want +got):\n%s", diff)
			}
		})
	}
}

func TestBuildAgentNodeNeedsDelegate(t *testing.T) {
	t.Parallel()
	f := load(t, []byte(`{"version":"0.17","start":"a","state":{"out":{}},"nodes":[{"id":"a","type":"agent","agents":["x"],"prompt":"p","output":"out"}],"edges":[{"from":"a","to":"END"}]}`))
	_, err := Build(f, BuildOptions{})
	if !errors.Is(err, ErrNoDelegate) || !errors.Is(err, ErrNoModel) {
		t.Errorf("Build with no Delegate and no Model = %v, want ErrNoDelegate and ErrNoModel", err)
	}
}
