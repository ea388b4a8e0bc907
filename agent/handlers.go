package agent

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/symphonix/symphonix/flow"
)

// HandlersFile is the file beside flow.json that says, by name, how a
// handler or router is provided when the folder's convention does not
// (docs/handlers.md).
const HandlersFile = "handlers.json"

// The bounds on handlers and routers provided by the folder.
const (
	// MaxHandlersFileBytes is the largest handlers.json that is read.
	MaxHandlersFileBytes = 64 << 10
	// DefaultHandlerTimeout is how long an executable may take when
	// handlers.json gives it no timeout.
	DefaultHandlerTimeout = 30 * time.Second
	// MaxHandlerTimeout is the longest timeout handlers.json may give.
	MaxHandlerTimeout = 5 * time.Minute
	// MaxHandlerStdout is the most an executable may print on stdout: more
	// is the node's failure, never a truncated update.
	MaxHandlerStdout = 1 << 20
	// MaxHandlerStderr is how much of what an executable prints on stderr
	// goes to the log; the rest is counted and dropped.
	MaxHandlerStderr = 16 << 10
)

// How a handler or router is provided (Provision.By).
const (
	ByGo   = "go"   // the Go registry of a program embedding the agent
	ByExec = "exec" // an executable in the folder
	ByTool = "tool" // an MCP tool the flow declares
)

// Provision says how one handler or router the flow names is provided, or
// why it is not.
type Provision struct {
	// Kind is "handler" or "router".
	Kind string
	// Name is the name the flow gives it.
	Name string
	// By is ByGo, ByExec or ByTool; "" when it is not provided.
	By string
	// Path is the executable, relative to the folder, with forward
	// slashes (ByExec).
	Path string
	// Timeout is how long the executable may take (ByExec).
	Timeout time.Duration
	// Tool is the MCP tool, "<server>.<tool>" (ByTool).
	Tool string
	// Problem says why it is not provided; "" when it is.
	Problem string
}

// String says the provision in one line, as agent validate prints it.
func (p Provision) String() string {
	what := fmt.Sprintf("%s %q", p.Kind, p.Name)
	switch p.By {
	case ByGo:
		return what + ": the Go registry"
	case ByExec:
		return fmt.Sprintf("%s: executable %s (time limit %s)", what, p.Path, p.Timeout)
	case ByTool:
		return fmt.Sprintf("%s: MCP tool %s", what, p.Tool)
	}
	return what + ": missing: " + p.Problem
}

// handlerSpec is one entry of handlers.json.
type handlerSpec struct {
	// Run is an executable, relative to the folder.
	Run string `json:"run,omitempty"`
	// Timeout is how long Run may take, as Go writes a duration ("10s").
	Timeout string `json:"timeout,omitempty"`
	// Tool is an MCP tool the flow declares, "<server>.<tool>".
	Tool string `json:"tool,omitempty"`
}

// handlersFile is handlers.json: the handlers and the routers, by name.
type handlersFile struct {
	Handlers map[string]*handlerSpec `json:"handlers,omitempty"`
	Routers  map[string]*handlerSpec `json:"routers,omitempty"`
}

// readHandlersFile reads dir's handlers.json; a folder without one has
// an empty one.
func readHandlersFile(dir string) (handlersFile, error) {
	var hf handlersFile
	path := filepath.Join(dir, HandlersFile)
	file, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return hf, nil
	}
	if err != nil {
		return hf, fmt.Errorf("%s: %w", HandlersFile, err)
	}
	defer file.Close()
	b, err := io.ReadAll(io.LimitReader(file, MaxHandlersFileBytes+1))
	if err != nil {
		return hf, fmt.Errorf("%s: %w", HandlersFile, err)
	}
	if len(b) > MaxHandlersFileBytes {
		return hf, fmt.Errorf("%s: larger than %d bytes", HandlersFile, MaxHandlersFileBytes)
	}
	d := json.NewDecoder(bytes.NewReader(b))
	d.DisallowUnknownFields()
	if err := d.Decode(&hf); err != nil {
		return hf, fmt.Errorf("%s: %w", HandlersFile, err)
	}
	if d.More() {
		return hf, fmt.Errorf("%s: more than one JSON value", HandlersFile)
	}
	return hf, nil
}

