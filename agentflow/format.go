package agentflow

import (
	"bytes"
	"fmt"
	"strings"
)

// Format lays src out canonically (docs/agentflow.md): two spaces of
// indentation a level, one declaration, statement or agent option a
// line, one space around binary operators, = and ->, after : and ,; a
// bracketed list is laid out one item a line (with a trailing comma
// where the grammar allows one) when the source breaks the line after
// its opening bracket, and on one line otherwise; at most one blank line
// is kept between items, one is put between workflows. Comments stay
// where they were: on the line of the token before them, or on a line of
// their own. Tokens are kept as written (strings, numbers, durations);
// Format changes only the space between them, and commas at the end of a
// list. Format(Format(src)) is Format(src). A file with an error is not
// formatted: the diagnostics are returned and no output.
func Format(src []byte) ([]byte, []Diagnostic) {
	f, diags := Parse(src)
	if HasErrors(diags) {
		return nil, diags
	}
	toks, _ := Lex(src)
	pr := &printer{comments: f.Comments, blankOK: true}
	for _, t := range toks {
		if t.Kind != KindLineComment && t.Kind != KindBlockComment {
			pr.toks = append(pr.toks, t)
		}
	}
	pr.file(f)
	if pr.err != nil {
		end := f.To
		return nil, []Diagnostic{{Pos: end, End: end, Severity: SeverityError, Code: CodeSyntax, Message: "cannot format: " + pr.err.Error()}}
	}
	return pr.buf.Bytes(), nil
}

type printer struct {
	toks     []Token
	ti       int
	comments []*Comment
	ci       int
	buf      bytes.Buffer
	indent   int
	cont     int  // one-line lists open: a line a comment breaks in one is indented one more level
	pendNL   int  // 1: a line break before the next token; 2: a blank line
	space    bool // a space before the next token
	cspace   bool // a space before the next token, unless it is one of noSpaceAfterComment
	blankOK  bool // the pending line break may keep a blank line of the source
	lastLine int  // the source line the last thing printed ended on
	err      error
}

// nl asks for a line break before what comes next; blank lets it keep
// one blank line where the source has one or more.
func (p *printer) nl(blank bool) {
	p.pendNL = max(p.pendNL, 1)
	p.blankOK = blank
}

func (p *printer) sp() { p.space = true }

// noSpaceAfterComment are the tokens that do not take the space a block
// comment on their line would put before them.
var noSpaceAfterComment = map[string]bool{")": true, "]": true, ",": true, ".": true, "[*]": true, ":": true, "?": true, ">": true, "..": true}

// sep writes what was asked for before text, a token or comment on source
// line.
func (p *printer) sep(text string, line int) {
	switch {
	case p.buf.Len() == 0:
	case p.pendNL > 0:
		n := p.pendNL
		if p.blankOK && line-p.lastLine >= 2 {
			n = 2
		}
		p.buf.WriteString(strings.Repeat("\n", n))
		p.buf.WriteString(strings.Repeat("  ", p.indent+min(p.cont, 1)))
	case p.space || p.cspace && !noSpaceAfterComment[text]:
		p.buf.WriteByte(' ')
	}
	p.pendNL, p.space, p.cspace = 0, false, false
}

// flush prints the comments before the token at at.
func (p *printer) flush(at Position) {
	for p.ci < len(p.comments) && p.comments[p.ci].From.Offset < at.Offset {
		c := p.comments[p.ci]
		p.ci++
		if p.buf.Len() > 0 && c.From.Line == p.lastLine {
			p.buf.WriteByte(' ')
		} else {
			p.pendNL = max(p.pendNL, 1)
			p.sep(c.Text, c.From.Line)
		}
		p.buf.WriteString(strings.TrimRight(c.Text, " \t"))
		p.lastLine = c.To.Line
		p.space, p.cspace = false, false
		next := at
		if p.ci < len(p.comments) && p.comments[p.ci].From.Offset < next.Offset {
			next = p.comments[p.ci].From
		}
		if strings.HasPrefix(c.Text, "//") || next.Line > c.To.Line {
			p.pendNL = max(p.pendNL, 1)
		} else if p.pendNL == 0 {
			p.cspace = true
		}
	}
}

