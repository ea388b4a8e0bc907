package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestAgentTestCommand: a folder's test file with problems exits 1 and
// prints each with its path; a folder with no test file exits 1 saying
// so; --timeout 0 is a usage error, exit 2.
func TestAgentTestCommand(t *testing.T) {
	t.Parallel()
	dir := desk(t)
	bad := `{ "cases": [ { "name": "a", "mock": { "llm": { "lookup": "x" } } }, { "name": "a", "expect": { "path": ["nowhere"] } } ] }`
	if err := os.WriteFile(filepath.Join(dir, "bad.test.json"), []byte(bad), 0o644); err != nil {
		t.Fatal(err)
	}
	r := runAgent(t, nil, "", "test", dir)
	if r.code != 1 {
		t.Fatalf("agent test with a bad test file: exit %d, want 1\n%s%s", r.code, r.stdout, r.stderr)
	}
	for _, want := range []string{
		"=== bad.test.json\n",
		"PROBLEM  cases[0].mock.llm.lookup: TEST_NOT_LLM_NODE:",
		"PROBLEM  cases[1].name: TEST_DUPLICATE_NAME:",
		"PROBLEM  cases[1].expect.path[0]: TEST_UNKNOWN_NODE:",
		"\n0 passed, 0 failed, 1 file with problems\n",
	} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("agent test output lacks %q:\n%s", want, r.stdout)
		}
	}

	empty := t.TempDir()
	flowJSON, err := os.ReadFile(filepath.Join(dir, "flow.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(empty, "flow.json"), flowJSON, 0o644); err != nil {
		t.Fatal(err)
	}
	if r := runAgent(t, nil, "", "test", empty); r.code != 1 || r.err == nil || !strings.Contains(r.err.Error(), "no *.test.json beside flow.json") {
		t.Errorf("agent test with no test file: exit %d, %v; want 1 saying so", r.code, r.err)
	}
	if r := runAgent(t, nil, "", "test", "--timeout", "0s", dir); r.code != 2 || r.err == nil || !strings.Contains(r.err.Error(), "--timeout") {
		t.Errorf("agent test --timeout 0s: exit %d, %v; want 2 naming --timeout", r.code, r.err)
	}
}
