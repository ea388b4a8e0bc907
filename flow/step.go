package flow

import (
	"context"
	"fmt"
	"slices"
	"strconv"
)

// task is one node's part in one step: a node the step's edges triggered,
// or one copy a fanout sent.
type task struct {
	node *gnode
	copy int    // -1 for a triggered node; a fanout copy's number in its step
	as   string // the channel a copy reads its item from
	item any

	status   taskStatus
	approved bool // its approval said yes
	answered bool // its ask was answered, with answer (or the question of the child it waits on)
	answer   any
	// delegated is the child an agent node waits on.
	delegated *DelegatedRun

	// What it came to.
	writes  []write
	next    []string // where its edges go: node ids, END
	sends   []send
	pending *Pending
	failed  error // why it failed, when it went to its onError
}

type taskStatus uint8

const (
	taskTodo   taskStatus = iota
	taskDone              // ran, failed into onError, or was refused
	taskPaused            // waits for a person
)

// label names the task in messages: the node's id, and a copy's number.
func (t *task) label() string {
	if t.copy < 0 {
		return t.node.ID
	}
	return t.node.ID + "[" + strconv.Itoa(t.copy) + "]"
}

// write is one value written to one channel.
type write struct {
	channel string
	value   any  // for __error, nil clears it
	reset   bool // replaces the channel's value past its reducer: a tools node emptying its queue
}

// send is one copy of a node a fanout sends, with its item.
type send struct {
	node string
	as   string
	item any
}

// batch is the writes of one writer — a task, or the run's input.
type batch struct {
	label  string
	writes []write
}

// view is the state a task sees: the state as of the last step, and a
// fanout copy's item in its channel.
func (r *run) view(t *task) State {
	v := view(r.state)
	if t.copy >= 0 && t.as != "" {
		v[t.as] = t.item
	}
	return v
}

// exec runs one task. A node with an approval not yet given stops before it
// does anything, and so does an ask not yet answered. A failure is tried
// again while the node has attempts left; then it goes to onError, with
// __error set, or ends the run. A pause is never a failure.
func (r *run) exec(ctx context.Context, t *task) (err error) {
	n := t.node
	if r.g.watch != nil {
		start := r.g.now()
		r.tell(ctx, Event{Kind: EventNodeEntered, Node: n.ID, NodeKind: n.Type, Copy: t.copy, At: start})
		defer func() {
			switch {
			case err == nil && t.failed != nil: // failed, and went to onError
				r.tellNode(ctx, t, start, OutcomeFailed, t.failed)
			default:
				r.tellNode(ctx, t, start, outcomeOf(ctx, t, err), err)
			}
		}()
	}
	v := r.view(t)
	if n.Approval != nil && !t.approved {
		p, err := r.approvalPending(v, n)
		if err != nil {
			return err
		}
		t.status, t.pending = taskPaused, p
		return nil
	}
	if n.Type == KindAsk && !t.answered {
		t.status, t.pending = taskPaused, r.askPending(v, n)
		return nil
	}

	var (
		writes []write
		sends  []send
	)
	for attempt := 1; ; attempt++ {
		writes, sends, err = r.do(ctx, t, v)
		if err == nil {
			break
		}
		if cerr := ctx.Err(); cerr != nil {
			return cerr
		}
		if attempt < n.attempts {
			continue
		}
		if n.OnError == "" {
			return &NodeError{Node: n.ID, Attempts: attempt, Err: err}
		}
		t.writes = []write{{channel: ErrorChannel, value: map[string]any{"node": n.ID, "message": err.Error()}}}
		t.next = []string{n.OnError}
		t.status = taskDone
		t.failed = &NodeError{Node: n.ID, Attempts: attempt, Err: err}
		return nil
	}
	if t.status == taskPaused {
		return nil // an agent node whose child stopped for a person
	}
	if n.OnError != "" {
		writes = append(writes, write{channel: ErrorChannel}) // cleared when the node succeeds
	}
	t.writes, t.sends = writes, sends
	next, err := r.route(ctx, t, v)
	if err != nil {
		return err
	}
	t.next = next
	t.status = taskDone
	return nil
}

