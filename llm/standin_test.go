package llm

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/symphonix/symphonix/flow"
)

func ptr[T any](v T) *T { return &v }

// fits reports why v, decoded from JSON, does not fit s (nil when it does):
// a small checker of the schema subset, stricter than the engine in one way
// — an object must not have properties s does not name.
func fits(v any, s *flow.Schema, path string) error {
	if s == nil {
		return fmt.Errorf("%s: no schema", path)
	}
	if len(s.Enum) > 0 {
		for _, e := range s.Enum {
			if jsonEqual(v, e) {
				return nil
			}
		}
		return fmt.Errorf("%s must be one of %v, and it is %v", path, s.Enum, v)
	}
	switch s.Type {
	case flow.ChannelString:
		str, ok := v.(string)
		if !ok {
			return fmt.Errorf("%s must be a string, and it is %T", path, v)
		}
		n := utf8.RuneCountInString(str)
		if s.MinLength != nil && n < *s.MinLength {
			return fmt.Errorf("%s is %d characters, shorter than %d", path, n, *s.MinLength)
		}
		if s.MaxLength != nil && n > *s.MaxLength {
			return fmt.Errorf("%s is %d characters, longer than %d", path, n, *s.MaxLength)
		}
	case flow.ChannelNumber:
		f, ok := v.(float64)
		if !ok {
			return fmt.Errorf("%s must be a number, and it is %T", path, v)
		}
		if s.Minimum != nil && f < *s.Minimum {
			return fmt.Errorf("%s is %v, below %v", path, f, *s.Minimum)
		}
		if s.Maximum != nil && f > *s.Maximum {
			return fmt.Errorf("%s is %v, above %v", path, f, *s.Maximum)
		}
	case flow.ChannelBoolean:
		if _, ok := v.(bool); !ok {
			return fmt.Errorf("%s must be a boolean, and it is %T", path, v)
		}
	case flow.ChannelList:
		list, ok := v.([]any)
		if !ok {
			return fmt.Errorf("%s must be a list, and it is %T", path, v)
		}
		for i, item := range list {
			if err := fits(item, s.Items, fmt.Sprintf("%s[%d]", path, i)); err != nil {
				return err
			}
		}
	case flow.ChannelObject:
		obj, ok := v.(map[string]any)
		if !ok {
			return fmt.Errorf("%s must be an object, and it is %T", path, v)
		}
		for _, r := range s.Required {
			if obj[r] == nil {
				return fmt.Errorf("%s.%s is required", path, r)
			}
		}
		for k, pv := range obj {
			ps, ok := s.Properties[k]
			if !ok {
				return fmt.Errorf("%s.%s is not in the schema", path, k)
			}
			if err := fits(pv, ps, path+"."+k); err != nil {
				return err
			}
		}
	default:
		return fmt.Errorf("%s: unknown type %q", path, s.Type)
	}
	return nil
}

func jsonEqual(a, b any) bool {
	ja, _ := json.Marshal(a)
	jb, _ := json.Marshal(b)
	var x, y any
	json.Unmarshal(ja, &x)
	json.Unmarshal(jb, &y)
	return reflect.DeepEqual(x, y)
}

// classifier is the flow language reference's structured-output example.
var classifier = &flow.Schema{
	Type: "object",
	Properties: map[string]*flow.Schema{
		"category":   {Type: "string", Enum: []any{"technical", "billing", "general"}},
		"confidence": {Type: "number", Minimum: ptr(0.0), Maximum: ptr(1.0)},
		"reason":     {Type: "string"},
	},
	Required: []string{"category", "confidence"},
}

