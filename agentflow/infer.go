package agentflow

// dangerous are member names never accessed, whatever the value: they
// reach into the runtime's objects (docs/agentflow.md).
var dangerous = map[string]bool{
	"constructor": true, "prototype": true, "__proto__": true,
	"__defineGetter__": true, "__defineSetter__": true, "__lookupGetter__": true, "__lookupSetter__": true,
	"hasOwnProperty": true, "isPrototypeOf": true, "propertyIsEnumerable": true,
	"toLocaleString": true, "toString": true, "valueOf": true,
}

// expr checks e in s and is its type; tInvalid when an error (reported
// here or earlier) leaves it unknown.
func (c *checker) expr(e Expr, s *scope) *Type {
	switch e := e.(type) {
	case nil:
		return tInvalid
	case *Ident:
		return c.variable(e, s)
	case *StringLit:
		return tText
	case *NumberLit:
		return tNumber
	case *DurationLit:
		return tDuration
	case *BoolLit:
		return tBool
	case *NullLit:
		return tNull
	case *ParenExpr:
		return c.expr(e.X, s)
	case *ArrayLit:
		return c.array(e, s)
	case *ObjectLit:
		return c.object(e, s)
	case *UnaryExpr:
		t := c.expr(e.X, s)
		if !isBool(t) {
			c.report(e.X, CodeOperatorType, "not wants bool, not %s%s", t, absence(t))
		}
		return tBool
	case *BinaryExpr:
		return c.binary(e, s)
	case *RangeExpr:
		// Only in's right operand, which binary checks.
		c.expr(e.Lo, s)
		c.expr(e.Hi, s)
		return tInvalid
	case *MemberExpr:
		return c.member(e, s)
	case *ProjectionExpr:
		c.expr(e.X, s)
		c.report(e, CodeInvalidProjection, "a projection names a field: xs[*].field")
		return tInvalid
	case *CallExpr:
		return c.call(e, s)
	case *AgentExpr:
		return c.agent(e, s)
	case *ParallelExpr:
		return c.parallel(e, s)
	case *ParallelMapExpr:
		return c.parallelMap(e, s)
	case *VerifyExpr:
		return c.verify(e, s)
	}
	return tInvalid
}

// variable is the type a name is bound to. In a stage's body, another
// stage's result is visible only as a declared dependency.
func (c *checker) variable(id *Ident, s *scope) *Type {
	if t, ok := s.lookup(id.Name); ok {
		if t == nil {
			return tInvalid
		}
		return t
	}
	if c.stage != nil && c.stages[id.Name] != nil && c.stages[id.Name] != c.stage {
		c.report(id, CodeUndeclaredDependency, "stage %s reads %s, which it does not depend on: add after %s", name(c.stage.Name), id.Name, id.Name)
		return tInvalid
	}
	c.report(id, CodeUnknownVariable, "unknown variable %s", id.Name)
	return tInvalid
}

// array is an array literal's type: its elements' common type.
func (c *checker) array(a *ArrayLit, s *scope) *Type {
	var elem *Type
	bad := false
	for _, x := range a.Elems {
		t := c.expr(x, s)
		if bad {
			continue
		}
		if elem == nil {
			elem = t
			continue
		}
		u := unify(elem, t)
		if u == nil {
			c.report(x, CodeHeterogeneousArray, "an array's elements have one type: this is %s, the elements before it %s", t, elem)
			bad = true
			continue
		}
		elem = u
	}
	if bad || elem.invalid() && elem != nil {
		return tInvalid
	}
	return arrayOf(elem)
}

// object is an object literal's type: a record of its fields. A field
// without a value is the variable of its name.
func (c *checker) object(o *ObjectLit, s *scope) *Type {
	t := &Type{Kind: TypeObject, Fields: []*Field{}}
	for _, f := range o.Fields {
		if f == nil || f.Name == nil {
			continue
		}
		var ft *Type
		if f.Value == nil {
			ft = c.variable(f.Name, s)
		} else {
			ft = c.expr(f.Value, s)
		}
		if t.field(f.Name.Name) != nil {
			c.report(f.Name, CodeDuplicateObjectField, "field %s is given already", f.Name.Name)
			continue
		}
		t.Fields = append(t.Fields, &Field{Name: f.Name.Name, Type: ft})
	}
	return t
}

