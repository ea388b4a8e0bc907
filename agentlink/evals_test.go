package agentlink_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/symphonix/symphonix/agentlink"
	boardv1 "github.com/symphonix/symphonix/api/symphonix/board/v1"
	"github.com/symphonix/symphonix/api/symphonix/board/v1/boardv1connect"
	"github.com/symphonix/symphonix/identity"
	"github.com/symphonix/symphonix/internal/boardtest"
)

func evalBuildOf(c byte) string { return "sha256:" + strings.Repeat(string(c), 64) }

// evalSuites is what the board lists of name's eval scores, as
// "<suite>: <build's first hex digit> <score>[*], ..." with * on the
// deployed build.
func evalSuites(t *testing.T, bt *boardtest.Board, name string) []string {
	t.Helper()
	c := boardv1connect.NewEvalServiceClient(bt.Client(bt.OperatorToken("ops", identity.RoleViewer)))
	res, err := c.ListEvalScores(t.Context(), &boardv1.ListEvalScoresRequest{Agent: name})
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, s := range res.GetSuites() {
		var bs []string
		for _, b := range s.GetBuilds() {
			w := fmt.Sprintf("%c %.2f", b.GetBuild()[7], b.GetScore())
			if b.GetDeployed() {
				w += "*"
			}
			bs = append(bs, w)
		}
		out = append(out, s.GetSuite()+": "+strings.Join(bs, ", "))
	}
	return out
}

// TestReportEvals: the scores reported before the link is up reach a real
// board once it is, where they are listed with the deployed build marked
// and flagged; a burst goes as the newest alone, no sooner than the
// spacing; after the board restarts the newest goes again.
func TestReportEvals(t *testing.T) {
	t.Parallel()
	bt := boardtest.Start(t, boardtest.Options{})
	deployed, older := evalBuildOf('b'), evalBuildOf('a')
	a := startAgent(t, bt, "desk", func(c *agentlink.Config) {
		c.Capabilities = []string{agentlink.CapabilityEvals}
		c.Identity.Build = deployed
	})
	day := time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC)
	first := []agentlink.EvalSuite{{Suite: "refund.eval.json", Builds: []agentlink.EvalScore{
		{Build: older, At: day.Add(-24 * time.Hour), Score: 0.81, Passed: true, Cases: 10, Completed: 10, Scored: 10, Times: 1},
		{Build: deployed, At: day, Score: 0.62, Passed: true, Cases: 10, Completed: 9, Scored: 8, Times: 2,
			Criteria: map[string]float64{"tone": 0.5}, Threshold: proto.Float64(0.5)},
	}}}
	if err := a.link.ReportEvals(first); err != nil {
		t.Fatal(err)
	}
	a.awaitState(t, true)
	want := "refund.eval.json: b 0.62*, a 0.81"
	boardtest.Eventually(t, 15*time.Second, "the report listed", func() bool {
		got := evalSuites(t, bt, "desk")
		return len(got) == 1 && got[0] == want
	})
	c := boardv1connect.NewEvalServiceClient(bt.Client(bt.OperatorToken("ops", identity.RoleViewer)))
	res, err := c.ListEvalScores(t.Context(), &boardv1.ListEvalScoresRequest{Agent: "desk"})
	if err != nil {
		t.Fatal(err)
	}
	s := res.GetSuites()[0]
	if b := s.GetBuilds()[0]; b.GetTimes() != 2 || b.GetCriteria()["tone"] != 0.5 || b.GetThreshold() != 0.5 || b.GetScored() != 8 {
		t.Errorf("the deployed build as the board holds it: %v", b)
	}
	if len(s.GetFlags()) != 1 || s.GetFlags()[0] != boardv1.EvalFlag_EVAL_FLAG_REGRESSED {
		t.Errorf("flags = %v, want regressed", s.GetFlags())
	}

	// A burst: only the newest goes, no sooner than the spacing.
	sent := time.Now()
	for _, suite := range []string{"x.eval.json", "y.eval.json", "z.eval.json"} {
		if err := a.link.ReportEvals([]agentlink.EvalSuite{{Suite: suite, Builds: []agentlink.EvalScore{
			{Build: deployed, At: day, Score: 0.7, Passed: true, Cases: 1, Completed: 1, Scored: 1, Times: 1}}}}); err != nil {
			t.Fatal(err)
		}
	}
	boardtest.Eventually(t, 30*time.Second, "the burst's newest listed", func() bool {
		return len(evalSuites(t, bt, "desk")) == 2
	})
	if waited := time.Since(sent); waited < agentlink.EvalSpacing/2 {
		t.Errorf("the burst's report went after %s: want the spacing kept", waited)
	}
	if got := evalSuites(t, bt, "desk"); got[1] != "z.eval.json: b 0.70*" {
		t.Errorf("after a burst the board lists %q: want the newest, z, alone", got)
	}
	if n := bt.Board.EvalReportsDropped(); n != 0 {
		t.Errorf("the board dropped %d reports: want none, the agent keeping the spacing", n)
	}

	// The board forgets and restarts: the agent's newest report goes again
	// after the welcome.
	if _, err := bt.Store.EvalScore.Delete().Exec(t.Context()); err != nil {
		t.Fatal(err)
	}
	bt.Restart()
	boardtest.Eventually(t, 30*time.Second, "the newest report again after the restart", func() bool {
		got := evalSuites(t, bt, "desk")
		return len(got) == 1 && got[0] == "z.eval.json: b 0.70*"
	})
}

// TestReportEvalsRefused: a link that does not announce evals refuses to
// report them, and so does one beyond the bounds.
func TestReportEvalsRefused(t *testing.T) {
	t.Parallel()
	bt := boardtest.Start(t, boardtest.Options{})
	plain := startAgent(t, bt, "plain", nil)
	if err := plain.link.ReportEvals(nil); err == nil || !strings.Contains(err.Error(), `does not announce "evals"`) {
		t.Errorf("ReportEvals without the capability: %v, want refused", err)
	}
	a := startAgent(t, bt, "desk", func(c *agentlink.Config) { c.Capabilities = []string{agentlink.CapabilityEvals} })
	score := agentlink.EvalScore{Build: evalBuildOf('a'), At: time.Now(), Score: 1, Passed: true, Times: 1}
	suites := make([]agentlink.EvalSuite, agentlink.MaxEvalSuites+1)
	builds := make([]agentlink.EvalScore, agentlink.MaxEvalBuilds+1)
	criteria := map[string]float64{}
	for i := range agentlink.MaxEvalCriteria + 1 {
		criteria[fmt.Sprint(i)] = 1
	}
	crit := score
	crit.Criteria = criteria
	for _, tc := range []struct {
		name   string
		suites []agentlink.EvalSuite
		says   string
	}{
		{"17 suites", suites, "17 suites: at most 16"},
		{"21 builds", []agentlink.EvalSuite{{Suite: "a.eval.json", Builds: builds}}, "21 builds: at most 20"},
		{"33 criteria", []agentlink.EvalSuite{{Suite: "a.eval.json", Builds: []agentlink.EvalScore{crit}}}, "33 criteria: at most 32"},
	} {
		if err := a.link.ReportEvals(tc.suites); err == nil || !strings.Contains(err.Error(), tc.says) {
			t.Errorf("%s: %v, want an error saying %q", tc.name, err, tc.says)
		}
	}
	if err := a.link.ReportEvals([]agentlink.EvalSuite{{Suite: "a.eval.json", Builds: []agentlink.EvalScore{score}}}); err != nil {
		t.Errorf("within the bounds: %v", err)
	}
}
