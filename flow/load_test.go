package flow

import (
	"encoding/json"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// TestExamples loads the example flows of the flow language reference
// ("Writing a flow"), each completed into a whole flow where the reference
// shows a fragment, and finds nothing wrong.
func TestExamples(t *testing.T) {
	t.Parallel()
	files, err := filepath.Glob("testdata/*.json")
	if err != nil {
		t.Fatal(err)
	}
	if len(files) < 10 {
		t.Fatalf("found %d example flows, want at least 10", len(files))
	}
	for _, name := range files {
		t.Run(filepath.Base(name), func(t *testing.T) {
			t.Parallel()
			f, err := LoadFile(name)
			if err != nil {
				t.Fatalf("LoadFile(%s) error: %v", name, err)
			}
			if ps := Validate(f); len(ps) != 0 {
				t.Errorf("Validate(%s) = %v, want no problems", name, ps)
			}
			if err := Check(f); err != nil {
				t.Errorf("Check(%s) = %v, want nil", name, err)
			}
		})
	}
}

func TestLoadErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		data string
		want error
		text string // a part of the message that names where
	}{
		{"duplicate top-level key", `{"version":"0.2","version":"0.3"}`, ErrDuplicateKey, `"version" in the flow`},
		{"duplicate node key", `{"nodes":[{"id":"a","id":"b"}]}`, ErrDuplicateKey, `"id" in nodes[0]`},
		{"duplicate after escapes", `{"state":{"a":{},"\u0061":{}}}`, ErrDuplicateKey, `"a" in state`},
		{"duplicate route", `{"edges":[{"routes":{"x":"a","x":"b"}}]}`, ErrDuplicateKey, `"x" in edges[0].routes`},
		{"malformed", `{"version":}`, ErrInvalidJSON, ""},
		{"truncated", `{"version":"0.2"`, ErrInvalidJSON, ""},
		{"trailing data", `{"version":"0.2"} {}`, ErrInvalidJSON, "after the flow"},
		{"empty", ``, ErrInvalidJSON, ""},
		{"array", `[]`, ErrNotObject, ""},
		{"string", `"flow"`, ErrNotObject, ""},
		{"too deep", `{"views":` + strings.Repeat("[", 300) + strings.Repeat("]", 300) + `}`, ErrInvalidJSON, "nested deeper"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			f, err := Load([]byte(tt.data))
			if !errors.Is(err, tt.want) {
				t.Fatalf("Load(%s) = %v, %v; want error %v", tt.data, f, err, tt.want)
			}
			if tt.text != "" && !strings.Contains(err.Error(), tt.text) {
				t.Errorf("Load(%s) error %q does not say %q", tt.data, err, tt.text)
			}
		})
	}
}

func TestLoadFileMissing(t *testing.T) {
	t.Parallel()
	if _, err := LoadFile(filepath.Join(t.TempDir(), "nope.json")); err == nil {
		t.Error("LoadFile(missing file) error = nil, want one")
	}
}

// TestLoadFields checks that Load puts every key where it belongs.
func TestLoadFields(t *testing.T) {
	t.Parallel()
	f, err := LoadFile("testdata/crm-mcp.json")
	if err != nil {
		t.Fatal(err)
	}
	want := &Flow{
		Version:     "0.17",
		Start:       "find",
		Name:        "crm-desk",
		Description: "Find a customer in the CRM and say who they are.",
		Inputs:      []string{"email"},
		Outputs:     []string{"customer"},
		Requires: &Requires{
			Env: []string{"CRM_TOKEN"},
			MCP: map[string]*MCPServer{"crm": {
				Command: "crm-mcp",
				Args:    []string{"--stdio"},
				Env:     map[string]string{"CRM_TOKEN": "${CRM_TOKEN}"},
				Tools: []Tool{
					{Name: "findCustomer", Description: "Find a customer by email address.", object: true},
					{Name: "addNote", Description: "Add a note to a customer's record.", object: true},
				},
			}},
		},
		State: map[string]*Channel{
			"email":    {Type: "string", Description: "The customer's email address."},
			"customer": {Type: "object", Description: "The customer's record, as the CRM returns it."},
		},
		Nodes: []*Node{{
			ID: "find", Type: KindTool, Tool: "crm.findCustomer",
			Args: json.RawMessage(`{"email":"{{email}}"}`), Output: "customer",
			Approval: &Approval{Ask: "Look this customer up?", Show: []string{"email"}, OnReject: "END", Why: "email"},
			keys:     []string{"id", "type", "tool", "args", "output", "approval"},
		}},
		Edges: []*Edge{{From: "find", To: "END", keys: []string{"from", "to"}}},
	}
	opts := cmp.Options{cmp.AllowUnexported(Node{}, Edge{}, Tool{}), cmpopts.IgnoreFields(Flow{}, "loaded")}
	if diff := cmp.Diff(want, f, opts); diff != "" {
		t.Errorf("LoadFile(crm-mcp.json) (-want +got):\n%s", diff)
	}
}

func TestLoadKeepsRaw(t *testing.T) {
	t.Parallel()
	f := load(t, []byte(`{"state":{"notes":{"default":[ 1, "<b>", {"z":1,"a":null} ]}},
		"views":{"b":true,"a":[]},"shell":"s","createdBy":{"who":"ann"},"lastUpdatedBy":null,
		"tools":[{"name":"t","inputs":{"q":"string"}}]}`))
	got := map[string]string{
		"default":       string(f.State["notes"].Default),
		"views":         string(f.Views),
		"shell":         string(f.Shell),
		"createdBy":     string(f.CreatedBy),
		"lastUpdatedBy": string(f.LastUpdatedBy),
		"inputs":        string(f.Tools[0].Inputs),
	}
	want := map[string]string{
		"default":       `[1,"<b>",{"z":1,"a":null}]`,
		"views":         `{"b":true,"a":[]}`,
		"shell":         `"s"`,
		"createdBy":     `{"who":"ann"}`,
		"lastUpdatedBy": `null`,
		"inputs":        `{"q":"string"}`,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("raw values (-want +got):\n%s", diff)
	}
}

// TestLoadEmptyIsGiven: a key given as {} or [] is not a key left out.
func TestLoadEmptyIsGiven(t *testing.T) {
	t.Parallel()
	f := load(t, []byte(`{"nodes":[],"edges":[],"state":{},"inputs":[],"tools":[]}`))
	if f.Nodes == nil || f.Edges == nil || f.State == nil || f.Inputs == nil || f.Tools == nil {
		t.Errorf("Load of empty values = %+v, want non-nil empty values", f)
	}
}
