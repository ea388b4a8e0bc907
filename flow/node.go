package flow

import (
	"encoding/json"
	"slices"
)

// Kind is what a node is. A node either names a handler (KindHandler, the
// v0.1 node) or declares a type, and the compiler writes the handler for it.
type Kind string

// The node kinds.
const (
	KindHandler Kind = "handler" // never written as a type: a node with a handler
	KindLLM     Kind = "llm"     // v0.3: a prompt to the model, the reply to output
	KindTool    Kind = "tool"    // v0.4: one tool call the flow decides
	KindTools   Kind = "tools"   // v0.4: the calls something else queued
	KindFanout  Kind = "fanout"  // v0.6: one copy of a node per item of a list
	KindAsk     Kind = "ask"     // v0.8: a question to the person, the reply to output
	KindAgent   Kind = "agent"   // v0.17: a delegation to another registered agent
)

// NodeTypes lists every value a node's type may take.
var NodeTypes = []Kind{KindLLM, KindTool, KindTools, KindFanout, KindAsk, KindAgent}

// Node is one step of the graph. Which fields apply depends on its kind;
// Validate refuses a field on a node of a kind it does not belong to.
type Node struct {
	// ID names the step. Unique; START and END are reserved.
	ID string
	// Handler names the function that implements the step. A node has a
	// handler or a type, never both.
	Handler string
	// Type is the kind of a typed node (v0.3 on); empty for a handler node.
	Type Kind
	// Description says what the step does (v0.7). For a handler it is the
	// whole specification its code is written from.
	Description string

	// Retry gives the node more goes before a failure counts (v0.3).
	Retry *Retry
	// OnError names where the run goes when the node still fails: a node
	// id, or END (v0.3). The failure is in the __error channel.
	OnError string
	// Approval stops the run before the node does anything until a person
	// answers (v0.5). It needs a checkpointer.
	Approval *Approval

	// Prompt is an llm node's prompt; {{channel}} reads state.
	Prompt string
	// Output is the channel an llm, tool, tools or ask node writes.
	Output string
	// Schema is the shape an llm node's answer must have (v0.15).
	Schema *Schema

	// Tool is the tool a tool node calls: a name in the flow's tools, or
	// "<server>.<tool>" declared in requires.mcp.
	Tool string
	// Args are a tool node's arguments, templated like prompts, as given.
	Args json.RawMessage

	// Calls is the channel of queued { name, args, id } calls a tools node
	// runs.
	Calls string

	// Over is the list channel a fanout node spreads, To the node each
	// item goes to, and As the channel each copy reads its item from.
	Over string
	To   string
	As   string

	// Ask is an ask node's question; {{channel}} reads state.
	Ask string

	// Agent is the registered agent an agent node delegates to, named by
	// the flow; Agents, instead, lists the agents a model chooses between
	// (with Prompt saying what for). A node has one or the other.
	Agent  string
	Agents []string
	// Input is what an agent node with a fixed Agent hands its child: an
	// object of the child's input channels, templated like a tool node's
	// args.
	Input json.RawMessage

	keys []string // the keys Load saw, in order
}

// Kind returns the node's kind: its type, or KindHandler for a node that
// declares none.
func (n *Node) Kind() Kind {
	if n.Type == "" {
		return KindHandler
	}
	return n.Type
}

// Retry is how many goes a node gets.
type Retry struct {
	// MaxAttempts counts every go, the first one too. At least 1.
	MaxAttempts int
}

// Approval is the question put to a person before a node runs.
type Approval struct {
	// Ask is the question. Required.
	Ask string
	// Show names the channels the person is shown, or fields of them
	// ("order.amount"): never the whole state.
	Show []string
	// OnReject names where a refused run goes: a node id, or END. Empty:
	// a refusal ends the run.
	OnReject string
	// Why names the channel holding the case for saying yes: the account
	// shown beside the question.
	Why string
}

// kindKeys are the keys that belong to only some kinds of node.
var kindKeys = map[Kind][]string{
	KindHandler: {"handler"},
	KindLLM:     {"prompt", "output", "schema"},
	KindTool:    {"tool", "args", "output"},
	KindTools:   {"calls", "output"},
	KindFanout:  {"over", "to", "as"},
	KindAsk:     {"ask", "output"},
	KindAgent:   {"agent", "agents", "input", "prompt", "output"},
}

// belongs reports whether key may appear on a node of kind k.
func belongs(k Kind, key string) bool {
	switch key {
	case "id", "type", "description", "retry", "onError", "approval":
		return true
	}
	return slices.Contains(kindKeys[k], key)
}

// present returns the kind-specific keys the node uses: the keys Load saw,
// or for a node built in Go, the fields that are set.
func (n *Node) present() []string {
	if n.keys != nil {
		return n.keys
	}
	var ks []string
	add := func(set bool, key string) {
		if set {
			ks = append(ks, key)
		}
	}
	add(n.Handler != "", "handler")
	add(n.Prompt != "", "prompt")
	add(n.Output != "", "output")
	add(n.Schema != nil, "schema")
	add(n.Tool != "", "tool")
	add(n.Args != nil, "args")
	add(n.Calls != "", "calls")
	add(n.Over != "", "over")
	add(n.To != "", "to")
	add(n.As != "", "as")
	add(n.Ask != "", "ask")
	add(n.Agent != "", "agent")
	add(n.Agents != nil, "agents")
	add(n.Input != nil, "input")
	return ks
}

// writes returns the channel a typed node writes, if the compiler knows it.
func (n *Node) writes() string {
	switch n.Type {
	case KindLLM, KindTool, KindTools, KindAsk, KindAgent:
		return n.Output
	}
	return ""
}
