package flowtest

import (
	"encoding/json"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strings"
)

// Outcome is what a case's run did.
type Outcome struct {
	// State is the final state (or the last state seen, for a run that
	// failed or stopped).
	State map[string]any
	// Path is the nodes whose steps ended, in order.
	Path []string
	// Err is why the run failed; nil when it finished.
	Err error
	// Problems are what went wrong outside the flow: a call the case gave
	// no answer for, an answer the run never asked for, a time limit.
	Problems []string
}

// DescribeFailure says, one line a mismatch, what e expected and what the
// run did instead, in words a person can act on; nil when the run did what
// was expected.
func DescribeFailure(e Expect, o Outcome) []string {
	lines := slices.Clone(o.Problems)
	switch {
	case e.Error == "" && o.Err != nil:
		lines = append(lines, fmt.Sprintf("the run failed: %v", o.Err))
	case e.Error != "" && o.Err == nil:
		lines = append(lines, fmt.Sprintf("expected the run to fail with an error containing %q; it finished", e.Error))
	case e.Error != "" && !strings.Contains(o.Err.Error(), e.Error):
		lines = append(lines, fmt.Sprintf("expected the run to fail with an error containing %q; it failed with: %v", e.Error, o.Err))
	}
	if o.Err == nil {
		for _, ch := range slices.Sorted(maps.Keys(e.State)) {
			want := e.State[ch]
			got, present := o.State[ch]
			switch {
			case !present:
				lines = append(lines, fmt.Sprintf("state.%s: expected %s, got nothing (the run never wrote it)", ch, show(want)))
			case !sameJSON(want, got):
				lines = append(lines, fmt.Sprintf("state.%s: expected %s, got %s", ch, show(want), show(got)))
			}
		}
	}
	if e.Path != nil && !slices.Equal(e.Path, o.Path) {
		lines = append(lines, describePath(e.Path, o.Path))
	}
	return lines
}

// describePath says how two paths differ, and where first.
func describePath(want, got []string) string {
	i := 0
	for i < len(want) && i < len(got) && want[i] == got[i] {
		i++
	}
	var where string
	switch {
	case i == len(got):
		where = fmt.Sprintf("the run stopped after %d nodes where %s was expected next", i, want[i])
	case i == len(want):
		where = fmt.Sprintf("the run went on to %s after the expected path ended", got[i])
	default:
		where = fmt.Sprintf("step %d went to %s where %s was expected", i+1, got[i], want[i])
	}
	return fmt.Sprintf("path: expected %s, got %s: %s", arrows(want), arrows(got), where)
}

func arrows(p []string) string {
	if len(p) == 0 {
		return "(no nodes)"
	}
	return strings.Join(p, " → ")
}

// sameJSON compares two values as JSON: what a file says and what a run
// wrote are equal when they encode alike.
func sameJSON(a, b any) bool {
	return reflect.DeepEqual(normal(a), normal(b))
}

func normal(v any) any {
	b, err := json.Marshal(v)
	if err != nil {
		return v
	}
	var out any
	if err := json.Unmarshal(b, &out); err != nil {
		return v
	}
	return out
}

// show writes a value as compact JSON, cut to a length a line can hold.
func show(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	const max = 200
	if len(b) > max {
		return string(b[:max]) + "…"
	}
	return string(b)
}
