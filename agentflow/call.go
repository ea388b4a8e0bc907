package agentflow

// builtins are the functions a program may call.
var builtins = map[string]bool{"unique": true, "disjoint": true, "union": true}

// call is a builtin's call: unique(xs), disjoint(xss), union(xss).
// team.member(id) is an agent() target, which agent checks; anywhere else
// it is refused.
func (c *checker) call(e *CallExpr, s *scope) *Type {
	args := make([]*Type, len(e.Args))
	for i, a := range e.Args {
		args[i] = c.expr(a, s)
	}
	if m, ok := e.Fun.(*MemberExpr); ok && m.Name != nil && m.Name.Name == "member" {
		if id, ok := m.X.(*Ident); ok {
			if t, ok := s.lookup(id.Name); ok && t != nil && t.Kind == TypeTeam {
				c.report(e, CodeInvalidAgentTarget, "%s.member(...) chooses an agent: it is legal only as agent()'s target", id.Name)
				return tInvalid
			}
		}
	}
	id, ok := e.Fun.(*Ident)
	if e.Fun == nil {
		c.report(e, CodeUnknownBuiltin, "only the builtins unique, disjoint and union are called")
		return tInvalid
	}
	if !ok || !builtins[id.Name] {
		c.report(e.Fun, CodeUnknownBuiltin, "only the builtins unique, disjoint and union are called")
		return tInvalid
	}
	if len(args) != 1 {
		c.report(e, CodeInvalidBuiltinCall, "%s takes one argument, not %d", id.Name, len(args))
		return tInvalid
	}
	a := args[0]
	nested := id.Name != "unique"
	switch {
	case a.invalid():
		return tInvalid
	case a.open():
	case a.Kind != TypeArray || a.Optional:
		c.report(e.Args[0], CodeInvalidBuiltinCall, "%s takes %s, not %s", id.Name, wants(nested), a)
		return tInvalid
	case nested && a.Elem != nil && !a.Elem.open() && (a.Elem.Kind != TypeArray || a.Elem.Optional):
		c.report(e.Args[0], CodeInvalidBuiltinCall, "%s takes %s, not %s", id.Name, wants(nested), a)
		return tInvalid
	}
	if id.Name != "union" {
		return tBool
	}
	switch {
	case a.open():
		return arrayOf(tAny)
	case a.Elem == nil:
		return arrayOf(nil)
	case a.Elem.open():
		return arrayOf(tAny)
	}
	return arrayOf(a.Elem.Elem)
}

func wants(nested bool) string {
	if nested {
		return "an array of arrays"
	}
	return "an array"
}

// agent is agent(TARGET) { options }: its type is its expect type.
func (c *checker) agent(e *AgentExpr, s *scope) *Type {
	c.target(e.Target, s)
	seen := map[string]bool{}
	result := tInvalid
	for _, o := range e.Options {
		if o == nil {
			continue
		}
		kind := optionName(o)
		if seen[kind] {
			c.report(o, CodeDuplicateAgentOption, "%s is given already", kind)
		}
		first := !seen[kind]
		seen[kind] = true
		switch o := o.(type) {
		case *InputOption:
			if o.Payload != nil {
				c.object(o.Payload, s)
			}
		case *ToolsOption:
			tools := map[string]bool{}
			for _, n := range o.Names {
				if n == nil {
					continue
				}
				if tools[n.Name] {
					c.report(n, CodeDuplicateTool, "tool %s is listed already", n.Name)
				}
				tools[n.Name] = true
			}
		case *WriteOption:
			if t := c.expr(o.Paths, s); !assignable(t, tPaths) {
				c.report(o.Paths, CodeWriteNotPathArray, "write takes path[], not %s%s", t, absence(t))
			}
		case *ExpectOption:
			t := c.resolve(o.Type, false)
			if why := schemaless(t); why != "" {
				c.report(o.Type, CodeExpectInvalidType, "expect %s: %s has no JSON Schema", t, why)
				t = tInvalid
			}
			if first {
				result = t
			}
		case *TimeoutOption:
			if o.Timeout != nil && o.Timeout.Millis <= 0 {
				c.report(o.Timeout, CodeInvalidTimeout, "timeout must be longer than 0")
			}
		case *RetryOption:
			if o.Attempts != nil && !whole(o.Attempts.Value) {
				c.report(o.Attempts, CodeInvalidRetry, "attempts is a whole number of extra tries, not %s", o.Attempts.Raw)
			}
			codes := map[string]bool{}
			for _, code := range o.On {
				if code == nil {
					continue
				}
				if codes[code.Name] {
					c.report(code, CodeInvalidRetry, "%s is listed already", code.Name)
				}
				codes[code.Name] = true
			}
		}
	}
	if !seen["task"] {
		c.report(e, CodeAgentMissingTask, "agent() needs a task")
	}
	if !seen["expect"] {
		c.report(e, CodeAgentMissingExpect, "agent() needs expect T: the type of its answer")
	}
	return result
}

