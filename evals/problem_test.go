package evals

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// writeSuite writes a suite (and files beside it) into a copy of the
// refund desk and returns the folder and the suite's path.
func writeSuite(t *testing.T, suite string, files map[string]string) (string, string) {
	t.Helper()
	dir := exampleDir(t)
	path := filepath.Join(dir, "x.eval.json")
	if err := os.WriteFile(path, []byte(suite), 0o644); err != nil {
		t.Fatal(err)
	}
	for name, body := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir, path
}

const criteria = `"criteria": [{"name": "kind", "description": "polite"}]`

// TestProblems: every problem of a suite is reported at once, each with
// its code and path, by Preview and Run alike, before any model is built.
func TestProblems(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		suite string
		files map[string]string
		want  []string // "path: CODE"
	}{
		{"unknown keys", `{"cases": [{"name": "a", "input": {"order_id": "A"}, "mock": {"tools": {}, "llm": {"decide": "x"}, "read": 1}, "expected": 1}], "criterion": 1, ` + criteria + `}`, nil,
			[]string{"criterion: EVAL_UNKNOWN_KEY", "cases[0].expected: EVAL_UNKNOWN_KEY", "cases[0].mock.llm: EVAL_MOCKED_MODEL", "cases[0].mock.read: EVAL_UNKNOWN_KEY"}},
		{"criterion without a description", `{"cases": [{"name": "a"}], "criteria": [{"name": "kind"}, {"name": "Kind", "description": "x", "weight": 0}]}`, nil,
			[]string{"criteria[0].description: EVAL_CRITERION_DESCRIPTION", "criteria[1].name: EVAL_CRITERION_NAME", "criteria[1].weight: EVAL_WRONG_TYPE"}},
		{"no cases, no criteria", `{}`, nil, []string{"cases: EVAL_NO_CASES", "criteria: EVAL_NO_CRITERIA"}},
		{"channels, tools and names", `{"output": ["replies"], "cases": [{"name": "a", "input": {"order": 1, "orderid": 2}, "mock": {"tools": {"orders.delete": {}}}}, {"name": "a", "answers": [""]}], ` + criteria + `}`, nil,
			[]string{"cases[0].input.orderid: EVAL_UNKNOWN_CHANNEL", "cases[0].mock.tools.orders.delete: EVAL_UNKNOWN_TOOL", "cases[1].name: EVAL_DUPLICATE_NAME", "cases[1].answers[0]: EVAL_EMPTY_ANSWER", "output[0]: EVAL_UNKNOWN_CHANNEL"}},
		{"thresholds", `{"cases": [{"name": "a"}], ` + criteria + `, "thresholds": {"score": 1.5, "criteria": {"grounded": 0.5}}}`, nil,
			[]string{"thresholds.score: EVAL_THRESHOLD", "thresholds.criteria.grounded: EVAL_THRESHOLD"}},
		{"judge", `{"cases": [{"name": "a"}], ` + criteria + `, "judge": {"attempts": 0, "temperature": 1}}`, nil,
			[]string{"judge.temperature: EVAL_UNKNOWN_KEY", "judge.attempts: EVAL_WRONG_TYPE"}},
		{"a dataset row without input", `{"dataset": "rows.jsonl", ` + criteria + `}`,
			map[string]string{"rows.jsonl": `{"input": {"order_id": "A-1"}}` + "\n\n" + `{"name": "second", "reference": "x"}` + "\n" + `{"input": {"orderid": 1}, "mock": {"llm": {}}}` + "\n"},
			[]string{"rows.jsonl line 3: EVAL_DATASET", "rows.jsonl line 4.input.orderid: EVAL_UNKNOWN_CHANNEL", "rows.jsonl line 4.mock.llm: EVAL_MOCKED_MODEL"}},
		{"a dataset that is not there", `{"dataset": "none.jsonl", ` + criteria + `}`, nil, []string{"dataset: EVAL_DATASET"}},
		{"a dataset outside the folder", `{"dataset": "../rows.jsonl", ` + criteria + `}`, nil, []string{"dataset: EVAL_DATASET"}},
		{"not JSON", `{"cases": [`, nil, []string{": EVAL_INVALID_JSON"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			dir, path := writeSuite(t, tt.suite, tt.files)
			for what, call := range map[string]func() error{
				"Preview": func() error { _, err := Preview(t.Context(), dir, path, nil); return err },
				// No environment at all: a run that got past prepare
				// would use the stand-in and return no error.
				"Run": func() error { _, err := Run(t.Context(), dir, path, Config{}); return err },
			} {
				err := call()
				var fe *EvalFileError
				if !errors.As(err, &fe) {
					t.Fatalf("%s: %v, want an *EvalFileError", what, err)
				}
				var got []string
				for _, p := range fe.Problems {
					got = append(got, p.Path+": "+p.Code)
					if p.Message == "" {
						t.Errorf("%s: %s has no message", what, p)
					}
				}
				if diff := cmp.Diff(tt.want, got); diff != "" {
					t.Errorf("%s problems (-want +got):\n%s\n%v", what, diff, fe)
				}
			}
		})
	}
}

