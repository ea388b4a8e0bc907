package flow

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sync"
	"time"
)

// Result is what one call of Invoke or Resume comes to: a run that
// finished, or one that stopped to wait for a person.
type Result struct {
	// State is the run's state: the final state of a finished run, and the
	// state as it stood before the waiting step of a paused one.
	State State
	// Pending is what a paused run waits for; nil when the run finished.
	// Answer it with Resume.
	Pending *Pending
	// Steps is how many steps this call took.
	Steps int
	// Run is the run's id (RunOf): the same across its pauses.
	Run string
	// Turn is what a finished run was asked and answered, for a
	// transcript; nil when the run paused. A conversation's history holds
	// the same turn, with the same At.
	Turn *Turn
}

// Turn is one finished run as a conversation remembers it: what it was
// asked (the flow's input), what it answered (the flow's output), and when
// it finished.
type Turn struct {
	At       time.Time
	Asked    any
	Answered any
}

// History is t as the history channel holds it: {"at", "asked",
// "answered"}, at in RFC 3339 in UTC to the nanosecond. Turns handed to a
// conversation's run as its input's history are in this form, and one the
// thread already holds (the same at) is dropped.
func (t Turn) History() map[string]any {
	return map[string]any{"at": t.At.UTC().Format(timeFormat), "asked": t.Asked, "answered": t.Answered}
}

// Finished reports whether the run ended rather than paused.
func (r Result) Finished() bool { return r.Pending == nil }

// Invoke starts a run of the flow on thread with input written to its
// channels, and runs it until it ends or stops to wait for a person.
//
// Every channel starts from its default (cloned per run); a thread's
// remembered channels and a conversation's history are put back; then the
// input is written, through each channel's reducer, so a value sent with a
// message wins. A channel the flow does not declare, or one of the
// engine's own, is refused; a conversation's input may carry history
// turns, which join the history the thread holds.
//
// thread may be empty only for a flow that neither waits nor remembers.
// Invoke on a thread whose run is waiting fails with ErrWaiting.
func (g *Graph) Invoke(ctx context.Context, thread string, input map[string]any) (Result, error) {
	if thread == "" && g.needsThread() {
		return Result{}, ErrNoThread
	}
	unlock := g.lock(thread)
	defer unlock()
	if g.waits {
		data, ok, err := g.checkpointer.Get(ctx, thread)
		if err != nil {
			return Result{}, fmt.Errorf("flow: thread %q: reading the checkpointer: %w", thread, err)
		}
		if ok {
			if c, err := g.decode(thread, data); err == nil {
				if t := c.firstPaused(); t != nil {
					return Result{}, fmt.Errorf("thread %q waits at node %q: %w: Resume it, or Cancel it", thread, t.node.ID, ErrWaiting)
				}
			}
			return Result{}, fmt.Errorf("thread %q: %w: Resume it, or Cancel it", thread, ErrWaiting)
		}
	}

	id, _ := ctx.Value(runIDKey{}).(string)
	if id == "" {
		id = NewRunID()
	}
	r := &run{g: g, id: id, thread: thread, state: make(State, len(g.defaults)+len(input)), visits: map[string]int{}}
	for k, v := range g.defaults {
		r.state[k] = clone(v)
	}
	if g.remembers() {
		if err := r.recall(ctx); err != nil {
			return Result{}, err
		}
	}
	in, err := g.input(input)
	if err != nil {
		return Result{}, err
	}
	if _, err := g.merge(r.state, []batch{{label: "the input", writes: in}}); err != nil {
		return Result{}, err
	}
	r.asked = g.asked(in)
	r.setTasks([]*task{{node: g.start, copy: -1}})
	ctx = r.begin(ctx)
	defer r.end()
	r.tell(ctx, Event{Kind: EventRunStarted, Input: input})
	return r.loop(ctx)
}

