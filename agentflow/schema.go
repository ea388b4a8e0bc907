package agentflow

import (
	"errors"
	"fmt"
)

// ErrNoSchema is JSONSchema's error for a type with no JSON Schema: an
// external type, a Verification, a recursive declared type, an agent or
// team binding, or an invalid type.
var ErrNoSchema = errors.New("agentflow: the type has no JSON Schema")

// ResolveType is the type ref names in workflow w: a type w declares, a
// built-in type, or an external one (an undeclared name w's input,
// context or output type uses); TypeInvalid when it names none of them
// or an error of Check's is in it. Execution resolves an expect type with
// it, then asks its JSONSchema.
func ResolveType(w *Workflow, ref *TypeRef) *Type {
	if w == nil {
		return tInvalid
	}
	return declare(w, nil).resolve(ref, false, nil)
}

// JSONSchema is the JSON Schema (draft 2020-12 vocabulary) a value of
// type t matches, as a JSON object: the schema an agent's answer to
// expect T is held to (docs/agentflow.md, "JSON Schema"). It fails with
// ErrNoSchema for a type that has none.
func (t *Type) JSONSchema() (map[string]any, error) {
	return schema(t, map[*Type]bool{})
}

func schema(t *Type, open map[*Type]bool) (map[string]any, error) {
	if t == nil {
		return nil, ErrNoSchema
	}
	var s map[string]any
	switch t.Kind {
	case TypeAny:
		s = map[string]any{}
	case TypeText, TypeMember:
		s = map[string]any{"type": "string"}
	case TypePath:
		s = map[string]any{"type": "string", "minLength": 1}
	case TypeNumber:
		s = map[string]any{"type": "number"}
	case TypeBool:
		s = map[string]any{"type": "boolean"}
	case TypeDuration:
		s = map[string]any{"type": "integer", "minimum": 0} // milliseconds
	case TypeNull:
		s = map[string]any{"type": "null"}
	case TypeArray:
		items := map[string]any{}
		if t.Elem != nil {
			var err error
			if items, err = schema(t.Elem, open); err != nil {
				return nil, err
			}
		}
		s = map[string]any{"type": "array", "items": items}
		if t.Bounded {
			s["minItems"], s["maxItems"] = t.Min, t.Max
		}
	case TypeObject:
		if open[t] {
			return nil, fmt.Errorf("%w: type %s refers to itself", ErrNoSchema, t.Name)
		}
		open[t] = true
		props := map[string]any{}
		required := []string{}
		for _, f := range t.Fields {
			fs, err := schema(f.Type, open)
			if err != nil {
				return nil, err
			}
			if f.Optional {
				fs = map[string]any{"anyOf": []any{fs, map[string]any{"type": "null"}}}
			} else {
				required = append(required, f.Name)
			}
			props[f.Name] = fs
		}
		delete(open, t)
		s = map[string]any{"type": "object", "properties": props, "required": required, "additionalProperties": false}
	default:
		return nil, fmt.Errorf("%w: %s", ErrNoSchema, t)
	}
	if t.Optional {
		s = map[string]any{"anyOf": []any{s, map[string]any{"type": "null"}}}
	}
	return s, nil
}

// schemaless says why t has no JSON Schema, or "" when it has one (or is
// invalid, an error said already; or recursive, which recursive-type
// says).
func schemaless(t *Type) string {
	return why(t, map[*Type]bool{})
}

func why(t *Type, open map[*Type]bool) string {
	switch {
	case t.invalid():
		return ""
	case t.Kind == TypeExternal:
		return "the external type " + t.Name
	case t.Kind == TypeVerification:
		return "a Verification"
	case t.Kind == TypeAgent, t.Kind == TypeTeam, t.Kind == TypeTarget:
		return t.String()
	case t.Kind == TypeArray && t.Elem != nil:
		return why(t.Elem, open)
	case t.Kind == TypeObject:
		if open[t] {
			return ""
		}
		open[t] = true
		defer delete(open, t)
		for _, f := range t.Fields {
			if w := why(f.Type, open); w != "" {
				if t.Name != "" {
					return w + " (field " + f.Name + " of " + t.Name + ")"
				}
				return w
			}
		}
	}
	return ""
}