// tok prints the next source token, which must be text.
func (p *printer) tok(text string) {
	t := p.toks[p.ti]
	if t.Text != text && p.err == nil {
		p.err = fmt.Errorf("at %s: printing %q, the source has %q", t.Pos, text, t.Text)
	}
	if p.ti < len(p.toks)-1 {
		p.ti++
	}
	p.flush(t.Pos)
	p.sep(text, t.Pos.Line)
	p.buf.WriteString(text)
	p.lastLine = t.End.Line
	p.blankOK = false
}

// synth prints text the source does not have.
func (p *printer) synth(text string) {
	p.sep(text, p.lastLine)
	p.buf.WriteString(text)
}

// drop passes over the next source token, text, without printing it.
func (p *printer) drop() {
	t := p.toks[p.ti]
	p.ti++
	p.flush(t.Pos)
	p.lastLine = t.End.Line
}

func (p *printer) at(text string) bool {
	t := p.toks[p.ti]
	return t.Kind == KindPunct && t.Text == text
}

// commentsBefore says whether a comment comes before the next token.
func (p *printer) commentsBefore() bool {
	return p.ci < len(p.comments) && p.comments[p.ci].From.Offset < p.toks[p.ti].Pos.Offset
}

func (p *printer) file(f *File) {
	for i, w := range f.Workflows {
		if i > 0 {
			p.pendNL = 2
		}
		p.workflow(w)
	}
	p.blankOK = true
	p.nl(true)
	p.flush(p.toks[len(p.toks)-1].Pos)
	p.buf.WriteByte('\n')
}

// block prints { items } one item a line.
func (p *printer) block(n int, item func(i int)) {
	p.tok("{")
	if n == 0 && !p.commentsBefore() {
		p.tok("}")
		return
	}
	cont := p.cont
	p.cont = 0
	defer func() { p.cont = cont }()
	p.indent++
	for i := range n {
		p.nl(i > 0)
		item(i)
	}
	p.nl(true)
	p.flush(p.toks[p.ti].Pos)
	p.indent--
	p.nl(false)
	p.tok("}")
}

// list prints open items close, separated by commas: one item a line
// when the source breaks the line after open, else on one line (padded:
// with a space inside the brackets). trailing: the grammar allows a comma
// after the last item.
func (p *printer) list(open, close string, n int, trailing, padded bool, item func(i int)) {
	vertical := n > 0 && p.toks[p.ti+1].Pos.Line > p.toks[p.ti].Pos.Line
	p.tok(open)
	if !vertical {
		p.cont++
		defer func() { p.cont-- }()
		for i := range n {
			if i > 0 {
				p.tok(",")
			}
			if i > 0 || padded {
				p.sp()
			}
			item(i)
		}
		if n > 0 && p.at(",") && trailing {
			p.drop()
		}
		if padded && n > 0 {
			p.sp()
		}
		p.tok(close)
		return
	}
	cont := p.cont
	p.cont = 0
	defer func() { p.cont = cont }()
	p.indent++
	for i := range n {
		p.nl(i > 0)
		item(i)
		switch {
		case i < n-1:
			p.tok(",")
		case trailing && p.at(","):
			p.tok(",")
		case trailing:
			p.synth(",")
		}
	}
	p.nl(true)
	p.flush(p.toks[p.ti].Pos)
	p.indent--
	p.nl(false)
	p.tok(close)
}

func (p *printer) ident(id *Ident) { p.tok(id.Name) }

func (p *printer) workflow(w *Workflow) {
	p.tok("workflow")
	p.sp()
	p.ident(w.Name)
	p.tok("(")
	p.param(w.Param)
	if w.Context != nil {
		p.tok(",")
		p.sp()
		p.param(w.Context)
	}
	p.tok(")")
	p.sp()
	p.tok("->")
	p.sp()
	p.typeRef(w.Output)
	p.sp()
	p.block(len(w.Members), func(i int) { p.member(w.Members[i]) })
}

