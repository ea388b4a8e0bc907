package e2e

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// agentRunJSON runs `agent run --json` on dir with input, no board and no
// model configured, and returns the final state.
func agentRunJSON(t *testing.T, dir string, input ...string) map[string]any {
	t.Helper()
	args := []string{"run", "--json"}
	for _, in := range input {
		args = append(args, "--input", in)
	}
	cmd := exec.Command(filepath.Join(bin, "agent"), append(args, dir)...)
	cmd.Env = append(os.Environ(), "MONITOR_URL=", "MONITOR_TOKEN=", "OPENAI_API_KEY=")
	var stdout, stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("agent run %s: %v\n%s", dir, err, stderr.String())
	}
	var state map[string]any
	if err := json.Unmarshal([]byte(stdout.String()), &state); err != nil {
		t.Fatalf("agent run --json %s: %v\n%s", dir, err, stdout.String())
	}
	return state
}

// TestResearchLoopRuns: examples/research-loop, the flow language's v0.1
// research loop, runs with `agent run` and no Go: its handlers and its
// router are shell scripts in the folder. The router's hand-written count
// ends the loop after three rounds; a question the first round answers
// takes one.
func TestResearchLoopRuns(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		question string
		attempts float64
		notes    string
	}{
		{"why is the sky blue", 3, "source 1 on why is the sky blue; source 2 on why is the sky blue; source 3 on why is the sky blue"},
		{"a well known fact", 1, "source 1 on a well known fact"},
	} {
		t.Run(tc.question, func(t *testing.T) {
			t.Parallel()
			state := agentRunJSON(t, example(t, "research-loop"), "question="+tc.question)
			if state["attempts"] != tc.attempts || state["notes"] != tc.notes {
				t.Errorf("state = %v, want %v attempts and notes %q", state, tc.attempts, tc.notes)
			}
			if a, _ := state["answer"].(string); !strings.HasPrefix(a, tc.question+": after ") {
				t.Errorf("answer = %q, want the generated answer", state["answer"])
			}
		})
	}
}

// TestSupportTriageRuns: examples/support-triage, the flow language's
// v0.1 classifier, runs with `agent run` and no Go: the router sends each
// request its own way, and the handler two nodes share runs twice on the
// billing path.
func TestSupportTriageRuns(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		request, category, answer string
	}{
		{"I was charged twice", "billing", "Your invoices are at /account/invoices; we will look at this charge today. A second person checked this."},
		{"The app shows an error at login", "technical", "Please update to the latest version and try again; if it still fails, send us the error."},
		{"Do you ship to Norway?", "general", "Thank you for writing; a person will answer within a day."},
	} {
		t.Run(tc.category, func(t *testing.T) {
			t.Parallel()
			state := agentRunJSON(t, example(t, "support-triage"), "request="+tc.request)
			if state["category"] != tc.category || state["answer"] != tc.answer {
				t.Errorf("state = %v, want category %s and answer %q", state, tc.category, tc.answer)
			}
		})
	}
}
