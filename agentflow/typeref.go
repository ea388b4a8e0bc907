package agentflow

// decls are a workflow's declarations that types refer to: its type
// declarations, its use aliases, and the names its boundary (the input,
// context and output types) refers to that it does not declare — its
// external types.
type decls struct {
	w        *Workflow
	types    map[string]*Type
	order    []*TypeDecl // the first declaration of each name, in source order
	teams    map[string]bool
	aliases  map[string]bool
	external map[string]bool
	told     map[string]bool // external types said so once
}

// declare collects w's declarations; with c, it reports duplicate types
// and fields.
func declare(w *Workflow, c *checker) *decls {
	d := &decls{w: w, types: map[string]*Type{}, teams: map[string]bool{}, aliases: map[string]bool{}, external: map[string]bool{}, told: map[string]bool{}}
	for _, m := range w.Members {
		switch m := m.(type) {
		case *Use:
			if m.Alias != nil && !d.aliases[m.Alias.Name] {
				d.aliases[m.Alias.Name] = true
				d.teams[m.Alias.Name] = m.Kind == "team"
			}
		case *TypeDecl:
			if m.Name == nil {
				continue
			}
			if _, ok := d.types[m.Name.Name]; ok {
				if c != nil {
					c.report(m.Name, CodeDuplicateType, "type %s is declared already", m.Name.Name)
				}
				continue
			}
			d.types[m.Name.Name] = &Type{Kind: TypeObject, Name: m.Name.Name}
			d.order = append(d.order, m)
		}
	}
	for _, r := range []*TypeRef{paramType(w.Param), paramType(w.Context), w.Output} {
		if r != nil && !r.Member && r.Name != nil && d.types[r.Name.Name] == nil && builtinTypes[r.Name.Name] == nil {
			d.external[r.Name.Name] = true
		}
	}
	// The fields, resolved silently here; check reports what is wrong.
	for _, td := range d.order {
		t := d.types[td.Name.Name]
		for _, f := range td.Fields {
			if f == nil || f.Name == nil || t.field(f.Name.Name) != nil {
				continue
			}
			t.Fields = append(t.Fields, &Field{Name: f.Name.Name, Optional: f.Optional, Type: d.resolve(f.Type, false, nil)})
		}
	}
	return d
}

func paramType(p *Param) *TypeRef {
	if p == nil {
		return nil
	}
	return p.Type
}

// check reports what is wrong with the type declarations: duplicate
// fields, unknown types and teams, bounds, and recursion.
func (d *decls) check(c *checker) {
	for _, m := range d.w.Members {
		td, ok := m.(*TypeDecl)
		if !ok {
			continue
		}
		seen := map[string]bool{}
		for _, f := range td.Fields {
			if f == nil || f.Name == nil {
				continue
			}
			if seen[f.Name.Name] {
				c.report(f.Name, CodeDuplicateTypeField, "field %s is declared already", f.Name.Name)
			}
			seen[f.Name.Name] = true
			d.resolve(f.Type, false, c)
		}
	}
	d.recursion(c)
}

