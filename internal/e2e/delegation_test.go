package e2e

import (
	"strings"
	"testing"
)

// TestTeamRuns: examples/team, one agent split into three, runs with
// `agent run` and no Go: the desk hands the question to the researcher,
// whose handler is a shell script in its own folder, then the question and
// the researcher's notes to the writer, and only what each declares comes
// back.
func TestTeamRuns(t *testing.T) {
	t.Parallel()
	state := agentRunJSON(t, example(t, "team"), "question=green tea")
	findings, _ := state["findings"].(map[string]any)
	if len(findings) != 1 || findings["notes"] != "The first source says green tea matters. The second source agrees." {
		t.Errorf("findings = %v, want only the researcher's declared notes, from its handler", state["findings"])
	}
	reply, _ := state["reply"].(map[string]any)
	text, _ := reply["text"].(string)
	if len(reply) != 1 || !strings.HasPrefix(text, "stand-in reply to: Write at most three sentences about green tea") {
		t.Errorf("reply = %v, want only the writer's text, its model asked about the question", state["reply"])
	}
	if a, _ := state["answer"].(string); !strings.Contains(a, "Say this to the person: ") {
		t.Errorf("answer = %q, want the desk's own answer", state["answer"])
	}
}
