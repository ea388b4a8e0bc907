package agentflow

import (
	"fmt"
	"strings"
)

// Parse parses src, a .af file, into its syntax tree. The diagnostics are
// Lex's and the parser's, in source order of discovery; with any error the
// tree is partial (a construct that failed is left out). A file with
// several syntax errors reports each: after an error the parser skips to
// the next statement or declaration, and reports nothing more at the same
// token, so one mistake is one error.
func Parse(src []byte) (*File, []Diagnostic) {
	toks, diags := Lex(src)
	p := &parser{diags: diags, lastErr: -1, toks: make([]Token, 0, len(toks))}
	f := &File{}
	for _, t := range toks {
		switch t.Kind {
		case KindLineComment, KindBlockComment:
			f.Comments = append(f.Comments, &Comment{Span: Span{t.Pos, t.End}, Text: t.Text})
		default:
			p.toks = append(p.toks, t)
		}
	}
	for _, d := range diags {
		if d.End.Offset >= len(src) {
			p.lexToEOF = true // an unterminated string or comment: the end of file is no news
		}
	}
	if len(src) > MaxSourceBytes {
		return f, diags
	}
	open := 0
	for _, t := range p.toks {
		if t.Kind == KindPunct && t.Text == "{" {
			open++
		} else if t.Kind == KindPunct && t.Text == "}" {
			open--
		}
	}
	p.balanced = open == 0
	p.tok = &p.toks[0]
	p.file(f)
	return f, p.diags
}

type parser struct {
	toks     []Token // without comments
	i        int
	tok      *Token
	prevEnd  Position // the end of the last token consumed
	braces   int      // { consumed less } consumed
	depth    int
	diags    []Diagnostic
	nerrs    int
	lastErr  int // offset of the token the last error was reported at
	lexToEOF bool
	balanced bool // as many "}" as "{" in the file: a block is not missing its "}"
}

// errStmt aborts the construct being parsed; the nearest block skips to
// its next item. errStop ends the parse.
type errStmt struct{}
type errStop struct{}

func (p *parser) next() {
	switch {
	case p.tok.Kind == KindPunct && p.tok.Text == "{":
		p.braces++
	case p.tok.Kind == KindPunct && p.tok.Text == "}":
		p.braces--
	}
	p.prevEnd = p.tok.End
	if p.i < len(p.toks)-1 {
		p.i++
	}
	p.tok = &p.toks[p.i]
}

func (p *parser) peek(n int) *Token {
	if p.i+n < len(p.toks) {
		return &p.toks[p.i+n]
	}
	return &p.toks[len(p.toks)-1]
}

func (p *parser) is(text string) bool {
	return (p.tok.Kind == KindPunct || p.tok.Kind == KindKeyword) && p.tok.Text == text
}

// report records an error at the current token, unless one was reported
// there already, the lexer reported the token, or the lexer's error ran to
// the end of the file.
func (p *parser) report(format string, args ...any) {
	t := p.tok
	if t.Pos.Offset == p.lastErr || t.Kind == KindIllegal || (t.Kind == KindEOF && p.lexToEOF) {
		return
	}
	p.lastErr = t.Pos.Offset
	if p.nerrs == MaxErrors {
		p.diags = append(p.diags, Diagnostic{Pos: t.Pos, End: t.End, Severity: SeverityError, Code: CodeSyntax, Message: fmt.Sprintf("too many errors (%d): the rest of the file is not parsed", MaxErrors)})
		panic(errStop{})
	}
	p.nerrs++
	p.diags = append(p.diags, Diagnostic{Pos: t.Pos, End: t.End, Severity: SeverityError, Code: CodeSyntax, Message: fmt.Sprintf(format, args...)})
}

// fail reports that want was expected here and aborts the construct.
func (p *parser) fail(want string) {
	p.report("expected %s, found %s", want, describe(*p.tok))
	panic(errStmt{})
}

func describe(t Token) string {
	switch t.Kind {
	case KindEOF:
		return "end of file"
	case KindIdent:
		return fmt.Sprintf("identifier %q", t.Text)
	case KindString:
		s := t.Text
		if len(s) > 24 {
			s = s[:20] + `…"`
		}
		return "string " + s
	case KindMLString:
		return "multiline string"
	case KindNumber, KindDuration:
		return fmt.Sprintf("%s %s", t.Kind, t.Text)
	}
	return fmt.Sprintf("%q", t.Text)
}

func quote(words ...string) string {
	q := make([]string, len(words))
	for i, w := range words {
		q[i] = fmt.Sprintf("%q", w)
	}
	if len(q) == 1 {
		return q[0]
	}
	return strings.Join(q[:len(q)-1], ", ") + " or " + q[len(q)-1]
}