// Provide says how each handler and router f names is provided to the
// flow in dir, in the order: the handlers by name, then the routers by
// name. A name reg holds is provided by it; otherwise by the entry of
// handlers.json, otherwise by the folder's convention (handlers/<name>,
// routers/<name>). Channel routers ("=path") are the engine's and are not
// listed. It starts nothing: it reads handlers.json and looks at files.
// The error is a handlers.json that cannot be read; a name that is not
// provided is a Provision with a Problem.
func Provide(dir string, f *flow.Flow, reg flow.Registry) ([]Provision, error) {
	hf, err := readHandlersFile(dir)
	if err != nil {
		return nil, err
	}
	plan := flow.PlanOf(f)
	var out []Provision
	for _, k := range []struct {
		kind  string
		names []string
		specs map[string]*handlerSpec
		inGo  func(string) bool
	}{
		{"handler", plan.Handlers, hf.Handlers, func(n string) bool { return reg.Handlers[n] != nil }},
		{"router", plan.Routers, hf.Routers, func(n string) bool { return reg.Routers[n] != nil }},
	} {
		for _, name := range k.names {
			p := Provision{Kind: k.kind, Name: name}
			switch spec, listed := k.specs[name]; {
			case k.inGo(name):
				p.By = ByGo
			case listed && spec == nil:
				p.Problem = fmt.Sprintf("%s: %ss.%s is null: give run (an executable) or tool (an MCP tool)", HandlersFile, p.Kind, p.Name)
			case listed:
				provideBySpec(&p, dir, f, spec)
			default:
				provideByConvention(&p, dir)
			}
			out = append(out, p)
		}
	}
	// An entry the flow never names is a mistake worth saying: a typo in
	// a name leaves the real one missing.
	for _, k := range []struct {
		kind  string
		names []string
		specs map[string]*handlerSpec
	}{{"handlers", plan.Handlers, hf.Handlers}, {"routers", plan.Routers, hf.Routers}} {
		for _, name := range slices.Sorted(maps.Keys(k.specs)) {
			if !slices.Contains(k.names, name) {
				return nil, fmt.Errorf("%s: %s.%s: the flow names no such %s", HandlersFile, k.kind, name, strings.TrimSuffix(k.kind, "s"))
			}
		}
	}
	return out, nil
}

// provideBySpec fills p from its handlers.json entry.
func provideBySpec(p *Provision, dir string, f *flow.Flow, spec *handlerSpec) {
	field := fmt.Sprintf("%s: %ss.%s", HandlersFile, p.Kind, p.Name)
	switch {
	case spec.Run != "" && spec.Tool != "":
		p.Problem = field + ": give run or tool, not both"
	case spec.Tool != "":
		if spec.Timeout != "" {
			p.Problem = field + ".timeout: only for run (an MCP tool call has the tool's time limit)"
			return
		}
		if !declaresTool(f, spec.Tool) {
			p.Problem = fmt.Sprintf("%s.tool: %q is not a tool requires.mcp declares (<server>.<tool>)", field, spec.Tool)
			return
		}
		p.By, p.Tool = ByTool, spec.Tool
	case spec.Run != "":
		timeout := DefaultHandlerTimeout
		if spec.Timeout != "" {
			d, err := time.ParseDuration(spec.Timeout)
			if err != nil || d <= 0 || d > MaxHandlerTimeout {
				p.Problem = fmt.Sprintf("%s.timeout: %q is not a duration from 1ns to %s (\"10s\")", field, spec.Timeout, MaxHandlerTimeout)
				return
			}
			timeout = d
		}
		run := filepath.FromSlash(spec.Run)
		if !filepath.IsLocal(run) {
			p.Problem = fmt.Sprintf("%s.run: %q is not a path inside the folder", field, spec.Run)
			return
		}
		if err := checkExecutable(dir, run); err != nil {
			p.Problem = fmt.Sprintf("%s.run: %v", field, err)
			return
		}
		p.By, p.Path, p.Timeout = ByExec, filepath.ToSlash(run), timeout
	default:
		p.Problem = field + ": give run (an executable) or tool (an MCP tool)"
	}
}

