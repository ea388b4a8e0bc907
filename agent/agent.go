// Package agent assembles a flow folder into something that runs: the flow,
// its MCP tools, a model, and a store for the runs that wait for a person.
// The agent command runs and serves what it assembles.
package agent

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"path/filepath"
	"strings"
	"time"

	"github.com/symphonix/symphonix/files"
	"github.com/symphonix/symphonix/flow"
	"github.com/symphonix/symphonix/llm"
	"github.com/symphonix/symphonix/mcptools"
	"github.com/symphonix/symphonix/subscription"
	"github.com/symphonix/symphonix/waiting"
)

// Config configures Open.
type Config struct {
	// Getenv: where the model's settings come from (OPENAI_API_KEY, …);
	// nil means no environment, so the stand-in model.
	Getenv func(string) string
	// Logger: nil discards logs.
	Logger *slog.Logger
	// Stderr: where MCP servers' standard error goes; nil discards it.
	Stderr io.Writer
	// Gate: every tool call passes through it; nil allows every call the
	// flow declares.
	Gate func(ctx context.Context, name string, args map[string]any) error
	// Monitored: a board is configured, so the board switches the tools
	// on (Agent.Subscription): until it has spoken — or its last word is
	// remembered in the folder — no tool may be called. false: every tool
	// the flow declares may be.
	Monitored bool
	// Subscription: when set, it switches the tools in place of a
	// subscription of the folder's own (Agent.Subscription is it): every
	// tool call asks it, through the same gate; Monitored is not read and
	// nothing is recalled from the folder. It must declare the tools the
	// flow and the agents it delegates to declare (DeclaredTools): one it
	// leaves out is refused as undeclared. It may declare more, and be
	// shared by several agents — how `agent run FILE.af` has the board's
	// word on the workflow reach every flow agent it calls. nil: the
	// folder's own.
	Subscription *subscription.Subscription
	// WrapModel: when set, the flow's llm nodes ask WrapModel(m), where m is
	// the model the environment names — how a journal sees every model
	// call. nil asks m itself.
	WrapModel func(m flow.Model) flow.Model
	// WrapTools: when set, the flow's tool calls that pass the Gate go to
	// WrapTools(call), where call reaches the MCP servers — how a journal
	// sees every tool call. nil calls them directly. Not called for a flow
	// with no MCP servers.
	WrapTools func(call flow.ToolCaller) flow.ToolCaller
	// Watch: told everything that happens in every run
	// (flow.BuildOptions.Watch) — how the agent's record of its runs is
	// kept. nil: nothing is.
	Watch flow.Watcher
	// Files: the bounds of the folder's file store, for a flow with a file
	// channel (docs/files.md). Zero: the store's defaults.
	Files files.Config
	// Registry: the Go handlers, routers and reducers of a program
	// embedding the agent. A name it holds wins over the folder's
	// executables and handlers.json (docs/handlers.md). Empty: the folder
	// provides every handler and router.
	Registry flow.Registry
	// Model: when set, the flow's llm nodes ask it and the environment's
	// model is never made (Getenv is not read for one) — how `agent test`
	// answers them from a test file. nil: the model the environment names.
	Model flow.Model
	// Tools: when set, every tool call goes to it: no MCP server is
	// started, and neither the subscription nor Gate is asked — how `agent
	// test` answers tool calls from a test file. nil: the MCP servers.
	Tools flow.ToolCaller
	// InMemory: the runs that wait and what threads remember are kept in
	// this process's memory, never in the folder — for a test that must
	// leave the folder as it found it. false: the folder's store.
	InMemory bool
}

// Agent is a flow folder, assembled.
type Agent struct {
	Dir   string
	Flow  *flow.Flow
	Graph *flow.Graph
	// Model, Waiting and Memory say which model the agent uses, where its
	// waiting runs are kept and where what its threads remember is kept
	// (a conversation's history, the channels marked remembers), in words
	// to print at start; Waiting and Memory are "" for a flow that never
	// waits, or never remembers.
	Model   string
	Waiting string
	Memory  string
	// Subscription says which declared tools may be called now: every
	// tool call asks it first. Give it the board's word (Set, NeverSpoke,
	// Unreachable) when a board is configured.
	Subscription *subscription.Subscription
	// Tools says what the subscription started from, in words to print.
	Tools string
	// Files is the folder's file store (DIR/.symphonix/files), for a flow
	// with a file channel; nil for one without.
	Files *files.Store

	tools      *mcptools.Set
	waiting    flow.Checkpointer
	delegation *delegation // nil: the folder has no agents.json
	holding    waiting.Holding
	model      flow.Model // as the environment names it, before WrapModel

	provided []Provision // how each handler and router is provided
}

