package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestValidateAgents: agent validate reports the registry's problems and
// the flow's agent nodes naming agents it does not register, each with
// its code, beside the flow's own, and exits 1.
func TestValidateAgents(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "flow.json"), []byte(`{"version":"0.17","state":{"q":{},"out":{}},"start":"a",
	  "nodes":[{"id":"a","type":"agent","agents":["sql","docs"],"prompt":"{{q}}","output":"out"}],"edges":[{"from":"a","to":"END"}]}`), 0o644)
	os.MkdirAll(filepath.Join(dir, "sql"), 0o755)
	os.WriteFile(filepath.Join(dir, "sql", "flow.json"), []byte(`{"version":"0.17","state":{"q":{},"a":{}},"inputs":["q"],"outputs":["a"],
	  "start":"x","nodes":[{"id":"x","type":"llm","prompt":"{{q}}","output":"a"}],"edges":[{"from":"x","to":"END"}]}`), 0o644)
	os.WriteFile(filepath.Join(dir, "agents.json"), []byte(`{"agents":{"sql":"sql"}}`), 0o644)

	r := runAgent(t, nil, "", "validate", dir, "-o", "json")
	var v struct {
		Valid  bool `json:"valid"`
		Agents *struct {
			Valid    bool `json:"valid"`
			Problems []struct {
				Code, Path, Message string
			} `json:"problems"`
		} `json:"agents"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &v); err != nil {
		t.Fatalf("validate -o json = %q: %v", r.stdout, err)
	}
	if r.code != 1 || v.Valid || v.Agents == nil || len(v.Agents.Problems) != 1 || v.Agents.Problems[0].Code != "AGENT_FLOW_INVALID" ||
		!strings.Contains(v.Agents.Problems[0].Message, "no description") {
		t.Fatalf("validate = %q (exit %d), want the child without a description as AGENT_FLOW_INVALID", r.stdout, r.code)
	}
	os.WriteFile(filepath.Join(dir, "sql", "flow.json"), []byte(`{"version":"0.17","description":"Answers from the database.","state":{"q":{},"a":{}},"inputs":["q"],"outputs":["a"],
	  "start":"x","nodes":[{"id":"x","type":"llm","prompt":"{{q}}","output":"a"}],"edges":[{"from":"x","to":"END"}]}`), 0o644)
	r = runAgent(t, nil, "", "validate", dir)
	if r.code != 1 || !strings.Contains(r.stdout, `agents.json: agents.docs: UNKNOWN_AGENT: node "a" delegates to agent "docs", which agents.json does not register`) {
		t.Fatalf("validate = %q (exit %d), want docs unknown", r.stdout, r.code)
	}
	os.WriteFile(filepath.Join(dir, "agents.json"), []byte(`{"agents":{"sql":"sql","docs":"sql/flow.json"}}`), 0o644)
	r = runAgent(t, nil, "", "validate", dir)
	if r.code != 0 || !strings.Contains(r.stdout, "agents.json: valid (2 agent(s))") {
		t.Fatalf("validate = %q (exit %d), want valid", r.stdout, r.code)
	}
}
