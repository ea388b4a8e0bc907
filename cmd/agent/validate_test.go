package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// validateOut is agent validate's -o json, as a client reads it.
type validateOut struct {
	Valid    bool `json:"valid"`
	Problems []struct {
		Code string `json:"code"`
		Path string `json:"path"`
	} `json:"problems"`
	Triggers *struct {
		File     string `json:"file"`
		Valid    bool   `json:"valid"`
		Code     string `json:"code"`
		Error    string `json:"error"`
		Triggers int    `json:"triggers"`
		Problems []struct {
			Code    string `json:"code"`
			Path    string `json:"path"`
			Message string `json:"message"`
		} `json:"problems"`
	} `json:"triggers"`
}

func validateJSONOf(t *testing.T, dir string) (validateOut, result) {
	t.Helper()
	r := runAgent(t, nil, "", "validate", dir, "-o", "json")
	var v validateOut
	if err := json.Unmarshal([]byte(r.stdout), &v); err != nil {
		t.Fatalf("validate -o json = %q: %v", r.stdout, err)
	}
	return v, r
}

// TestValidateTriggers: agent validate reports the trigger file governing
// the flow beside the flow's own problems, exits 1 on any, and says
// nothing of triggers for a folder without a trigger file.
func TestValidateTriggers(t *testing.T) {
	t.Parallel()
	dir := desk(t)
	writeFile := func(name, content string) {
		t.Helper()
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}

	// no trigger file: as before, nothing about triggers
	v, r := validateJSONOf(t, dir)
	if r.code != 0 || !v.Valid || v.Triggers != nil || strings.Contains(r.stdout, `"triggers"`) {
		t.Fatalf("validate without a trigger file = %q (exit %d)", r.stdout, r.code)
	}
	if r := runAgent(t, nil, "", "validate", dir); r.code != 0 || strings.Count(r.stdout, "\n") != 1 || !strings.Contains(r.stdout, "flow.json: valid") {
		t.Fatalf("validate without a trigger file = %q (exit %d), want one line", r.stdout, r.code)
	}

	// a valid one
	writeFile("triggers.json", `{"flow": "flow.json", "triggers": [
	  {"id": "nightly", "kind": "schedule", "schedule": "0 2 * * *", "timeZone": "Europe/Paris",
	   "input": {"order_id": "A-1001", "request": "Nightly check of {{time.date}}"}},
	  {"id": "hook", "kind": "webhook", "path": "/refund", "input": {"order_id": "{{body.order}}", "request": "{{body.text}}"}}]}`)
	v, r = validateJSONOf(t, dir)
	if r.code != 0 || !v.Valid || v.Triggers == nil || !v.Triggers.Valid || v.Triggers.Triggers != 2 || v.Triggers.File != filepath.Join(dir, "triggers.json") {
		t.Fatalf("validate with a valid trigger file = %q (exit %d)", r.stdout, r.code)
	}
	if r := runAgent(t, nil, "", "validate", dir); r.code != 0 || !strings.Contains(r.stdout, "triggers.json: valid (2 trigger(s))") {
		t.Fatalf("validate with a valid trigger file = %q (exit %d)", r.stdout, r.code)
	}

	// flow.triggers.json wins, and its problems are checked against the flow
	writeFile("flow.triggers.json", `{"flow": "flow.json", "triggers": [
	  {"id": "nightly", "kind": "schedule", "schedule": "0 25 * * *", "input": {"order_id": "A-1", "note": "{{headers.cookie}}"}}]}`)
	v, r = validateJSONOf(t, dir)
	if r.code != 1 || v.Valid || v.Triggers == nil || v.Triggers.Valid || v.Triggers.File != filepath.Join(dir, "flow.triggers.json") {
		t.Fatalf("validate with trigger problems = %q (exit %d), want exit 1", r.stdout, r.code)
	}
	var got []string
	for _, p := range v.Triggers.Problems {
		got = append(got, p.Code+" "+p.Path)
	}
	for _, want := range []string{
		"SCHEDULE_INVALID triggers[0].schedule", "INPUT_READS_UNKNOWN triggers[0].input.note",
		"INPUT_UNKNOWN triggers[0].input.note", "INPUT_MISSING triggers[0].input",
	} {
		if !slices.Contains(got, want) {
			t.Errorf("trigger problems %v lack %s", got, want)
		}
	}
	if len(v.Problems) != 0 {
		t.Errorf("the flow's own problems = %v, want none", v.Problems)
	}
	r = runAgent(t, nil, "", "validate", dir)
	if r.code != 1 || !strings.Contains(r.stdout, "flow.json: valid") ||
		!strings.Contains(r.stdout, "flow.triggers.json: triggers[0].schedule: SCHEDULE_INVALID: the hour field") ||
		!strings.Contains(r.stdout, "flow.triggers.json: 4 problem(s)") {
		t.Fatalf("validate with trigger problems = %q (exit %d)", r.stdout, r.code)
	}

	// a file that cannot be read says why
	writeFile("flow.triggers.json", `{"flow": "flow.json", "triggers": [{"id": "a", "shedule": "* * * * *"}]}`)
	v, r = validateJSONOf(t, dir)
	if r.code != 1 || v.Valid || v.Triggers == nil || v.Triggers.Code != "INVALID_TRIGGER_FILE" || !strings.Contains(v.Triggers.Error, "triggers[0].shedule") {
		t.Fatalf("validate with an unreadable trigger file = %q (exit %d)", r.stdout, r.code)
	}
	if r := runAgent(t, nil, "", "validate", dir); r.code != 1 || !strings.Contains(r.stdout, "INVALID_TRIGGER_FILE") {
		t.Fatalf("validate with an unreadable trigger file = %q (exit %d)", r.stdout, r.code)
	}
}

