package agentflow

import (
	"encoding/json"
	"errors"
	"testing"
)

// TestJSONSchema: the schema of each kind of type an expect may name, and
// ErrNoSchema for those it may not.
func TestJSONSchema(t *testing.T) {
	t.Parallel()
	f, diags := Parse([]byte(`workflow w(input: In) -> text {
  use team "t" as squad
  type Leaf { a: text, p: path, n: number, b: bool, d: duration, m: member<squad>, x: any }
  type Tree { kids?: Tree[] }
  type Holds { v: Verification }
  type Outside { i: In }
  pipeline { return "x" }
}`))
	if len(diags) > 0 {
		t.Fatal(diags)
	}
	w := f.Workflows[0]
	ref := func(name string, suffixes ...*TypeSuffix) *TypeRef {
		return &TypeRef{Name: &Ident{Name: name}, Suffixes: suffixes}
	}
	cases := []struct {
		ref  *TypeRef
		want string // "" for ErrNoSchema
	}{
		{ref("Leaf"), `{"additionalProperties":false,"properties":{"a":{"type":"string"},"b":{"type":"boolean"},"d":{"minimum":0,"type":"integer"},"m":{"type":"string"},"n":{"type":"number"},"p":{"minLength":1,"type":"string"},"x":{}},"required":["a","p","n","b","d","m","x"],"type":"object"}`},
		{ref("number", &TypeSuffix{}, &TypeSuffix{Min: &NumberLit{Value: 0}, Max: &NumberLit{Value: 3}}), `{"items":{"items":{"type":"number"},"type":"array"},"maxItems":3,"minItems":0,"type":"array"}`},
		{ref("Tree"), ""},
		{ref("Holds"), ""},
		{ref("Outside"), ""},
		{ref("In"), ""},
		{ref("Verification"), ""},
		{ref("Nope"), ""},
	}
	for _, tc := range cases {
		typ := ResolveType(w, tc.ref)
		s, err := typ.JSONSchema()
		if tc.want == "" {
			if !errors.Is(err, ErrNoSchema) {
				t.Errorf("JSONSchema(%s) = %v, %v; want ErrNoSchema", tc.ref.Name.Name, s, err)
			}
			continue
		}
		if err != nil {
			t.Errorf("JSONSchema(%s): %v", tc.ref.Name.Name, err)
			continue
		}
		b, _ := json.Marshal(s)
		if string(b) != tc.want {
			t.Errorf("JSONSchema(%s) = %s, want %s", tc.ref.Name.Name, b, tc.want)
		}
	}
}
