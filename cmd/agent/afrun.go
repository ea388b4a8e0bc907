package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"strings"

	"github.com/symphonix/symphonix/agentflow"
	"github.com/symphonix/symphonix/flow"
	"github.com/symphonix/symphonix/internal/cli"
	"github.com/symphonix/symphonix/llm"
)

// maxInputBytes bounds agent run FILE.af's --input.
const maxInputBytes = 1 << 20

// runAF is agent run FILE.af --input JSON: the workflow run once with the
// model agent run uses for a flow (llm.FromEnv); its output printed as
// JSON on stdout, its progress as lines of JSON on stderr. A file with
// errors prints its diagnostics (as agent check does) and is not run; an
// input that is not a JSON object, or does not fit the workflow's input
// type, is a usage error.
func runAF(ctx context.Context, a *app, path, workflow string, inputs []string) error {
	if len(inputs) > 1 {
		return cli.Usagef("--input: an Agent Flow workflow takes one input, a JSON object; %d were given", len(inputs))
	}
	raw := "{}"
	if len(inputs) == 1 {
		raw = inputs[0]
	}
	if len(raw) > maxInputBytes {
		return cli.Usagef("--input: %d bytes, more than the %d it may be", len(raw), maxInputBytes)
	}
	dec := json.NewDecoder(strings.NewReader(raw))
	var input any
	if err := dec.Decode(&input); err != nil {
		return cli.Usagef("--input: not JSON: %v", err)
	}
	if dec.More() {
		return cli.Usagef("--input: more than one JSON value")
	}
	if _, ok := input.(map[string]any); !ok {
		return cli.Usagef("--input: want a JSON object, not %s", jsonKind(input))
	}
	src, err := readAF(path)
	if err != nil {
		return err
	}
	f, diags := agentflow.Parse(src)
	if agentflow.HasErrors(diags) {
		printDiagnostics(a.stderr, path, diags)
		return cli.ErrReported
	}
	model, line := llm.FromEnv(a.getenv)
	fmt.Fprintln(a.stderr, line)
	out, err := agentflow.Run(ctx, f, input, agentflow.Config{
		Workflow: workflow,
		Model:    afModel{model},
		Progress: func(p map[string]any) {
			b, err := json.Marshal(p)
			if err == nil {
				fmt.Fprintf(a.stderr, "progress: %s\n", b)
			}
		},
	})
	var ce *agentflow.CheckError
	switch {
	case errors.As(err, &ce):
		printDiagnostics(a.stderr, path, ce.Diagnostics)
		return cli.ErrReported
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
		var pe *llm.ProviderError
		var ne net.Error
		switch {
		case errors.As(err, &pe) && pe.StatusCode == 429:
			return "", fmt.Errorf("%w: %w", agentflow.ErrRateLimited, err)
		case errors.As(err, &pe) && pe.StatusCode >= 500:
			return "", fmt.Errorf("%w: %w", agentflow.ErrTransient, err)
		case ctx.Err() == nil && errors.As(err, &ne):
			return "", fmt.Errorf("%w: %w", agentflow.ErrTransient, err)
		}
		return "", err
	}
	return strings.TrimSpace(reply.Text), nil
}
