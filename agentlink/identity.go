package agentlink

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"

	"github.com/symphonix/symphonix/jcs"
)

// flowIdentity is the part of a flow.json the hello needs.
type flowIdentity struct {
	Name        string   `json:"name"`
	Description string   `json:"description"`
	Inputs      []string `json:"inputs"`
	State       map[string]struct {
		Type        string `json:"type"`
		Description string `json:"description"`
	} `json:"state"`
	Requires struct {
		MCP map[string]struct {
			Tools []struct {
				Name string `json:"name"`
			} `json:"tools"`
		} `json:"mcp"`
	} `json:"requires"`
}

// ReadIdentity reads DIR/flow.json: its name (the folder's name when the flow
// has none), description, declared MCP tools, declared inputs, and build — "sha256:" and the
// hex SHA-256 of the flow's RFC 8785 canonical JSON, so reformatting the
// file or reordering its keys does not change it.
func ReadIdentity(dir string) (Identity, error) {
	path := filepath.Join(dir, "flow.json")
	data, err := os.ReadFile(path)
	if err != nil {
		return Identity{}, err
	}
	id, err := IdentityOf(data)
	if err != nil {
		return Identity{}, fmt.Errorf("%s: %w", path, err)
	}
	if id.Name == "" {
		abs, err := filepath.Abs(dir)
		if err != nil {
			return Identity{}, err
		}
		id.Name = filepath.Base(abs)
	}
	return id, nil
}

// IdentityOf reads an identity from a flow's JSON text.
func IdentityOf(flow []byte) (Identity, error) {
	build, err := jcs.Digest(flow)
	if err != nil {
		return Identity{}, err
	}
	var f flowIdentity
	if err := json.Unmarshal(flow, &f); err != nil {
		return Identity{}, fmt.Errorf("read flow: %w", err)
	}
	var tools []string
	for server, decl := range f.Requires.MCP {
		for _, t := range decl.Tools {
			tools = append(tools, server+"."+t.Name)
		}
	}
	slices.Sort(tools)
	var inputs []FlowInput
	for _, name := range f.Inputs {
		in := FlowInput{Name: name}
		if ch, ok := f.State[name]; ok {
			in.Description = ch.Description
			switch ch.Type {
			case "string", "number", "boolean", "object", "list":
				in.Type = ch.Type
			}
		}
		inputs = append(inputs, in)
	}
	return Identity{Name: f.Name, Description: f.Description, Build: build, Tools: tools, Inputs: inputs}, nil
}
