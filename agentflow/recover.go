package agentflow

// Recovery from syntax errors: an error abandons the item of a block it
// is in (errStmt), and the block skips to its next item (docs/agentflow.md,
// "Recovery").

// Block levels: what starts an item at each.
const (
	levelFile = iota
	levelWorkflow
	levelPipeline
	levelStage
)

var starts = [...]map[string]bool{
	levelFile:     {"workflow": true},
	levelWorkflow: {"use": true, "limits": true, "type": true, "pipeline": true},
	levelPipeline: {"stage": true, "let": true, "require": true, "emit": true, "return": true, "if": true},
	levelStage:    {"let": true, "require": true, "emit": true, "return": true, "if": true},
}

var levelWants = [...]string{
	levelFile:     `"workflow"`,
	levelWorkflow: `"use", "limits", "type", "pipeline" or "}"`,
	levelPipeline: `"stage", "let", "require", "emit", "return", "if" or "}"`,
	levelStage:    `"let", "require", "emit", "return", "if" or "}"`,
}

// try runs item; a syntax error in it is reported already: skip to what
// comes next at level.
func (p *parser) try(level int, item func()) {
	depth, braces := p.depth, p.braces
	defer func() {
		if r := recover(); r != nil {
			if _, ok := r.(errStmt); !ok {
				panic(r)
			}
			p.depth = depth
			p.sync(level, braces)
		}
	}()
	item()
}

// startsAt says whether the current token starts an item of level (or,
// with outer, of a level enclosing it, when the file has a block left
// open). A keyword that is a field name here (after '.', before ':')
// starts nothing.
func (p *parser) startsAt(level int, outer bool) bool {
	if p.tok.Kind != KindKeyword || outer && p.balanced {
		return false
	}
	found := false
	for l := level; l >= 0; l-- {
		if starts[l][p.tok.Text] && (l == level) != outer {
			found = true
		}
	}
	if !found {
		return false
	}
	if p.i > 0 && p.toks[p.i-1].Kind == KindPunct && p.toks[p.i-1].Text == "." {
		return false
	}
	switch n := p.peek(1); n.Text {
	case ":", "?", ",", "}":
		return n.Kind != KindPunct
	}
	return true
}

// sync skips to the next item of level, the "}" closing the block (braces
// open inside it), or an item of an enclosing level. In a file whose
// braces balance, braces left open where it stops are closed by the "}"
// that come later (block skips them); in a file with a "}" missing, they
// are taken as closed.
func (p *parser) sync(level, braces int) {
	for p.tok.Kind != KindEOF {
		if p.startsAt(level, false) || p.startsAt(level, true) {
			if !p.balanced {
				p.braces = braces
			}
			return
		}
		if p.is("}") && p.braces <= braces {
			return
		}
		p.next()
	}
}

// block parses { items } at level; the "}" is consumed, unless an item of
// an enclosing level comes first (reported: the block is taken as
// closed). atLeastOne: an empty block is an error.
func (p *parser) block(level int, atLeastOne bool, item func()) {
	p.expect("{")
	p.enter()
	defer p.leave()
	braces := p.braces
	n := 0
	for {
		switch {
		case p.is("}") && p.braces > braces && p.balanced:
			p.next() // closes what an error left open
		case p.is("}"):
			if n == 0 && atLeastOne {
				p.report("expected a statement, found \"}\"")
			}
			p.next()
			return
		case p.tok.Kind == KindEOF:
			p.report("expected %s, found end of file", levelWants[level])
			return
		case p.startsAt(level, false):
			n++
			p.try(level, item)
		case p.startsAt(level, true):
			p.report("expected %s, found %s", levelWants[level], describe(*p.tok))
			p.braces = braces - 1 // taken as closed
			return
		default:
			p.report("expected %s, found %s", levelWants[level], describe(*p.tok))
			p.next()
			p.sync(level, braces)
		}
	}
}
