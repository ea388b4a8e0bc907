package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"strings"

	"github.com/symphonix/symphonix/agentflow"
	"github.com/symphonix/symphonix/flow"
	"github.com/symphonix/symphonix/internal/cli"
	"github.com/symphonix/symphonix/journal"
	"github.com/symphonix/symphonix/llm"
	"github.com/symphonix/symphonix/node"
)

// maxInputBytes bounds agent run FILE.af's --input, and its --context.
const maxInputBytes = 1 << 20

// afRun is what agent run FILE.af was given.
type afRun struct {
	path, workflow string
	inputs         []string
	// context is --context's JSON; nil when it was not given.
	context         *string
	boardURL, token string
	journalDetail   journal.Detail
	journalMaxBytes int64
}

// runAF is agent run FILE.af --input JSON: the workflow run once with the
// model agent run uses for a flow (llm.FromEnv); its output printed as
// JSON on stdout, its progress as lines of JSON on stderr. A file with
// errors prints its diagnostics (as agent check does) and is not run; an
// input that is not a JSON object, or does not fit the workflow's input
// type, and a --context that is not JSON or does not fit its context type,
// are usage errors. Its agent() calls are journalled in the file's folder
// as a flow's model calls are; with a board (--monitor), the run is
// reported to it as it goes (node.StartAF), and the board's tool switches
// for the workflow hold every tool call of the flow agents it calls.
func runAF(ctx context.Context, a *app, o afRun) error {
	if len(o.inputs) > 1 {
		return cli.Usagef("--input: an Agent Flow workflow takes one input, a JSON object; %d were given", len(o.inputs))
	}
	raw := "{}"
	if len(o.inputs) == 1 {
		raw = o.inputs[0]
	}
	input, err := readJSONFlag("input", raw)
	if err != nil {
		return err
	}
	if _, ok := input.(map[string]any); !ok {
		return cli.Usagef("--input: want a JSON object, not %s", jsonKind(input))
	}
	var wfContext any
	if o.context != nil {
		if wfContext, err = readJSONFlag("context", *o.context); err != nil {
			return err
		}
	}
	path := o.path
	src, err := readAF(path)
	if err != nil {
		return err
	}
	f, diags := agentflow.Parse(src)
	if agentflow.HasErrors(diags) {
		printDiagnostics(a.stderr, path, diags)
		return cli.ErrReported
	}
	if err := checkAFContext(f, o.workflow, o.context != nil); err != nil {
		return err
	}
	name := afWorkflowName(f, o.workflow)
	model, line := llm.FromEnv(a.getenv)
	envModel := model
	fmt.Fprintln(a.stderr, line)
	var (
		rec     *node.AFRun
		runCtx  = ctx
		observe func(context.Context, agentflow.Event)
	)
	resolver := &afAgents{dir: filepath.Dir(path), getenv: a.getenv, logger: a.logger(slog.LevelWarn), stderr: a.stderr, model: envModel}
	defer resolver.close()
	if name != "" { // otherwise Run says which workflow to name
		rec, runCtx, err = node.StartAF(ctx, node.AFConfig{
			Config: node.Config{
				Dir: filepath.Dir(path), BoardURL: o.boardURL, Token: o.token, Getenv: a.getenv,
				Logger: a.logger(slog.LevelWarn), Stderr: a.stderr,
				JournalDetail: o.journalDetail, JournalMaxBytes: o.journalMaxBytes,
			},
			Name: name, Source: src, Tools: resolver.tools(afWorkflow(f, name)),
		}, input.(map[string]any))
		if err != nil {
			return err
		}
		model, observe = rec.WrapModel(model), rec.Observe
		// The board's switches for the workflow hold every tool call of
		// the flow agents it calls.
		resolver.wrapModel, resolver.wrapTools, resolver.run = rec.WrapModel, rec.WrapTools, rec
	}
	out, err := agentflow.Run(runCtx, f, input, agentflow.Config{
		Workflow: o.workflow,
		Context:  wfContext,
		Model:    afModel{model},
		Agents:   resolver.resolve,
		Observe:  observe,
		Progress: func(p map[string]any) {
			b, err := json.Marshal(p)
			if err == nil {
				fmt.Fprintf(a.stderr, "progress: %s\n", b)
			}
		},
	})
	if rec != nil {
		if gave := rec.Finish(ctx, out, err); gave != nil {
			return gave
		}
	}
	var ce *agentflow.CheckError
	switch {
	case errors.As(err, &ce):
		printDiagnostics(a.stderr, path, ce.Diagnostics)
		return cli.ErrReported
	case errors.Is(err, agentflow.ErrContext):
		return cli.Usagef("--context: %v", err)
	case errors.Is(err, agentflow.ErrInput):
		return cli.Usagef("--input: %v", err)
	case err != nil:
		var re *agentflow.RunError
		if errors.As(err, &re) {
			return fmt.Errorf("%s:%w", path, err) // FILE:LINE:COL: what
		}
		return fmt.Errorf("%s: %w", path, err)
	}
	return cli.PrintJSON(a.stdout, out)
}

