package evals

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/symphonix/symphonix/flowtest"
)

// TestRecordKeepsNewest: a suite keeps its newest KeepRuns records; the
// record is its owner's alone; unreadable records and runs without a
// build are left out of ScoresByBuild.
func TestRecordKeepsNewest(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "x.eval.json")
	dir := RunsDir(path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	for i := range KeepRuns {
		old := filepath.Join(dir, fmt.Sprintf("20200101T000000.%03dZ-00000000.json", i))
		body := `{"build": "", "judge": "m"}`
		if i == 0 {
			body = "not JSON"
		}
		if err := os.WriteFile(old, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	score := 0.75
	r := &Result{File: "x.eval.json", Build: "sha256:ab", Judge: "m", At: time.Date(2026, 12, 2, 15, 0, 0, 0, time.UTC), Total: 2, Completed: 2, Passed: true,
		Summary: Summary{Score: &score, Scored: 2, Criteria: map[string]float64{"kind": 0.75}}}
	rec, err := record(path, r)
	if err != nil {
		t.Fatal(err)
	}
	if st, err := os.Stat(rec); err != nil || st.Mode().Perm() != 0o600 {
		t.Errorf("the record %s: %v, %v; want mode 0600", rec, st.Mode(), err)
	}
	runs, err := PastRuns(path)
	if err != nil || len(runs) != KeepRuns || runs[0].Path != rec || !strings.HasPrefix(runs[0].Name, "20261202T150000.000Z-") {
		t.Fatalf("PastRuns: %d runs, newest %v, %v; want %d, the new record first", len(runs), runs[0], err, KeepRuns)
	}
	if _, err := os.Stat(filepath.Join(dir, "20200101T000000.000Z-00000000.json")); !os.IsNotExist(err) {
		t.Errorf("the oldest record is still there: %v", err)
	}
	bs, err := ScoresByBuild(path, 0)
	if err != nil || len(bs) != 1 || bs[0].Build != "sha256:ab" || bs[0].Score != 0.75 || bs[0].Times != 1 || bs[0].Threshold != nil {
		t.Errorf("ScoresByBuild = %+v, %v; want the one run with a build", bs, err)
	}
}

// TestRunSuiteInMemory: a suite given in memory runs as if it were a file
// of the folder, keeps nothing, and the judge's prompt holds no named
// secret (a value of the folder's .env the case's input repeats).
func TestRunSuiteInMemory(t *testing.T) {
	t.Parallel()
	const secret = "orders-secret-5f2c9a71"
	fm := newFakeModel(t, func(prompt string, structured bool) string {
		if isJudge(prompt) {
			one := `{"score": 1, "reason": "Fine."}`
			return `{"kind": ` + one + `}`
		}
		return refundDesk(prompt)
	})
	dir := exampleDir(t)
	if err := os.WriteFile(filepath.Join(dir, ".env"), []byte("ORDERS_KEY="+secret+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	getenv := func(k string) string {
		if k == "ORDERS_KEY" {
			return secret
		}
		return fakeEnv(fm.URL)(k)
	}
	s := &Suite{
		Criteria: []Criterion{{Name: "kind", Description: "The reply is polite."}},
		Cases: []Case{{
			Name:    "a",
			Input:   map[string]any{"order_id": "A-1001", "request": "My key is " + secret + ", the kettle broke."},
			Answers: []any{"no"},
			Mock:    Mock{Tools: map[string]flowtest.Replies{"orders.lookup_order": {Each: []any{map[string]any{"order_id": "A-1001", "amount": 1.0}}, Repeat: true}}},
		}},
	}
	r, err := RunSuite(t.Context(), dir, "memory.eval.json", s, Config{Getenv: getenv, Journal: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Evals) != 1 || r.Evals[0].Status != StatusScored || r.Recorded != "" {
		t.Fatalf("RunSuite = %+v", r)
	}
	if runs, _ := PastRuns(filepath.Join(dir, "memory.eval.json")); len(runs) != 0 {
		t.Errorf("a suite in memory left %d records", len(runs))
	}
	if fm.count("You judge how well") != 1 {
		t.Fatalf("the judge was asked %d times, want 1", fm.count("You judge how well"))
	}
	// The agent's own prompts hold the input as given; the judge's never
	// holds the secret.
	for _, p := range fm.prompts {
		if isJudge(p) && (strings.Contains(p, secret) || !strings.Contains(p, "REDACTED")) {
			t.Errorf("the judge's prompt holds the secret:\n%s", p)
		}
	}
}
