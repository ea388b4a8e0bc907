package mcptools

import (
	"fmt"
	"strings"
)

// Server is one entry of a flow's requires.mcp: how to start an MCP server
// over stdio, and the tools the flow may call on it. A caller reads
// requires.mcp by unmarshalling it into a map[string]Server keyed by the
// server's name.
type Server struct {
	// Command is the program to run. A relative path such as ./bin/orders is
	// resolved from the flow folder; a bare name such as go is looked up in
	// PATH, as os/exec does.
	Command string `json:"command"`
	// Args are the program's arguments.
	Args []string `json:"args,omitempty"`
	// Env is added to the little the server inherits (see [Open]).
	Env map[string]string `json:"env,omitempty"`
	// Tools are the tools the flow declares for this server, the most it may
	// call there.
	Tools []Tool `json:"tools,omitempty"`
}

// Tool is a tool as a flow declares it, and as a server describes it in
// answer to [Set.ListTools].
type Tool struct {
	Name        string `json:"name"`
	Description string `json:"description,omitempty"`
}

// check reports what is wrong with the declaration of the server called name.
// A server's name may not hold a dot, because "<server>.<tool>" is split at
// the first one; a tool's name may.
func (s Server) check(name string) error {
	switch {
	case name == "":
		return fmt.Errorf("mcptools: a server has an empty name")
	case strings.Contains(name, "."):
		return fmt.Errorf("mcptools: server %q: a server's name may not contain a dot", name)
	case s.Command == "":
		return fmt.Errorf("mcptools: server %q: no command", name)
	}
	seen := make(map[string]bool, len(s.Tools))
	for _, t := range s.Tools {
		switch {
		case t.Name == "":
			return fmt.Errorf("mcptools: server %q: a tool has an empty name", name)
		case seen[t.Name]:
			return fmt.Errorf("mcptools: server %q: tool %q is declared twice", name, t.Name)
		}
		seen[t.Name] = true
	}
	return nil
}

// declares reports whether the flow declared tool for this server.
func (s Server) declares(tool string) bool {
	for _, t := range s.Tools {
		if t.Name == tool {
			return true
		}
	}
	return false
}
