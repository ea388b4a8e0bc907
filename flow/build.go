package flow

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strings"
	"sync"
	"time"
)

// Handler is the function behind a handler node: it reads the state and
// returns what to write. An error fails the node (see retry and onError).
type Handler func(ctx context.Context, state State) (Update, error)

// Router picks a conditional edge's route by name. It reads the state the
// node it leaves saw, with that node's own writes applied, and cannot write.
type Router func(ctx context.Context, state State) (string, error)

// Gate is asked before every tool call the engine makes — a tool node's
// call and each call a tools node runs — and refuses one by returning an
// error, which becomes the call's failure. It is where the board's tool
// switches plug in.
type Gate func(ctx context.Context, name string, args map[string]any) error

// Registry holds the functions a flow names, because a flow file cannot
// hold a function. Typed nodes need no entry.
type Registry struct {
	Handlers map[string]Handler
	Routers  map[string]Router
	// Reducers holds the reducers a channel names other than "append" and
	// "merge".
	Reducers map[string]Reducer
}

// DefaultStepLimit is how many steps one call of Invoke or Resume may take
// when BuildOptions.StepLimit is zero: LangGraph's recursion limit.
const DefaultStepLimit = 25

// BuildOptions is what a graph is built with besides the flow.
type BuildOptions struct {
	// Registry: the handlers, routers and reducers the flow names. Every
	// one it names must be there.
	Registry Registry
	// Model: asked by llm nodes. nil: a flow with an llm node is refused.
	Model Model
	// Files: reads the bytes of the files an llm node's prompt reads
	// ({{photo}}, a file channel), which the model is handed with the
	// prompt (ModelRequest.Files). nil: the model gets the prompt only,
	// with each file as its object's text.
	Files FileReader
	// Tools: calls tools for tool and tools nodes. nil: a flow with either
	// is refused.
	Tools ToolCaller
	// Gate: asked before every tool call. nil allows every call.
	Gate Gate
	// Checkpointer: where a run that stops for a person (ask, approval)
	// waits. nil: a flow that can stop is refused, in the words of the flow
	// language reference.
	Checkpointer Checkpointer
	// Memory: where a thread's remembered channels and a conversation's
	// history are kept between runs (see docs/flow.md). Any Checkpointer
	// will do, but not the same one as Checkpointer. nil: a store in this
	// Graph's memory, lost with it.
	Memory Checkpointer
	// StepLimit: how many steps one call of Invoke or Resume may take
	// before it fails with ErrStepLimit. 0: DefaultStepLimit.
	StepLimit int
	// Now: the clock for the times a run records. nil: time.Now.
	Now func() time.Time
	// Watch: told everything that happens in every run (Event), as it
	// happens. nil tells nobody.
	Watch Watcher
	// Delegate: runs the children agent nodes delegate to. nil: a flow
	// with an agent node is refused (ErrNoDelegate).
	Delegate Delegate
}

// Graph is a flow built to run: Invoke starts a run on a thread, Resume
// answers one that waits. A Graph is safe for concurrent use; runs on one
// thread are taken one at a time.
type Graph struct {
	flow     *Flow
	nodes    []*gnode // in flow order
	byID     map[string]*gnode
	start    *gnode
	declared map[string]bool   // nil: the flow declares no state
	types    map[string]string // each declared channel's type, when it says one
	reducers map[string]Reducer
	defaults map[string]any
	remember []string // channels carried between runs of a thread, sorted
	waits    bool     // the flow can stop for a person

	model        Model
	files        FileReader
	tools        ToolCaller
	gate         Gate
	checkpointer Checkpointer
	memory       Checkpointer
	stepLimit    int
	now          func() time.Time
	watch        Watcher
	delegateFn   Delegate

	mu     sync.Mutex
	locks  map[string]*threadLock
	active map[string]*activeRun // runs taking steps, by id
}

// gnode is one node, built.
type gnode struct {
	*Node
	index    int
	handler  Handler
	args     map[string]any // a tool node's arguments, decoded
	edges    []string       // normal edges' destinations, END included
	conds    []*gcond
	to       *gnode // a fanout's target
	output   string // the type of the channel an llm node writes
	appends  bool   // that channel's reducer is "append"
	attempts int
	resets   []string // limit counters this node's visit puts back to zero
	counts   []string // limit counters this node's visit counts in
}