// expect consumes the punctuation or keyword text, or fails.
func (p *parser) expect(text string) *Token {
	if !p.is(text) {
		p.fail(quote(text))
	}
	t := p.tok
	p.next()
	return t
}

// enter counts one level of nesting; leave undoes it.
func (p *parser) enter() {
	p.depth++
	if p.depth > MaxNesting {
		t := p.tok
		p.diags = append(p.diags, Diagnostic{Pos: t.Pos, End: t.End, Severity: SeverityError, Code: CodeSyntax, Message: fmt.Sprintf("nested more than %d levels deep", MaxNesting)})
		panic(errStop{})
	}
}

func (p *parser) leave() { p.depth-- }

func (p *parser) span(from Position) Span { return Span{from, p.prevEnd} }

// ident is the grammar's Id: an identifier or input, context, duration,
// member.
func (p *parser) ident() *Ident {
	if p.tok.Kind == KindIdent || p.tok.Kind == KindKeyword && contextual[p.tok.Text] {
		return p.take()
	}
	p.wantName()
	return nil
}

// strictIdent is the grammar's ID: an identifier, no word of the grammar.
func (p *parser) strictIdent() *Ident {
	if p.tok.Kind == KindIdent {
		return p.take()
	}
	p.wantName()
	return nil
}

func (p *parser) wantName() {
	if p.tok.Kind == KindKeyword {
		p.report("expected a name, found %q: a keyword of the language", p.tok.Text)
		panic(errStmt{})
	}
	p.fail("a name")
}

// fieldName is the grammar's FieldName: any identifier or word.
func (p *parser) fieldName() *Ident {
	if p.tok.Kind == KindIdent || p.tok.Kind == KindKeyword {
		return p.take()
	}
	p.fail("a field name")
	return nil
}

func (p *parser) take() *Ident {
	t := p.tok
	p.next()
	return &Ident{Span: Span{t.Pos, t.End}, Name: t.Text}
}

func (p *parser) file(f *File) {
	defer func() {
		if r := recover(); r != nil {
			if _, ok := r.(errStop); !ok {
				panic(r)
			}
		}
	}()
	f.Span = Span{Position{Offset: 0, Line: 1, Column: 1}, p.tok.Pos}
	for p.tok.Kind != KindEOF {
		if !p.startsAt(levelFile, false) {
			p.report("expected %s, found %s", levelWants[levelFile], describe(*p.tok))
			p.next()
			p.sync(levelFile, 0)
			continue
		}
		p.try(levelFile, func() { f.Workflows = append(f.Workflows, p.workflow()) })
	}
	if len(f.Workflows) == 0 && !HasErrors(p.diags) {
		p.report("expected %s, found end of file", levelWants[levelFile])
	}
	f.To = p.tok.End
}

func (p *parser) workflow() *Workflow {
	from := p.expect("workflow").Pos
	w := &Workflow{Name: p.strictIdent()}
	p.expect("(")
	w.Param = p.param(p.ident())
	if p.is(",") {
		p.next()
		if !p.is("context") {
			p.fail(quote("context"))
		}
		w.Context = p.param(p.take())
	}
	p.expect(")")
	p.expect("->")
	w.Output = p.typeRef()
	p.block(levelWorkflow, false, func() { w.Members = append(w.Members, p.member()) })
	w.Span = p.span(from)
	return w
}

func (p *parser) param(name *Ident) *Param {
	p.expect(":")
	t := p.typeRef()
	return &Param{Span: Span{name.From, t.To}, Name: name, Type: t}
}

func (p *parser) typeRef() *TypeRef {
	from := p.tok.Pos
	t := &TypeRef{}
	if p.is("member") && p.peek(1).Kind == KindPunct && p.peek(1).Text == "<" {
		p.next()
		p.next()
		t.Member = true
		t.Name = p.ident()
		p.expect(">")
	} else {
		t.Name = p.ident()
	}
	for p.is("[") {
		s := &TypeSuffix{}
		sf := p.tok.Pos
		p.next()
		if p.tok.Kind == KindNumber {
			s.Min = p.number()
			p.expect("..")
			if p.tok.Kind != KindNumber {
				p.fail("a number")
			}
			s.Max = p.number()
		} else if !p.is("]") {
			p.fail(`a number or "]"`)
		}
		p.expect("]")
		s.Span = p.span(sf)
		t.Suffixes = append(t.Suffixes, s)
	}
	t.Span = p.span(from)
	return t
}

func (p *parser) number() *NumberLit {
	t := p.tok
	p.next()
	return &NumberLit{Span: Span{t.Pos, t.End}, Value: t.Number, Raw: t.Text}
}

func (p *parser) duration() *DurationLit {
	t := p.tok
	p.next()
	return &DurationLit{Span: Span{t.Pos, t.End}, Millis: t.Millis, Raw: t.Text}
}

