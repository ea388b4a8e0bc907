package agents

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/symphonix/symphonix/flow"
)

// MaxDecisionBytes is the most of a model's answer read as its choice of
// agent.
const MaxDecisionBytes = 64 << 10

// Delegator runs the children of a flow's agent nodes: its Delegate is
// the engine's flow.Delegate. One Delegator serves a root agent and every
// child below it, so a chain is checked against one registry.
type Delegator struct {
	// Registry: the agents. Required.
	Registry *Registry
	// Graph returns a registered agent's graph, built with this Delegator's
	// Delegate among its options. Required.
	Graph func(name string) (*flow.Graph, error)
	// Root is the root agent's name, first in every chain; "" starts the
	// chain with the first child.
	Root string
	// TimeLimit bounds one call of a child; 0 is DefaultTimeLimit.
	TimeLimit time.Duration
}

// Delegate is the flow.Delegate: a named agent is invoked as the node
// names it; for a node that lists agents, the model is asked to choose
// one, offered the contracts of those registered (Describe), and its
// answer — {"agent": …, "input": {…}} — is checked before anything is
// looked up: an answer that is not a choice is AGENT_DECISION_INVALID.
func (d *Delegator) Delegate(ctx context.Context, call flow.DelegateCall) (flow.DelegateResult, error) {
	if c := call.Cancel; c != nil {
		return flow.DelegateResult{}, d.cancel(ctx, c)
	}
	chain := d.chain(ctx)
	c := Call{Registry: d.Registry, Graph: d.Graph, Name: call.Agent, Input: call.Input,
		Node: call.Node, ParentRun: call.Run, Thread: call.Thread, Chain: chain,
		TimeLimit: d.TimeLimit, CanWait: call.CanWait, Resume: call.Resume, Answer: call.Answer}
	if call.Agents != nil {
		c.Allowed = call.Agents
		switch {
		case call.Resume != nil:
			c.Name = call.Resume.Agent
		default:
			name, input, err := d.choose(ctx, call)
			if err != nil {
				err.Chain = chain
				return flow.DelegateResult{}, err
			}
			c.Name, c.Input = name, input
		}
	}
	res, err := Invoke(ctx, c)
	out := flow.DelegateResult{Agent: res.Agent, Output: res.Output, Pending: res.Pending}
	if res.Waiting != nil {
		out.Run = *res.Waiting
	} else {
		out.Run = flow.DelegatedRun{Agent: res.Agent, Run: res.Run, Invocation: res.Invocation}
	}
	return out, err
}

// chain is the chain the run on ctx is at the end of.
func (d *Delegator) chain(ctx context.Context) []string {
	if dl := flow.DelegationOf(ctx); dl != nil {
		return slices.Clone(dl.Chain)
	}
	if d.Root != "" {
		return []string{d.Root}
	}
	return []string{}
}

// choose asks the model which agent, and with what.
func (d *Delegator) choose(ctx context.Context, call flow.DelegateCall) (string, map[string]any, *Error) {
	where := fmt.Sprintf("node %q", call.Node)
	contracts := d.Registry.Contracts(call.Agents)
	if call.Model == nil {
		return "", nil, fail(CodeDecisionInvalid, "", where+": no model to choose an agent")
	}
	names := make([]any, 0, len(contracts))
	for _, c := range contracts {
		names = append(names, c.Name)
	}
	schema := &flow.Schema{Type: "object", Required: []string{"agent", "input"}, Properties: map[string]*flow.Schema{
		"agent": {Type: "string", Enum: names, Description: "the name of the agent to hand the work to"},
		"input": {Type: "object", Description: "the agent's inputs, by name"},
	}}
	if len(names) == 0 {
		schema.Properties["agent"].Enum = nil
	}
	prompt := call.Prompt + "\n\nChoose one of these agents to do it:\n" + Describe(contracts) +
		"\nAnswer with JSON only: {\"agent\": \"<name>\", \"input\": {\"<input>\": <value>, …}}, giving every input the agent takes and nothing else."
	reply, err := call.Model.Complete(ctx, flow.ModelRequest{Node: call.Node, Prompt: prompt, Schema: schema})
	if err != nil {
		return "", nil, &Error{Code: CodeDecisionInvalid, Message: where + ": the model could not be asked which agent", Err: err}
	}
	return Decide(reply.Text, where)
}

// Decide reads a model's answer as a choice of agent: a JSON object (in
// a ```json fence or not) with "agent", an agent name, and "input", an
// object. Anything else is AGENT_DECISION_INVALID; a name that is not a
// name is refused here and never looked up.
func Decide(text, where string) (string, map[string]any, *Error) {
	bad := func(why string) (string, map[string]any, *Error) {
		return "", nil, fail(CodeDecisionInvalid, "", at(where)+"the model's choice of agent "+why)
	}
	if len(text) > MaxDecisionBytes {
		return bad(fmt.Sprintf("is longer than %d bytes", MaxDecisionBytes))
	}
	t := strings.TrimSpace(text)
	if i := strings.Index(t, "```"); i >= 0 {
		t = t[i+3:]
		t = strings.TrimPrefix(t, "json")
		if j := strings.Index(t, "```"); j >= 0 {
			t = t[:j]
		}
	}
	var m map[string]any
	if err := json.Unmarshal([]byte(strings.TrimSpace(t)), &m); err != nil || m == nil {
		return bad("is not a JSON object")
	}
	name, ok := m["agent"].(string)
	if !ok {
		return bad(`names no "agent"`)
	}
	if !flow.ValidAgentName(name) {
		e := fail(CodeDecisionInvalid, clipName(name), at(where)+fmt.Sprintf("the model chose %q, which is not an agent name", clipName(name)))
		return "", nil, e
	}
	input := map[string]any{}
	switch in := m["input"].(type) {
	case nil:
	case map[string]any:
		input = in
	default:
		return bad(`gives an "input" that is not an object`)
	}
	for k := range m {
		if k != "agent" && k != "input" {
			return bad(fmt.Sprintf("has key %q: it has only \"agent\" and \"input\"", clipName(k)))
		}
	}
	return name, input, nil
}

// cancel ends a waiting child, and through its own graph the children it
// waits on in turn.
func (d *Delegator) cancel(ctx context.Context, c *flow.DelegatedRun) error {
	if !flow.ValidAgentName(c.Agent) || !ChildThread(c.Thread) {
		return fail(CodeUnknownAgent, clipName(c.Agent), fmt.Sprintf("a waiting child named %q on thread %q is not one of ours", clipName(c.Agent), clipName(c.Thread)))
	}
	g, err := d.Graph(c.Agent)
	if err != nil {
		return &Error{Code: CodeFailed, Agent: c.Agent, Message: fmt.Sprintf("agent %q could not be built", c.Agent), Err: err}
	}
	if err := g.Cancel(ctx, c.Thread); err != nil && !errors.Is(err, flow.ErrNothingPending) {
		return err
	}
	return nil
}
