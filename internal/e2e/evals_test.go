package e2e

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/symphonix/symphonix/evals"
)

// agentEval runs the real agent eval with env added to a clean model
// environment, and returns its stdout, stderr and exit status.
func agentEval(t *testing.T, env []string, args ...string) (string, string, int) {
	t.Helper()
	cmd := exec.Command(filepath.Join(bin, "agent"), append([]string{"eval"}, args...)...)
	cmd.Env = append(os.Environ(), "OPENAI_API_KEY=", "OPENAI_BASE_URL=", "JUDGE_API_KEY=", "JUDGE_BASE_URL=", "JUDGE_MODEL=", "MONITOR_URL=")
	cmd.Env = append(cmd.Env, env...)
	var out, errb strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("agent eval %v: %v", args, err)
	}
	return out.String(), errb.String(), code
}

// TestAgentEvalPreviewExample: the refund desk's suite previews with the
// real binary, no key, exit 0, every case listed.
func TestAgentEvalPreviewExample(t *testing.T) {
	t.Parallel()
	out, stderr, code := agentEval(t, nil, "--preview", example(t, "refund-desk"))
	if code != 0 {
		t.Fatalf("agent eval --preview examples/refund-desk: exit %d\n%s%s", code, out, stderr)
	}
	for _, want := range []string{
		"=== refund-desk.eval.json\n",
		"case  a broken kettle is refunded once the approver says yes (cases[0], judge prompt ",
		"case  a refund the orders server refuses ends the run (cases[2], ",
		"3 cases: 3 runs of the flow, at least 3 judge calls;",
		"\nbuild sha256:",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("agent eval --preview output lacks %q:\n%s", want, out)
		}
	}
}

// TestAgentEvalExampleStandIn: with no key the agent and the judge are the
// stand-in: every case is scored, the record is kept, the run is not
// counted by ScoresByBuild, and the stand-in's 0.5 is below the suite's
// threshold (exit 1).
func TestAgentEvalExampleStandIn(t *testing.T) {
	t.Parallel()
	dir := example(t, "refund-desk")
	out, stderr, code := agentEval(t, nil, "--output", "json", dir)
	if code != 1 {
		t.Fatalf("agent eval with the stand-in: exit %d, want 1\n%s%s", code, out, stderr)
	}
	var got struct {
		Suites []struct {
			Run *evals.Result `json:"run"`
		} `json:"suites"`
		OK bool `json:"ok"`
	}
	if err := json.Unmarshal([]byte(out), &got); err != nil || len(got.Suites) != 1 || got.Suites[0].Run == nil {
		t.Fatalf("agent eval --output json: %v\n%s", err, out)
	}
	r := got.Suites[0].Run
	if r.Judge != evals.StandInJudge || r.Summary.Scored != 3 || r.Passed || got.OK {
		t.Errorf("run: judge %q, %d scored, passed %v", r.Judge, r.Summary.Scored, r.Passed)
	}
	path := filepath.Join(dir, "refund-desk.eval.json")
	runs, err := evals.PastRuns(path)
	if err != nil || len(runs) != 1 || runs[0].Path != r.Recorded {
		t.Errorf("PastRuns = %v, %v; want the run's record %s", runs, err, r.Recorded)
	}
	if bs, err := evals.ScoresByBuild(path, 0); err != nil || len(bs) != 0 {
		t.Errorf("ScoresByBuild = %v, %v; want none: a stand-in's run is left out", bs, err)
	}
}