// Resume answers the question a paused run on thread waits for, and runs it
// on until it ends or stops again. The Graph need not be the one that
// paused it: any Graph built from the same flow with the same Checkpointer
// will do, in this process or another.
//
// An approval's answer is yes when it is true, one of yes, y, approve,
// approved, ok or true (trimmed, in any case), or {"approved": true};
// anything else is no, and a no goes to the node's onReject, or ends that
// branch of the run — the node never runs. An ask's answer is written to
// its output as it is. nil, false, 0 and "" are refused with
// ErrEmptyAnswer and the run keeps waiting. A thread with nothing waiting
// fails with ErrNothingPending.
func (g *Graph) Resume(ctx context.Context, thread string, answer any) (Result, error) {
	if emptyAnswer(answer) {
		return Result{}, ErrEmptyAnswer
	}
	a, err := jsonValue(answer)
	if err != nil {
		return Result{}, fmt.Errorf("flow: the answer is %w", err)
	}
	if g.checkpointer == nil {
		return Result{}, fmt.Errorf("flow: thread %q: %w", thread, ErrNothingPending)
	}
	unlock := g.lock(thread)
	defer unlock()
	data, ok, err := g.checkpointer.Get(ctx, thread)
	if err != nil {
		return Result{}, fmt.Errorf("flow: thread %q: reading the checkpointer: %w", thread, err)
	}
	if !ok {
		return Result{}, fmt.Errorf("flow: thread %q: %w", thread, ErrNothingPending)
	}
	r, err := g.decode(thread, data)
	if err != nil {
		return Result{}, err
	}
	t := r.firstPaused()
	if t == nil {
		return Result{}, fmt.Errorf("%w: thread %q holds no paused node", ErrCheckpoint, thread)
	}
	if t.pending.Kind == PendingAsk {
		// An answer that cannot go to the ask's file channel is refused,
		// and the run keeps waiting.
		if err := g.checkFile(t.node.Output, a); err != nil {
			return Result{}, err
		}
	}
	r.resumed = true
	r.answer(t, a)
	ctx = r.begin(ctx)
	defer r.end()
	r.tell(ctx, Event{Kind: EventRunResumed, Node: t.node.ID})
	return r.loop(ctx)
}

// Pending returns what the run on thread waits for, or nil when nothing
// waits. What it returns was taken when the run paused, not recomputed:
// the digest is the one the question was asked with.
func (g *Graph) Pending(ctx context.Context, thread string) (*Pending, error) {
	if g.checkpointer == nil {
		return nil, nil
	}
	data, ok, err := g.checkpointer.Get(ctx, thread)
	if err != nil || !ok {
		return nil, err
	}
	r, err := g.decode(thread, data)
	if err != nil {
		return nil, err
	}
	if t := r.firstPaused(); t != nil && t.pending != nil {
		p := *t.pending
		p.Run = r.id
		return &p, nil
	}
	return nil, nil
}

// Cancel ends the run waiting on thread without answering it: no onReject,
// nothing runs. A child an agent node waits on is cancelled with it. A thread with nothing waiting fails with
// ErrNothingPending.
func (g *Graph) Cancel(ctx context.Context, thread string) error {
	if g.checkpointer == nil {
		return fmt.Errorf("flow: thread %q: %w", thread, ErrNothingPending)
	}
	unlock := g.lock(thread)
	defer unlock()
	data, ok, err := g.checkpointer.Get(ctx, thread)
	if err != nil {
		return fmt.Errorf("flow: thread %q: reading the checkpointer: %w", thread, err)
	}
	if !ok {
		return fmt.Errorf("flow: thread %q: %w", thread, ErrNothingPending)
	}
	if err := g.cancelChildren(ctx, thread, data); err != nil {
		return fmt.Errorf("flow: thread %q: cancelling the agent it waits on: %w", thread, err)
	}
	return g.checkpointer.Delete(ctx, thread)
}

// run is one run of a graph on a thread, between two steps or inside one.
type run struct {
	g       *Graph
	id      string    // RunOf
	began   time.Time // when this call of Invoke or Resume began its steps
	thread  string
	state   State          // as of the end of the last step
	visits  map[string]int // limit counters
	tasks   []*task        // the step being taken
	asked   any            // what the run was asked, for a conversation's history
	wrote   string         // the channel a node wrote last
	resumed bool
}

