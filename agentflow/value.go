package agentflow

import (
	"encoding/json"
	"fmt"
	"math"
	"sort"
)

// Values at run time are JSON's: nil (null, or an optional value that is
// absent), bool, float64 (numbers; durations in milliseconds), string
// (text, path, member ids), []any and map[string]any; and three of the
// language's own: *Verification, and agent targets (target), which only
// agent() reads.

// Verification is the value of verify { ... pass when COND }: whether it
// passed, and each check's value by name. As JSON it is
// {"passed":…,"failed":…,"checks":{…}}.
type Verification struct {
	Passed bool
	Checks map[string]any
}

// MarshalJSON writes v as {"passed":…,"failed":…,"checks":{…}}.
func (v *Verification) MarshalJSON() ([]byte, error) {
	return json.Marshal(map[string]any{"passed": v.Passed, "failed": !v.Passed, "checks": v.Checks})
}

// target is an agent() target: a use agent alias, team.main or
// team.member(id).
type target struct {
	alias    string // the use alias
	resource string // the use's resource id
	member   string // the member id, for team.member(id); "main" for team.main
}

// typeName says what kind of value v is, for errors.
func typeName(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case bool:
		return "bool"
	case float64:
		return "number"
	case string:
		return "text"
	case []any:
		return "an array"
	case map[string]any:
		return "an object"
	case *Verification:
		return "a Verification"
	case target:
		return "an agent target"
	}
	return fmt.Sprintf("%T", v)
}

// conform checks that v is a value of type t, saying where it is not by
// its path from what (input, the answer of agent(x)): "input.items[2].name
// is a number, want text". It reads the JSON values a caller or a model
// gives: an object has the fields of its type and no others (a missing
// optional field is absent, null stands for it too), a duration is whole
// milliseconds from 0, a path a non-empty text, an array within its
// bounds.
func conform(v any, t *Type, what string) error {
	if t == nil || t.open() {
		return nil
	}
	if v == nil {
		if t.Optional || t.Kind == TypeNull {
			return nil
		}
		return fmt.Errorf("%s is null, want %s", what, present(t))
	}
	bad := func() error { return fmt.Errorf("%s is %s, want %s", what, typeName(v), present(t)) }
	switch t.Kind {
	case TypeText, TypeMember:
		if _, ok := v.(string); !ok {
			return bad()
		}
	case TypePath:
		s, ok := v.(string)
		if !ok {
			return bad()
		}
		if s == "" {
			return fmt.Errorf("%s is empty, want a path", what)
		}
	case TypeNumber:
		n, ok := v.(float64)
		if !ok {
			return bad()
		}
		if math.IsNaN(n) || math.IsInf(n, 0) {
			return fmt.Errorf("%s is not a finite number", what)
		}
	case TypeDuration:
		n, ok := v.(float64)
		if !ok {
			return bad()
		}
		if !whole(n) {
			return fmt.Errorf("%s is %v, want a duration: whole milliseconds from 0", what, n)
		}
	case TypeBool:
		if _, ok := v.(bool); !ok {
			return bad()
		}
	case TypeNull:
		return bad()
	case TypeArray:
		xs, ok := v.([]any)
		if !ok {
			return bad()
		}
		if t.Bounded && (len(xs) < t.Min || len(xs) > t.Max) {
			return fmt.Errorf("%s has %d elements, want %d to %d", what, len(xs), t.Min, t.Max)
		}
		for i, x := range xs {
			if err := conform(x, t.Elem, fmt.Sprintf("%s[%d]", what, i)); err != nil {
				return err
			}
		}
	case TypeObject:
		m, ok := v.(map[string]any)
		if !ok {
			return bad()
		}
		for _, f := range t.Fields {
			x, ok := m[f.Name]
			switch {
			case !ok && f.Optional:
			case !ok:
				return fmt.Errorf("%s.%s is missing, want %s", what, f.Name, f.Type)
			default:
				ft := f.Type
				if f.Optional {
					ft = optional(ft)
				}
				if err := conform(x, ft, what+"."+f.Name); err != nil {
					return err
				}
			}
		}
		names := make([]string, 0, len(m))
		for k := range m {
			names = append(names, k)
		}
		sort.Strings(names)
		for _, k := range names {
			if t.field(k) == nil {
				return fmt.Errorf("%s.%s is not a field of %s", what, k, t)
			}
		}
	case TypeVerification:
		if _, ok := v.(*Verification); !ok {
			return bad()
		}
	default:
		return bad()
	}
	return nil
}

// key is v's text for unique and disjoint: its JSON encoding, objects'
// fields in name order, so two equal values have one key.
func key(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}

// equal is == on values: same kind and same value, arrays and objects
// element by element.
func equal(a, b any) bool {
	switch a := a.(type) {
	case []any:
		bs, ok := b.([]any)
		if !ok || len(a) != len(bs) {
			return false
		}
		for i := range a {
			if !equal(a[i], bs[i]) {
				return false
			}
		}
		return true
	case map[string]any:
		bm, ok := b.(map[string]any)
		if !ok || len(a) != len(bm) {
			return false
		}
		for k, x := range a {
			y, ok := bm[k]
			if !ok || !equal(x, y) {
				return false
			}
		}
		return true
	case *Verification:
		bv, ok := b.(*Verification)
		return ok && a.Passed == bv.Passed && equal(a.Checks, bv.Checks)
	case target:
		bt, ok := b.(target)
		return ok && a == bt
	}
	return a == b
}