// TestAgentEvalExampleFakeModel: against an OpenAI-compatible server
// answering the agent's prompts and the judge's structured request, every
// case is scored as the judge said, the run passes (exit 0), and two runs
// of the same flow are one build scored twice.
func TestAgentEvalExampleFakeModel(t *testing.T) {
	t.Parallel()
	model := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			Messages []struct {
				Content string `json:"content"`
			} `json:"messages"`
			ResponseFormat *struct {
				Type string `json:"type"`
			} `json:"response_format"`
		}
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil || len(req.Messages) == 0 || r.Header.Get("Authorization") != "Bearer sk-e2e-0123456789" {
			http.Error(w, `{"error": {"message": "bad request"}}`, http.StatusBadRequest)
			return
		}
		prompt := req.Messages[0].Content
		text := "We are sorry: your order is taken care of."
		switch {
		case strings.HasPrefix(prompt, "You judge how well") && req.ResponseFormat != nil:
			one := `{"score": 0.8, "reason": "The reply fits the order."}`
			text = `{"grounded": ` + one + `, "kind": ` + one + `, "resolves": ` + one + `}`
		case strings.Contains(prompt, "Decide whether to refund"):
			text = `{"action": "refund", "reason": "The order arrived damaged."}`
		}
		json.NewEncoder(w).Encode(map[string]any{
			"choices": []any{map[string]any{"message": map[string]any{"content": text}}},
			"usage":   map[string]any{"prompt_tokens": 100, "completion_tokens": 20, "total_tokens": 120},
		})
	}))
	t.Cleanup(model.Close)
	dir := example(t, "refund-desk")
	env := []string{"OPENAI_API_KEY=sk-e2e-0123456789", "OPENAI_BASE_URL=" + model.URL}
	for range 2 {
		out, stderr, code := agentEval(t, env, dir)
		if code != 0 {
			t.Fatalf("agent eval against the fake model: exit %d\n%s%s", code, out, stderr)
		}
		for _, want := range []string{
			"scored      0.80  a broken kettle is refunded once the approver says yes (",
			"scored      0.80  a refund the orders server refuses ends the run (",
			"        unused mocks: tools orders.refund\n",
			"\n3 scored, 0 agent errors, 0 judge errors, mean 0.80 (threshold 0.70): passed\n",
			"\nrecorded ",
		} {
			if !strings.Contains(out, want) {
				t.Errorf("agent eval output lacks %q:\n%s", want, out)
			}
		}
	}
	bs, err := evals.ScoresByBuild(filepath.Join(dir, "refund-desk.eval.json"), 0)
	if err != nil || len(bs) != 1 {
		t.Fatalf("ScoresByBuild = %v, %v; want one build", bs, err)
	}
	if b := bs[0]; b.Times != 2 || b.Score < 0.799 || b.Score > 0.801 || !b.Passed || b.Scored != 3 || b.Cases != 3 {
		t.Errorf("ScoresByBuild[0] = %+v, want 0.8 passed, scored twice", b)
	}
}

// TestAgentEvalBadSuites: a suite with unknown keys, a criterion without a
// description, and a dataset row without an input is refused whole, each
// problem printed with its path, before any model call (exit 1).
func TestAgentEvalBadSuites(t *testing.T) {
	t.Parallel()
	dir := example(t, "refund-desk")
	suite := `{"dataset": "rows.jsonl", "cases": [{"name": "a", "input": {"order_id": "A-1"}, "inputs": {}}], "criteria": [{"name": "kind"}]}`
	rows := `{"input": {"order_id": "A-2"}}` + "\n" + `{"name": "no input"}` + "\n"
	for name, body := range map[string]string{"refund-desk.eval.json": suite, "rows.jsonl": rows} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, args := range [][]string{{dir}, {"--preview", dir}} {
		out, stderr, code := agentEval(t, []string{"OPENAI_API_KEY=sk-unused-0123456789", "OPENAI_BASE_URL=http://127.0.0.1:1"}, args...)
		if code != 1 {
			t.Fatalf("agent eval %v of a bad suite: exit %d, want 1\n%s%s", args, code, out, stderr)
		}
		for _, want := range []string{
			"PROBLEM  cases[0].inputs: EVAL_UNKNOWN_KEY:",
			"PROBLEM  criteria[0].description: EVAL_CRITERION_DESCRIPTION:",
			"PROBLEM  rows.jsonl line 2: EVAL_DATASET: the row has no input",
		} {
			if !strings.Contains(out, want) {
				t.Errorf("agent eval %v output lacks %q:\n%s", args, want, out)
			}
		}
	}
	if _, err := os.Stat(filepath.Join(dir, ".symphonix", "evals")); !os.IsNotExist(err) {
		t.Errorf("a suite that cannot run left a record: %v", err)
	}
}

// TestAgentEvalPreview10000: a suite of 10,000 dataset rows previews with
// the real binary.
func TestAgentEvalPreview10000(t *testing.T) {
	t.Parallel()
	dir := example(t, "refund-desk")
	var b strings.Builder
	for i := range evals.MaxCases {
		fmt.Fprintf(&b, `{"input": {"order_id": "A-%d", "request": "The kettle arrived broken."}}`+"\n", i)
	}
	suite := `{"dataset": "rows.jsonl", "criteria": [{"name": "kind", "description": "The reply is polite."}]}`
	for name, body := range map[string]string{"refund-desk.eval.json": suite, "rows.jsonl": b.String()} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	out, stderr, code := agentEval(t, nil, "--preview", "--output", "json", dir)
	if code != 0 {
		t.Fatalf("agent eval --preview of 10,000 rows: exit %d\n%s", code, stderr)
	}
	var got struct {
		Suites []struct {
			Preview *evals.PreviewResult `json:"preview"`
		} `json:"suites"`
	}
	if err := json.Unmarshal([]byte(out), &got); err != nil || len(got.Suites) != 1 || got.Suites[0].Preview == nil {
		t.Fatalf("agent eval --preview --output json: %v", err)
	}
	p := got.Suites[0].Preview
	if p.Total != evals.MaxCases || p.Calls.Runs != evals.MaxCases || len(p.Evals) != evals.MaxCases || p.Evals[9999].Name != "rows.jsonl line 10000" {
		t.Errorf("preview: total %d, runs %d, %d cases", p.Total, p.Calls.Runs, len(p.Evals))
	}
}