// Open loads DIR/flow.json, and builds it with the MCP servers its
// requires.mcp declares, the model the environment names (the stand-in
// without a key), and the waiting store in the folder (memory when the
// folder cannot hold one, said in Waiting): its runs for a flow that
// waits, and the memory table for one that remembers, so a
// conversation's history and its remembered channels outlive the process
// (said in Memory). Close releases them.
func Open(ctx context.Context, dir string, cfg Config) (*Agent, error) {
	if cfg.Getenv == nil {
		cfg.Getenv = func(string) string { return "" }
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	if cfg.Tools != nil {
		// Given tools answer every call, a handler's MCP tool too: no
		// gate stands in front of them.
		cfg.Gate = nil
	}
	f, err := flow.LoadFile(filepath.Join(dir, "flow.json"))
	if err != nil {
		return nil, err
	}
	if err := flow.Check(f); err != nil {
		return nil, err
	}
	a := &Agent{Dir: dir, Flow: f}
	bo := flow.BuildOptions{Gate: cfg.Gate, Watch: cfg.Watch}
	if err := a.openFiles(cfg.Files, &bo); err != nil {
		return nil, err
	}
	// The agents it delegates to (delegation.go): their MCP servers are
	// started, switched and announced with the flow's own (tf), and a
	// child that waits makes the folder's store needed.
	if a.delegation, err = openDelegation(dir, f); err != nil {
		return nil, err
	}
	tf, err := a.delegation.requires(f)
	if err != nil {
		return nil, err
	}
	if cfg.Subscription != nil {
		a.Subscription, a.Tools = cfg.Subscription, "tools: switched by the subscription the caller gave"
	} else if a.Subscription, a.Tools, err = subscribe(tf, dir, cfg.Monitored); err != nil {
		return nil, err
	}
	switch {
	case cfg.Tools != nil:
		bo.Tools = cfg.Tools
	case tf.Requires != nil && len(tf.Requires.MCP) > 0:
		servers := make(map[string]mcptools.Server, len(tf.Requires.MCP))
		for name, s := range tf.Requires.MCP {
			if s == nil {
				continue
			}
			srv := mcptools.Server{Command: s.Command, Args: s.Args, Env: s.Env}
			for _, t := range s.Tools {
				srv.Tools = append(srv.Tools, mcptools.Tool{Name: t.Name, Description: t.Description})
			}
			servers[name] = srv
		}
		a.tools, err = mcptools.Open(ctx, dir, servers, mcptools.Config{Logger: cfg.Logger, Stderr: cfg.Stderr})
		if err != nil {
			return nil, err
		}
		bo.Tools = gated(a.Subscription, a.tools.Call)
		if cfg.WrapTools != nil {
			bo.Tools = cfg.WrapTools(bo.Tools)
		}
	}
	if cfg.Model != nil {
		bo.Model, a.Model = cfg.Model, "the model the caller gave"
	} else {
		bo.Model, a.Model = llm.FromEnv(cfg.Getenv)
	}
	a.model = bo.Model
	if cfg.WrapModel != nil {
		bo.Model = cfg.WrapModel(bo.Model)
	}
	waits, remembers := flow.CheckpointerRequired(f) != nil || a.delegation.waits(), flow.Remembers(f)
	if waits || remembers {
		// Only a flow that waits needs somewhere to wait, and only one
		// that remembers needs its threads' memory kept: both in the
		// folder's store.
		var store flow.Checkpointer
		var desc string
		if cfg.InMemory {
			store, desc = &flow.MemoryCheckpointer{}, "waiting runs are kept in memory (it is lost on restart)"
		} else {
			store, desc = waiting.OpenOrMemory(ctx, dir, waiting.Config{})
		}
		a.waiting = store
		if waits {
			bo.Checkpointer = store
			a.Waiting = desc
		}
		if remembers {
			bo.Memory = waiting.MemoryOf(store)
			if _, durable := store.(*waiting.Store); durable {
				a.Memory = strings.Replace(desc, "waiting runs are kept in ", "what threads remember is kept in ", 1)
			} else {
				a.Memory = "what threads remember is kept in memory (it is lost on restart)"
			}
		}
	}
	a.holding = waiting.HoldingOf(a.waiting)
	if err := a.provide(cfg, &bo); err != nil {
		a.Close()
		return nil, err
	}
	var children []Provision
	if bo, children, err = a.delegation.build(bo, dir, cfg); err == nil {
		a.provided = append(a.provided, children...)
		a.Graph, err = flow.Build(f, bo)
	}
	if err != nil {
		a.Close()
		return nil, err
	}
	return a, nil
}

// Close stops the MCP servers and closes the waiting store.
func (a *Agent) Close() error {
	var errs []error
	if a.tools != nil {
		errs = append(errs, a.tools.Close())
	}
	if c, ok := a.waiting.(io.Closer); ok {
		errs = append(errs, c.Close())
	}
	if a.Files != nil {
		errs = append(errs, a.Files.Close())
	}
	return errors.Join(errs...)
}

// Holding returns where the agent keeps its holding notes (the approvals
// its runs wait on that are decided elsewhere): beside its waiting runs,
// and exactly as durable.
func (a *Agent) Holding() waiting.Holding { return a.holding }

// ToolMismatches asks each MCP server the flow declares what tools it
// has, within limit, and says, one line a server, where that differs from
// the declaration — or that the server did not answer. The server is the
// only authority on what it exposes.
func (a *Agent) ToolMismatches(ctx context.Context, limit time.Duration) []string {
	if a.tools == nil {
		return nil
	}
	var lines []string
	for _, server := range a.tools.Servers() {
		m, err := a.tools.Mismatch(ctx, server, limit)
		switch {
		case err != nil:
			lines = append(lines, fmt.Sprintf("mcp server %q: could not ask it for its tools: %v", server, err))
		case !m.None():
			lines = append(lines, m.String())
		}
	}
	return lines
}

// WaitingThreads lists the threads whose runs wait for a person in the
// agent's waiting store; nil for a flow that never waits. The threads of
// the children its runs delegated to are left out: their parents wait on
// them, and answering a parent answers its child.
func (a *Agent) WaitingThreads(ctx context.Context) ([]string, error) {
	if a.waiting == nil {
		return nil, nil
	}
	threads, err := a.waiting.Threads(ctx)
	return withoutChildren(threads), err
}

// Input turns NAME=VALUE text into a run's input, by each channel's type: a
// string channel takes the text as it is, a number must parse, and any
// other channel takes JSON when the text is JSON and the text otherwise.
func (a *Agent) Input(name, value string) (any, error) {
	ch := a.Flow.State[name]
	if a.Flow.State != nil && ch == nil {
		return nil, fmt.Errorf("input %q: the flow declares no such channel", name)
	}
	return parseInput(ch, value)
}
