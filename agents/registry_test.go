package agents_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/symphonix/symphonix/agents"
	"github.com/symphonix/symphonix/flow"
)

func TestLoadRefusals(t *testing.T) {
	good := child("Research a subject.", []string{"subject"}, []string{"findings"}, map[string]any{"id": "r", "handler": "r"})
	noDesc := child("", []string{"subject"}, []string{"findings"}, map[string]any{"id": "r", "handler": "r"})
	noOut := child("Says nothing back.", []string{"subject"}, []string{}, map[string]any{"id": "r", "handler": "r"})
	invalid := child("Broken.", []string{"subject"}, []string{"findings"}, map[string]any{"id": "r", "handler": "r"})
	invalid["start"] = "nowhere"
	tests := []struct {
		name     string
		registry string
		want     string
		says     string
	}{
		{"missing flow", `{"agents":{"r":"absent"}}`, agents.CodeFlowUnreadable, "cannot be read"},
		{"not JSON flow", `{"agents":{"r":"garbage.json"}}`, agents.CodeFlowUnreadable, "cannot be read"},
		{"invalid flow", `{"agents":{"r":"invalid"}}`, agents.CodeFlowInvalid, "UNKNOWN_START"},
		{"no description", `{"agents":{"r":"nodesc"}}`, agents.CodeFlowInvalid, "no description"},
		{"no outputs", `{"agents":{"r":"noout"}}`, agents.CodeFlowInvalid, "no outputs"},
		{"duplicate key", `{"agents":{"r":"good","r":"good"}}`, agents.CodeDuplicateAgent, `"r" is registered twice`},
		{"duplicate in a list", `{"agents":[{"name":"r","flow":"good"},{"name":"r","flow":"good"}]}`, agents.CodeDuplicateAgent, "twice"},
		{"not JSON", `{"agents":`, agents.CodeInvalidRegistry, "not a JSON object"},
		{"no agents", `{}`, agents.CodeInvalidRegistry, `no "agents"`},
		{"unknown key", `{"agents":{},"extra":1}`, agents.CodeInvalidRegistry, `"extra"`},
		{"agents a string", `{"agents":"good"}`, agents.CodeInvalidRegistry, "must be an object"},
		{"a name that is a path", `{"agents":{"../x":"good"}}`, agents.CodeInvalidRegistryEntry, "not an agent name"},
		{"a path outside the folder", `{"agents":{"r":"../elsewhere"}}`, agents.CodeInvalidRegistryEntry, "inside the agent's folder"},
		{"an absolute path", `{"agents":{"r":"/etc"}}`, agents.CodeInvalidRegistryEntry, "inside the agent's folder"},
		{"no flow", `{"agents":[{"name":"r"}]}`, agents.CodeInvalidRegistryEntry, "names no flow"},
		{"entry of another shape", `{"agents":{"r":3}}`, agents.CodeInvalidRegistryEntry, "must be the path"},
		{"unknown entry key", `{"agents":[{"name":"r","flow":"good","model":"x"}]}`, agents.CodeInvalidRegistryEntry, `"model"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			writeFlow(t, dir, "good/flow.json", good)
			writeFlow(t, dir, "nodesc/flow.json", noDesc)
			writeFlow(t, dir, "noout/flow.json", noOut)
			writeFlow(t, dir, "invalid/flow.json", invalid)
			os.WriteFile(filepath.Join(dir, "garbage.json"), []byte("{"), 0o644)
			p := filepath.Join(dir, agents.FileName)
			os.WriteFile(p, []byte(tt.registry), 0o644)
			_, err := agents.Load(p)
			var e *agents.Error
			if !errors.As(err, &e) {
				t.Fatalf("Load = %v, want an *agents.Error", err)
			}
			if e.Code != tt.want || !strings.Contains(e.Message, tt.says) {
				t.Errorf("Load = %s: %s, want %s saying %q", e.Code, e.Message, tt.want, tt.says)
			}
			if strings.Contains(e.Message, dir) {
				t.Errorf("message %q names the folder %s", e.Message, dir)
			}
		})
	}
}

func TestLoadTooManyAgents(t *testing.T) {
	var b strings.Builder
	b.WriteString(`{"agents":{`)
	for i := range agents.MaxEntries + 1 {
		if i > 0 {
			b.WriteString(",")
		}
		b.WriteString(`"a` + strings.Repeat("x", i%5) + string(rune('a'+i%26)) + `` + itoa(i) + `":"x"`)
	}
	b.WriteString(`}}`)
	_, err := agents.Parse([]byte(b.String()))
	var e *agents.Error
	if !errors.As(err, &e) || e.Code != agents.CodeInvalidRegistry {
		t.Errorf("Parse(%d agents) = %v, want INVALID_REGISTRY", agents.MaxEntries+1, err)
	}
}

func itoa(i int) string {
	if i == 0 {
		return "0"
	}
	var d []byte
	for ; i > 0; i /= 10 {
		d = append([]byte{byte('0' + i%10)}, d...)
	}
	return string(d)
}

func TestNewEveryProblemAtOnce(t *testing.T) {
	good := child("Research a subject.", []string{"subject"}, []string{"findings"}, map[string]any{"id": "r", "handler": "r"})
	b, _ := flowJSON(good)
	f, err := flow.Load(b)
	if err != nil {
		t.Fatal(err)
	}
	reg, err := agents.New(agents.Spec{Agents: []agents.Entry{{Name: "r", Flow: "mem"}}}, agents.Options{Flows: map[string]*flow.Flow{"mem": f}})
	if err != nil {
		t.Fatalf("New with a supplied flow: %v", err)
	}
	if a, ok := reg.Agent("r"); !ok || a.Contract.Name != "r" || a.Contract.Description != "Research a subject." ||
		len(a.Contract.Inputs) != 1 || a.Contract.Inputs[0].Type != "string" || a.Contract.Outputs[0].Description != "the findings" {
		t.Errorf("Agent(r) = %+v, %v", a, ok)
	}
	_, err = agents.New(agents.Spec{Agents: []agents.Entry{{Name: "r", Flow: "mem"}, {Name: "r", Flow: "mem"}, {Name: "bad name", Flow: "mem"}}},
		agents.Options{Flows: map[string]*flow.Flow{"mem": f}})
	var ps agents.Problems
	if !errors.As(err, &ps) || len(ps) != 2 || ps[0].Code != agents.CodeDuplicateAgent || ps[1].Code != agents.CodeInvalidRegistryEntry {
		t.Errorf("New = %v, want DUPLICATE_AGENT and INVALID_REGISTRY_ENTRY", err)
	}
}
