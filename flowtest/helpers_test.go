package flowtest

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/symphonix/symphonix/flow"
)

// askFlow asks a person for a name, greets them by a handler executable
// of the folder, and has the model polish the greeting.
const askFlow = `{
  "version": "0.17",
  "start": "who",
  "state": {
    "topic": { "type": "string", "description": "What it is about." },
    "name": { "type": "string", "description": "Who is greeted." },
    "greeting": { "type": "string", "description": "The greeting the handler writes." },
    "polished": { "type": "string", "description": "The greeting, polished by the model." }
  },
  "nodes": [
    { "id": "who", "type": "ask", "ask": "Who is it about {{topic}}?", "output": "name" },
    { "id": "greet", "handler": "greet" },
    { "id": "polish", "type": "llm", "prompt": "Polish: {{greeting}}", "output": "polished" }
  ],
  "edges": [
    { "from": "who", "to": "greet" },
    { "from": "greet", "to": "polish" },
    { "from": "polish", "to": "END" }
  ]
}`

// hangFlow's only node is a handler executable that never ends in time.
const hangFlow = `{
  "version": "0.17",
  "start": "slow",
  "state": { "done": { "type": "string", "description": "Never written." } },
  "nodes": [ { "id": "slow", "handler": "slow" } ],
  "edges": [ { "from": "slow", "to": "END" } ]
}`

// folder writes a flow folder in a temp dir: flow.json and files, each
// path → content (a path under handlers/ is made executable).
func folder(t *testing.T, flowJSON string, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	write := func(rel, content string, mode os.FileMode) {
		p := filepath.Join(dir, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), mode); err != nil {
			t.Fatal(err)
		}
	}
	write("flow.json", flowJSON, 0o644)
	for rel, content := range files {
		mode := os.FileMode(0o644)
		if filepath.Dir(rel) == "handlers" {
			mode = 0o755
		}
		write(rel, content, mode)
	}
	return dir
}

// refundDesk is the example folder's flow, copied into a temp dir with the
// given test files, so a test can give it cases of its own.
func refundDesk(t *testing.T, files map[string]string) string {
	t.Helper()
	b, err := os.ReadFile("../examples/refund-desk/flow.json")
	if err != nil {
		t.Fatal(err)
	}
	return folder(t, string(b), files)
}

func mustFlow(t *testing.T, dir string) *flow.Flow {
	t.Helper()
	f, err := flow.LoadFile(filepath.Join(dir, "flow.json"))
	if err != nil {
		t.Fatal(err)
	}
	return f
}