// provideByConvention looks for <kind>s/<name>, and for <kind>s/<name>.<ext>
// when exactly one such file is executable.
func provideByConvention(p *Provision, dir string) {
	sub := p.Kind + "s"
	looked := fmt.Sprintf("no %s/%s and no %s/%s.<ext>, and %s names none", sub, p.Name, sub, p.Name, HandlersFile)
	if p.Name != filepath.Base(p.Name) || !filepath.IsLocal(p.Name) || strings.ContainsAny(p.Name, `/\`) {
		// A name that is not a plain file name is only provided by
		// handlers.json or the Go registry.
		p.Problem = fmt.Sprintf("%s names none (the name is not a file name, so no %s/ file can provide it)", HandlersFile, sub)
		return
	}
	exact := filepath.Join(sub, p.Name)
	if _, err := os.Lstat(filepath.Join(dir, exact)); err == nil {
		if err := checkExecutable(dir, exact); err != nil {
			p.Problem = err.Error()
			return
		}
		p.By, p.Path, p.Timeout = ByExec, filepath.ToSlash(exact), DefaultHandlerTimeout
		return
	}
	entries, err := os.ReadDir(filepath.Join(dir, sub))
	if err != nil {
		p.Problem = looked
		return
	}
	var executable []string
	var refused error
	for _, e := range entries {
		name := e.Name()
		if ext := filepath.Ext(name); ext == "" || ext == "." || strings.TrimSuffix(name, ext) != p.Name {
			continue
		}
		rel := filepath.Join(sub, name)
		if err := checkExecutable(dir, rel); err != nil {
			refused = err
			continue
		}
		executable = append(executable, filepath.ToSlash(rel))
	}
	switch {
	case len(executable) == 1:
		p.By, p.Path, p.Timeout = ByExec, executable[0], DefaultHandlerTimeout
	case len(executable) > 1:
		p.Problem = fmt.Sprintf("more than one executable could be it (%s): name one in %s", strings.Join(executable, ", "), HandlersFile)
	case refused != nil:
		p.Problem = refused.Error()
	default:
		p.Problem = looked
	}
}

// declaresTool reports whether f's requires.mcp declares name,
// "<server>.<tool>".
func declaresTool(f *flow.Flow, name string) bool {
	server, tool, ok := strings.Cut(name, ".")
	if !ok || f.Requires == nil {
		return false
	}
	s := f.Requires.MCP[server]
	if s == nil {
		return false
	}
	return slices.ContainsFunc(s.Tools, func(t flow.Tool) bool { return t.Name == tool })
}

// checkExecutable refuses rel, a path inside dir, unless it is a regular
// file inside dir (a symlink may point only inside it), executable, and
// not writable by everyone.
func checkExecutable(dir, rel string) error {
	path := filepath.Join(dir, rel)
	root, err := filepath.EvalSymlinks(dir)
	if err != nil {
		return fmt.Errorf("the folder: %w", err)
	}
	real, err := filepath.EvalSymlinks(path)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("%s does not exist", filepath.ToSlash(rel))
		}
		return fmt.Errorf("%s: %w", filepath.ToSlash(rel), err)
	}
	if inside, err := filepath.Rel(root, real); err != nil || !filepath.IsLocal(inside) {
		return fmt.Errorf("%s leads out of the folder (to %s): refused", filepath.ToSlash(rel), real)
	}
	fi, err := os.Stat(real)
	if err != nil {
		return fmt.Errorf("%s: %w", filepath.ToSlash(rel), err)
	}
	switch m := fi.Mode(); {
	case !m.IsRegular():
		return fmt.Errorf("%s is not a regular file", filepath.ToSlash(rel))
	case m.Perm()&0o111 == 0:
		return fmt.Errorf("%s is not executable (chmod +x it)", filepath.ToSlash(rel))
	case m.Perm()&0o002 != 0:
		return fmt.Errorf("%s is writable by everyone: refused (chmod o-w it)", filepath.ToSlash(rel))
	}
	return nil
}
