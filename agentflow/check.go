package agentflow

import (
	"fmt"
	"sort"
)

// CheckFile checks a parsed file against the language's static rules —
// scopes, types, stages and their dependencies, agent() options — and
// returns what it finds, sorted by position, with the reference's codes
// and severities (docs/agentflow.md, "The checker"). It reads any tree,
// a partial one included; a tree with syntax errors may give diagnostics
// that fixing those errors would remove, so a caller that has them
// usually reports them alone. Every diagnostic is about one node and
// spans it; an expression made unknown by an error is not reported again.
func CheckFile(f *File) []Diagnostic {
	c := &checker{}
	if f == nil {
		return nil
	}
	seen := map[string]bool{}
	for _, w := range f.Workflows {
		if w == nil {
			continue
		}
		if w.Name != nil {
			if seen[w.Name.Name] {
				c.report(w.Name, CodeDuplicateWorkflow, "workflow %s is declared already", w.Name.Name)
			}
			seen[w.Name.Name] = true
		}
		c.workflow(w)
	}
	sort.SliceStable(c.diags, func(i, j int) bool { return c.diags[i].Pos.Offset < c.diags[j].Pos.Offset })
	return c.diags
}

type checker struct {
	diags []Diagnostic
	decls *decls

	// The pipeline being checked: its stages by name, and the stage
	// whose body is being checked (nil in the pipeline's own body).
	stages map[string]*Stage
	done   map[string]*Type // the results of the stages completed so far
	stage  *Stage
}

// report records a diagnostic over n, with the catalogue's severity.
func (c *checker) report(n Node, code, format string, args ...any) {
	c.diags = append(c.diags, Diagnostic{Pos: n.Pos(), End: n.End(), Severity: SeverityOf(code), Code: code, Message: fmt.Sprintf(format, args...)})
}

func (c *checker) workflow(w *Workflow) {
	c.decls = declare(w, c)
	ws := newScope(nil)
	if w.Param == nil || w.Param.Name == nil {
		c.report(w, CodeMissingInput, "workflow %s has no input parameter", name(w.Name))
		ws.declare("input", tInvalid) // said once, here
	} else {
		if w.Param.Name.Name != "input" {
			c.report(w.Param.Name, CodeWorkflowParamName, "the workflow's parameter is %s; it must be named input", w.Param.Name.Name)
		}
		ws.declare(w.Param.Name.Name, c.resolve(w.Param.Type, true))
	}
	if w.Context != nil {
		ws.declare("context", c.resolve(w.Context.Type, true))
	}
	out := c.resolve(w.Output, true)
	var limits, pipeline Node
	for _, m := range w.Members {
		switch m := m.(type) {
		case *Use:
			if m.Alias == nil {
				continue
			}
			kind := TypeAgent
			if m.Kind == "team" {
				kind = TypeTeam
			}
			if !ws.declare(m.Alias.Name, &Type{Kind: kind, Name: m.Alias.Name}) {
				c.report(m.Alias, CodeDuplicateAlias, "%s is declared already", m.Alias.Name)
			}
		case *Limits:
			if limits != nil {
				c.report(m, CodeDuplicateLimits, "the workflow has limits already")
			}
			limits = m
			c.limits(m)
		case *Pipeline:
			if pipeline != nil {
				c.report(m, CodeDuplicatePipeline, "the workflow has a pipeline already")
			}
			pipeline = m
		}
	}
	c.decls.check(c)
	for _, m := range w.Members {
		if p, ok := m.(*Pipeline); ok {
			c.pipeline(p, ws, out)
		}
	}
	if pipeline == nil && w.Name != nil {
		c.report(w.Name, CodeMissingPipeline, "workflow %s has no pipeline", name(w.Name))
	}
}

func name(id *Ident) string {
	if id == nil {
		return "(unnamed)"
	}
	return id.Name
}

// limits: concurrency and agent_runs are whole numbers from 1, duration
// a duration longer than 0; each at most once.
func (c *checker) limits(l *Limits) {
	seen := map[string]bool{}
	for _, f := range l.Fields {
		if f == nil || f.Name == nil {
			continue
		}
		if seen[f.Name.Name] {
			c.report(f, CodeInvalidLimits, "%s is set already", f.Name.Name)
			continue
		}
		seen[f.Name.Name] = true
		switch v := f.Value.(type) {
		case *NumberLit:
			if f.Name.Name == "duration" {
				c.report(f.Value, CodeInvalidLimits, "duration is a duration (500ms, 5s, 10m, 2h), not the number %s", v.Raw)
			} else if !whole(v.Value) || v.Value < 1 {
				c.report(f.Value, CodeInvalidLimits, "%s is a whole number from 1, not %s", f.Name.Name, v.Raw)
			}
		case *DurationLit:
			if f.Name.Name != "duration" {
				c.report(f.Value, CodeInvalidLimits, "%s is a whole number from 1, not the duration %s", f.Name.Name, v.Raw)
			} else if v.Millis <= 0 {
				c.report(f.Value, CodeInvalidLimits, "duration must be longer than 0")
			}
		default:
			c.report(f, CodeInvalidLimits, "%s has no value", f.Name.Name)
		}
	}
}
