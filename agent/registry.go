package agent

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"path/filepath"
	"slices"
	"strings"

	"github.com/symphonix/symphonix/flow"
	"github.com/symphonix/symphonix/llm"
	"github.com/symphonix/symphonix/secrets"
)

// ErrNotProvided: a handler or router the flow names is provided neither
// by the Go registry, nor by handlers.json, nor by the folder's
// convention (docs/handlers.md).
var ErrNotProvided = errors.New("not provided")

// Provisions says how each handler and router the flow names is provided,
// as Provide found it when the agent opened.
func (a *Agent) Provisions() []Provision { return slices.Clone(a.provided) }

// provide fills bo.Registry with the handlers and routers the flow names:
// cfg.Registry's own first, then an executable or an MCP tool for each of
// the others (Provide). One that is provided by nothing is an error before
// anything runs, ErrNotProvided, naming it and what was looked for.
func (a *Agent) provide(cfg Config, bo *flow.BuildOptions) error {
	reg, provided, err := registryFor(a.Dir, a.Flow, cfg, bo.Tools)
	if err != nil {
		return err
	}
	a.provided = provided
	bo.Registry = reg
	return nil
}

// registryFor is the registry of the flow f in the folder dir: cfg.Registry's
// handlers and routers first, then an executable of dir or an MCP tool
// (called through tools, behind cfg.Gate) for each of the others, with how
// each is provided. One that is provided by nothing is ErrNotProvided,
// naming every such one.
func registryFor(dir string, f *flow.Flow, cfg Config, tools flow.ToolCaller) (flow.Registry, []Provision, error) {
	provided, err := Provide(dir, f, cfg.Registry)
	if err != nil {
		return flow.Registry{}, nil, err
	}
	reg := flow.Registry{
		Handlers: maps.Clone(cfg.Registry.Handlers),
		Routers:  maps.Clone(cfg.Registry.Routers),
		Reducers: cfg.Registry.Reducers,
	}
	if reg.Handlers == nil {
		reg.Handlers = map[string]flow.Handler{}
	}
	if reg.Routers == nil {
		reg.Routers = map[string]flow.Router{}
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return flow.Registry{}, nil, fmt.Errorf("agent: the folder: %w", err)
	}
	log := cfg.Logger
	if log == nil {
		log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	declared := declaredChannels(f)
	x := &execer{dir: abs, env: handlerEnv(f, cfg.Getenv), log: log, declared: declared, secrets: stderrSecrets(abs, f, cfg.Getenv)}
	t := &toolCaller{gate: cfg.Gate, call: tools, declared: declared}
	var missing []string
	for _, p := range provided {
		switch {
		case p.By == ByExec && p.Kind == "handler":
			reg.Handlers[p.Name] = x.handler(p)
		case p.By == ByExec:
			reg.Routers[p.Name] = x.router(p)
		case p.By == ByTool && p.Kind == "handler":
			reg.Handlers[p.Name] = t.handler(p)
		case p.By == ByTool:
			reg.Routers[p.Name] = t.router(p)
		case p.By == "":
			missing = append(missing, fmt.Sprintf("%s %q: %s", p.Kind, p.Name, p.Problem))
		}
	}
	if len(missing) > 0 {
		return flow.Registry{}, nil, fmt.Errorf("handlers and routers %w (docs/handlers.md): %s", ErrNotProvided, strings.Join(missing, "; "))
	}
	return reg, provided, nil
}

// requiredEnv is the variables the flow's requires.env names.
func requiredEnv(f *flow.Flow) []string {
	if f.Requires == nil {
		return nil
	}
	return f.Requires.Env
}

// handlerEnv is the whole environment of an executable handler: the
// variables requires.env names that getenv sets, and PATH (HandlerPath
// unless requires.env names PATH). Nothing else of the agent's environment
// is passed on.
func handlerEnv(f *flow.Flow, getenv func(string) string) []string {
	env := []string{}
	path := false
	for _, name := range requiredEnv(f) {
		v := getenv(name)
		if v == "" {
			continue
		}
		env = append(env, name+"="+v)
		path = path || name == "PATH"
	}
	if !path {
		env = append(env, "PATH="+HandlerPath)
	}
	return env
}

// declaredChannels is the channels a handler may write: the flow's state
// when it declares one; nil (any) when it does not.
func declaredChannels(f *flow.Flow) map[string]bool {
	if f.State == nil {
		return nil
	}
	m := make(map[string]bool, len(f.State))
	for name := range f.State {
		m[name] = true
	}
	return m
}

// executables reports whether an executable provides any of the flow's
// handlers and routers.
func (a *Agent) executables() bool {
	return slices.ContainsFunc(a.provided, func(p Provision) bool { return p.By == ByExec })
}

// checkExecutables checks again every executable that provides a handler
// or router, as Open did: the error names each that would now be refused.
func (a *Agent) checkExecutables(ctx context.Context) error {
	var errs []error
	for _, p := range a.provided {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if p.By != ByExec {
			continue
		}
		if err := checkExecutable(a.Dir, filepath.FromSlash(p.Path)); err != nil {
			errs = append(errs, fmt.Errorf("%s %q: %w", p.Kind, p.Name, err))
		}
	}
	return errors.Join(errs...)
}

// stderrSecrets is what is removed from an executable's stderr before it
// is logged, as the journal removes it: the values of the variables
// requires.env names, of the model's settings, of those the folder's .env
// and .env.example name, and every value .env gives (an executable runs
// in the folder, and could read the file). A .env that cannot be read
// leaves its values out; the agent says so where it reads it.
func stderrSecrets(dir string, f *flow.Flow, getenv func(string) string) *secrets.Set {
	names := append(slices.Clone(requiredEnv(f)), llm.SecretEnv()...)
	if more, err := secrets.NamesIn(dir); err == nil {
		names = append(names, more...)
	}
	list := secrets.Named(names, getenv)
	if values, err := secrets.ValuesIn(dir); err == nil {
		list = append(list, values...)
	}
	return secrets.NewSet(list)
}
