package flow

import (
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func ptr[T any](v T) *T { return &v }

var classification = &Schema{
	Type: "object",
	Properties: map[string]*Schema{
		"category":   {Type: "string", Enum: []any{"technical", "billing", "general"}},
		"confidence": {Type: "number", Minimum: ptr(0.0), Maximum: ptr(1.0)},
		"reason":     {Type: "string", MinLength: ptr(1), MaxLength: ptr(10)},
		"tasks": {Type: "list", Items: &Schema{Type: "object", Properties: map[string]*Schema{
			"priority": {Type: "string"},
		}}},
		"urgent": {Type: "boolean"},
	},
	Required: []string{"category", "confidence"},
}

func TestCheckSchema(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		schema *Schema
		value  any
		want   []string
	}{
		{"fits", classification, map[string]any{"category": "billing", "confidence": 0.94, "reason": "charged"}, nil},
		{"false, 0 and empty are answers", classification, map[string]any{"category": "general", "confidence": float64(0), "urgent": false, "tasks": []any{}}, nil},
		{"enum", classification, map[string]any{"category": "weird", "confidence": 0.5},
			[]string{"classification.category must be one of: technical, billing, general"}},
		{"nested list item", classification, map[string]any{"category": "general", "confidence": 0.5,
			"tasks": []any{map[string]any{"priority": "a"}, map[string]any{"priority": "b"}, map[string]any{"priority": float64(3)}}},
			[]string{"classification.tasks[2].priority must be a string, and it is a number, 3"}},
		{"missing and null", classification, map[string]any{"category": nil},
			[]string{"classification.category is missing", "classification.confidence is missing"}},
		{"bounds", classification, map[string]any{"category": "general", "confidence": 1.5, "reason": ""},
			[]string{"classification.confidence must be at most 1, and it is 1.5", "classification.reason must be at least 1 character long, and it is 0"}},
		{"max length counts characters", classification, map[string]any{"category": "general", "confidence": 0.1, "reason": "שלום עולם, מה"},
			[]string{"classification.reason must be at most 10 characters long, and it is 13"}},
		{"not an object", classification, "I think billing",
			[]string{`classification must be an object, and it is a string, "I think billing"`}},
		{"number given as text", &Schema{Type: "object", Properties: map[string]*Schema{"amount": {Type: "number"}}},
			map[string]any{"amount": "12 EUR"},
			[]string{`classification.amount must be a number, and it is a string, "12 EUR"`}},
		{"null top", classification, nil, []string{"classification must be an object, and it is null"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			err := checkSchema(tt.schema, tt.value, "classification")
			var got []string
			if se := (*SchemaError)(nil); errors.As(err, &se) {
				got = se.Problems
			} else if err != nil {
				t.Fatalf("checkSchema = %v, want a *SchemaError", err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("checkSchema problems (-want +got):\n%s", diff)
			}
		})
	}
}

func TestReadJSON(t *testing.T) {
	t.Parallel()
	obj := map[string]any{"category": "billing"}
	tests := []struct {
		name, reply, want string
		value             any
	}{
		{"plain", `{"category":"billing"}`, "object", obj},
		{"code fence", "```json\n{\"category\":\"billing\"}\n```", "object", obj},
		{"sentence in front", `Sure! Here it is: {"category":"billing"} Hope that helps.`, "object", obj},
		{"hebrew quote left loose", `{"unit":"צה"ל"}`, "object", map[string]any{"unit": `צה"ל`}},
		{"list after words", `The tasks: [1, 2]`, "list", []any{float64(1), float64(2)}},
		{"no JSON is the text", "I think billing", "object", "I think billing"},
		{"string as text", "Hello there", "string", "Hello there"},
		{"string as JSON", `"Hello"`, "string", "Hello"},
		{"number", "0.94", "number", 0.94},
		{"number with words is text", "12 EUR", "number", "12 EUR"},
		{"boolean", "true", "boolean", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if diff := cmp.Diff(tt.value, readJSON(tt.reply, tt.want)); diff != "" {
				t.Errorf("readJSON(%q, %s) (-want +got):\n%s", tt.reply, tt.want, diff)
			}
		})
	}
}
