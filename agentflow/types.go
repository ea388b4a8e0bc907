package agentflow

import (
	"fmt"
	"strings"
)

// TypeKind is what kind of value a Type describes.
type TypeKind int

// The kinds of the type system (docs/agentflow.md, "Types").
const (
	// TypeInvalid is the type of an expression an error made unknown:
	// it fits everywhere, so one mistake is one diagnostic.
	TypeInvalid  TypeKind = iota
	TypeAny               // any: the type of context without a declared type; any member, result any
	TypeExternal          // a type the workflow does not declare, named at its boundary: as any inside
	TypeText
	TypeNumber
	TypeBool
	TypeDuration
	TypePath
	TypeNull
	TypeMember       // member<team>: a member id of a team
	TypeArray        // Elem[], Elem[Min..Max]
	TypeObject       // a declared type (Name set), or a record (an object literal, parallel's result)
	TypeVerification // Verification<{checks}>, verify's result
	TypeAgent        // a use agent alias: an agent() target
	TypeTeam         // a use team alias: .main, .member(id)
	TypeTarget       // team.main: an agent() target
)

// Type is the type of a value or of a TypeRef.
type Type struct {
	Kind TypeKind
	// Name is a declared or external type's name, the team of
	// member<team>, or the alias of an agent or team binding.
	Name string
	// Elem is an array's element type; nil for the empty array literal,
	// whose elements fit any type.
	Elem *Type
	// Bounded says the array has [Min..Max] bounds.
	Bounded  bool
	Min, Max int
	// Fields are an object's fields, or a Verification's checks.
	Fields []*Field
	// Optional marks the value read from an optional field (T?): absent
	// until ?? gives it a fallback.
	Optional bool
}

// Field is a field of an object type, or a check of a Verification.
type Field struct {
	Name     string
	Optional bool
	Type     *Type
}

// The types every program shares.
var (
	tInvalid  = &Type{Kind: TypeInvalid}
	tAny      = &Type{Kind: TypeAny}
	tText     = &Type{Kind: TypeText}
	tNumber   = &Type{Kind: TypeNumber}
	tBool     = &Type{Kind: TypeBool}
	tDuration = &Type{Kind: TypeDuration}
	tPath     = &Type{Kind: TypePath}
	tNull     = &Type{Kind: TypeNull}
	tPaths    = &Type{Kind: TypeArray, Elem: tPath}
)

// builtinTypes are the type names every workflow knows.
var builtinTypes = map[string]*Type{
	"text":         tText,
	"number":       tNumber,
	"bool":         tBool,
	"duration":     tDuration,
	"path":         tPath,
	"any":          tAny,
	"Verification": {Kind: TypeVerification},
}

// field is t's field name, or nil.
func (t *Type) field(name string) *Field {
	for _, f := range t.Fields {
		if f.Name == name {
			return f
		}
	}
	return nil
}

func (t *Type) invalid() bool { return t == nil || t.Kind == TypeInvalid }

// open says whether t takes any member and fits anywhere: any, an
// external type, or invalid.
func (t *Type) open() bool {
	return t == nil || t.Kind == TypeInvalid || t.Kind == TypeAny || t.Kind == TypeExternal
}

// optional is t?.
func optional(t *Type) *Type {
	if t.Optional || t.open() || t.Kind == TypeNull {
		return t
	}
	o := *t
	o.Optional = true
	return &o
}

// present is t without ?.
func present(t *Type) *Type {
	if !t.Optional {
		return t
	}
	o := *t
	o.Optional = false
	return &o
}

func arrayOf(t *Type) *Type { return &Type{Kind: TypeArray, Elem: t} }

// String is the type as a program writes it; a record is { a: T, b?: U }
// and an optional value T?.
func (t *Type) String() string {
	var b strings.Builder
	t.write(&b)
	return b.String()
}

