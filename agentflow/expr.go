package agentflow

// The expression grammar, loosest first: ?? (right-assoc), or, and
// (left-assoc), not (over a whole comparison), one comparison or in a..b
// (not chainable), then postfix .member [*] (args).

func (p *parser) expr() Expr {
	x := p.or()
	if p.is("??") {
		op := p.tok.Pos
		p.next()
		p.enter()
		y := p.expr()
		p.leave()
		return &BinaryExpr{Span: Span{x.Pos(), y.End()}, Op: "??", OpPos: op, X: x, Y: y}
	}
	return x
}

func (p *parser) or() Expr  { return p.leftAssoc("or", p.and) }
func (p *parser) and() Expr { return p.leftAssoc("and", p.not) }

func (p *parser) leftAssoc(op string, operand func() Expr) Expr {
	x := operand()
	n := 0
	for p.is(op) {
		pos := p.tok.Pos
		p.next()
		p.enter()
		n++
		y := operand()
		x = &BinaryExpr{Span: Span{x.Pos(), y.End()}, Op: op, OpPos: pos, X: x, Y: y}
	}
	p.depth -= n
	return x
}

func (p *parser) not() Expr {
	if p.is("not") {
		from := p.tok.Pos
		p.next()
		p.enter()
		x := p.not()
		p.leave()
		return &UnaryExpr{Span: Span{from, x.End()}, Op: "not", X: x}
	}
	return p.comparison()
}

var comparisons = map[string]bool{"==": true, "!=": true, "<": true, "<=": true, ">": true, ">=": true}

func (p *parser) comparison() Expr {
	x := p.postfix()
	switch {
	case p.tok.Kind == KindPunct && comparisons[p.tok.Text]:
		op, pos := p.tok.Text, p.tok.Pos
		p.next()
		y := p.postfix()
		return &BinaryExpr{Span: Span{x.Pos(), y.End()}, Op: op, OpPos: pos, X: x, Y: y}
	case p.is("in"):
		pos := p.tok.Pos
		p.next()
		lo := p.postfix()
		p.expect("..")
		hi := p.postfix()
		r := &RangeExpr{Span: Span{lo.Pos(), hi.End()}, Lo: lo, Hi: hi}
		return &BinaryExpr{Span: Span{x.Pos(), hi.End()}, Op: "in", OpPos: pos, X: x, Y: r}
	}
	return x
}

func (p *parser) postfix() Expr {
	x := p.primary()
	n := 0
	defer func() { p.depth -= n }()
	for {
		switch {
		case p.is("."):
			p.next()
			p.enter()
			n++
			name := p.fieldName()
			x = &MemberExpr{Span: Span{x.Pos(), name.End()}, X: x, Name: name}
		case p.is("[*]"):
			p.next()
			p.enter()
			n++
			x = &ProjectionExpr{Span: Span{x.Pos(), p.prevEnd}, X: x}
		case p.is("("):
			p.next()
			p.enter()
			n++
			c := &CallExpr{Fun: x}
			p.commaList(")", false, true, func() { c.Args = append(c.Args, p.expr()) })
			c.Span = Span{x.Pos(), p.prevEnd}
			x = c
		default:
			return x
		}
	}
}

func (p *parser) primary() Expr {
	t := p.tok
	from := t.Pos
	switch t.Kind {
	case KindIdent:
		return p.take()
	case KindString, KindMLString:
		return p.stringLit()
	case KindNumber:
		return p.number()
	case KindDuration:
		return p.duration()
	case KindKeyword:
		switch t.Text {
		case "true", "false":
			p.next()
			return &BoolLit{Span: Span{t.Pos, t.End}, Value: t.Text == "true"}
		case "null":
			p.next()
			return &NullLit{Span: Span{t.Pos, t.End}}
		case "agent":
			return p.agent()
		case "parallel":
			if n := p.peek(1); n.Kind == KindKeyword && n.Text == "map" {
				return p.parallelMap()
			}
			return p.parallel()
		case "verify":
			return p.verify()
		}
		if contextual[t.Text] {
			return p.take()
		}
	case KindPunct:
		switch t.Text {
		case "[":
			p.next()
			a := &ArrayLit{}
			p.commaList("]", false, true, func() { a.Elems = append(a.Elems, p.expr()) })
			a.Span = p.span(from)
			return a
		case "{":
			return p.object()
		case "(":
			p.next()
			p.enter()
			x := p.expr()
			p.leave()
			p.expect(")")
			return &ParenExpr{Span: p.span(from), X: x}
		}
	}
	p.fail("an expression")
	return nil
}

func (p *parser) object() *ObjectLit {
	from := p.expect("{").Pos
	o := &ObjectLit{}
	p.commaList("}", true, true, func() {
		f := &ObjectField{Name: p.fieldName()}
		if p.is(":") {
			p.next()
			f.Value = p.expr()
		}
		f.Span = p.span(f.Name.From)
		o.Fields = append(o.Fields, f)
	})
	o.Span = p.span(from)
	return o
}