var standInSchemas = []struct {
	name string
	s    *flow.Schema
	want string // the exact reply, when the case pins it
}{
	{name: "string", s: &flow.Schema{Type: "string"}, want: `"stand-in"`},
	{name: "string enum", s: &flow.Schema{Type: "string", Enum: []any{"b", "a"}}, want: `"b"`},
	{name: "string minLength", s: &flow.Schema{Type: "string", MinLength: ptr(20)}, want: `"stand-in............"`},
	{name: "string maxLength", s: &flow.Schema{Type: "string", MaxLength: ptr(3)}, want: `"sta"`},
	{name: "string maxLength 0", s: &flow.Schema{Type: "string", MaxLength: ptr(0)}, want: `""`},
	{name: "string exact length", s: &flow.Schema{Type: "string", MinLength: ptr(12), MaxLength: ptr(12)}},
	{name: "number", s: &flow.Schema{Type: "number"}, want: `0`},
	{name: "number between", s: &flow.Schema{Type: "number", Minimum: ptr(0.0), Maximum: ptr(1.0)}, want: `0.5`},
	{name: "number minimum", s: &flow.Schema{Type: "number", Minimum: ptr(5.0)}, want: `5`},
	{name: "number negative maximum", s: &flow.Schema{Type: "number", Maximum: ptr(-3.0)}, want: `-3`},
	{name: "number huge range", s: &flow.Schema{Type: "number", Minimum: ptr(-1e308), Maximum: ptr(1e308)}, want: `0`},
	{name: "number enum", s: &flow.Schema{Type: "number", Enum: []any{7, 3}}, want: `7`},
	{name: "boolean", s: &flow.Schema{Type: "boolean"}, want: `false`},
	{name: "boolean enum", s: &flow.Schema{Type: "boolean", Enum: []any{true}}, want: `true`},
	{name: "list of strings", s: &flow.Schema{Type: "list", Items: &flow.Schema{Type: "string"}}, want: `["stand-in"]`},
	{name: "empty object", s: &flow.Schema{Type: "object"}, want: `{}`},
	{name: "classifier", s: classifier, want: `{"category":"technical","confidence":0.5,"reason":"stand-in reason"}`},
	{name: "optional properties too", s: &flow.Schema{Type: "object", Properties: map[string]*flow.Schema{
		"a": {Type: "string"}, "b": {Type: "boolean"}, "c": {Type: "number"},
	}}, want: `{"a":"stand-in a","b":false,"c":0}`},
	{name: "property names fitted", s: &flow.Schema{Type: "object", Properties: map[string]*flow.Schema{
		"résumé": {Type: "string", MaxLength: ptr(12)},
		"title":  {Type: "string", MinLength: ptr(20), MaxLength: ptr(25)},
	}}},
	{name: "nested", s: &flow.Schema{Type: "object", Required: []string{"tasks"}, Properties: map[string]*flow.Schema{
		"tasks": {Type: "list", Items: &flow.Schema{Type: "object", Required: []string{"title", "priority"}, Properties: map[string]*flow.Schema{
			"title":    {Type: "string", MinLength: ptr(1), MaxLength: ptr(80)},
			"priority": {Type: "string", Enum: []any{"low", "high"}},
			"tags":     {Type: "list", Items: &flow.Schema{Type: "list", Items: &flow.Schema{Type: "number", Minimum: ptr(10.0), Maximum: ptr(20.0)}}},
			"owner":    {Type: "object", Properties: map[string]*flow.Schema{"name": {Type: "string"}, "active": {Type: "boolean"}}},
		}}},
	}}},
}

func TestStandInSchemas(t *testing.T) {
	t.Parallel()
	for _, tt := range standInSchemas {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			req := flow.ModelRequest{Node: "n", Prompt: "Classify this request: I was charged twice", Schema: tt.s}
			reply, err := StandIn{}.Complete(t.Context(), req)
			if err != nil {
				t.Fatalf("Complete = %v", err)
			}
			if reply.Usage != nil {
				t.Errorf("Usage = %+v, want nil: a stand-in spends nothing", reply.Usage)
			}
			var v any
			if err := json.Unmarshal([]byte(reply.Text), &v); err != nil {
				t.Fatalf("Complete = %q, which is not JSON: %v", reply.Text, err)
			}
			if err := fits(v, tt.s, "answer"); err != nil {
				t.Errorf("Complete = %s, which does not fit: %v", reply.Text, err)
			}
			if tt.want != "" && reply.Text != tt.want {
				t.Errorf("Complete = %s, want %s", reply.Text, tt.want)
			}
		})
	}
}

// TestFits makes sure the checker above can fail, so that the test that
// uses it means something.
func TestFits(t *testing.T) {
	t.Parallel()
	bad := []struct {
		v any
		s *flow.Schema
	}{
		{"x", &flow.Schema{Type: "number"}},
		{"technical!", classifier.Properties["category"]},
		{2.0, classifier.Properties["confidence"]},
		{"ab", &flow.Schema{Type: "string", MinLength: ptr(3)}},
		{map[string]any{"confidence": 0.5}, classifier},
		{map[string]any{"category": "billing", "confidence": 0.5, "extra": true}, classifier},
		{[]any{1.0}, &flow.Schema{Type: "list", Items: &flow.Schema{Type: "string"}}},
	}
	for _, b := range bad {
		if err := fits(b.v, b.s, "answer"); err == nil {
			t.Errorf("fits(%v, %+v) = nil, want an error", b.v, b.s)
		}
	}
}