// readJSONFlag reads --flag's one JSON value, at most maxInputBytes.
func readJSONFlag(flag, raw string) (any, error) {
	if len(raw) > maxInputBytes {
		return nil, cli.Usagef("--%s: %d bytes, more than the %d it may be", flag, len(raw), maxInputBytes)
	}
	dec := json.NewDecoder(strings.NewReader(raw))
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, cli.Usagef("--%s: not JSON: %v", flag, err)
	}
	if dec.More() {
		return nil, cli.Usagef("--%s: more than one JSON value", flag)
	}
	return v, nil
}

// afWorkflowName is the name of the workflow a run of f runs: the one
// named, or the file's only one; "" when there is no such one.
func afWorkflowName(f *agentflow.File, name string) string {
	for _, w := range f.Workflows {
		if w.Name == nil {
			continue
		}
		if w.Name.Name == name || (name == "" && len(f.Workflows) == 1) {
			return w.Name.Name
		}
	}
	return ""
}

// afWorkflow is f's workflow named name.
func afWorkflow(f *agentflow.File, name string) *agentflow.Workflow {
	for _, w := range f.Workflows {
		if w.Name != nil && w.Name.Name == name {
			return w
		}
	}
	return &agentflow.Workflow{}
}

// checkAFContext refuses --context for a workflow that takes none.
func checkAFContext(f *agentflow.File, name string, given bool) error {
	if !given {
		return nil
	}
	for _, w := range f.Workflows {
		if w.Name == nil || (name != "" && w.Name.Name != name) || (name == "" && len(f.Workflows) != 1) {
			continue
		}
		if w.Context == nil {
			return cli.Usagef("--context: workflow %s takes no context (its parameters are input alone)", w.Name.Name)
		}
	}
	return nil
}

func jsonKind(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case []any:
		return "an array"
	case string:
		return "a string"
	case float64:
		return "a number"
	case bool:
		return "a boolean"
	}
	return "an object"
}

// afModel asks a flow model an agent() call's question: one prompt of
// the task, then the input, tools and write paths as JSON, with the expect
// type's JSON Schema. A provider's 429 is agentflow.ErrRateLimited; its
// 5xx, and a connection that failed, agentflow.ErrTransient.
type afModel struct{ m flow.Model }

func (am afModel) Ask(ctx context.Context, q agentflow.Question) (string, error) {
	var p bytes.Buffer
	p.WriteString(q.Task)
	for _, part := range []struct {
		name string
		v    any
		set  bool
	}{{"Input", q.Input, q.Input != nil}, {"Tools you may use", q.Tools, q.Tools != nil}, {"Paths you may write", q.Write, q.Write != nil}} {
		if !part.set {
			continue
		}
		b, err := json.Marshal(part.v)
		if err != nil {
			return "", err
		}
		fmt.Fprintf(&p, "\n\n%s (JSON):\n%s", part.name, b)
	}
	agent := q.Resource
	if q.Member != "" {
		agent += "#" + q.Member
	}
	reply, err := am.m.Complete(ctx, flow.ModelRequest{Node: q.Agent, Agent: agent, Prompt: p.String(), JSONSchema: q.Schema})
	if err != nil {
		return "", afRetryCode(ctx, err)
	}
	return strings.TrimSpace(reply.Text), nil
}
