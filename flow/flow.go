package flow

import "encoding/json"

// Flow is one flow file: the graph (start, nodes, edges), its state
// channels, and what it says about itself. The zero value of an optional
// field means the flow does not use it; a nil map or slice means the key
// was absent, and Load makes an empty one for a key given as {} or [].
type Flow struct {
	// Version is the DSL version the flow is written in, "0.1" to "0.17".
	Version string
	// Start is the id of the first node. The compiler draws the edge from
	// START to it; a flow never writes a START edge itself.
	Start string

	// Name is what the flow is called. Not versioned: see docs/flow.md.
	Name string
	// Description, Inputs and Outputs say what the flow is for and what
	// crosses its boundary (v0.7). Inputs and Outputs name state channels.
	// None of them changes how the flow runs.
	Description string
	Inputs      []string
	Outputs     []string
	// Requires is what generated code needs: environment variables (v0.7),
	// packages, services and MCP servers (v0.9).
	Requires *Requires
	// Tools is the contract of tools the flow may reach (v0.4): a tool node
	// naming anything else is refused. nil means no contract.
	Tools []Tool

	// State declares the flow's channels by name (v0.2). nil means the flow
	// declares none, and the caller supplies its own schema as in v0.1;
	// only then are channels not checked.
	State map[string]*Channel
	// Conversation gives the flow a history channel of finished turns that
	// it does not declare (v0.9).
	Conversation bool

	Nodes []*Node
	Edges []*Edge

	// Kind says whose flow this is, the system's own or a person's (v0.17):
	// one of FlowKinds. Empty: the person's (see IsSystemFlow).
	Kind string
	// Views is what a run shows while it runs (v0.11), kept as given: the
	// flow language reference and the API reference name views without
	// describing their shape.
	Views json.RawMessage
	// Shell is the chat page's scenery, and CreatedBy and LastUpdatedBy the
	// flow's identity. They are kept as given and not checked; see
	// docs/flow.md.
	Shell         json.RawMessage
	CreatedBy     json.RawMessage
	LastUpdatedBy json.RawMessage

	// loaded is what Load saw that the fields above cannot say.
	loaded *loadInfo
}

// loadInfo is kept by Load for Validate: the shape problems it found, and
// which top-level keys were present.
type loadInfo struct {
	problems []Problem
	broken   map[string]bool // paths with a shape problem
	keys     map[string]bool // top-level keys present
}

// Requires is what a flow's generated code needs from outside it.
type Requires struct {
	// Env names the environment variables the flow needs (v0.7).
	Env []string
	// Packages maps a package name to its version range (v0.9).
	Packages map[string]string
	// Services maps a service name to the paragraph its code is written
	// from (v0.9).
	Services map[string]string
	// MCP maps a server name to how it is started and what it declares.
	MCP map[string]*MCPServer
}

// MCPServer is one MCP server a flow declares in requires.mcp. Its tools are
// what a tool node may call as "<server>.<tool>".
type MCPServer struct {
	Command string
	Args    []string
	Env     map[string]string
	Tools   []Tool
}

// Tool is one tool a flow may reach. A tool in the flow's tools may be
// written as its bare name (v0.4) or as an object with a description
// (v0.7).
type Tool struct {
	Name        string
	Description string
	// Inputs is what the tool takes, kept as given: the API reference names
	// it as a field of a catalogue tool without describing its shape.
	Inputs json.RawMessage

	object bool // written as an object rather than a bare name
}

// described reports whether the tool uses the v0.7 object form.
func (t Tool) described() bool {
	return t.object || t.Description != "" || t.Inputs != nil
}

// node returns the node with the given id, or nil.
func (f *Flow) node(id string) *Node {
	for _, n := range f.Nodes {
		if n != nil && n.ID == id {
			return n
		}
	}
	return nil
}