func optionName(o AgentOption) string {
	switch o.(type) {
	case *TaskOption:
		return "task"
	case *InputOption:
		return "input"
	case *ToolsOption:
		return "tools"
	case *WriteOption:
		return "write"
	case *ExpectOption:
		return "expect"
	case *TimeoutOption:
		return "timeout"
	}
	return "retry"
}

// target checks agent()'s target: a use agent alias, team.main, or
// team.member(id) with id a member<team>.
func (c *checker) target(x Expr, s *scope) {
	switch x := x.(type) {
	case *Ident:
		t := c.variable(x, s)
		if !t.invalid() && t.Kind != TypeAgent {
			c.report(x, CodeInvalidAgentTarget, "agent()'s target is a use agent alias, team.main or team.member(id); %s is %s", x.Name, t)
		}
		return
	case *CallExpr:
		if m, ok := x.Fun.(*MemberExpr); ok && m.Name != nil && m.Name.Name == "member" {
			if id, ok := m.X.(*Ident); ok {
				team := c.variable(id, s)
				if team.invalid() {
					for _, a := range x.Args {
						c.expr(a, s)
					}
					return
				}
				if team.Kind == TypeTeam {
					c.memberArg(x, team, s)
					return
				}
			}
		}
	}
	if t := c.expr(x, s); !t.invalid() && t.Kind != TypeTarget {
		c.report(x, CodeInvalidAgentTarget, "agent()'s target is a use agent alias, team.main or team.member(id), not %s", t)
	}
}

// memberArg checks team.member(ARG): one argument, a member<team>.
func (c *checker) memberArg(x *CallExpr, team *Type, s *scope) {
	if len(x.Args) != 1 {
		for _, a := range x.Args {
			c.expr(a, s)
		}
		c.report(x, CodeInvalidMemberArgument, "%s.member takes one member id, not %d arguments", team.Name, len(x.Args))
		return
	}
	want := &Type{Kind: TypeMember, Name: team.Name}
	if t := c.expr(x.Args[0], s); !assignable(t, want) {
		c.report(x.Args[0], CodeInvalidMemberArgument, "%s.member takes a %s, not %s%s", team.Name, want, t, absence(t))
	}
}

// parallel is parallel { name = value, ... }: a record of its branches.
func (c *checker) parallel(e *ParallelExpr, s *scope) *Type {
	t := &Type{Kind: TypeObject, Fields: []*Field{}}
	for _, b := range e.Branches {
		if b == nil || b.Name == nil {
			continue
		}
		bt := c.expr(b.Value, s)
		if t.field(b.Name.Name) != nil {
			c.report(b.Name, CodeDuplicateBranch, "branch %s is declared already", b.Name.Name)
			continue
		}
		t.Fields = append(t.Fields, &Field{Name: b.Name.Name, Type: bt})
	}
	return t
}

// parallelMap is parallel map SOURCE as ITEM limit N { BODY }: T[] to U[].
func (c *checker) parallelMap(e *ParallelMapExpr, s *scope) *Type {
	src := c.expr(e.Source, s)
	item := tInvalid
	switch {
	case src.open():
		item = tAny
		if src.invalid() {
			item = tInvalid
		}
	case src.Kind != TypeArray || src.Optional:
		c.report(e.Source, CodeParallelMapSourceArray, "parallel map goes over an array, not %s%s", src, absence(src))
	case src.Elem == nil:
		item = tAny
	default:
		item = src.Elem
	}
	if e.Limit != nil && (!whole(e.Limit.Value) || e.Limit.Value < 1) {
		c.report(e.Limit, CodeInvalidLimit, "limit is a whole number from 1, not %s", e.Limit.Raw)
	}
	ms := newScope(s)
	if e.Item != nil {
		ms.declare(e.Item.Name, item)
	}
	body := c.expr(e.Body, ms)
	if body.invalid() {
		return tInvalid
	}
	return arrayOf(body)
}

// verify is verify { checks pass when COND }: Verification<{checks}>.
// The checks' values are in s; pass when also sees the checks.
func (c *checker) verify(e *VerifyExpr, s *scope) *Type {
	t := &Type{Kind: TypeVerification, Fields: []*Field{}}
	vs := newScope(s)
	add := func(k *Check) {
		if k == nil || k.Name == nil {
			return
		}
		kt := c.expr(k.Value, s)
		if !vs.declare(k.Name.Name, kt) {
			c.report(k.Name, CodeDuplicateCheck, "check %s is declared already", k.Name.Name)
			return
		}
		t.Fields = append(t.Fields, &Field{Name: k.Name.Name, Type: kt})
	}
	for _, vc := range e.Checks {
		switch vc := vc.(type) {
		case *Check:
			add(vc)
		case *CheckGroup:
			for _, k := range vc.Checks {
				add(k)
			}
		}
	}
	if p := c.expr(e.Cond, vs); !isBool(p) {
		c.report(e.Cond, CodeVerifyPredicateNotBool, "pass when is %s, not bool%s", p, absence(p))
	}
	return t
}
