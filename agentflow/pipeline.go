package agentflow

// returns is what a return in the body being checked must give.
type returns struct {
	t        *Type
	mismatch string // the code of a value of another type
	position string // the code of a return before the block's end
	what     string // "the workflow" or "stage NAME", for messages
}

// pipeline checks a pipeline: its statements and stages in source order,
// each stage's name bound after the stage (the results completed so far).
func (c *checker) pipeline(p *Pipeline, ws *scope, out *Type) {
	c.stages, c.done = map[string]*Stage{}, map[string]*Type{}
	for _, st := range p.Body {
		if s, ok := st.(*Stage); ok && s.Name != nil {
			if _, dup := c.stages[s.Name.Name]; !dup {
				c.stages[s.Name.Name] = s
			}
		}
	}
	ps := newScope(ws)
	ret := &returns{t: out, mismatch: CodeWorkflowReturnMismatch, position: CodePipelineReturnPosition, what: "the workflow"}
	c.block(p.Body, ps, ret)
	if !endsInReturn(p.Body) {
		c.report(p, CodeMissingReturn, "the pipeline does not end with return")
	}
	c.stages, c.done, c.stage = nil, nil, nil
}

func endsInReturn(body []Stmt) bool {
	if len(body) == 0 {
		return false
	}
	_, ok := body[len(body)-1].(*Return)
	return ok
}

// block checks the statements of one block in s. A return must be the
// last statement of its block.
func (c *checker) block(body []Stmt, s *scope, ret *returns) {
	for i, st := range body {
		if r, ok := st.(*Return); ok && i < len(body)-1 {
			c.report(r, ret.position, "return is not the last statement of its block: what follows it never runs")
		}
		c.stmt(st, s, ret)
	}
}

func (c *checker) stmt(st Stmt, s *scope, ret *returns) {
	switch st := st.(type) {
	case *Stage:
		c.stageStmt(st, s)
	case *Let:
		if st.Name == nil {
			return
		}
		t := c.expr(st.Value, s)
		if !s.declare(st.Name.Name, t) {
			c.report(st.Name, CodeDuplicateVariable, "%s is declared already in this scope", st.Name.Name)
		}
	case *Require:
		if t := c.expr(st.Cond, s); !isBool(t) {
			c.report(st.Cond, CodeRequireNotBool, "require's condition is %s, not bool%s", t, absence(t))
		}
	case *Emit:
		if st.Payload == nil {
			c.report(st, CodeInvalidEmit, "emit progress needs its payload object: emit progress { ... }")
			return
		}
		c.object(st.Payload, s)
	case *Return:
		t := c.expr(st.Value, s)
		if st.Value != nil && !assignable(t, ret.t) {
			c.report(st.Value, ret.mismatch, "%s returns %s; this is %s%s", ret.what, ret.t, t, absence(t))
		}
	case *If:
		if t := c.expr(st.Cond, s); !isBool(t) {
			c.report(st.Cond, CodeIfNotBool, "if's condition is %s, not bool%s", t, absence(t))
		}
		c.block(st.Then, newScope(s), ret)
		c.block(st.Else, newScope(s), ret)
	}
}

// isBool: t is bool, or unknown.
func isBool(t *Type) bool {
	return t.open() || t.Kind == TypeBool && !t.Optional
}

// absence is a hint when t is optional.
func absence(t *Type) string {
	if t.Optional {
		return " (an optional value: give it a fallback with ??)"
	}
	return ""
}

// stageStmt checks a stage: its dependencies, its body in a scope of the
// workflow's names and its dependencies, and binds its result in the
// pipeline's scope ps.
func (c *checker) stageStmt(st *Stage, ps *scope) {
	if st.Name == nil {
		return
	}
	ss := newScope(ps.parent)
	seen := map[string]bool{}
	for _, dep := range st.After {
		if dep == nil {
			continue
		}
		switch d, ok := c.stages[dep.Name]; {
		case seen[dep.Name]:
			c.report(dep, CodeDuplicateDependency, "%s is listed already", dep.Name)
		case !ok:
			c.report(dep, CodeUnknownStage, "no stage %s in this pipeline", dep.Name)
		case d == st:
			c.report(dep, CodeForwardDependency, "stage %s depends on itself: a stage depends only on stages before it", dep.Name)
		case d.Pos().Offset > st.Pos().Offset:
			c.report(dep, CodeForwardDependency, "stage %s comes after %s: a stage depends only on stages before it", dep.Name, st.Name.Name)
		default:
			ss.declare(dep.Name, c.done[dep.Name])
		}
		seen[dep.Name] = true
	}
	result := c.resolve(st.Result, false)
	c.stage = st
	ret := &returns{t: result, mismatch: CodeStageReturnMismatch, position: CodeStageReturnPosition, what: "stage " + st.Name.Name}
	c.block(st.Body, ss, ret)
	c.stage = nil
	if !endsInReturn(st.Body) {
		c.report(st, CodeStageMissingReturn, "stage %s does not end with return", st.Name.Name)
	}
	switch {
	case c.stages[st.Name.Name] != st:
		c.report(st.Name, CodeDuplicateStage, "stage %s is declared already", st.Name.Name)
	case !ps.declare(st.Name.Name, result):
		c.report(st.Name, CodeDuplicateVariable, "%s is declared already in this scope", st.Name.Name)
	default:
		c.done[st.Name.Name] = result
	}
}