// loop takes steps until the run ends, pauses or fails.
func (r *run) loop(ctx context.Context) (Result, error) {
	steps := 0
	if r.g.watch != nil {
		r.began = r.g.now()
	}
	for {
		if len(r.tasks) == 0 {
			return r.finish(ctx, steps)
		}
		if err := ctx.Err(); err != nil {
			return r.fail(ctx, err)
		}
		if why := r.stopped(); why != "" {
			return r.fail(ctx, &stopError{why: why})
		}
		if steps >= r.g.stepLimit {
			return r.fail(ctx, fmt.Errorf("%w: %d steps and the run has not ended (BuildOptions.StepLimit)", ErrStepLimit, r.g.stepLimit))
		}
		steps++
		if err := r.step(ctx); err != nil {
			return r.fail(ctx, err)
		}
		if r.firstPaused() != nil {
			return r.pause(ctx, steps)
		}
		if err := r.commit(); err != nil {
			return r.fail(ctx, err)
		}
	}
}

// step runs every task of the step that is still to run, at the same time.
// The first failure in node order is the step's, and stops the others.
func (r *run) step(ctx context.Context) error {
	var todo []*task
	for _, t := range r.tasks {
		if t.status == taskTodo {
			todo = append(todo, t)
		}
	}
	if len(todo) == 1 {
		return r.exec(ctx, todo[0])
	}
	stepCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	errs := make([]error, len(todo))
	var wg sync.WaitGroup
	for i, t := range todo {
		wg.Go(func() {
			if errs[i] = r.exec(stepCtx, t); errs[i] != nil {
				cancel()
			}
		})
	}
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return err
	}
	var first error
	for _, err := range errs {
		switch {
		case err == nil:
		case errors.Is(err, context.Canceled):
			if first == nil {
				first = err // stopped by another task's failure, unless nothing else failed
			}
		default:
			return err
		}
	}
	return first
}

// commit ends a step: the step's writes are merged, in node order, and the
// next step is the nodes its edges trigger, each once, and the copies its
// fanouts send.
func (r *run) commit() error {
	batches := make([]batch, len(r.tasks))
	for i, t := range r.tasks {
		batches[i] = batch{label: t.label(), writes: t.writes}
	}
	wrote, err := r.g.merge(r.state, batches)
	if err != nil {
		return err
	}
	if wrote != "" {
		r.wrote = wrote
	}
	var next []*task
	for _, t := range r.tasks {
		for _, d := range t.next {
			gn := r.g.byID[d]
			if d == End || gn == nil || slices.ContainsFunc(next, func(o *task) bool { return o.node == gn }) {
				continue // a node the step triggers more than once runs once
			}
			next = append(next, &task{node: gn, copy: -1})
		}
	}
	var copies map[*gnode]int
	for _, t := range r.tasks {
		for _, s := range t.sends {
			if copies == nil {
				copies = map[*gnode]int{}
			}
			gn := r.g.byID[s.node]
			next = append(next, &task{node: gn, copy: copies[gn], as: s.as, item: s.item})
			copies[gn]++
		}
	}
	slices.SortStableFunc(next, func(a, b *task) int {
		if a.node.index != b.node.index {
			return a.node.index - b.node.index
		}
		return a.copy - b.copy
	})
	r.setTasks(next)
	return nil
}

// setTasks starts a step: each node's visit puts back the limit counters
// it scopes, then counts in those of the edges leaving it.
func (r *run) setTasks(ts []*task) {
	r.tasks = ts
	for _, t := range ts {
		for _, k := range t.node.resets {
			r.visits[k] = 0
		}
		for _, k := range t.node.counts {
			r.visits[k]++
		}
	}
}

func (r *run) firstPaused() *task {
	for _, t := range r.tasks {
		if t.status == taskPaused {
			return t
		}
	}
	return nil
}

