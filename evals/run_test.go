package evals

import (
	"math"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestRunExampleStandIn: the refund desk's suite runs with no key at all —
// the agent and the judge are the stand-in — every case ends as expected
// by its checks, the record is written, and ScoresByBuild leaves the
// stand-in's run out.
func TestRunExampleStandIn(t *testing.T) {
	t.Parallel()
	dir := exampleDir(t)
	path := filepath.Join(dir, "refund-desk.eval.json")
	r, err := Run(t.Context(), dir, path, Config{Journal: true})
	if err != nil {
		t.Fatal(err)
	}
	if r.Judge != StandInJudge || r.Total != 3 || len(r.Evals) != 3 {
		t.Fatalf("Run = judge %q, total %d, %d evals; want stand-in, 3, 3", r.Judge, r.Total, len(r.Evals))
	}
	for _, c := range r.Evals {
		if c.Status != StatusScored || c.Score == nil {
			t.Errorf("case %q: status %s (%s), want scored", c.Name, c.Status, c.Error)
		}
		for _, ch := range c.Checks {
			if !ch.Passed {
				t.Errorf("case %q: check %s failed: %s", c.Name, ch.Check, ch.Detail)
			}
		}
	}
	if r.Recorded == "" {
		t.Fatalf("Run recorded nothing: %v", r.Warnings)
	}
	runs, err := PastRuns(path)
	if err != nil || len(runs) != 1 || runs[0].Path != r.Recorded {
		t.Fatalf("PastRuns = %v, %v; want the one record %s", runs, err, r.Recorded)
	}
	bs, err := ScoresByBuild(path, 0)
	if err != nil || len(bs) != 0 {
		t.Fatalf("ScoresByBuild = %v, %v; want nothing: the stand-in's scores say nothing", bs, err)
	}
}

// TestRunExampleFakeModel: the refund desk's suite against an
// OpenAI-compatible server answering both the agent and the judge: every
// case scored as the judge said, tokens kept apart, the record written,
// and two runs of one build are one build scored twice.
func TestRunExampleFakeModel(t *testing.T) {
	t.Parallel()
	fm := newFakeModel(t, func(prompt string, structured bool) string {
		if isJudge(prompt) {
			return scores("0.9")
		}
		return refundDesk(prompt)
	})
	dir := exampleDir(t)
	path := filepath.Join(dir, "refund-desk.eval.json")
	cfg := Config{Journal: true, Getenv: fakeEnv(fm.URL)}
	r, err := Run(t.Context(), dir, path, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if r.Judge != "gpt-4o-mini" {
		t.Errorf("Judge = %q, want the suite's judge.model", r.Judge)
	}
	for _, c := range r.Evals {
		if c.Status != StatusScored || c.Score == nil || math.Abs(*c.Score-0.9) > 1e-9 {
			t.Errorf("case %q: %s %v (%s), want scored 0.9", c.Name, c.Status, c.Score, c.Error)
		}
		if c.Usage.Judge.TotalTokens != 15 {
			t.Errorf("case %q: judge tokens %d, want 15", c.Name, c.Usage.Judge.TotalTokens)
		}
	}
	if got := r.Summary.Usage.Agent.TotalTokens; got != 5*15 {
		t.Errorf("agent tokens %d, want 75 (5 model calls of 15)", got)
	}
	if !r.Passed || r.Summary.Score == nil || math.Abs(*r.Summary.Score-0.9) > 1e-9 {
		t.Errorf("Run passed %v, score %v; want passed at 0.9", r.Passed, r.Summary.Score)
	}
	if fm.count("test-key-0123456789") != 0 {
		t.Error("a prompt held the key")
	}
	if _, err := Run(t.Context(), dir, path, cfg); err != nil {
		t.Fatal(err)
	}
	bs, err := ScoresByBuild(path, 0)
	if err != nil || len(bs) != 1 {
		t.Fatalf("ScoresByBuild = %v, %v; want one build", bs, err)
	}
	if b := bs[0]; b.Build != r.Build || b.Times != 2 || b.Cases != 3 || b.Scored != 3 || !b.Passed || b.Threshold == nil || *b.Threshold != 0.7 {
		t.Errorf("ScoresByBuild[0] = %+v, want build %s scored twice, 3 cases, threshold 0.7", b, r.Build)
	}
	if !strings.HasPrefix(r.Build, "sha256:") {
		t.Errorf("Build = %q", r.Build)
	}
}

// TestJudgeRetriedThenJudgeError: a judge that answers prose, then scores
// out of range, is asked judge.attempts times and the case is a
// judge_error with the reason — never a score of 0.
func TestJudgeRetriedThenJudgeError(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	n := 0
	fm := newFakeModel(t, func(prompt string, structured bool) string {
		if !isJudge(prompt) {
			return refundDesk(prompt)
		}
		mu.Lock()
		defer mu.Unlock()
		n++
		if n%2 == 1 {
			return "The answer looks good to me, I'd say 9 out of 10."
		}
		return scores("7")
	})
	dir := exampleDir(t)
	r, err := Run(t.Context(), dir, filepath.Join(dir, "refund-desk.eval.json"), Config{Getenv: fakeEnv(fm.URL), Run: regexp.MustCompile("broken kettle")})
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Evals) != 1 {
		t.Fatalf("%d cases ran, want 1", len(r.Evals))
	}
	c := r.Evals[0]
	if c.Status != StatusJudgeError || c.Score != nil || c.Criteria != nil || !strings.Contains(c.Error, "3 attempts") {
		t.Errorf("case = %s, score %v, criteria %v, error %q; want judge_error after 3 attempts, no score", c.Status, c.Score, c.Criteria, c.Error)
	}
	if got := fm.count("You judge how well"); got != 3 {
		t.Errorf("the judge was asked %d times, want 3 (judge.attempts)", got)
	}
	if r.Passed || r.Summary.Score != nil || r.Summary.JudgeErrors != 1 {
		t.Errorf("summary %+v, passed %v; want one judge error, no score, not passed", r.Summary, r.Passed)
	}
}

// TestCaseTimeout: a case whose model hangs ends at its time limit as an
// agent_error, and the other cases' results are kept.
func TestCaseTimeout(t *testing.T) {
	t.Parallel()
	fm := newFakeModel(t, func(prompt string, structured bool) string {
		if isJudge(prompt) {
			return scores("1")
		}
		if strings.Contains(prompt, "A-1003") {
			return "" // hangs
		}
		return refundDesk(prompt)
	})
	dir := exampleDir(t)
	r, err := Run(t.Context(), dir, filepath.Join(dir, "refund-desk.eval.json"), Config{Getenv: fakeEnv(fm.URL), Timeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{StatusScored, StatusAgentError, StatusScored}
	for i, c := range r.Evals {
		if c.Status != want[i] {
			t.Errorf("case %d %q: %s (%s), want %s", i, c.Name, c.Status, c.Error, want[i])
		}
	}
	if c := r.Evals[1]; !strings.Contains(c.Error, "did not end within its time limit, 1s") {
		t.Errorf("the hanging case says %q", c.Error)
	}
	if r.Passed || r.Summary.AgentErrors != 1 || r.Summary.Scored != 2 {
		t.Errorf("summary %+v; want 2 scored, 1 agent error, not passed", r.Summary)
	}
}
