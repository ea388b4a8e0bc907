package node_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	boardv1 "github.com/symphonix/symphonix/api/symphonix/board/v1"
	"github.com/symphonix/symphonix/api/symphonix/board/v1/boardv1connect"
	"github.com/symphonix/symphonix/evals"
	"github.com/symphonix/symphonix/identity"
	"github.com/symphonix/symphonix/internal/boardtest"
	"github.com/symphonix/symphonix/node"
)

// greeterSuite is an eval suite of the greeter flow: two cases, one
// criterion, a threshold.
const greeterSuite = `{
  "criteria": [{"name": "warm", "description": "The greeting is warm and names who it greets."}],
  "thresholds": {"score": 0.7},
  "cases": [
    {"name": "greets Ada", "input": {"who": "Ada"}},
    {"name": "greets Bo", "input": {"who": "Bo"}}
  ]
}
`

// judgeServer is an OpenAI-compatible chat-completions server — the model
// outside us — answering the greeter's prompts with a greeting, and the
// judge's with the score *score holds.
func judgeServer(t *testing.T, score *atomic.Value) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			Messages []struct {
				Content any `json:"content"`
			} `json:"messages"`
			ResponseFormat *struct {
				Type string `json:"type"`
			} `json:"response_format"`
		}
		if r.URL.Path != "/v1/chat/completions" || json.NewDecoder(r.Body).Decode(&req) != nil {
			http.Error(w, `{"error":{"message":"not a chat completion"}}`, http.StatusBadRequest)
			return
		}
		text := "Hello there, friend!"
		if req.ResponseFormat != nil && req.ResponseFormat.Type == "json_schema" {
			text = `{"warm":{"score":` + score.Load().(string) + `,"reason":"It greets by name."}}`
		}
		json.NewEncoder(w).Encode(map[string]any{
			"choices": []any{map[string]any{"message": map[string]any{"role": "assistant", "content": text}}},
			"usage":   map[string]any{"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15},
		})
	}))
	t.Cleanup(srv.Close)
	return srv
}

// TestEvalsOnTheBoard: a served agent whose folder has an eval suite
// announces "evals" and reports what the suite's journal says of its
// builds' scores; the board flags the deployed build when it scored below
// an earlier build; a new `agent eval` run kept beside the served agent
// reaches the board without a restart.
func TestEvalsOnTheBoard(t *testing.T) {
	t.Parallel()
	dir := greeterDir(t)
	suite := filepath.Join(dir, "greeter.eval.json")
	if err := os.WriteFile(suite, []byte(greeterSuite), 0o644); err != nil {
		t.Fatal(err)
	}
	var score atomic.Value
	score.Store("0.9")
	srv := judgeServer(t, &score)
	getenv := func(k string) string {
		return map[string]string{"OPENAI_API_KEY": "k", "OPENAI_BASE_URL": srv.URL + "/v1", "OPENAI_MODEL": "fake"}[k]
	}
	scoreRun := func(at time.Time) *evals.Result {
		t.Helper()
		res, err := evals.Run(t.Context(), dir, suite, evals.Config{Getenv: getenv, Journal: true, Now: func() time.Time { return at }})
		if err != nil {
			t.Fatal(err)
		}
		if res.Recorded == "" {
			t.Fatalf("the run was not recorded: %+v", res.Warnings)
		}
		return res
	}

	// An earlier build of the flow scored 0.9; the one deployed now 0.5.
	earlier := strings.Replace(greeterFlow, "Greet {{who}}.", "Greet {{who}} warmly.", 1)
	deployed, err := os.ReadFile(filepath.Join(dir, "flow.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "flow.json"), []byte(earlier), 0o644); err != nil {
		t.Fatal(err)
	}
	old := scoreRun(time.Now().Add(-2 * time.Hour))
	if err := os.WriteFile(filepath.Join(dir, "flow.json"), deployed, 0o644); err != nil {
		t.Fatal(err)
	}
	score.Store("0.5")
	now := scoreRun(time.Now().Add(-time.Hour))
	if old.Build == now.Build {
		t.Fatalf("two flows scored as one build %s", now.Build)
	}

	bt := boardtest.Start(t, boardtest.Options{})
	list := func() *boardv1.AgentEvalSuite {
		res, err := boardv1connect.NewEvalServiceClient(bt.Client(bt.OperatorToken("viewer", identity.RoleViewer))).
			ListEvalScores(t.Context(), &boardv1.ListEvalScoresRequest{Agent: "greeter"})
		if err != nil {
			t.Fatal(err)
		}
		if len(res.GetSuites()) != 1 {
			return nil
		}
		return res.GetSuites()[0]
	}
	startServe(t, node.Config{Dir: dir, BoardURL: bt.URL, Token: bt.AgentToken("greeter"), NoHealthChecks: true})
	var s *boardv1.AgentEvalSuite
	boardtest.Eventually(t, time.Minute, "the agent's eval scores on the board", func() bool {
		s = list()
		return len(s.GetBuilds()) == 2
	})
	if s.GetSuite() != "greeter.eval.json" || s.GetDeployedBuild() != now.Build {
		t.Errorf("suite %q, deployed build %q; want greeter.eval.json, %s", s.GetSuite(), s.GetDeployedBuild(), now.Build)
	}
	if b := s.GetBuilds()[0]; b.GetBuild() != now.Build || !b.GetDeployed() || b.GetScore() != 0.5 || b.GetPassed() ||
		b.GetSource() != boardv1.EvalSource_EVAL_SOURCE_REPORTED || b.GetCriteria()["warm"] != 0.5 || b.GetThreshold() != 0.7 {
		t.Errorf("the deployed build's score: %v", b)
	}
	if b := s.GetBuilds()[1]; b.GetBuild() != old.Build || b.GetDeployed() || b.GetScore() != 0.9 || !b.GetPassed() {
		t.Errorf("the earlier build's score: %v", b)
	}
	flags := map[boardv1.EvalFlag]bool{}
	for _, f := range s.GetFlags() {
		flags[f] = true
	}
	if !flags[boardv1.EvalFlag_EVAL_FLAG_REGRESSED] || !flags[boardv1.EvalFlag_EVAL_FLAG_BELOW_THRESHOLD] || len(flags) != 2 {
		t.Errorf("flags %v (%q), want regressed and below threshold", s.GetFlags(), s.GetReasons())
	}

	// The deployed build scored again, better: the served agent reports it
	// on its own.
	score.Store("0.95")
	scoreRun(time.Now())
	boardtest.Eventually(t, time.Minute, "the new score on the board", func() bool {
		s = list()
		return len(s.GetBuilds()) > 0 && s.GetBuilds()[0].GetScore() == 0.95
	})
	if b := s.GetBuilds()[0]; b.GetTimes() != 2 || !b.GetDeployed() || !b.GetPassed() || len(s.GetFlags()) != 0 {
		t.Errorf("after the new run: %v, flags %v %q", b, s.GetFlags(), s.GetReasons())
	}
}