func (c *checker) binary(e *BinaryExpr, s *scope) *Type {
	switch e.Op {
	case "??":
		x, y := c.expr(e.X, s), c.expr(e.Y, s)
		switch {
		case x.invalid() || y.invalid():
			return tInvalid
		case x.Kind == TypeNull:
			return y
		}
		u := unify(present(x), y)
		if u == nil {
			c.report(e.Y, CodeOperatorType, "the fallback is %s; the value it stands in for is %s", y, present(x))
			return tInvalid
		}
		return u
	case "and", "or":
		x, y := c.expr(e.X, s), c.expr(e.Y, s)
		if !isBool(x) {
			c.report(e.X, CodeOperatorType, "%s wants bool operands, not %s%s", e.Op, x, absence(x))
		}
		if !isBool(y) {
			c.report(e.Y, CodeOperatorType, "%s wants bool operands, not %s%s", e.Op, y, absence(y))
		}
		return tBool
	case "==", "!=":
		x, y := c.expr(e.X, s), c.expr(e.Y, s)
		if !assignable(x, y) && !assignable(y, x) {
			c.report(e, CodeOperatorType, "%s compares values of one type, not %s and %s", e.Op, x, y)
		}
		return tBool
	case "<", "<=", ">", ">=":
		x, y := c.expr(e.X, s), c.expr(e.Y, s)
		c.ordered(e, e.Op, x, y)
		return tBool
	case "in":
		x := c.expr(e.X, s)
		r, ok := e.Y.(*RangeExpr)
		if !ok {
			c.expr(e.Y, s)
			return tBool
		}
		lo, hi := c.expr(r.Lo, s), c.expr(r.Hi, s)
		if c.ordered(r, "..", lo, hi) {
			c.ordered(e, "in", x, lo)
		}
		return tBool
	}
	c.expr(e.X, s)
	c.expr(e.Y, s)
	return tInvalid
}

// ordered reports at n unless x and y are both numbers or both
// durations (or unknown); it says whether they are.
func (c *checker) ordered(n Node, op string, x, y *Type) bool {
	if x.open() || y.open() {
		return true
	}
	if !x.Optional && !y.Optional && x.Kind == y.Kind && (x.Kind == TypeNumber || x.Kind == TypeDuration) {
		return true
	}
	c.report(n, CodeOperatorType, "%s wants two numbers or two durations, not %s and %s", op, x, y)
	return false
}

// member is X.NAME, or the projection X[*].NAME.
func (c *checker) member(e *MemberExpr, s *scope) *Type {
	if e.Name == nil {
		c.expr(e.X, s)
		return tInvalid
	}
	if p, ok := e.X.(*ProjectionExpr); ok {
		xs := c.expr(p.X, s)
		if dangerous[e.Name.Name] {
			c.report(e.Name, CodeDangerousMemberAccess, "%s is never accessed", e.Name.Name)
			return tInvalid
		}
		switch {
		case xs.open():
			return xs
		case xs.Optional:
			c.report(p, CodeOptionalMemberAccess, "%s is optional: give it a fallback with ?? before projecting it", xs)
			return tInvalid
		case xs.Kind != TypeArray:
			c.report(p, CodeInvalidProjection, "[*] projects an array, not %s", xs)
			return tInvalid
		case xs.Elem == nil:
			return arrayOf(nil)
		}
		t := c.field(e, present(xs.Elem))
		if t.invalid() {
			return t
		}
		return arrayOf(t)
	}
	x := c.expr(e.X, s)
	if dangerous[e.Name.Name] {
		c.report(e.Name, CodeDangerousMemberAccess, "%s is never accessed", e.Name.Name)
		return tInvalid
	}
	if x.Optional && !x.open() {
		c.report(e, CodeOptionalMemberAccess, "%s is optional: give it a fallback with ?? before reading .%s", x, e.Name.Name)
		return tInvalid
	}
	return c.field(e, x)
}

// field is the type of member e.Name of a value of type x.
func (c *checker) field(e *MemberExpr, x *Type) *Type {
	n := e.Name.Name
	switch x.Kind {
	case TypeInvalid:
		return tInvalid
	case TypeAny, TypeExternal:
		return tAny
	case TypeObject:
		if f := x.field(n); f != nil {
			if f.Optional {
				return optional(f.Type)
			}
			return f.Type
		}
	case TypeArray:
		switch n {
		case "count":
			return tNumber
		case "empty", "any":
			return tBool
		}
	case TypeVerification:
		switch n {
		case "passed", "failed":
			return tBool
		case "checks":
			if x.Fields == nil {
				return tAny
			}
			return &Type{Kind: TypeObject, Fields: x.Fields}
		}
	case TypeTeam:
		if n == "main" {
			return &Type{Kind: TypeTarget, Name: x.Name}
		}
	}
	c.report(e.Name, CodeInvalidMemberAccess, "%s has no member %s", x, n)
	return tInvalid
}