// TestValidateHandlers: agent validate says how each handler and router
// the flow names is provided, and one nothing provides is a problem at
// the node or edge that names it, before any run.
func TestValidateHandlers(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	write := func(name, content string, mode os.FileMode) {
		t.Helper()
		path := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(content), mode); err != nil {
			t.Fatal(err)
		}
	}
	write("flow.json", `{
  "version": "0.1",
  "start": "a",
  "nodes": [ { "id": "a", "handler": "first" }, { "id": "b", "handler": "second" } ],
  "edges": [ { "from": "a", "type": "conditional", "router": "pick", "routes": { "on": "b", "off": "END" } },
             { "from": "b", "to": "END" } ]
}`, 0o644)
	write("handlers/first.sh", "#!/bin/sh\necho '{}'\n", 0o755)

	type provided struct {
		Kind, Name, By, Path, Timeout, Tool, Problem string
	}
	var v struct {
		Valid    bool `json:"valid"`
		Problems []struct {
			Code, Path string
		} `json:"problems"`
		Provided []provided `json:"provided"`
	}
	r := runAgent(t, nil, "", "validate", dir, "-o", "json")
	if err := json.Unmarshal([]byte(r.stdout), &v); err != nil {
		t.Fatalf("validate -o json = %q: %v", r.stdout, err)
	}
	if r.code != 1 || v.Valid {
		t.Errorf("validate exited %d, valid %v; want 1 and not valid", r.code, v.Valid)
	}
	var codes []string
	for _, p := range v.Problems {
		codes = append(codes, p.Code+" "+p.Path)
	}
	if want := []string{"HANDLER_NOT_PROVIDED nodes[1].handler", "ROUTER_NOT_PROVIDED edges[0].router"}; !slices.Equal(codes, want) {
		t.Errorf("problems = %q, want %q", codes, want)
	}
	if len(v.Provided) != 3 || v.Provided[0] != (provided{Kind: "handler", Name: "first", By: "exec", Path: "handlers/first.sh", Timeout: "30s"}) ||
		v.Provided[1].By != "missing" || v.Provided[2].Kind != "router" || v.Provided[2].By != "missing" {
		t.Errorf("provided = %+v", v.Provided)
	}

	write("handlers/second", "#!/bin/sh\necho '{}'\n", 0o755)
	write("handlers.json", `{"routers": {"pick": {"run": "bin/pick", "timeout": "2s"}}}`, 0o644)
	write("bin/pick", "#!/bin/sh\necho '\"off\"'\n", 0o755)
	r = runAgent(t, nil, "", "validate", dir)
	for _, want := range []string{
		`handler "first": executable handlers/first.sh (time limit 30s)`,
		`handler "second": executable handlers/second (time limit 30s)`,
		`router "pick": executable bin/pick (time limit 2s)`,
	} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("validate = %q, want it to say %q", r.stdout, want)
		}
	}
	if r.code != 0 {
		t.Errorf("validate exited %d, want 0: %s", r.code, r.stdout)
	}

	// agent check says the same beside its plan, as advice.
	var c struct {
		Provided []provided `json:"provided"`
	}
	r = runAgent(t, nil, "", "check", dir, "-o", "json")
	if err := json.Unmarshal([]byte(r.stdout), &c); err != nil {
		t.Fatalf("check -o json = %q: %v", r.stdout, err)
	}
	if len(c.Provided) != 3 || c.Provided[2] != (provided{Kind: "router", Name: "pick", By: "exec", Path: "bin/pick", Timeout: "2s"}) {
		t.Errorf("check's provided = %+v", c.Provided)
	}
}