var agentOptions = []string{"task", "input", "tools", "write", "expect", "timeout", "retry"}

func (p *parser) agent() Expr {
	from := p.expect("agent").Pos
	p.enter()
	defer p.leave()
	a := &AgentExpr{}
	p.expect("(")
	a.Target = p.expr()
	p.expect(")")
	p.expect("{")
	for !p.is("}") {
		a.Options = append(a.Options, p.agentOption())
	}
	p.next()
	a.Span = p.span(from)
	return a
}

func (p *parser) agentOption() AgentOption {
	from := p.tok.Pos
	if p.tok.Kind != KindKeyword {
		p.fail(quote(append(agentOptions, "}")...))
	}
	switch p.tok.Text {
	case "task":
		p.next()
		if p.tok.Kind != KindString && p.tok.Kind != KindMLString {
			p.fail(`a string ("..." or """...""")`)
		}
		return &TaskOption{Task: p.stringLit(), Span: p.span(from)}
	case "input":
		p.next()
		return &InputOption{Payload: p.object(), Span: p.span(from)}
	case "tools":
		p.next()
		o := &ToolsOption{}
		if p.is("none") {
			p.next()
			o.None = true
		} else {
			if !p.is("[") {
				p.fail(quote("none", "["))
			}
			p.next()
			p.commaList("]", true, false, func() { o.Names = append(o.Names, p.strictIdent()) })
		}
		o.Span = p.span(from)
		return o
	case "write":
		p.next()
		return &WriteOption{Paths: p.expr(), Span: p.span(from)}
	case "expect":
		p.next()
		return &ExpectOption{Type: p.typeRef(), Span: p.span(from)}
	case "timeout":
		p.next()
		if p.tok.Kind != KindDuration {
			p.fail("a duration (500ms, 5s, 10m, 2h)")
		}
		return &TimeoutOption{Timeout: p.duration(), Span: p.span(from)}
	case "retry":
		p.next()
		o := &RetryOption{}
		p.expect("{")
		p.expect("attempts")
		p.expect(":")
		if p.tok.Kind != KindNumber {
			p.fail("a number")
		}
		o.Attempts = p.number()
		if p.is(",") {
			p.next()
			if p.is("on") {
				p.next()
				p.expect(":")
				p.expect("[")
				o.On = []*Ident{}
				p.commaList("]", true, false, func() {
					if !p.is("timeout") && !p.is("rate_limit") && !p.is("transient") {
						p.fail(quote("timeout", "rate_limit", "transient"))
					}
					o.On = append(o.On, p.take())
				})
				if p.is(",") {
					p.next()
				}
			}
		} else if !p.is("}") {
			p.fail(quote("}", ","))
		}
		p.expect("}")
		o.Span = p.span(from)
		return o
	}
	p.fail(quote(append(agentOptions, "}")...))
	return nil
}

func (p *parser) parallel() Expr {
	from := p.expect("parallel").Pos
	p.enter()
	defer p.leave()
	x := &ParallelExpr{}
	p.expect("{")
	p.commaList("}", true, false, func() {
		b := &Branch{Name: p.ident()}
		p.expect("=")
		b.Value = p.expr()
		b.Span = p.span(b.Name.From)
		x.Branches = append(x.Branches, b)
	})
	x.Span = p.span(from)
	return x
}

func (p *parser) parallelMap() Expr {
	from := p.expect("parallel").Pos
	p.expect("map")
	p.enter()
	defer p.leave()
	x := &ParallelMapExpr{Source: p.expr()}
	p.expect("as")
	x.Item = p.ident()
	if p.is("limit") {
		p.next()
		if p.tok.Kind != KindNumber {
			p.fail("a number")
		}
		x.Limit = p.number()
	}
	p.expect("{")
	x.Body = p.expr()
	p.expect("}")
	x.Span = p.span(from)
	return x
}

func (p *parser) verify() Expr {
	from := p.expect("verify").Pos
	p.enter()
	defer p.leave()
	x := &VerifyExpr{}
	p.expect("{")
	for !p.is("pass") || len(x.Checks) == 0 {
		switch {
		case p.is("check"):
			x.Checks = append(x.Checks, p.check())
		case p.is("parallel"):
			gf := p.tok.Pos
			p.next()
			p.expect("{")
			g := &CheckGroup{}
			for {
				if !p.is("check") {
					p.fail(quote("check"))
				}
				g.Checks = append(g.Checks, p.check())
				if p.is("}") {
					break
				}
			}
			p.next()
			g.Span = p.span(gf)
			x.Checks = append(x.Checks, g)
		case len(x.Checks) == 0:
			p.fail(quote("check", "parallel"))
		default:
			p.fail(quote("check", "parallel", "pass"))
		}
	}
	p.next()
	p.expect("when")
	x.Cond = p.expr()
	p.expect("}")
	x.Span = p.span(from)
	return x
}

func (p *parser) check() *Check {
	from := p.expect("check").Pos
	c := &Check{Name: p.ident()}
	p.expect("=")
	c.Value = p.expr()
	c.Span = p.span(from)
	return c
}