// route follows the edges out of a node that ran: every normal edge, and
// each conditional edge's route, which its router picks reading the state
// the node saw with the node's own writes applied.
func (r *run) route(ctx context.Context, t *task, v State) ([]string, error) {
	n := t.node
	if len(n.conds) == 0 {
		return n.edges, nil
	}
	next := slices.Clone(n.edges)
	rv := view(v)
	if _, err := r.g.merge(rv, []batch{{label: t.label(), writes: t.writes}}); err != nil {
		return nil, err
	}
	for _, c := range n.conds {
		route, err := callRouter(ctx, c.router, rv)
		if err != nil {
			if cerr := ctx.Err(); cerr != nil {
				return nil, cerr
			}
			return nil, fmt.Errorf("flow: router %q on the edge from %q: %w", c.name, c.from, err)
		}
		if _, ok := c.routes[route]; !ok {
			return nil, &RoutingError{Router: c.name, From: c.from, Route: route, Routes: c.sorted}
		}
		next = append(next, c.routes[r.limited(c, route)])
	}
	return next, nil
}

// limited applies a route's limit: once the edge's source has been visited
// more than max times (since its per node last ran, or in the whole run),
// the route's then is taken instead — and that route's own limit, if it
// has one, in turn.
func (r *run) limited(c *gcond, route string) string {
	var seen []string
	for {
		l, ok := c.limits[route]
		if !ok || r.visits[l.key] <= l.max || slices.Contains(seen, route) {
			return route
		}
		seen = append(seen, route)
		route = l.then
	}
}

func callRouter(ctx context.Context, router Router, s State) (route string, err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("panic: %v", p)
		}
	}()
	return router(ctx, s)
}

// merge applies writers' writes to s in their order: first every reset,
// then __error (clears before sets, so a failure is never hidden by another
// node's success in the same step), then everything else through each
// channel's reducer. A channel without one takes one write a step. It
// returns the last channel written.
func (g *Graph) merge(s State, batches []batch) (string, error) {
	for _, b := range batches {
		for _, w := range b.writes {
			if w.reset {
				s[w.channel] = w.value
			}
		}
	}
	for _, set := range []bool{false, true} {
		for _, b := range batches {
			for _, w := range b.writes {
				if w.channel != ErrorChannel || (w.value != nil) != set {
					continue
				}
				if set {
					s[ErrorChannel] = w.value
				} else {
					delete(s, ErrorChannel)
				}
			}
		}
	}
	var wrote string
	var writers map[string]string
	for _, b := range batches {
		for _, w := range b.writes {
			if w.reset || w.channel == ErrorChannel {
				continue
			}
			wrote = w.channel
			red := g.reducers[w.channel]
			if red == nil {
				if err := g.checkFile(w.channel, w.value); err != nil {
					return "", err
				}
				if prev, ok := writers[w.channel]; ok {
					return "", &WriteConflictError{Channel: w.channel, Nodes: [2]string{prev, b.label}}
				}
				if writers == nil {
					writers = map[string]string{}
				}
				writers[w.channel] = b.label
				s[w.channel] = w.value
				continue
			}
			v, err := red(s[w.channel], w.value)
			if err != nil {
				return "", fmt.Errorf("flow: channel %q, written by %s: %w", w.channel, b.label, err)
			}
			s[w.channel] = v
		}
	}
	return wrote, nil
}

// updates turns what a handler returned into writes, checking each
// channel: not one of the engine's own, declared when the flow declares
// state, a JSON value, and no list or object for a string channel.
func (g *Graph) updates(u Update) ([]write, error) {
	if len(u) == 0 {
		return nil, nil
	}
	ws := make([]write, 0, len(u))
	chs := make([]string, 0, len(u))
	for ch := range u {
		chs = append(chs, ch)
	}
	slices.Sort(chs)
	for _, ch := range chs {
		switch {
		case g.engineChannel(ch):
			return nil, fmt.Errorf("wrote %q, which is the engine's own channel", ch)
		case g.declared != nil && !g.declared[ch]:
			return nil, fmt.Errorf("wrote channel %q, which is not declared in state", ch)
		}
		v, err := jsonValue(u[ch])
		if err != nil {
			return nil, fmt.Errorf("wrote channel %q: %w", ch, err)
		}
		if err := g.fitsString(ch, v); err != nil {
			return nil, err
		}
		ws = append(ws, write{channel: ch, value: v})
	}
	return ws, nil
}