// finish ends a run that reached its end: a conversation's turn is added
// to its history, what the thread remembers is kept, and a run that had
// waited is taken out of the checkpointer.
func (r *run) finish(ctx context.Context, steps int) (res Result, err error) {
	defer func() {
		if err != nil {
			r.tell(ctx, Event{Kind: EventRunFailed, Err: err, Steps: steps, Duration: r.spent()})
		} else {
			r.tell(ctx, Event{Kind: EventRunFinished, Steps: steps, Duration: r.spent(), State: r.state})
		}
	}()
	turn := &Turn{At: r.g.now().UTC(), Asked: clone(r.asked), Answered: r.answered()}
	res = Result{Run: r.id, State: r.state, Steps: steps, Turn: turn}
	var errs []error
	if r.g.flow.Conversation {
		h, err := addTurns(r.state[HistoryChannel], []any{clone(turn.History())})
		if err != nil {
			errs = append(errs, err)
		}
		r.state[HistoryChannel] = h
	}
	if r.g.remembers() {
		if err := r.keep(ctx); err != nil {
			errs = append(errs, err)
		}
	}
	if r.resumed {
		if err := r.g.checkpointer.Delete(ctx, r.thread); err != nil {
			errs = append(errs, fmt.Errorf("flow: the run ended and stays in the checkpointer: %w", err))
		}
	}
	return res, errors.Join(errs...)
}

// answered is what a finished turn answered: the flow's output (its
// outputs, when it names several), or else what a node wrote last.
func (r *run) answered() any {
	switch outs := r.g.flow.Outputs; {
	case len(outs) == 1:
		return clone(r.state[outs[0]])
	case len(outs) > 1:
		m := make(map[string]any, len(outs))
		for _, o := range outs {
			m[o] = clone(r.state[o])
		}
		return m
	case r.wrote != "":
		return clone(r.state[r.wrote])
	}
	return nil
}

// asked is what a run was asked: the flow's input (its inputs, when it
// names several); for a flow that names none, the one channel given, or
// everything given.
func (g *Graph) asked(in []write) any {
	given := map[string]any{}
	for _, w := range in {
		if w.channel != HistoryChannel || !g.flow.Conversation {
			given[w.channel] = w.value
		}
	}
	switch ins := g.flow.Inputs; {
	case len(ins) == 1:
		return clone(given[ins[0]])
	case len(ins) > 1:
		m := map[string]any{}
		for _, k := range ins {
			if v, ok := given[k]; ok {
				m[k] = clone(v)
			}
		}
		return m
	case len(given) == 1:
		for _, v := range given {
			return clone(v)
		}
	case len(given) > 1:
		return clone(map[string]any(given))
	}
	return nil
}

// fail ends a run with an error. A run that had waited is taken out of the
// checkpointer — it has ended — unless the caller's context ended it, in
// which case it is left waiting, to be answered again.
func (r *run) fail(ctx context.Context, err error) (Result, error) {
	if r.resumed && ctx.Err() == nil {
		if derr := r.g.checkpointer.Delete(ctx, r.thread); derr != nil {
			err = errors.Join(err, fmt.Errorf("flow: the run ended and stays in the checkpointer: %w", derr))
		}
	}
	kind := EventRunFailed
	if errors.Is(err, ErrStopped) {
		kind = EventRunStopped
	}
	r.tell(ctx, Event{Kind: kind, Err: err, Duration: r.spent()})
	return Result{Run: r.id}, err
}

// input checks what a run is given and turns it into writes.
func (g *Graph) input(in map[string]any) ([]write, error) {
	var ws []write
	for _, k := range slices.Sorted(maps.Keys(in)) {
		switch {
		case k == HistoryChannel && g.flow.Conversation:
		case g.engineChannel(k):
			return nil, fmt.Errorf("flow: the input names %q, which is the engine's own channel", k)
		case g.declared != nil && !g.declared[k]:
			return nil, fmt.Errorf("flow: the input names channel %q, which is not declared in state", k)
		}
		v, err := jsonValue(in[k])
		if err != nil {
			return nil, fmt.Errorf("flow: the input's %q: %w", k, err)
		}
		ws = append(ws, write{channel: k, value: v})
	}
	return ws, nil
}