// gcond is one conditional edge, built.
type gcond struct {
	from   string
	name   string // the router's name
	router Router
	routes map[string]string
	sorted []string
	limits map[string]glimit // by route
}

type glimit struct {
	key  string // the counter
	max  int
	then string
}

// Build checks the flow and builds it to run. Every validation problem is
// returned at once, as a *ValidationError; then every handler, router and
// reducer missing from the registry (ErrNotRegistered), an llm node with no
// Model (ErrNoModel), a tool or tools node with no ToolCaller
// (ErrNoToolCaller), and a flow that waits for a person with no
// Checkpointer (ErrApprovalNeedsCheckpointer, ErrAskNeedsCheckpointer).
//
// The Graph keeps f: do not change it afterwards. The functions it is given
// are called from many goroutines at once — the nodes of one step run at the
// same time, and so do the calls of a tools node — and must be safe for
// that. A Reducer is called more than once for one write (once for the
// router's view of its node, once when the step ends) and must not have
// effects.
func Build(f *Flow, opts BuildOptions) (*Graph, error) {
	if err := checkBuildable(f, opts); err != nil {
		return nil, err
	}
	g := newGraph(f, opts)
	errs := g.compileChannels(opts.Registry)
	errs = append(errs, g.compileNodes(opts)...)
	errs = append(errs, g.compileEdges(opts.Registry)...)
	if err := g.chooseMemory(); err != nil {
		errs = append(errs, err)
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return g, nil
}

// checkBuildable refuses a flow that cannot be built whatever the registry
// holds: one that is not valid, or one that waits for a person when opts
// give it nowhere to wait. It comes first because the phases after it
// assume a valid flow: every node, edge target and limit it names exists.
func checkBuildable(f *Flow, opts BuildOptions) error {
	if err := Check(f); err != nil {
		return err
	}
	if opts.Checkpointer == nil {
		if err := CheckpointerRequired(f); err != nil {
			return err
		}
	}
	return nil
}

// newGraph returns an empty Graph for f holding what opts give it, with
// the defaults for what they leave out, ready for the compile phases to
// fill.
func newGraph(f *Flow, opts BuildOptions) *Graph {
	g := &Graph{
		flow:         f,
		byID:         map[string]*gnode{},
		reducers:     map[string]Reducer{},
		types:        map[string]string{},
		defaults:     map[string]any{},
		model:        opts.Model,
		files:        opts.Files,
		tools:        opts.Tools,
		gate:         opts.Gate,
		checkpointer: opts.Checkpointer,
		memory:       opts.Memory,
		stepLimit:    opts.StepLimit,
		now:          opts.Now,
		watch:        opts.Watch,
		delegateFn:   opts.Delegate,
		locks:        map[string]*threadLock{},
		// A flow with an agent node waits when its child does, if it has
		// somewhere to wait.
		waits: CheckpointerRequired(f) != nil || (opts.Checkpointer != nil && delegates(f)),
	}
	if g.stepLimit <= 0 {
		g.stepLimit = DefaultStepLimit
	}
	if g.now == nil {
		g.now = time.Now
	}
	return g
}

// compileChannels records the channels the flow declares: each one's
// reducer (the engine's own, or one from reg wrapped so what it returns is
// plain JSON), its decoded default, and whether a thread remembers it. A
// conversation's history gets the engine's reducer. Channels are taken in
// name order, so problems and g.remember come out sorted. A channel whose
// reducer is missing from reg is reported and not looked at further.
func (g *Graph) compileChannels(reg Registry) []error {
	f := g.flow
	var errs []error
	if f.State != nil {
		g.declared = map[string]bool{}
	}
	for _, name := range slices.Sorted(maps.Keys(f.State)) {
		c := f.State[name]
		g.declared[name] = true
		if c == nil {
			continue
		}
		if c.Type != "" {
			g.types[name] = c.Type
		}
		switch c.Reducer {
		case "":
		case ReducerAppend:
			g.reducers[name] = appendReducer
		case ReducerMerge:
			g.reducers[name] = mergeReducer
		default:
			r := reg.Reducers[c.Reducer]
			if r == nil {
				errs = append(errs, unregistered(fmt.Sprintf("channel %q", name), "reducer", c.Reducer, hasKey(reg.Reducers, c.Reducer)))
				continue
			}
			g.reducers[name] = func(old, new any) (any, error) {
				v, err := r(old, new)
				if err != nil {
					return nil, err
				}
				return jsonValue(v)
			}
		}
		if c.Default != nil {
			var v any
			if err := json.Unmarshal(c.Default, &v); err != nil {
				errs = append(errs, fmt.Errorf("flow: channel %q: default is not JSON: %w", name, err))
			}
			g.defaults[name] = v
		}
		if c.Remembers {
			g.remember = append(g.remember, name)
		}
	}
	if f.Conversation {
		g.reducers[HistoryChannel] = addTurns
	}
	return errs
}

// compileNodes builds one gnode per node, in flow order, and gives each
// what its kind needs to run: a handler node its function from
// opts.Registry, an llm node the type of the channel it writes, a tool
// node its decoded arguments. A kind whose dependency opts lack (Model,
// Tools) is reported on every node of that kind. Then it points the graph
// at its start node and each fanout at its target, which needs every node
// built first.
func (g *Graph) compileNodes(opts BuildOptions) []error {
	f, reg := g.flow, opts.Registry
	var errs []error
	for i, n := range f.Nodes {
		gn := &gnode{Node: n, index: i, attempts: 1}
		if n.Retry != nil && n.Retry.MaxAttempts > 1 {
			gn.attempts = n.Retry.MaxAttempts
		}
		g.nodes = append(g.nodes, gn)
		g.byID[n.ID] = gn
		switch n.Kind() {
		case KindHandler:
			gn.handler = reg.Handlers[n.Handler]
			if gn.handler == nil {
				errs = append(errs, unregistered(fmt.Sprintf("node %q", n.ID), "handler", n.Handler, hasKey(reg.Handlers, n.Handler)))
			}
		case KindLLM:
			if opts.Model == nil {
				errs = append(errs, fmt.Errorf("node %q: %w", n.ID, ErrNoModel))
			}
			if c := f.State[n.Output]; c != nil {
				gn.output = c.Type
				gn.appends = c.Reducer == ReducerAppend
			}
		case KindTool:
			if opts.Tools == nil {
				errs = append(errs, fmt.Errorf("node %q: %w", n.ID, ErrNoToolCaller))
			}
			gn.args = map[string]any{}
			if n.Args != nil {
				if err := json.Unmarshal(n.Args, &gn.args); err != nil || gn.args == nil {
					errs = append(errs, fmt.Errorf("flow: node %q: args must be an object of arguments", n.ID))
				}
			}
		case KindTools:
			if opts.Tools == nil {
				errs = append(errs, fmt.Errorf("node %q: %w", n.ID, ErrNoToolCaller))
			}
		case KindAgent:
			if opts.Delegate == nil {
				errs = append(errs, fmt.Errorf("node %q: %w", n.ID, ErrNoDelegate))
			}
			if n.Agents != nil && opts.Model == nil {
				errs = append(errs, fmt.Errorf("node %q: a model chooses its agent: %w", n.ID, ErrNoModel))
			}
			gn.args = map[string]any{}
			if n.Input != nil {
				if err := json.Unmarshal(n.Input, &gn.args); err != nil || gn.args == nil {
					errs = append(errs, fmt.Errorf("flow: node %q: input must be an object of the child's input channels", n.ID))
				}
			}
		}
	}
	g.start = g.byID[f.Start]
	for _, gn := range g.nodes {
		if gn.Type == KindFanout {
			gn.to = g.byID[gn.To]
		}
	}
	return errs
}

// compileEdges hangs each edge on the node it leaves: a normal edge as a
// destination, a conditional one as a gcond with its router (from reg, or
// a channel router for a name starting with ChannelRouterPrefix) and its
// route limits. A limit's counter is keyed by the edge's place in the flow
// and the route, so two edges never share one; the source node counts it,
// and the node a limit names in Per puts it back to zero. It needs every
// node built, and reports each router missing from reg.
func (g *Graph) compileEdges(reg Registry) []error {
	var errs []error
	for i, e := range g.flow.Edges {
		src := g.byID[e.From]
		if !e.conditional() {
			src.edges = append(src.edges, e.To)
			continue
		}
		c := &gcond{from: e.From, name: e.Router, routes: e.Routes, sorted: slices.Sorted(maps.Keys(e.Routes))}
		c.router = reg.Routers[e.Router]
		if c.router == nil && strings.HasPrefix(e.Router, ChannelRouterPrefix) {
			c.router = channelRouter(e.Router[len(ChannelRouterPrefix):])
		}
		if c.router == nil {
			errs = append(errs, unregistered(fmt.Sprintf("edge from %q", e.From), "router", e.Router, hasKey(reg.Routers, e.Router)))
		}
		for _, route := range slices.Sorted(maps.Keys(e.Limits)) {
			l := e.Limits[route]
			key := fmt.Sprintf("%d:%s", i, route)
			if c.limits == nil {
				c.limits = map[string]glimit{}
			}
			c.limits[route] = glimit{key: key, max: l.Max, then: l.Then}
			src.counts = append(src.counts, key)
			if l.Per != "" {
				per := g.byID[l.Per]
				per.resets = append(per.resets, key)
			}
		}
		src.conds = append(src.conds, c)
	}
	return errs
}

// chooseMemory settles where a graph that remembers (a conversation, or a
// channel marked remembers) keeps its threads' memory: BuildOptions.Memory,
// or a store of its own when that is nil. It refuses a Memory that is the
// Checkpointer, because both are keyed by thread and one would overwrite
// the other. It needs g.remember, so it runs after compileChannels.
func (g *Graph) chooseMemory() error {
	if !g.remembers() {
		return nil
	}
	switch {
	case g.memory == nil:
		g.memory = &MemoryCheckpointer{}
	case sameStore(g.memory, g.checkpointer):
		return errors.New("flow: BuildOptions.Memory must not be the Checkpointer: a thread's memory and its waiting run are kept by the same key")
	}
	return nil
}

// delegates reports whether f has an agent node.
func delegates(f *Flow) bool {
	for _, n := range f.Nodes {
		if n != nil && n.Type == KindAgent {
			return true
		}
	}
	return false
}

func hasKey[V any](m map[string]V, k string) bool {
	_, ok := m[k]
	return ok
}

func unregistered(what, kind, name string, nilValue bool) error {
	if nilValue {
		return fmt.Errorf("%s: %s %q is registered but is not a function: %w", what, kind, name, ErrNotRegistered)
	}
	return fmt.Errorf("%s: %s %q is not in the registry: %w", what, kind, name, ErrNotRegistered)
}

// sameStore reports whether two stores are one value.
func sameStore(a, b Checkpointer) bool {
	if a == nil || b == nil {
		return false
	}
	ta, tb := reflect.TypeOf(a), reflect.TypeOf(b)
	return ta == tb && ta.Comparable() && a == b
}

// needsThread reports whether a run of this graph can wait or remember.
func (g *Graph) needsThread() bool {
	return g.waits || g.remembers()
}

func (g *Graph) remembers() bool {
	return g.flow.Conversation || len(g.remember) > 0
}

// engineChannel reports whether a channel is the engine's own, which no
// node may write: names beginning "__", and a conversation's history.
func (g *Graph) engineChannel(ch string) bool {
	return strings.HasPrefix(ch, "__") || (ch == HistoryChannel && g.flow.Conversation)
}

// threadLock takes the runs of one thread one at a time.
type threadLock struct {
	mu   sync.Mutex
	refs int
}

func (g *Graph) lock(thread string) (unlock func()) {
	g.mu.Lock()
	l := g.locks[thread]
	if l == nil {
		l = &threadLock{}
		g.locks[thread] = l
	}
	l.refs++
	g.mu.Unlock()
	l.mu.Lock()
	return func() {
		l.mu.Unlock()
		g.mu.Lock()
		if l.refs--; l.refs == 0 {
			delete(g.locks, thread)
		}
		g.mu.Unlock()
	}
}

// ChannelRouterPrefix marks a router a flow folder with no Go code can
// name: "=decision" routes by the value of channel decision, and
// "=decision.action" by a field of it, so an llm node with an enum schema
// can choose the way. A registered router of the same name wins.
const ChannelRouterPrefix = "="

// channelRouter routes by the string at path in state.
func channelRouter(path string) Router {
	return func(_ context.Context, s State) (string, error) {
		v, ok := lookup(s, path)
		if !ok {
			return "", fmt.Errorf("router %q: %s holds nothing", ChannelRouterPrefix+path, path)
		}
		route, ok := v.(string)
		if !ok {
			return "", fmt.Errorf("router %q: %s holds %s, not a route name", ChannelRouterPrefix+path, path, Text(v))
		}
		return route, nil
	}
}
