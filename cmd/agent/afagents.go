package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"maps"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/symphonix/symphonix/agent"
	"github.com/symphonix/symphonix/agentflow"
	"github.com/symphonix/symphonix/agents"
	"github.com/symphonix/symphonix/flow"
	"github.com/symphonix/symphonix/llm"
	"github.com/symphonix/symphonix/node"
)

// afAgents resolves the use agent statements of a workflow `agent run
// FILE.af` runs: each resource names a flow agent, a folder beside the
// file or an agent of the file's folder's agents.json, which answers the
// agent() calls of its alias as a delegated run. It keeps the agents it
// opened until close.
type afAgents struct {
	dir       string // the .af file's folder
	getenv    func(string) string
	logger    *slog.Logger
	stderr    io.Writer
	model     flow.Model                            // the environment's model, which each agent's llm nodes ask
	wrapModel func(flow.Model) flow.Model           // the journal's and the run record's; nil: none
	wrapTools func(flow.ToolCaller) flow.ToolCaller // the journal's; nil: none
	// run is the linked run whose subscription (the board's word on the
	// workflow) switches every opened agent's tools; nil: each agent's own.
	run *node.AFRun

	registry *agents.Registry // the folder's agents.json; nil when it has none
	loaded   bool
	opened   []*agent.Agent
	byFolder map[string]agentflow.Model // what each folder was opened as, so two uses of it share it
}

// resolve is agentflow.Config's Agents. A use team is left to the model
// (nil). A use agent "R[@VERSION]" is the flow agent in the folder R
// (relative to the file's folder, inside it), else the agent named R in
// the folder's agents.json; the version is not checked (a flow agent has
// none). Neither is an error, and the run does not start.
func (x *afAgents) resolve(ctx context.Context, r agentflow.Resource) (agentflow.Model, error) {
	if r.Kind != "agent" {
		return nil, nil
	}
	folder, name, err := x.locate(r.ID)
	if err != nil {
		return nil, err
	}
	return x.open(ctx, folder, name)
}

