package flow

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestRender(t *testing.T) {
	t.Parallel()
	s := State{
		"question": "Why?",
		"docs":     []any{"a", map[string]any{"title": "<b>"}},
		"count":    float64(5),
		"order":    map[string]any{"total": float64(12.5), "lines": []any{map[string]any{"sku": "x"}}},
		"empty":    nil,
	}
	tests := []struct {
		name, tmpl, want string
	}{
		{"string as it stands", "Q: {{question}}", "Q: Why?"},
		{"list as JSON, not HTML-escaped", "{{docs}}", `["a",{"title":"<b>"}]`},
		{"number as JSON", "n={{count}}", "n=5"},
		{"missing is a gap", "[{{nothing}}]", "[]"},
		{"null is a gap", "[{{empty}}]", "[]"},
		{"spaces inside braces", "{{ question }}", "Why?"},
		{"field", "{{order.total}}", "12.5"},
		{"index and field", "{{order.lines[0].sku}}", "x"},
		{"out of range is a gap", "{{order.lines[3].sku}}", ""},
		{"no placeholders", "plain", "plain"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if got := render(tt.tmpl, s); got != tt.want {
				t.Errorf("render(%q) = %q, want %q", tt.tmpl, got, tt.want)
			}
		})
	}
}

func TestRenderArgs(t *testing.T) {
	t.Parallel()
	s := State{"customerId": float64(5), "order": map[string]any{"sku": "x"}, "name": "Ada"}
	args := map[string]any{
		"id":     "{{customerId}}",
		"order":  "{{order}}",
		"note":   "customer {{customerId}} ({{name}})",
		"nested": []any{"{{name}}", true, float64(2)},
		"absent": "{{nothing}}",
	}
	got := renderArgs(args, s)
	want := map[string]any{
		"id":     float64(5),
		"order":  map[string]any{"sku": "x"},
		"note":   "customer 5 (Ada)",
		"nested": []any{"Ada", true, float64(2)},
		"absent": nil,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("renderArgs (-want +got):\n%s", diff)
	}
	// The value passed is a copy: the tool cannot change the state.
	got.(map[string]any)["order"].(map[string]any)["sku"] = "changed"
	if s["order"].(map[string]any)["sku"] != "x" {
		t.Error("renderArgs passed the state's own object to the tool")
	}
}