// TestMockedModelMessage: mock.llm is refused with words pointing at agent
// test.
func TestMockedModelMessage(t *testing.T) {
	t.Parallel()
	ps := Problems([]byte(`{"cases": [{"name": "a", "mock": {"llm": {"decide": "x"}}}], `+criteria+`}`), nil)
	if len(ps) != 1 || !strings.Contains(ps[0].Message, "*.test.json") || !strings.Contains(ps[0].Message, "for real") {
		t.Fatalf("Problems = %v", ps)
	}
}

// TestPreviewDataset: a dataset's rows are cases named by their line, the
// judge's prompt is counted, and no model is asked (no environment is
// given at all).
func TestPreviewDataset(t *testing.T) {
	t.Parallel()
	dir, path := writeSuite(t, `{"dataset": "rows.jsonl", "cases": [{"name": "own", "input": {"order_id": "A"}}], `+criteria+`, "thresholds": {"score": 0.5}}`,
		map[string]string{"rows.jsonl": `{"input": {"order_id": "A-1"}}` + "\n" + `{"name": "named", "input": {"order_id": "A-2"}, "reference": "r"}` + "\n"})
	p, err := Preview(t.Context(), dir, path, nil)
	if err != nil {
		t.Fatal(err)
	}
	var names, sources []string
	chars := 0
	for _, c := range p.Evals {
		names, sources = append(names, c.Name), append(sources, c.Source)
		chars += c.JudgeChars
	}
	if diff := cmp.Diff([]string{"own", "rows.jsonl line 1", "named"}, names); diff != "" {
		t.Errorf("names (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"cases[0]", "rows.jsonl line 1", "rows.jsonl line 2"}, sources); diff != "" {
		t.Errorf("sources (-want +got):\n%s", diff)
	}
	if p.Total != 3 || p.Calls.Runs != 3 || p.Calls.Judge != 3 || p.Judge.Chars != chars || p.Judge.EstimatedInputTokens != chars/4 || chars == 0 {
		t.Errorf("Preview = %+v", p)
	}
	if !strings.HasPrefix(p.Build, "sha256:") || p.Thresholds == nil {
		t.Errorf("Preview build %q, thresholds %v", p.Build, p.Thresholds)
	}
}

// dataset writes n rows.
func dataset(n int) string {
	var b strings.Builder
	for i := range n {
		fmt.Fprintf(&b, `{"input": {"order_id": "A-%d", "request": "The kettle arrived broken."}, "reference": "The order is refunded."}`+"\n", i)
	}
	return b.String()
}

// TestPreviewTooManyCases: 10,000 cases preview; one more is refused.
func TestPreviewTooManyCases(t *testing.T) {
	t.Parallel()
	suite := `{"dataset": "rows.jsonl", ` + criteria + `}`
	dir, path := writeSuite(t, suite, map[string]string{"rows.jsonl": dataset(MaxCases)})
	p, err := Preview(t.Context(), dir, path, nil)
	if err != nil || p.Total != MaxCases {
		t.Fatalf("Preview of %d rows: %v, %v", MaxCases, p, err)
	}
	dir, path = writeSuite(t, suite, map[string]string{"rows.jsonl": dataset(MaxCases + 1)})
	_, err = Preview(t.Context(), dir, path, nil)
	var fe *EvalFileError
	if !errors.As(err, &fe) || fe.Problems[0].Code != CodeTooLarge {
		t.Fatalf("Preview of %d rows: %v, want EVAL_TOO_LARGE", MaxCases+1, err)
	}
}

// BenchmarkPreview10000: a suite of 10,000 dataset rows previewed.
func BenchmarkPreview10000(b *testing.B) {
	dir := b.TempDir()
	src := filepath.Join("..", "examples", "refund-desk", "flow.json")
	fb, err := os.ReadFile(src)
	if err != nil {
		b.Fatal(err)
	}
	path := filepath.Join(dir, "x.eval.json")
	for name, body := range map[string]string{"flow.json": string(fb), "x.eval.json": `{"dataset": "rows.jsonl", ` + criteria + `}`, "rows.jsonl": dataset(MaxCases)} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportAllocs()
	for b.Loop() {
		p, err := Preview(b.Context(), dir, path, nil)
		if err != nil || p.Total != MaxCases {
			b.Fatal(p, err)
		}
	}
}