// locate is the folder and the name of the flow agent a use agent's
// resource names (resolve).
func (x *afAgents) locate(id string) (folder, name string, err error) {
	name = afResourceName(id)
	if name == "" {
		return "", "", errors.New("names no agent")
	}
	rel := filepath.FromSlash(name)
	folder = filepath.Join(x.dir, rel)
	if filepath.IsLocal(rel) {
		if st, err := os.Stat(filepath.Join(folder, "flow.json")); err == nil && st.Mode().IsRegular() {
			return folder, folderAgentName(folder), nil
		}
	} else if strings.ContainsAny(name, `/\`) {
		return "", "", fmt.Errorf("the folder %q is not inside the file's folder", name)
	}
	if err := x.loadRegistry(); err != nil {
		return "", "", err
	}
	if x.registry != nil {
		if a, ok := x.registry.Agent(name); ok {
			if a.Path == "" || filepath.Base(a.Path) != "flow.json" {
				return "", "", fmt.Errorf("registered agent %q is not a folder's flow.json: agent run FILE.af runs an agent of a folder", name)
			}
			return filepath.Dir(a.Path), name, nil
		}
	}
	return "", "", fmt.Errorf("no agent folder %q and no registered agent %q", folder, name)
}

// tools is every MCP tool ("<server>.<tool>") the flow agents the use
// agent statements of w name declare (and those they delegate to),
// together, sorted: the workflow announces them and the board switches
// them for it. A use that names no agent, or one whose folder cannot be
// read, adds nothing: resolve refuses the run at it.
func (x *afAgents) tools(w *agentflow.Workflow) []string {
	var all []string
	for _, m := range w.Members {
		u, ok := m.(*agentflow.Use)
		if !ok || u.Kind != "agent" || u.Resource == nil {
			continue
		}
		folder, _, err := x.locate(u.Resource.Value)
		if err != nil {
			continue
		}
		if tools, err := agent.DeclaredTools(folder); err == nil {
			all = append(all, tools...)
		}
	}
	slices.Sort(all)
	return slices.Compact(all)
}

// afResourceName is a resource string without its version: "reviewer@1"
// is "reviewer", "./triage" is "./triage".
func afResourceName(id string) string {
	if i := strings.LastIndex(id, "@"); i >= 0 && !strings.ContainsAny(id[i:], `/\`) {
		return id[:i]
	}
	return id
}

// folderAgentName is the name a folder's agent runs under: its flow's
// name when that is an agent name, else the folder's, else "agent".
func folderAgentName(folder string) string {
	if f, err := flow.LoadFile(filepath.Join(folder, "flow.json")); err == nil && flow.ValidAgentName(f.Name) {
		return f.Name
	}
	if base := filepath.Base(folder); flow.ValidAgentName(base) {
		return base
	}
	return "agent"
}

// loadRegistry reads the folder's agents.json once; a folder without one
// registers nothing.
func (x *afAgents) loadRegistry() error {
	if x.loaded {
		return nil
	}
	x.loaded = true
	p := filepath.Join(x.dir, agents.FileName)
	if _, err := os.Stat(p); errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	reg, err := agents.Load(p)
	if err != nil {
		return fmt.Errorf("%s: %w", agents.FileName, err)
	}
	x.registry = reg
	return nil
}

// open assembles the flow agent in folder, as agent run DIR would (its
// flow, tools, handlers and the agents it delegates to), with the
// environment's model, and checks it can be delegated to: a description,
// outputs.
func (x *afAgents) open(ctx context.Context, folder, name string) (agentflow.Model, error) {
	key := filepath.Clean(folder) + "\x00" + name
	if m := x.byFolder[key]; m != nil {
		return m, nil
	}
	cfg := agent.Config{
		Getenv: x.getenv, Logger: x.logger, Stderr: x.stderr,
		Model: x.model, WrapModel: func(m flow.Model) flow.Model {
			m = namedModel{m: m, agent: name}
			if x.wrapModel != nil {
				m = x.wrapModel(m)
			}
			return m
		},
		WrapTools: x.wrapTools,
		InMemory:  true,
	}
	if x.run != nil {
		cfg.Subscription = x.run.Subscription()
	}
	ag, err := agent.Open(ctx, folder, cfg)
	if err != nil {
		return nil, fmt.Errorf("agent %q (%s): %w", name, folder, err)
	}
	// Its own tools, whichever subscription switches them.
	tools, err := agent.DeclaredTools(folder)
	if err != nil {
		ag.Close()
		return nil, fmt.Errorf("agent %q (%s): %w", name, folder, err)
	}
	x.opened = append(x.opened, ag)
	reg, err := agents.New(agents.Spec{Agents: []agents.Entry{{Name: name, Flow: "flow.json"}}},
		agents.Options{Dir: folder, Flows: map[string]*flow.Flow{"flow.json": ag.Flow}})
	if err != nil {
		return nil, err
	}
	a, _ := reg.Agent(name)
	m := &afAgent{name: name, registry: reg, graph: ag.Graph, takesTask: slices.ContainsFunc(a.Contract.Inputs, func(f agents.Field) bool { return f.Name == "task" }),
		tools: tools}
	if x.byFolder == nil {
		x.byFolder = map[string]agentflow.Model{}
	}
	x.byFolder[key] = m
	return m, nil
}

// close closes every agent opened.
func (x *afAgents) close() {
	for _, ag := range x.opened {
		if err := ag.Close(); err != nil && x.logger != nil {
			x.logger.Warn("closing an agent", "dir", ag.Dir, "err", err)
		}
	}
}

// namedModel names the agent in each request its llm nodes make, as a
// delegated child's are.
type namedModel struct {
	m     flow.Model
	agent string
}

func (n namedModel) Complete(ctx context.Context, req flow.ModelRequest) (flow.ModelReply, error) {
	req.Agent = n.agent
	return n.m.Complete(ctx, req)
}

// errTimeLimit ends a delegated run that ran past agents.DefaultTimeLimit.
var errTimeLimit = errors.New("the delegated run's time limit")

// afAgent is a flow agent answering agent() calls: each call is a
// delegated run of it (agents.Invoke), handed the call's input — and its
// task, as the input "task", when the agent declares that input — whose
// declared outputs are the answer.
type afAgent struct {
	name      string
	registry  *agents.Registry
	graph     *flow.Graph
	takesTask bool
	tools     []string // every "<server>.<tool>" its flow (and those it delegates to) declares, sorted
}

// toolsNamed is what a name of a tools option stands for: every declared
// tool of that name, in whichever server, and every tool of the server of
// that name. An Agent Flow tool name is an identifier, without a dot, so
// it names a tool by its own name or a whole server.
func (a *afAgent) toolsNamed(name string) []string {
	var out []string
	for _, t := range a.tools {
		server, tool, _ := strings.Cut(t, ".")
		if tool == name || server == name {
			out = append(out, t)
		}
	}
	return out
}

// CheckTool is agentflow.ToolChecker: a name that stands for none of the
// agent's tools is refused before the run.
func (a *afAgent) CheckTool(name string) error {
	if len(a.toolsNamed(name)) > 0 {
		return nil
	}
	if len(a.tools) == 0 {
		return fmt.Errorf("agent %q has no tools: its flow declares no MCP server", a.name)
	}
	return fmt.Errorf("agent %q has no tool and no MCP server %q; its tools are %s", a.name, name, strings.Join(a.tools, ", "))
}

// CheckWrite is agentflow.WriteChecker: a path of a write option is
// relative to the .af file's folder and stays inside it. No flow node
// writes files, so a path that passes is not used further.
func (a *afAgent) CheckWrite(p string) error {
	fp := filepath.FromSlash(p)
	switch {
	case filepath.IsAbs(fp) || strings.HasPrefix(p, "/"):
		return errors.New("is absolute: write takes paths relative to the file's folder")
	case slices.Contains(strings.FieldsFunc(p, func(r rune) bool { return r == '/' || r == '\\' }), ".."):
		return errors.New(`has a ".." element: write takes paths inside the file's folder`)
	case !filepath.IsLocal(fp):
		return errors.New("is not a path inside the file's folder")
	}
	return nil
}