func (p *printer) param(a *Param) {
	p.ident(a.Name)
	p.tok(":")
	p.sp()
	p.typeRef(a.Type)
}

func (p *printer) typeRef(t *TypeRef) {
	if t.Member {
		p.tok("member")
		p.tok("<")
		p.ident(t.Name)
		p.tok(">")
	} else {
		p.ident(t.Name)
	}
	for _, s := range t.Suffixes {
		p.tok("[")
		if s.Min != nil {
			p.tok(s.Min.Raw)
			p.tok("..")
			p.tok(s.Max.Raw)
		}
		p.tok("]")
	}
}

func (p *printer) member(m Member) {
	switch m := m.(type) {
	case *Use:
		p.tok("use")
		p.sp()
		p.tok(m.Kind)
		p.sp()
		p.tok(m.Resource.Raw)
		p.sp()
		p.tok("as")
		p.sp()
		p.ident(m.Alias)
	case *Limits:
		p.tok("limits")
		p.sp()
		p.list("{", "}", len(m.Fields), true, true, func(i int) {
			f := m.Fields[i]
			p.ident(f.Name)
			p.tok(":")
			p.sp()
			p.expr(f.Value)
		})
	case *TypeDecl:
		p.tok("type")
		p.sp()
		p.ident(m.Name)
		p.sp()
		p.list("{", "}", len(m.Fields), true, true, func(i int) {
			f := m.Fields[i]
			p.ident(f.Name)
			if f.Optional {
				p.tok("?")
			}
			p.tok(":")
			p.sp()
			p.typeRef(f.Type)
		})
	case *Pipeline:
		p.tok("pipeline")
		if m.Name != nil {
			p.sp()
			p.ident(m.Name)
		}
		p.sp()
		p.stmts(m.Body)
	}
}

func (p *printer) stmts(body []Stmt) {
	p.block(len(body), func(i int) { p.stmt(body[i]) })
}

func (p *printer) stmt(s Stmt) {
	switch s := s.(type) {
	case *Stage:
		p.tok("stage")
		p.sp()
		p.ident(s.Name)
		if len(s.After) > 0 {
			p.sp()
			p.tok("after")
			for i, d := range s.After {
				if i > 0 {
					p.tok(",")
				}
				p.sp()
				p.ident(d)
			}
		}
		p.sp()
		p.tok("->")
		p.sp()
		p.typeRef(s.Result)
		p.sp()
		p.stmts(s.Body)
	case *Let:
		p.tok("let")
		p.sp()
		p.ident(s.Name)
		p.sp()
		p.tok("=")
		p.sp()
		p.expr(s.Value)
	case *Require:
		p.tok("require")
		p.sp()
		p.expr(s.Cond)
		p.sp()
		p.tok("else")
		p.sp()
		p.tok("fail")
		p.sp()
		p.tok(s.Message.Raw)
	case *Emit:
		p.tok("emit")
		p.sp()
		p.tok("progress")
		p.sp()
		p.expr(s.Payload)
	case *Return:
		p.tok("return")
		p.sp()
		p.expr(s.Value)
	case *If:
		p.tok("if")
		p.sp()
		p.expr(s.Cond)
		p.sp()
		p.stmts(s.Then)
		if s.Else != nil {
			p.sp()
			p.tok("else")
			p.sp()
			p.stmts(s.Else)
		}
	}
}

