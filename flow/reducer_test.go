package flow

import (
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestAppendReducer(t *testing.T) {
	t.Parallel()
	old := []any{"a"}
	tests := []struct {
		name     string
		old, new any
		want     any
	}{
		{"item", old, "b", []any{"a", "b"}},
		{"list adds its items", old, []any{"b", "c"}, []any{"a", "b", "c"}},
		{"nothing adds nothing", old, nil, []any{"a"}},
		{"empty channel", nil, "b", []any{"b"}},
	}
	for _, tt := range tests {
		got, err := appendReducer(tt.old, tt.new)
		if err != nil {
			t.Fatalf("%s: appendReducer: %v", tt.name, err)
		}
		if diff := cmp.Diff(tt.want, got); diff != "" {
			t.Errorf("%s: appendReducer (-want +got):\n%s", tt.name, diff)
		}
	}
	if diff := cmp.Diff([]any{"a"}, old); diff != "" {
		t.Errorf("appendReducer changed the old value (-want +got):\n%s", diff)
	}
	if _, err := appendReducer("text", "b"); err == nil {
		t.Error("appendReducer on a string = nil error, want one")
	}
}

func TestMergeReducer(t *testing.T) {
	t.Parallel()
	old := map[string]any{"a": float64(1), "b": float64(2)}
	got, err := mergeReducer(old, map[string]any{"b": float64(3), "c": float64(4)})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(map[string]any{"a": float64(1), "b": float64(3), "c": float64(4)}, got); diff != "" {
		t.Errorf("mergeReducer (-want +got):\n%s", diff)
	}
	if old["b"] != float64(2) {
		t.Error("mergeReducer changed the old value")
	}
	if _, err := mergeReducer(old, "x"); err == nil {
		t.Error("mergeReducer of a string = nil error, want one")
	}
}

func TestAddTurns(t *testing.T) {
	t.Parallel()
	turn := func(i int) any {
		return map[string]any{"at": fmt.Sprintf("2026-01-01T00:00:%02dZ", i), "asked": fmt.Sprint(i), "answered": ""}
	}
	var held any
	for i := range 25 {
		var err error
		if held, err = addTurns(held, []any{turn(i)}); err != nil {
			t.Fatal(err)
		}
	}
	h := held.([]any)
	if len(h) != KeptTurns {
		t.Fatalf("history holds %d turns, want %d", len(h), KeptTurns)
	}
	if got := h[0].(map[string]any)["asked"]; got != "5" {
		t.Errorf("oldest turn kept = %v, want 5", got)
	}
	// Turns handed over again (from a transcript) are matched on at and
	// not held twice; older ones fall into their place.
	again, err := addTurns(h[:3], []any{turn(5), turn(6), turn(4)})
	if err != nil {
		t.Fatal(err)
	}
	var asked []any
	for _, e := range again.([]any) {
		asked = append(asked, e.(map[string]any)["asked"])
	}
	if diff := cmp.Diff([]any{"4", "5", "6", "7"}, asked); diff != "" {
		t.Errorf("addTurns order (-want +got):\n%s", diff)
	}
}