func (t *Type) write(b *strings.Builder) {
	if t == nil {
		b.WriteString("?")
		return
	}
	switch t.Kind {
	case TypeInvalid:
		b.WriteString("invalid")
	case TypeAny:
		b.WriteString("any")
	case TypeExternal:
		b.WriteString(t.Name)
	case TypeText:
		b.WriteString("text")
	case TypeNumber:
		b.WriteString("number")
	case TypeBool:
		b.WriteString("bool")
	case TypeDuration:
		b.WriteString("duration")
	case TypePath:
		b.WriteString("path")
	case TypeNull:
		b.WriteString("null")
	case TypeMember:
		fmt.Fprintf(b, "member<%s>", t.Name)
	case TypeArray:
		if t.Elem == nil {
			b.WriteString("[]")
			break
		}
		t.Elem.write(b)
		if t.Bounded {
			fmt.Fprintf(b, "[%d..%d]", t.Min, t.Max)
		} else {
			b.WriteString("[]")
		}
	case TypeObject:
		if t.Name != "" {
			b.WriteString(t.Name)
			break
		}
		writeFields(b, t.Fields)
	case TypeVerification:
		b.WriteString("Verification")
		if t.Fields != nil {
			b.WriteString("<")
			writeFields(b, t.Fields)
			b.WriteString(">")
		}
	case TypeAgent:
		b.WriteString("agent " + t.Name)
	case TypeTeam:
		b.WriteString("team " + t.Name)
	case TypeTarget:
		b.WriteString("agent target")
	}
	if t.Optional {
		b.WriteString("?")
	}
}

func writeFields(b *strings.Builder, fs []*Field) {
	if len(fs) == 0 {
		b.WriteString("{}")
		return
	}
	b.WriteString("{ ")
	for i, f := range fs {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(f.Name)
		if f.Optional {
			b.WriteString("?")
		}
		b.WriteString(": ")
		f.Type.write(b)
	}
	b.WriteString(" }")
}

// assignable says whether a value of type src may be used where dst is
// declared (docs/agentflow.md, "Assignability").
func assignable(src, dst *Type) bool {
	if src.open() || dst.open() {
		return true
	}
	if src.Kind == TypeNull {
		return dst.Optional || dst.Kind == TypeNull
	}
	if src.Optional && !dst.Optional {
		return false
	}
	switch dst.Kind {
	case TypeText:
		return src.Kind == TypeText || src.Kind == TypePath || src.Kind == TypeMember
	case TypePath:
		return src.Kind == TypePath || src.Kind == TypeText
	case TypeNumber, TypeBool, TypeDuration, TypeAgent, TypeTeam, TypeTarget:
		return src.Kind == dst.Kind && src.Name == dst.Name
	case TypeMember:
		return src.Kind == TypeMember && src.Name == dst.Name
	case TypeArray:
		return src.Kind == TypeArray && (src.Elem == nil || dst.Elem == nil || assignable(src.Elem, dst.Elem))
	case TypeObject:
		if src.Kind != TypeObject {
			return false
		}
		if src.Name != "" || dst.Name != "" {
			// Declared types are nominal; a record fits a declared
			// type whose fields it gives.
			return src.Name == dst.Name || src.Name == "" && fits(src.Fields, dst.Fields, false)
		}
		return fits(src.Fields, dst.Fields, true)
	case TypeVerification:
		return src.Kind == TypeVerification && (dst.Fields == nil || src.Fields != nil && fits(src.Fields, dst.Fields, true))
	}
	return false
}

// fits says whether record fields src give the fields dst: each of src
// is one of dst and assignable to it, each required field of dst is in
// src; exact: and no field of dst is missing.
func fits(src, dst []*Field, exact bool) bool {
	for _, s := range src {
		d := fieldIn(dst, s.Name)
		if d == nil {
			return false
		}
		dt := d.Type
		if d.Optional {
			dt = optional(dt)
		}
		st := s.Type
		if s.Optional {
			st = optional(st)
		}
		if !assignable(st, dt) {
			return false
		}
	}
	for _, d := range dst {
		if (exact || !d.Optional) && fieldIn(src, d.Name) == nil {
			return false
		}
	}
	return true
}

func fieldIn(fs []*Field, name string) *Field {
	for _, f := range fs {
		if f.Name == name {
			return f
		}
	}
	return nil
}

// unify is the type both a and b fit, or nil when there is none: the
// common element type of an array literal, the result of ??.
func unify(a, b *Type) *Type {
	switch {
	case a.invalid() || b.invalid():
		return tInvalid
	case a.Kind == TypeNull && b.Kind == TypeNull:
		return a
	case a.Kind == TypeNull:
		return optional(b)
	case b.Kind == TypeNull:
		return optional(a)
	case a.Kind == TypeArray && b.Kind == TypeArray && (a.Elem == nil || b.Elem == nil):
		if a.Elem == nil {
			return b
		}
		return a
	case a.Kind == TypeArray && b.Kind == TypeArray && !a.Bounded && !b.Bounded:
		if e := unify(a.Elem, b.Elem); e != nil {
			t := arrayOf(e)
			t.Optional = a.Optional || b.Optional
			return t
		}
		return nil
	case assignable(a, b):
		return b
	case assignable(b, a):
		return a
	}
	return nil
}

func whole(v float64) bool { return v >= 0 && v <= 1<<53 && v == float64(int64(v)) }
