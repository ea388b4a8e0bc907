package flowtest

import (
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestDescribeFailure(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name   string
		expect Expect
		got    Outcome
		want   []string
	}{
		{"as expected", Expect{State: map[string]any{"n": 1.0, "o": map[string]any{"a": []any{"x"}}}, Path: []string{"a", "b"}},
			Outcome{State: map[string]any{"n": 1, "o": map[string]any{"a": []string{"x"}}, "other": "not compared"}, Path: []string{"a", "b"}}, nil},
		{"state", Expect{State: map[string]any{"reply": "hello", "gone": true}},
			Outcome{State: map[string]any{"reply": "goodbye"}}, []string{
				"state.gone: expected true, got nothing (the run never wrote it)",
				`state.reply: expected "hello", got "goodbye"`,
			}},
		{"path differs", Expect{Path: []string{"a", "b", "c"}}, Outcome{Path: []string{"a", "x", "c"}},
			[]string{"path: expected a → b → c, got a → x → c: step 2 went to x where b was expected"}},
		{"path short", Expect{Path: []string{"a", "b"}}, Outcome{Path: []string{"a"}},
			[]string{"path: expected a → b, got a: the run stopped after 1 nodes where b was expected next"}},
		{"path long", Expect{Path: []string{"a"}}, Outcome{Path: []string{"a", "b"}},
			[]string{"path: expected a, got a → b: the run went on to b after the expected path ended"}},
		{"path empty", Expect{Path: []string{}}, Outcome{Path: []string{"a"}},
			[]string{"path: expected (no nodes), got a: the run went on to a after the expected path ended"}},
		{"failed", Expect{}, Outcome{Err: errors.New("boom")}, []string{"the run failed: boom"}},
		{"expected to fail", Expect{Error: "boom"}, Outcome{}, []string{`expected the run to fail with an error containing "boom"; it finished`}},
		{"failed otherwise", Expect{Error: "boom"}, Outcome{Err: errors.New("bang")}, []string{`expected the run to fail with an error containing "boom"; it failed with: bang`}},
		{"failed as expected", Expect{Error: "boom"}, Outcome{Err: errors.New("a boom")}, nil},
		{"problems first", Expect{}, Outcome{Problems: []string{"p"}}, []string{"p"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if diff := cmp.Diff(tc.want, DescribeFailure(tc.expect, tc.got)); diff != "" {
				t.Errorf("DescribeFailure (-want +got):\n%s", diff)
			}
		})
	}
}

func TestUnusedMocks(t *testing.T) {
	t.Parallel()
	m := Mock{
		LLM:   map[string]Replies{"a": {}, "b": {}},
		Tools: map[string]Replies{"s.t": {}, "u": {}},
	}
	got := UnusedMocks(m, Calls{LLM: map[string]int{"a": 1}, Tools: map[string]int{"u": 2}})
	if diff := cmp.Diff(Unused{LLM: []string{"b"}, Tools: []string{"s.t"}}, got); diff != "" {
		t.Errorf("UnusedMocks (-want +got):\n%s", diff)
	}
	if got := UnusedMocks(m, Calls{LLM: map[string]int{"a": 1, "b": 1}, Tools: map[string]int{"u": 1, "s.t": 1}}); !got.None() {
		t.Errorf("UnusedMocks(all called) = %+v, want none", got)
	}
}