func TestStandInDeterministic(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	for _, tt := range standInSchemas {
		req := flow.ModelRequest{Node: "n", Prompt: "p", Schema: tt.s}
		first, err := StandIn{}.Complete(ctx, req)
		if err != nil {
			t.Fatal(err)
		}
		for range 20 { // map order differs from run to run; the reply must not
			again, _ := StandIn{}.Complete(ctx, req)
			if again.Text != first.Text {
				t.Fatalf("%s: Complete = %s, then %s; want the same reply", tt.name, first.Text, again.Text)
			}
		}
	}
	req := flow.ModelRequest{Node: "n", Prompt: "What is the weather in Lisbon?"}
	a, _ := StandIn{}.Complete(ctx, req)
	b, _ := StandIn{}.Complete(ctx, req)
	if a != b {
		t.Errorf("Complete(%q) = %+v, then %+v; want the same reply", req.Prompt, a, b)
	}
}

func TestStandInText(t *testing.T) {
	t.Parallel()
	tests := []struct {
		prompt, want string
	}{
		{"Hello", "stand-in reply to: Hello"},
		{"", "stand-in reply to: "},
		{"  Summarise:\n\n\tthe   report  ", "stand-in reply to: Summarise: the report"},
		{strings.Repeat("a", 60), "stand-in reply to: " + strings.Repeat("a", 60)},
		{strings.Repeat("a", 61), "stand-in reply to: " + strings.Repeat("a", 60) + "…"},
		{strings.Repeat("ש", 70), "stand-in reply to: " + strings.Repeat("ש", 60) + "…"},
	}
	for _, tt := range tests {
		reply, err := StandIn{}.Complete(t.Context(), flow.ModelRequest{Node: "n", Prompt: tt.prompt})
		if err != nil {
			t.Fatal(err)
		}
		if reply.Text != tt.want || reply.Usage != nil {
			t.Errorf("Complete(%q) = %q, %v; want %q, nil", tt.prompt, reply.Text, reply.Usage, tt.want)
		}
	}
}

func TestStandInRefusals(t *testing.T) {
	t.Parallel()
	loop := &flow.Schema{Type: "list"}
	loop.Items = loop
	for name, s := range map[string]*flow.Schema{
		"unknown type":       {Type: "file"},
		"list without items": {Type: "list"},
		"refers to itself":   loop,
	} {
		if _, err := (StandIn{}).Complete(t.Context(), flow.ModelRequest{Schema: s}); !errors.Is(err, ErrStandInSchema) {
			t.Errorf("%s: Complete = %v, want ErrStandInSchema", name, err)
		}
	}
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if _, err := (StandIn{}).Complete(ctx, flow.ModelRequest{Prompt: "x"}); !errors.Is(err, context.Canceled) {
		t.Errorf("Complete(a cancelled context) = %v, want context.Canceled", err)
	}
}

func TestStandInSaysWhichFiles(t *testing.T) {
	t.Parallel()
	reply, err := StandIn{}.Complete(t.Context(), flow.ModelRequest{Prompt: "Look", Files: []flow.ModelFile{
		{File: flow.File{Name: "cat.png", MediaType: "image/png"}, Data: []byte("12345")},
	}})
	if want := "stand-in reply to: Look (received cat.png, image/png, 5 bytes)"; err != nil || reply.Text != want {
		t.Errorf("Complete = %q, %v; want %q", reply.Text, err, want)
	}
}

func TestStandInJSONSchema(t *testing.T) {
	t.Parallel()
	schema := map[string]any{"type": "object", "additionalProperties": false, "required": []string{"ok", "tags", "wait", "path"}, "properties": map[string]any{
		"ok":    map[string]any{"type": "boolean"},
		"tags":  map[string]any{"type": "array", "items": map[string]any{"type": "string"}, "minItems": 2, "maxItems": 3},
		"wait":  map[string]any{"type": "integer", "minimum": 0},
		"path":  map[string]any{"type": "string", "minLength": 1},
		"notes": map[string]any{"anyOf": []any{map[string]any{"type": "string"}, map[string]any{"type": "null"}}},
	}}
	got, err := StandIn{}.Complete(t.Context(), flow.ModelRequest{Prompt: "p", JSONSchema: schema})
	if err != nil {
		t.Fatalf("Complete: %v", err)
	}
	if want := `{"ok":false,"path":"stand-in path","tags":["stand-in","stand-in"],"wait":0}`; got.Text != want {
		t.Errorf("Complete = %s, want %s", got.Text, want)
	}
}