func (a *afAgent) Ask(ctx context.Context, q agentflow.Question) (string, error) {
	in := map[string]any{}
	maps.Copy(in, q.Input)
	if _, given := in["task"]; a.takesTask && !given {
		in["task"] = q.Task
	}
	if q.Tools != nil {
		// The call's tools option: the run may call only the tools it
		// names, held where the board's switches are (agent.WithinTools).
		var allowed []string
		for _, name := range q.Tools {
			allowed = append(allowed, a.toolsNamed(name)...)
		}
		ctx = agent.WithinTools(ctx, allowed)
	}
	limit := agents.DefaultTimeLimit
	cctx, cancel := context.WithTimeoutCause(ctx, limit, errTimeLimit)
	defer cancel()
	res, err := agents.Invoke(cctx, agents.Call{
		Registry: a.registry, Graph: func(string) (*flow.Graph, error) { return a.graph, nil },
		Name: a.name, Input: in, Node: q.Agent, ParentRun: flow.RunOf(ctx), Chain: []string{},
		TimeLimit: limit + time.Minute, // cctx ends it first, so its end is told apart
	})
	if err != nil {
		if ctx.Err() == nil && errors.Is(context.Cause(cctx), errTimeLimit) {
			return "", fmt.Errorf("agent %q did not finish within %s and was ended: %w", a.name, limit, context.DeadlineExceeded)
		}
		var ae *agents.Error
		if errors.As(err, &ae) && ae.Code == agents.CodeOutputInvalid {
			return "", fmt.Errorf("%w: %w", agentflow.ErrAnswer, err)
		}
		return "", afRetryCode(ctx, err)
	}
	var answer any = res.Output
	if t, _ := q.Schema["type"].(string); t != "object" && len(res.Output) == 1 {
		for _, v := range res.Output {
			answer = v
		}
	}
	b, err := json.Marshal(answer)
	if err != nil {
		return "", err
	}
	return string(b), nil
}

// afRetryCode wraps err in the retry code it is: a provider's 429 is
// agentflow.ErrRateLimited; its 5xx, and a connection that failed,
// agentflow.ErrTransient. Anything else is returned as it is.
func afRetryCode(ctx context.Context, err error) error {
	var pe *llm.ProviderError
	var ne net.Error
	switch {
	case errors.As(err, &pe) && pe.StatusCode == 429:
		return fmt.Errorf("%w: %w", agentflow.ErrRateLimited, err)
	case errors.As(err, &pe) && pe.StatusCode >= 500:
		return fmt.Errorf("%w: %w", agentflow.ErrTransient, err)
	case ctx.Err() == nil && errors.As(err, &ne):
		return fmt.Errorf("%w: %w", agentflow.ErrTransient, err)
	}
	return err
}
