package main

import (
	"fmt"
	"time"

	"github.com/symphonix/symphonix/agent"
	"github.com/symphonix/symphonix/flow"
)

// The codes of the problems agent validate adds for handlers and routers
// nothing provides, and for a handlers.json it cannot read.
const (
	codeHandlerNotProvided = "HANDLER_NOT_PROVIDED"
	codeRouterNotProvided  = "ROUTER_NOT_PROVIDED"
	codeHandlersFile       = "HANDLERS_FILE"
)

// provisions says how each handler and router f names is provided in dir
// (agent.Provide, with no Go registry: the agent command has none), and
// appends a problem to problems for each that is not.
func provisions(dir string, f *flow.Flow, problems []problemJSON) ([]provisionJSON, []problemJSON) {
	out := []provisionJSON{}
	list, err := agent.Provide(dir, f, flow.Registry{})
	if err != nil {
		return out, append(problems, problemJSON{Code: codeHandlersFile, Path: agent.HandlersFile, Message: err.Error()})
	}
	for _, p := range list {
		j := provisionJSON{Kind: p.Kind, Name: p.Name, By: p.By, Path: p.Path, Tool: p.Tool, Problem: p.Problem}
		if p.By == "" {
			j.By = "missing"
		}
		if p.Timeout > 0 {
			j.Timeout = p.Timeout.String()
		}
		out = append(out, j)
		if p.By != "" {
			continue
		}
		code, where := codeHandlerNotProvided, handlerPath(f, p.Name)
		if p.Kind == "router" {
			code, where = codeRouterNotProvided, routerPath(f, p.Name)
		}
		problems = append(problems, problemJSON{Code: code, Path: where,
			Message: fmt.Sprintf("%s %q is not provided: %s", p.Kind, p.Name, p.Problem)})
	}
	return out, problems
}

// provisionOf is the agent.Provision j says, for printing.
func provisionOf(j provisionJSON) agent.Provision {
	p := agent.Provision{Kind: j.Kind, Name: j.Name, By: j.By, Path: j.Path, Tool: j.Tool, Problem: j.Problem}
	if p.By == "missing" {
		p.By = ""
	}
	p.Timeout, _ = time.ParseDuration(j.Timeout)
	return p
}

// handlerPath is where f first names the handler name.
func handlerPath(f *flow.Flow, name string) string {
	for i, n := range f.Nodes {
		if n != nil && n.Handler == name {
			return fmt.Sprintf("nodes[%d].handler", i)
		}
	}
	return ""
}

// routerPath is where f first names the router name.
func routerPath(f *flow.Flow, name string) string {
	for i, e := range f.Edges {
		if e != nil && e.Router == name {
			return fmt.Sprintf("edges[%d].router", i)
		}
	}
	return ""
}
