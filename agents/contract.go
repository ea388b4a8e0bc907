package agents

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/symphonix/symphonix/flow"
)

// Contract is a flow as another agent sees it: what it is for, what it
// takes and what it gives back — the v0.7 description, inputs and
// outputs, each read from the flow's own state, so nothing is declared
// twice.
type Contract struct {
	// Name is the agent's name: the registered one in a Registry, the
	// flow's own from Contract.
	Name        string
	Description string
	Inputs      []Field
	Outputs     []Field
}

// Field is one input or output: its channel, and the channel's type and
// description when the flow gives them.
type Field struct {
	Name        string
	Type        string
	Description string
}

// Contract returns f's contract.
func ContractOf(f *flow.Flow) Contract {
	c := Contract{Name: f.Name, Description: strings.TrimSpace(f.Description)}
	field := func(name string) Field {
		fd := Field{Name: name}
		if ch := f.State[name]; ch != nil {
			fd.Type, fd.Description = ch.Type, ch.Description
		}
		return fd
	}
	for _, in := range f.Inputs {
		c.Inputs = append(c.Inputs, field(in))
	}
	for _, out := range f.Outputs {
		c.Outputs = append(c.Outputs, field(out))
	}
	return c
}

// ContractProblems says why f could not be delegated to: an agent with no
// description cannot be chosen, and one with no outputs is not worth
// choosing. nil when nothing stands in the way.
func ContractProblems(f *flow.Flow) []string {
	var ps []string
	if strings.TrimSpace(f.Description) == "" {
		ps = append(ps, "it has no description, so nothing can choose it")
	}
	if len(f.Outputs) == 0 {
		ps = append(ps, "it declares no outputs, so nothing would come back from it")
	}
	return ps
}

// Describe writes contracts as a list a model chooses from: one entry an
// agent, its name and description, then what it takes and gives back.
func Describe(contracts []Contract) string {
	var b strings.Builder
	for _, c := range contracts {
		fmt.Fprintf(&b, "- %s: %s\n", c.Name, oneLine(c.Description))
		describeFields(&b, "takes", c.Inputs)
		describeFields(&b, "gives back", c.Outputs)
	}
	return b.String()
}

func describeFields(b *strings.Builder, what string, fs []Field) {
	if len(fs) == 0 {
		fmt.Fprintf(b, "  %s nothing\n", what)
		return
	}
	fmt.Fprintf(b, "  %s:\n", what)
	for _, f := range fs {
		b.WriteString("    - " + f.Name)
		if f.Type != "" {
			b.WriteString(" (" + f.Type + ")")
		}
		if f.Description != "" {
			b.WriteString(": " + oneLine(f.Description))
		}
		b.WriteByte('\n')
	}
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// CheckInput holds a call to c before the child is built: every declared
// input must be there and hold something (not null, not blank, not an
// empty list or object), anything undeclared is refused by name, and the
// whole is at most MaxInputBytes of JSON. where says who is asking, for
// the message ("node \"research\""); "" leaves it out.
func CheckInput(c Contract, input map[string]any, where string) error {
	declared := map[string]bool{}
	for _, in := range c.Inputs {
		declared[in.Name] = true
	}
	var ps []string
	for _, k := range slices.Sorted(maps.Keys(input)) {
		if !declared[k] {
			ps = append(ps, fmt.Sprintf("%q is not one of its inputs", k))
		}
	}
	for _, in := range c.Inputs {
		switch v := input[in.Name]; {
		case empty(v):
			ps = append(ps, fmt.Sprintf("input %q holds nothing", in.Name))
		case !flow.Fits(in.Type, v):
			ps = append(ps, fmt.Sprintf("input %q must be a %s, and it is %s", in.Name, in.Type, kindOf(v)))
		}
	}
	if len(ps) == 0 {
		if b, err := json.Marshal(input); err != nil {
			ps = append(ps, "the input is not JSON")
		} else if len(b) > MaxInputBytes {
			ps = append(ps, fmt.Sprintf("the input is %d bytes of JSON, and a child takes at most %d", len(b), MaxInputBytes))
		}
	}
	if len(ps) > 0 {
		return fail(CodeInputInvalid, c.Name, at(where)+fmt.Sprintf("agent %q: %s", c.Name, strings.Join(ps, "; ")))
	}
	return nil
}

// DeclaredOutputs is what may cross back from a child: the declared
// outputs it wrote (holding something other than null), and nothing else.
// It refuses a child that wrote none of them, or more than MaxOutputBytes
// of JSON.
func DeclaredOutputs(c Contract, state map[string]any, where string) (map[string]any, error) {
	out := map[string]any{}
	for _, o := range c.Outputs {
		if v, ok := state[o.Name]; ok && v != nil {
			out[o.Name] = v
		}
	}
	if len(out) == 0 {
		names := make([]string, len(c.Outputs))
		for i, o := range c.Outputs {
			names[i] = o.Name
		}
		return nil, fail(CodeOutputInvalid, c.Name, at(where)+fmt.Sprintf("agent %q wrote none of its outputs (%s)", c.Name, strings.Join(names, ", ")))
	}
	b, err := json.Marshal(out)
	if err != nil {
		return nil, fail(CodeOutputInvalid, c.Name, at(where)+fmt.Sprintf("agent %q: its outputs are not JSON", c.Name))
	}
	if len(b) > MaxOutputBytes {
		return nil, fail(CodeOutputInvalid, c.Name, at(where)+fmt.Sprintf("agent %q gave back %d bytes of JSON, and at most %d cross back", c.Name, len(b), MaxOutputBytes))
	}
	return out, nil
}

func at(where string) string {
	if where == "" {
		return ""
	}
	return where + ": "
}

// empty reports a value that holds nothing.
func empty(v any) bool {
	switch v := v.(type) {
	case nil:
		return true
	case string:
		return strings.TrimSpace(v) == ""
	case []any:
		return len(v) == 0
	case map[string]any:
		return len(v) == 0
	}
	return false
}

// kindOf names what a JSON value is, for a refusal: "a string", "a list", ….
func kindOf(v any) string {
	switch v.(type) {
	case string:
		return "a string"
	case bool:
		return "a boolean"
	case float64, int, int64, json.Number:
		return "a number"
	case []any:
		return "a list"
	case map[string]any:
		return "an object"
	}
	return fmt.Sprintf("a %T", v)
}
