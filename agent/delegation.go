package agent

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"

	"github.com/symphonix/symphonix/agents"
	"github.com/symphonix/symphonix/flow"
)

// delegation is the agents a folder's flow may delegate to: its registry
// (DIR/agents.json), and each child's graph once built. nil for a folder
// with no registry.
type delegation struct {
	registry *agents.Registry
	root     string
	graphs   map[string]*flow.Graph
	del      *agents.Delegator
}

// openDelegation loads DIR/agents.json when it is there. A folder without
// one delegates to nothing; a flow with an agent node and no registry is
// then refused when it is built (flow.ErrNoDelegate).
func openDelegation(dir string, f *flow.Flow) (*delegation, error) {
	p := filepath.Join(dir, agents.FileName)
	if _, err := os.Stat(p); errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	reg, err := agents.Load(p)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", agents.FileName, err)
	}
	d := &delegation{registry: reg, graphs: map[string]*flow.Graph{}}
	switch base := filepath.Base(filepath.Clean(dir)); {
	case flow.ValidAgentName(f.Name):
		d.root = f.Name
	case flow.ValidAgentName(base):
		d.root = base
	}
	d.del = &agents.Delegator{Registry: reg, Root: d.root, Graph: d.graph}
	return d, nil
}

// graph returns a registered child's graph.
func (d *delegation) graph(name string) (*flow.Graph, error) {
	if g := d.graphs[name]; g != nil {
		return g, nil
	}
	return nil, fmt.Errorf("agent %q was not built", name)
}

// requires is f's requirements with every child's MCP servers joined, so
// their tools are started, switched and announced as the parent's are. A
// server name two flows declare differently is refused: one name is one
// server.
func (d *delegation) requires(f *flow.Flow) (*flow.Flow, error) {
	if d == nil {
		return f, nil
	}
	servers := map[string]*flow.MCPServer{}
	from := map[string]string{}
	add := func(who string, r *flow.Requires) error {
		if r == nil {
			return nil
		}
		for _, name := range slices.Sorted(maps.Keys(r.MCP)) {
			s := r.MCP[name]
			if s == nil {
				continue
			}
			prev, ok := servers[name]
			if !ok {
				c := *s
				c.Tools = slices.Clone(s.Tools)
				servers[name], from[name] = &c, who
				continue
			}
			if prev.Command != s.Command || !slices.Equal(prev.Args, s.Args) || !maps.Equal(prev.Env, s.Env) {
				return fmt.Errorf("%s declares MCP server %q differently from %s: one name is one server", who, name, from[name])
			}
			for _, t := range s.Tools {
				if !slices.ContainsFunc(prev.Tools, func(o flow.Tool) bool { return o.Name == t.Name }) {
					prev.Tools = append(prev.Tools, t)
				}
			}
		}
		return nil
	}
	if err := add("the flow", f.Requires); err != nil {
		return nil, err
	}
	for _, name := range d.registry.Names() {
		a, _ := d.registry.Agent(name)
		if err := add(fmt.Sprintf("agent %q", name), a.Flow.Requires); err != nil {
			return nil, err
		}
	}
	if len(servers) == 0 {
		return f, nil
	}
	joined := *f
	r := flow.Requires{}
	if f.Requires != nil {
		r = *f.Requires
	}
	r.MCP = servers
	joined.Requires = &r
	return &joined, nil
}

// waits reports whether a child can stop for a person, so the parent
// needs somewhere to wait.
func (d *delegation) waits() bool {
	if d == nil {
		return false
	}
	for _, name := range d.registry.Names() {
		if a, _ := d.registry.Agent(name); flow.CheckpointerRequired(a.Flow) != nil {
			return true
		}
	}
	return false
}

// build builds every child with the parent's options — its model, tools
// and gate, checkpointer, memory and watcher — so a child obeys the
// parent's rules, and returns bo with the Delegate its agent nodes call.
// A child's handlers and routers are its own: provided by its own folder's
// executables and handlers.json, or the Go registry (registryFor); their
// provisions are returned with their paths relative to the parent's
// folder, so the parent's checks of its executables cover them too.
func (d *delegation) build(bo flow.BuildOptions, root string, cfg Config) (flow.BuildOptions, []Provision, error) {
	if d == nil {
		return bo, nil, nil
	}
	bo.Delegate = d.del.Delegate
	var all []Provision
	for _, name := range d.registry.Names() {
		a, _ := d.registry.Agent(name)
		cbo := bo
		if bo.Model != nil {
			cbo.Model = childModel{m: bo.Model, agent: name}
		}
		if a.Path != "" {
			dir := filepath.Dir(a.Path)
			reg, provided, err := registryFor(dir, a.Flow, cfg, bo.Tools)
			if err != nil {
				return bo, nil, fmt.Errorf("agent %q: %w", name, err)
			}
			cbo.Registry = reg
			rel, err := filepath.Rel(root, dir)
			if err != nil {
				return bo, nil, fmt.Errorf("agent %q: its folder: %w", name, err)
			}
			for _, p := range provided {
				if p.By == ByExec {
					p.Path = filepath.ToSlash(filepath.Join(rel, filepath.FromSlash(p.Path)))
					all = append(all, p)
				}
			}
		}
		g, err := flow.Build(a.Flow, cbo)
		if err != nil {
			return bo, nil, fmt.Errorf("agent %q: %w", name, err)
		}
		d.graphs[name] = g
	}
	return bo, all, nil
}

// Registry returns the agents this agent may delegate to; nil when its
// folder has no agents.json.
func (a *Agent) Registry() *agents.Registry {
	if a.delegation == nil {
		return nil
	}
	return a.delegation.registry
}

// DelegatedTools is tools with the MCP tools of the agents dir's registry
// delegates to added, as "<server>.<tool>", sorted after the flow's own:
// what the agent announces, since its children's calls pass through it. A
// registry that cannot be loaded adds nothing (Open refuses it).
func DelegatedTools(dir string, tools []string) []string {
	p := filepath.Join(dir, agents.FileName)
	reg, err := agents.Load(p)
	if err != nil {
		return tools
	}
	var more []string
	for _, name := range reg.Names() {
		a, _ := reg.Agent(name)
		if a.Flow.Requires == nil {
			continue
		}
		for server, s := range a.Flow.Requires.MCP {
			if s == nil {
				continue
			}
			for _, t := range s.Tools {
				id := server + "." + t.Name
				if !slices.Contains(tools, id) && !slices.Contains(more, id) {
					more = append(more, id)
				}
			}
		}
	}
	slices.Sort(more)
	return append(slices.Clone(tools), more...)
}

// withoutChildren is threads without the children's (agents.ChildThread).
func withoutChildren(threads []string) []string {
	return slices.DeleteFunc(threads, agents.ChildThread)
}

// childModel is the parent's model as a child's llm nodes ask it: each
// request names the child (flow.ModelRequest.Agent), so a test's mocks
// and a journal can tell its nodes from the parent's.
type childModel struct {
	m     flow.Model
	agent string
}

func (c childModel) Complete(ctx context.Context, req flow.ModelRequest) (flow.ModelReply, error) {
	req.Agent = c.agent
	return c.m.Complete(ctx, req)
}
