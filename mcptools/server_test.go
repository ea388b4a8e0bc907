package mcptools

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// requires.mcp, as a flow file says it, reads straight into the declaration.
func TestServerFromRequires(t *testing.T) {
	t.Parallel()
	requires := `{
	  "orders": {
	    "command": "./bin/mcp-orders",
	    "args": ["--quiet"],
	    "env": {"ORDERS_STATE": "orders.json"},
	    "tools": [
	      {"name": "lookup_order", "description": "Look up an order by its id."},
	      {"name": "refund", "description": "Refund an order, once."}
	    ]
	  }
	}`
	var got map[string]Server
	if err := json.Unmarshal([]byte(requires), &got); err != nil {
		t.Fatal(err)
	}
	want := map[string]Server{"orders": {
		Command: "./bin/mcp-orders",
		Args:    []string{"--quiet"},
		Env:     map[string]string{"ORDERS_STATE": "orders.json"},
		Tools: []Tool{
			{Name: "lookup_order", Description: "Look up an order by its id."},
			{Name: "refund", Description: "Refund an order, once."},
		},
	}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("requires.mcp mismatch (-want +got):\n%s", diff)
	}
}

func TestOpenRefusesBadDeclarations(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		servers map[string]Server
	}{
		{"dot in server name", map[string]Server{"my.orders": {Command: "x"}}},
		{"empty server name", map[string]Server{"": {Command: "x"}}},
		{"no command", map[string]Server{"orders": {Tools: []Tool{{Name: "refund"}}}}},
		{"empty tool name", map[string]Server{"orders": {Command: "x", Tools: []Tool{{Name: ""}}}}},
		{"tool twice", map[string]Server{"orders": {Command: "x", Tools: []Tool{{Name: "refund"}, {Name: "refund"}}}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			s, err := Open(t.Context(), t.TempDir(), tt.servers, Config{})
			if err == nil {
				s.Close()
				t.Fatalf("Open(%v) succeeded, want an error", tt.servers)
			}
		})
	}
}

func TestOpenRefusesMissingFolder(t *testing.T) {
	t.Parallel()
	if s, err := Open(t.Context(), t.TempDir()+"/gone", nil, Config{}); err == nil {
		s.Close()
		t.Fatal("Open of a missing flow folder succeeded, want an error")
	}
}
