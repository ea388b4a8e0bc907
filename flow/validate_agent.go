package flow

import (
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
)

// AgentNamePattern is what a registered agent's name looks like: a letter,
// then letters, digits, '_' and '-', 64 bytes at most. Nothing else is
// ever looked up, so a name a model writes can never be a path ("../x")
// or anything but a key.
const AgentNamePattern = `^[A-Za-z][A-Za-z0-9_-]{0,63}$`

var agentName = regexp.MustCompile(AgentNamePattern)

// ValidAgentName reports whether s matches AgentNamePattern.
func ValidAgentName(s string) bool { return agentName.MatchString(s) }

// MaxAgentChoices is how many agents one agent node may offer a model.
const MaxAgentChoices = 32

// agentCheck checks what an agent node delegates to: one named agent with
// its input, or a list of agents a model chooses between with a prompt.
func (v *validator) agentCheck(n *Node, label, path string) {
	switch {
	case n.Agent != "" && n.Agents != nil:
		v.add(CodeInvalidValue, join(path, "agents"), fmt.Sprintf(`%s has both "agent" and "agents": a node delegates to one agent it names, or lets a model choose from a list`, label))
	case n.Agent != "":
		if !ValidAgentName(n.Agent) {
			v.add(CodeInvalidValue, join(path, "agent"), fmt.Sprintf("%s names agent %q, which is not an agent name (%s)", label, n.Agent, AgentNamePattern))
		}
		if n.Prompt != "" {
			v.add(CodeMisplacedKey, join(path, "prompt"), fmt.Sprintf(`%s names its agent, so nothing chooses one: "prompt" belongs with "agents"`, label))
		}
		if n.Input != nil {
			var in any
			if json.Unmarshal(n.Input, &in) == nil {
				if _, ok := in.(map[string]any); !ok {
					v.add(CodeWrongType, join(path, "input"), fmt.Sprintf("%s: input must be an object of the child's input channels", label))
				} else {
					v.argsRead(in, join(path, "input"))
				}
			}
		}
	case n.Agents != nil:
		p := join(path, "agents")
		switch {
		case len(n.Agents) == 0:
			v.add(CodeMissingField, p, fmt.Sprintf("%s lists no agents to choose from", label))
		case len(n.Agents) > MaxAgentChoices:
			v.add(CodeInvalidValue, p, fmt.Sprintf("%s lists %d agents, and a node offers at most %d", label, len(n.Agents), MaxAgentChoices))
		}
		for i, name := range n.Agents {
			switch {
			case !ValidAgentName(name):
				v.add(CodeInvalidValue, index(p, i), fmt.Sprintf("%s lists %q, which is not an agent name (%s)", label, name, AgentNamePattern))
			case slices.Index(n.Agents, name) != i:
				v.add(CodeInvalidValue, index(p, i), fmt.Sprintf("%s lists agent %q twice", label, name))
			}
		}
		if n.Input != nil {
			v.add(CodeMisplacedKey, join(path, "input"), fmt.Sprintf(`%s lets a model choose, and the model writes the input: "input" belongs with "agent"`, label))
		}
		if n.Prompt == "" {
			v.missing(CodeMissingField, join(path, "prompt"), fmt.Sprintf("%s has no prompt: a model choosing between agents needs to be told what for", label))
		} else {
			v.templateReads(n.Prompt, join(path, "prompt"))
		}
	default:
		if !v.broken[join(path, "agent")] && !v.broken[join(path, "agents")] {
			v.add(CodeMissingField, join(path, "agent"), fmt.Sprintf(`%s has neither "agent" nor "agents"`, label))
		}
	}
}
