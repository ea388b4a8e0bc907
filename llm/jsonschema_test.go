package llm

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/symphonix/symphonix/flow"
)

func TestJSONSchema(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		s    *flow.Schema
		want map[string]any
	}{
		{name: "nil", s: nil, want: nil},
		{name: "classifier", s: classifier, want: classifierJSONSchema},
		{
			name: "list becomes array",
			s: &flow.Schema{Type: "list", Description: "the tasks", Items: &flow.Schema{
				Type: "string", MinLength: ptr(1), MaxLength: ptr(80),
			}},
			want: map[string]any{"type": "array", "description": "the tasks", "items": map[string]any{
				"type": "string", "minLength": 1.0, "maxLength": 80.0,
			}},
		},
		{
			name: "object without properties",
			s:    &flow.Schema{Type: "object"},
			want: map[string]any{"type": "object", "properties": map[string]any{}, "additionalProperties": false},
		},
		{
			name: "boolean enum",
			s:    &flow.Schema{Type: "boolean", Enum: []any{true}},
			want: map[string]any{"type": "boolean", "enum": []any{true}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got := JSONSchema(tt.s)
			if tt.want == nil {
				if got != nil {
					t.Errorf("JSONSchema(nil) = %v, want nil", got)
				}
				return
			}
			if diff := cmp.Diff(tt.want, roundTrip(t, got)); diff != "" {
				t.Errorf("JSONSchema (-want +got):\n%s", diff)
			}
		})
	}
}