// resolve is the type ref names: a declared type first, then a built-in
// one, then an external one; at the boundary, an undeclared name is
// external (info, once a name), elsewhere unknown (an error). With c nil
// nothing is reported.
func (d *decls) resolve(r *TypeRef, boundary bool, c *checker) *Type {
	if r == nil || r.Name == nil {
		return tInvalid
	}
	var t *Type
	switch {
	case r.Member:
		if d.aliases[r.Name.Name] && d.teams[r.Name.Name] {
			t = &Type{Kind: TypeMember, Name: r.Name.Name}
		} else {
			if c != nil {
				if d.aliases[r.Name.Name] {
					c.report(r.Name, CodeUnknownTeam, "%s is an agent, not a team: member<T> names a use team alias", r.Name.Name)
				} else {
					c.report(r.Name, CodeUnknownTeam, "no team is declared as %s (use team \"...\" as %s)", r.Name.Name, r.Name.Name)
				}
			}
			t = tInvalid
		}
	case d.types[r.Name.Name] != nil:
		t = d.types[r.Name.Name]
	case builtinTypes[r.Name.Name] != nil:
		t = builtinTypes[r.Name.Name]
	case d.external[r.Name.Name]:
		t = &Type{Kind: TypeExternal, Name: r.Name.Name}
		if boundary && c != nil && !d.told[r.Name.Name] {
			d.told[r.Name.Name] = true
			c.report(r.Name, CodeExternalType, "%s is not declared in the workflow: an external type, taken as any", r.Name.Name)
		}
	default:
		if c != nil {
			c.report(r.Name, CodeUnknownType, "unknown type %s", r.Name.Name)
		}
		t = tInvalid
	}
	for _, s := range r.Suffixes {
		if s == nil {
			continue
		}
		a := &Type{Kind: TypeArray, Elem: t}
		if s.Min != nil && s.Max != nil {
			switch {
			case !whole(s.Min.Value) || !whole(s.Max.Value):
				if c != nil {
					c.report(s, CodeInvalidBounds, "array bounds are whole numbers, not %s..%s", s.Min.Raw, s.Max.Raw)
				}
			case s.Min.Value > s.Max.Value:
				if c != nil {
					c.report(s, CodeInvalidBounds, "the least count %s is more than the most %s", s.Min.Raw, s.Max.Raw)
				}
			default:
				a.Bounded, a.Min, a.Max = true, int(s.Min.Value), int(s.Max.Value)
			}
		}
		if t.invalid() {
			a = tInvalid
		}
		t = a
	}
	return t
}

// recursion reports each cycle of declared types once (a strongly
// connected component of the graph of fields naming declared types), at
// the first declared type of the cycle, on its field that leads back.
func (d *decls) recursion(c *checker) {
	n := len(d.order)
	index := make(map[string]int, n)
	for i, td := range d.order {
		index[td.Name.Name] = i
	}
	refs := make([][]int, n)
	for i, td := range d.order {
		for _, f := range td.Fields {
			if j, ok := declaredIn(f, index); ok {
				refs[i] = append(refs[i], j)
			}
		}
	}
	// Tarjan's algorithm: comp[i] is type i's component.
	comp := make([]int, n)
	low := make([]int, n)
	num := make([]int, n) // 0: not visited yet
	on := make([]bool, n)
	var stack []int
	next, ncomp := 1, 0
	var visit func(v int)
	visit = func(v int) {
		num[v], low[v] = next, next
		next++
		stack = append(stack, v)
		on[v] = true
		for _, w := range refs[v] {
			if num[w] == 0 {
				visit(w)
				low[v] = min(low[v], low[w])
			} else if on[w] {
				low[v] = min(low[v], num[w])
			}
		}
		if low[v] == num[v] {
			for {
				w := stack[len(stack)-1]
				stack = stack[:len(stack)-1]
				on[w] = false
				comp[w] = ncomp
				if w == v {
					break
				}
			}
			ncomp++
		}
	}
	for i := range n {
		if num[i] == 0 {
			visit(i)
		}
	}
	reported := make([]bool, ncomp)
	for i, td := range d.order {
		if reported[comp[i]] {
			continue
		}
		for _, f := range td.Fields {
			if j, ok := declaredIn(f, index); ok && comp[j] == comp[i] {
				reported[comp[i]] = true
				c.report(f.Type, CodeRecursiveType, "type %s refers to itself through field %s", td.Name.Name, f.Name.Name)
				break
			}
		}
	}
}

// declaredIn is the index of the declared type field f names.
func declaredIn(f *TypeField, index map[string]int) (int, bool) {
	if f == nil || f.Type == nil || f.Type.Member || f.Type.Name == nil {
		return 0, false
	}
	j, ok := index[f.Type.Name.Name]
	return j, ok
}

// resolve is d.resolve, reporting.
func (c *checker) resolve(r *TypeRef, boundary bool) *Type {
	return c.decls.resolve(r, boundary, c)
}
