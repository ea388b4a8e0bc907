package e2e

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestHelloRuns: examples/hello needs no Go code of its own. `agent run`
// greets who it is handed with the stand-in model when no OPENAI_API_KEY
// is set, and with the model an OpenAI-compatible endpoint serves when one
// is, the prompt naming who.
func TestHelloRuns(t *testing.T) {
	t.Parallel()
	run := func(t *testing.T, env ...string) map[string]any {
		t.Helper()
		cmd := exec.Command(filepath.Join(bin, "agent"), "run", "--json", "--input", "who=Ann", example(t, "hello"))
		cmd.Env = append(append(os.Environ(), "MONITOR_URL=", "MONITOR_TOKEN=", "OPENAI_API_KEY=", "OPENAI_BASE_URL=", "OPENAI_MODEL="), env...)
		var stdout, stderr strings.Builder
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		if err := cmd.Run(); err != nil {
			t.Fatalf("agent run examples/hello: %v\n%s", err, stderr.String())
		}
		var state map[string]any
		if err := json.Unmarshal([]byte(stdout.String()), &state); err != nil {
			t.Fatalf("agent run --json examples/hello: %v\n%s", err, stdout.String())
		}
		return state
	}

	t.Run("stand-in", func(t *testing.T) {
		t.Parallel()
		state := run(t)
		if g, _ := state["greeting"].(string); g != "stand-in reply to: Write a one-line greeting for Ann." || state["who"] != "Ann" {
			t.Errorf("state = %v, want the stand-in's greeting for Ann", state)
		}
	})
	t.Run("model", func(t *testing.T) {
		t.Parallel()
		m := newModelServer(t)
		state := run(t, "OPENAI_API_KEY=test-key", "OPENAI_BASE_URL="+m.URL+"/v1", "OPENAI_MODEL=test-model")
		if state["greeting"] != "answer 1" {
			t.Errorf("state = %v, want the model's answer as the greeting", state)
		}
		if got := m.last(); !strings.Contains(got, "Ann") {
			t.Errorf("prompt = %q, want it to name Ann", got)
		}
	})
}
