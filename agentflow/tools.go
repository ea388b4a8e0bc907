package agentflow

import "fmt"

// ToolChecker is a Model that knows the tools the agent it runs has. Run
// asks it, before any stage runs, about each name the tools option of an
// agent() call it answers gives; an error refuses the run: a *RunError at
// the tools option, `7:9: tools [nope]: why`. The model is then to hold
// each call to its Question's Tools.
type ToolChecker interface {
	CheckTool(name string) error
}

// WriteChecker is a Model that takes the paths a call's write option
// gives. Run asks it about each path, once the option's value is known and
// before the call's first try; an error fails the call without asking: a
// *RunError at the write option's value, `9:15: write "../x": why`.
type WriteChecker interface {
	CheckWrite(path string) error
}

// checkTools asks the ToolChecker answering each agent() call of p whose
// target is a use alias about the names its tools option gives.
func (r *run) checkTools(p *Pipeline) error {
	var err error
	walkAgents(p, func(x *AgentExpr) {
		id, ok := x.Target.(*Ident)
		if !ok || err != nil {
			return
		}
		tc, ok := r.models[id.Name].(ToolChecker)
		if !ok {
			return
		}
		for _, o := range x.Options {
			o, ok := o.(*ToolsOption)
			if !ok {
				continue
			}
			for _, n := range o.Names {
				if e := tc.CheckTool(n.Name); e != nil {
					err = &RunError{Pos: o.Pos(), Message: fmt.Sprintf("tools [%s] of agent(%s)", n.Name, id.Name), Err: e}
					return
				}
			}
		}
	})
	return err
}

// walkAgents calls fn with each agent() expression under n, in source
// order (an agent() call before those in its options).
func walkAgents(n Node, fn func(*AgentExpr)) {
	switch n := n.(type) {
	case nil:
	case *Pipeline:
		walkStmts(n.Body, fn)
	case *Stage:
		walkStmts(n.Body, fn)
	case *Let:
		walkExpr(n.Value, fn)
	case *Require:
		walkExpr(n.Cond, fn)
	case *Emit:
		if n.Payload != nil {
			walkExpr(n.Payload, fn)
		}
	case *Return:
		walkExpr(n.Value, fn)
	case *If:
		walkExpr(n.Cond, fn)
		walkStmts(n.Then, fn)
		walkStmts(n.Else, fn)
	}
}

func walkStmts(ss []Stmt, fn func(*AgentExpr)) {
	for _, s := range ss {
		walkAgents(s, fn)
	}
}

func walkExpr(x Expr, fn func(*AgentExpr)) {
	switch x := x.(type) {
	case nil:
	case *ArrayLit:
		for _, e := range x.Elems {
			walkExpr(e, fn)
		}
	case *ObjectLit:
		if x == nil {
			return
		}
		for _, f := range x.Fields {
			if f.Value != nil {
				walkExpr(f.Value, fn)
			}
		}
	case *ParenExpr:
		walkExpr(x.X, fn)
	case *UnaryExpr:
		walkExpr(x.X, fn)
	case *BinaryExpr:
		walkExpr(x.X, fn)
		walkExpr(x.Y, fn)
	case *RangeExpr:
		walkExpr(x.Lo, fn)
		walkExpr(x.Hi, fn)
	case *MemberExpr:
		walkExpr(x.X, fn)
	case *ProjectionExpr:
		walkExpr(x.X, fn)
	case *CallExpr:
		walkExpr(x.Fun, fn)
		for _, a := range x.Args {
			walkExpr(a, fn)
		}
	case *AgentExpr:
		fn(x)
		walkExpr(x.Target, fn)
		for _, o := range x.Options {
			switch o := o.(type) {
			case *InputOption:
				if o.Payload != nil {
					walkExpr(o.Payload, fn)
				}
			case *WriteOption:
				walkExpr(o.Paths, fn)
			}
		}
	case *ParallelExpr:
		for _, b := range x.Branches {
			walkExpr(b.Value, fn)
		}
	case *ParallelMapExpr:
		walkExpr(x.Source, fn)
		walkExpr(x.Body, fn)
	case *VerifyExpr:
		for _, c := range x.Checks {
			switch c := c.(type) {
			case *Check:
				walkExpr(c.Value, fn)
			case *CheckGroup:
				for _, c := range c.Checks {
					walkExpr(c.Value, fn)
				}
			}
		}
		walkExpr(x.Cond, fn)
	}
}
