package main

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	boardv1 "github.com/symphonix/symphonix/api/symphonix/board/v1"
	"github.com/symphonix/symphonix/api/symphonix/board/v1/boardv1connect"
	"github.com/symphonix/symphonix/evals"
	"github.com/symphonix/symphonix/identity"
	"github.com/symphonix/symphonix/internal/boardtest"
)

// evalDesk is the refund desk (its orders server built) with its eval
// suite beside it, and one more case that mocks the refund alone, so its
// lookup reaches the real orders server.
func evalDesk(t *testing.T) string {
	t.Helper()
	dir := desk(t)
	b, err := os.ReadFile("../../examples/refund-desk/refund-desk.eval.json")
	if err != nil {
		t.Fatal(err)
	}
	var s map[string]any
	if err := json.Unmarshal(b, &s); err != nil {
		t.Fatal(err)
	}
	s["cases"] = append(s["cases"].([]any), map[string]any{
		"name":    "the lookup reaches the real orders server",
		"input":   map[string]any{"order_id": "A-1001", "request": "The kettle arrived broken."},
		"answers": []any{"yes"},
		"mock":    map[string]any{"tools": map[string]any{"refund": map[string]any{"refund_id": "R-7", "status": "refunded"}}},
		"expect":  map[string]any{"path": []any{"lookup", "decide", "pay", "answer"}},
	})
	if b, err = json.Marshal(s); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "refund-desk.eval.json"), b, 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

// fakeOpenAI is an OpenAI-compatible chat-completions server (the model
// is outside us): the judge gets scores of 0.9, the refund desk's decide
// node a refund, its answer node text.
func fakeOpenAI(t *testing.T) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			Messages []struct {
				Content string `json:"content"`
			} `json:"messages"`
		}
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil || len(req.Messages) == 0 {
			http.Error(w, "bad request", http.StatusBadRequest)
			return
		}
		prompt := req.Messages[0].Content
		text := "We are sorry about your order; it is being refunded."
		switch {
		case strings.HasPrefix(prompt, "You judge how well"):
			one := `{"score": 0.9, "reason": "It matches the order."}`
			text = `{"grounded": ` + one + `, "kind": ` + one + `, "resolves": ` + one + `}`
		case strings.Contains(prompt, "Decide whether to refund"):
			text = `{"action": "refund", "reason": "A delivered order arrived damaged."}`
		}
		json.NewEncoder(w).Encode(map[string]any{"choices": []any{map[string]any{"message": map[string]any{"content": text}}}})
	}))
	t.Cleanup(srv.Close)
	return srv
}

// evalBoard is a real board, with a token for the agent "refund-desk"
// and a way to read the scores it holds.
type evalBoard struct {
	bt    *boardtest.Board
	token string
}

func newEvalBoard(t *testing.T) (*evalBoard, string) {
	t.Helper()
	bt := boardtest.Start(t, boardtest.Options{})
	return &evalBoard{bt: bt, token: bt.AgentToken("refund-desk")}, bt.URL
}

// suites is what the board holds of the agent's eval scores.
func (b *evalBoard) suites(t *testing.T) []*boardv1.AgentEvalSuite {
	t.Helper()
	c := boardv1connect.NewEvalServiceClient(b.bt.Client(b.bt.OperatorToken("viewer", identity.RoleViewer)))
	res, err := c.ListEvalScores(t.Context(), &boardv1.ListEvalScoresRequest{Agent: "refund-desk"})
	if err != nil {
		t.Fatal(err)
	}
	return res.GetSuites()
}