func (p *parser) stringLit() *StringLit {
	t := p.tok
	p.next()
	return &StringLit{Span: Span{t.Pos, t.End}, Value: t.Value, Raw: t.Text, Multiline: t.Kind == KindMLString}
}

func (p *parser) member() Member {
	from := p.tok.Pos
	switch p.tok.Text {
	case "use":
		p.next()
		u := &Use{}
		if !p.is("agent") && !p.is("team") {
			p.fail(quote("agent", "team"))
		}
		u.Kind = p.tok.Text
		p.next()
		if p.tok.Kind != KindString {
			p.fail(`a string ("...")`)
		}
		u.Resource = p.stringLit()
		p.expect("as")
		u.Alias = p.strictIdent()
		u.Span = p.span(from)
		return u
	case "limits":
		p.next()
		l := &Limits{}
		p.expect("{")
		p.commaList("}", true, false, func() {
			ff := p.tok.Pos
			if !p.is("concurrency") && !p.is("agent_runs") && !p.is("duration") {
				p.fail(quote("concurrency", "agent_runs", "duration"))
			}
			f := &LimitField{Name: p.take()}
			p.expect(":")
			switch p.tok.Kind {
			case KindNumber:
				f.Value = p.number()
			case KindDuration:
				f.Value = p.duration()
			default:
				p.fail("a number or a duration")
			}
			f.Span = p.span(ff)
			l.Fields = append(l.Fields, f)
		})
		l.Span = p.span(from)
		return l
	case "type":
		p.next()
		d := &TypeDecl{Name: p.strictIdent()}
		p.expect("{")
		p.commaList("}", true, true, func() {
			ff := p.tok.Pos
			f := &TypeField{Name: p.fieldName()}
			if p.is("?") {
				p.next()
				f.Optional = true
			}
			p.expect(":")
			f.Type = p.typeRef()
			f.Span = p.span(ff)
			d.Fields = append(d.Fields, f)
		})
		d.Span = p.span(from)
		return d
	}
	p.expect("pipeline")
	pl := &Pipeline{}
	if p.tok.Kind == KindIdent {
		pl.Name = p.take()
	}
	p.block(levelPipeline, false, func() { pl.Body = append(pl.Body, p.stmt()) })
	pl.Span = p.span(from)
	return pl
}

// commaList parses items separated by commas up to close (consumed):
// trailing says whether a comma may end the list, empty whether it may
// have no item.
func (p *parser) commaList(close string, trailing, empty bool, item func()) {
	p.enter()
	defer p.leave()
	if p.is(close) {
		if !empty {
			item() // fails, saying what an item starts with
		}
		p.next()
		return
	}
	for {
		item()
		if p.is(close) {
			p.next()
			return
		}
		if !p.is(",") {
			p.fail(quote(close, ","))
		}
		p.next()
		if trailing && p.is(close) {
			p.next()
			return
		}
	}
}

func (p *parser) stmt() Stmt {
	from := p.tok.Pos
	switch p.tok.Text {
	case "stage":
		p.next()
		s := &Stage{Name: p.strictIdent()}
		if p.is("after") {
			p.next()
			s.After = append(s.After, p.strictIdent())
			for p.is(",") {
				p.next()
				s.After = append(s.After, p.strictIdent())
			}
		}
		if !p.is("->") {
			if s.After == nil {
				p.fail(quote("after", "->"))
			}
			p.fail(quote(",", "->"))
		}
		p.next()
		s.Result = p.typeRef()
		p.block(levelStage, false, func() { s.Body = append(s.Body, p.stmt()) })
		s.Span = p.span(from)
		return s
	case "let":
		p.next()
		s := &Let{Name: p.ident()}
		p.expect("=")
		s.Value = p.expr()
		s.Span = p.span(from)
		return s
	case "require":
		p.next()
		s := &Require{Cond: p.expr()}
		p.expect("else")
		p.expect("fail")
		if p.tok.Kind != KindString {
			p.fail(`a string ("...")`)
		}
		s.Message = p.stringLit()
		s.Span = p.span(from)
		return s
	case "emit":
		p.next()
		p.expect("progress")
		s := &Emit{Payload: p.object()}
		s.Span = p.span(from)
		return s
	case "return":
		p.next()
		s := &Return{Value: p.expr()}
		s.Span = p.span(from)
		return s
	}
	p.expect("if")
	s := &If{Cond: p.expr()}
	p.block(levelStage, true, func() { s.Then = append(s.Then, p.stmt()) })
	if p.is("else") {
		p.next()
		s.Else = []Stmt{}
		p.block(levelStage, true, func() { s.Else = append(s.Else, p.stmt()) })
	}
	s.Span = p.span(from)
	return s
}
