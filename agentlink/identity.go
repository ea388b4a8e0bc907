package agentlink

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	boardv1 "github.com/symphonix/symphonix/api/symphonix/board/v1"
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

// checkPackage refuses an InstalledPackage the board would refuse: each
// field set and within its bound, the digest "sha256:" and 64 lowercase
// hex digits.
func checkPackage(p *InstalledPackage) error {
	if p == nil {
		return nil
	}
	switch {
	case p.Name == "" || len(p.Name) > MaxPackageName || !strings.Contains(p.Name, "/"):
		return fmt.Errorf("agentlink: Identity.Package.Name %q: want scope/name, at most %d bytes", clipText(p.Name), MaxPackageName)
	case p.Version == "" || len(p.Version) > MaxPackageVersion:
		return fmt.Errorf("agentlink: Identity.Package.Version %q: want a semantic version, at most %d bytes", clipText(p.Version), MaxPackageVersion)
	case !isDigest(p.Digest):
		return fmt.Errorf("agentlink: Identity.Package.Digest %q: want sha256: and 64 lowercase hex digits", clipText(p.Digest))
	}
	return nil
}

// isDigest reports whether s is "sha256:" and 64 lowercase hex digits.
func isDigest(s string) bool {
	hex, ok := strings.CutPrefix(s, "sha256:")
	if !ok || len(s) != digestLen {
		return false
	}
	for _, c := range hex {
		if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}

// clipText is s cut to 64 bytes for an error message.
func clipText(s string) string {
	if len(s) > 64 {
		return s[:64] + "…"
	}
	return s
}

// packageOf is p as the hello carries it; nil for none.
func packageOf(p *InstalledPackage) *boardv1.InstalledPackage {
	if p == nil {
		return nil
	}
	return &boardv1.InstalledPackage{Name: p.Name, Version: p.Version, Digest: p.Digest}
}