func (p *printer) expr(x Expr) {
	switch x := x.(type) {
	case *Ident:
		p.ident(x)
	case *StringLit:
		p.tok(x.Raw)
	case *NumberLit:
		p.tok(x.Raw)
	case *DurationLit:
		p.tok(x.Raw)
	case *BoolLit:
		p.tok(fmt.Sprint(x.Value))
	case *NullLit:
		p.tok("null")
	case *ArrayLit:
		p.list("[", "]", len(x.Elems), false, false, func(i int) { p.expr(x.Elems[i]) })
	case *ObjectLit:
		p.list("{", "}", len(x.Fields), true, true, func(i int) {
			f := x.Fields[i]
			p.ident(f.Name)
			if f.Value != nil {
				p.tok(":")
				p.sp()
				p.expr(f.Value)
			}
		})
	case *ParenExpr:
		p.tok("(")
		p.expr(x.X)
		p.tok(")")
	case *UnaryExpr:
		p.tok(x.Op)
		p.sp()
		p.expr(x.X)
	case *BinaryExpr:
		p.expr(x.X)
		p.sp()
		p.tok(x.Op)
		p.sp()
		p.expr(x.Y)
	case *RangeExpr:
		p.expr(x.Lo)
		p.tok("..")
		p.expr(x.Hi)
	case *MemberExpr:
		p.expr(x.X)
		p.tok(".")
		p.ident(x.Name)
	case *ProjectionExpr:
		p.expr(x.X)
		p.tok("[*]")
	case *CallExpr:
		p.expr(x.Fun)
		p.list("(", ")", len(x.Args), false, false, func(i int) { p.expr(x.Args[i]) })
	case *AgentExpr:
		p.tok("agent")
		p.tok("(")
		p.expr(x.Target)
		p.tok(")")
		p.sp()
		p.block(len(x.Options), func(i int) { p.agentOption(x.Options[i]) })
	case *ParallelExpr:
		p.tok("parallel")
		p.sp()
		p.list("{", "}", len(x.Branches), true, true, func(i int) {
			b := x.Branches[i]
			p.ident(b.Name)
			p.sp()
			p.tok("=")
			p.sp()
			p.expr(b.Value)
		})
	case *ParallelMapExpr:
		p.tok("parallel")
		p.sp()
		p.tok("map")
		p.sp()
		p.expr(x.Source)
		p.sp()
		p.tok("as")
		p.sp()
		p.ident(x.Item)
		if x.Limit != nil {
			p.sp()
			p.tok("limit")
			p.sp()
			p.tok(x.Limit.Raw)
		}
		p.sp()
		p.list("{", "}", 1, false, true, func(int) { p.expr(x.Body) })
	case *VerifyExpr:
		p.tok("verify")
		p.sp()
		p.block(len(x.Checks)+1, func(i int) {
			if i == len(x.Checks) {
				p.tok("pass")
				p.sp()
				p.tok("when")
				p.sp()
				p.expr(x.Cond)
				return
			}
			switch c := x.Checks[i].(type) {
			case *Check:
				p.check(c)
			case *CheckGroup:
				p.tok("parallel")
				p.sp()
				p.block(len(c.Checks), func(i int) { p.check(c.Checks[i]) })
			}
		})
	}
}

func (p *printer) check(c *Check) {
	p.tok("check")
	p.sp()
	p.ident(c.Name)
	p.sp()
	p.tok("=")
	p.sp()
	p.expr(c.Value)
}

func (p *printer) agentOption(o AgentOption) {
	switch o := o.(type) {
	case *TaskOption:
		p.tok("task")
		p.sp()
		p.tok(o.Task.Raw)
	case *InputOption:
		p.tok("input")
		p.sp()
		p.expr(o.Payload)
	case *ToolsOption:
		p.tok("tools")
		p.sp()
		if o.None {
			p.tok("none")
			return
		}
		p.list("[", "]", len(o.Names), true, false, func(i int) { p.ident(o.Names[i]) })
	case *WriteOption:
		p.tok("write")
		p.sp()
		p.expr(o.Paths)
	case *ExpectOption:
		p.tok("expect")
		p.sp()
		p.typeRef(o.Type)
	case *TimeoutOption:
		p.tok("timeout")
		p.sp()
		p.tok(o.Timeout.Raw)
	case *RetryOption:
		p.tok("retry")
		p.sp()
		n := 1
		if o.On != nil {
			n = 2
		}
		p.list("{", "}", n, true, true, func(i int) {
			if i == 0 {
				p.tok("attempts")
				p.tok(":")
				p.sp()
				p.tok(o.Attempts.Raw)
				return
			}
			p.tok("on")
			p.tok(":")
			p.sp()
			p.list("[", "]", len(o.On), true, false, func(i int) { p.ident(o.On[i]) })
		})
	}
}