// TestAgentEvalPublish: agent eval against an OpenAI-compatible model
// scores every case, a lookup not mocked reaches the real orders server,
// and --publish sends the board the run's numbers with the agent token
// from the environment.
func TestAgentEvalPublish(t *testing.T) {
	t.Parallel()
	dir := evalDesk(t)
	model := fakeOpenAI(t)
	board, url := newEvalBoard(t)
	env := map[string]string{"OPENAI_API_KEY": "sk-test-0123456789", "OPENAI_BASE_URL": model.URL, "SYMPHONIX_TOKEN": board.token}
	r := runAgent(t, env, "", "eval", dir, "--publish", url, "--output", "json")
	if r.code != 0 {
		t.Fatalf("agent eval --publish: exit %d, %v\n%s%s", r.code, r.err, r.stdout, r.stderr)
	}
	var out struct {
		Suites []struct {
			File      string        `json:"file"`
			Run       *evals.Result `json:"run"`
			Published *bool         `json:"published"`
		} `json:"suites"`
		OK bool `json:"ok"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &out); err != nil {
		t.Fatalf("stdout is not the JSON: %v\n%s", err, r.stdout)
	}
	if len(out.Suites) != 1 || out.Suites[0].Run == nil || out.Suites[0].Published == nil || !*out.Suites[0].Published || !out.OK {
		t.Fatalf("agent eval --output json = %s", r.stdout)
	}
	run := out.Suites[0].Run
	for _, c := range run.Evals {
		if c.Status != evals.StatusScored {
			t.Errorf("case %q: %s (%s), want scored", c.Name, c.Status, c.Error)
		}
	}
	real := run.Evals[3]
	if real.Metrics.ToolCalls != 2 || len(real.UnusedMocks) != 0 || !strings.Contains(real.Output["decision"], "refund") {
		t.Errorf("the case reaching the orders server: %+v", real)
	}
	suites := board.suites(t)
	if len(suites) != 1 || len(suites[0].GetBuilds()) != 1 {
		t.Fatalf("the board holds %v, want one suite with one build", suites)
	}
	got, s := suites[0], suites[0].GetBuilds()[0]
	if got.GetSuite() != "refund-desk.eval.json" || s.GetBuild() != run.Build || s.GetCases() != 4 || s.GetScored() != 4 || s.GetCompleted() != 4 ||
		!s.GetPassed() || s.GetScore() < 0.899 || s.GetScore() > 0.901 || s.GetThreshold() != 0.7 || s.GetCriteria()["grounded"] < 0.899 ||
		s.GetScoreTime().AsTime().IsZero() || s.GetSource() != boardv1.EvalSource_EVAL_SOURCE_PUBLISHED {
		t.Errorf("the board holds %v, want the run's numbers, published", got)
	}

	// A token of another kind is refused, and nothing is sent but a
	// publish the board took is said as not published.
	env["SYMPHONIX_TOKEN"] = board.bt.OperatorToken("ops", identity.RoleAdmin)
	if r := runAgent(t, env, "", "eval", dir, "--publish", url); r.code != 1 || !strings.Contains(r.stdout+r.stderr, "not published") {
		t.Errorf("agent eval --publish with an operator token: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
}

// TestAgentEvalCommand: a stand-in run is not published (exit 1); a
// preview needs no key (exit 0); a suite with problems exits 1 printing
// each; bad flags exit 2.
func TestAgentEvalCommand(t *testing.T) {
	t.Parallel()
	dir := evalDesk(t)
	board, url := newEvalBoard(t)
	r := runAgent(t, map[string]string{"MONITOR_TOKEN": board.token}, "", "eval", dir, "--publish", url)
	if sent := board.suites(t); r.code != 1 || !strings.Contains(r.stdout, "not published: judged by the stand-in") || len(sent) != 0 {
		t.Errorf("agent eval --publish with the stand-in: exit %d, the board holds %v\n%s", r.code, sent, r.stdout)
	}
	if !strings.Contains(r.stderr, "judge: stand-in (no JUDGE_API_KEY or OPENAI_API_KEY): its scores say nothing") {
		t.Errorf("stderr lacks the stand-in's line:\n%s", r.stderr)
	}
	for _, want := range []string{"=== refund-desk.eval.json\n", "4 scored, 0 agent errors, 0 judge errors, mean 0.50 (threshold 0.70): failed\n", "\nbuild sha256:", "\nrecorded "} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("agent eval output lacks %q:\n%s", want, r.stdout)
		}
	}
	r = runAgent(t, nil, "", "eval", "--preview", dir)
	if r.code != 0 || !strings.Contains(r.stdout, "4 cases: 4 runs of the flow, at least 4 judge calls;") {
		t.Errorf("agent eval --preview: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	bad := `{"cases": [{"name": "a", "mock": {"llm": {}}}], "criteria": [{"name": "kind"}]}`
	if err := os.WriteFile(filepath.Join(dir, "bad.eval.json"), []byte(bad), 0o644); err != nil {
		t.Fatal(err)
	}
	r = runAgent(t, nil, "", "eval", "--preview", dir)
	if r.code != 1 || !strings.Contains(r.stdout, "PROBLEM  cases[0].mock.llm: EVAL_MOCKED_MODEL:") || !strings.Contains(r.stdout, "PROBLEM  criteria[0].description: EVAL_CRITERION_DESCRIPTION:") {
		t.Errorf("agent eval --preview with a bad suite: exit %d\n%s", r.code, r.stdout)
	}
	for _, args := range [][]string{{"--timeout", "0s"}, {"--run", "("}, {"--publish", url}, {"--publish", "ftp://x"}, {"--token-file", "x"}} {
		if r := runAgent(t, nil, "", append([]string{"eval", dir}, args...)...); r.code != 2 {
			t.Errorf("agent eval %v: exit %d, %v; want 2", args, r.code, r.err)
		}
	}
}
