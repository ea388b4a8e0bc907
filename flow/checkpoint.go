package flow

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
)

// CheckpointVersion is the version of the checkpoint encoding this build
// writes and reads: "v" in every checkpoint. A checkpoint of another
// version is refused with ErrCheckpoint rather than half-read.
const CheckpointVersion = 1

// checkpoint is a paused run as JSON, what a Checkpointer stores. It holds
// the state as of the end of the last whole step, the limit counters, and
// the step that paused: every task of it, the ones that ran with what they
// came to, and the ones that wait with what they wait for. See
// docs/flow.md.
type checkpoint struct {
	V      int            `json:"v"`
	Run    string         `json:"run,omitempty"`
	Thread string         `json:"thread"`
	State  map[string]any `json:"state"`
	Visits map[string]int `json:"visits,omitempty"`
	Asked  any            `json:"asked,omitempty"`
	Wrote  string         `json:"wrote,omitempty"`
	Tasks  []taskRecord   `json:"tasks"`
}

type taskRecord struct {
	Node     string        `json:"node"`
	Copy     int           `json:"copy"` // -1: triggered, not a fanout copy
	As       string        `json:"as,omitempty"`
	Item     any           `json:"item,omitempty"`
	Status   string        `json:"status"` // "done" or "waiting"
	Approved bool          `json:"approved,omitempty"`
	Writes   []writeRecord `json:"writes,omitempty"`
	Next     []string      `json:"next,omitempty"`
	Sends    []sendRecord  `json:"sends,omitempty"`
	Pending  *Pending      `json:"pending,omitempty"`
	// Delegated is the child an agent node waits on.
	Delegated *DelegatedRun `json:"delegated,omitempty"`
}

type writeRecord struct {
	Channel string `json:"channel"`
	Value   any    `json:"value"`
	Reset   bool   `json:"reset,omitempty"`
}

type sendRecord struct {
	Node string `json:"node"`
	As   string `json:"as,omitempty"`
	Item any    `json:"item"`
}

const (
	statusDone    = "done"
	statusWaiting = "waiting"
)

// encode writes a paused run as a checkpoint.
func (r *run) encode() ([]byte, error) {
	c := checkpoint{V: CheckpointVersion, Run: r.id, Thread: r.thread, State: r.state, Visits: r.visits, Asked: r.asked, Wrote: r.wrote}
	for _, t := range r.tasks {
		tr := taskRecord{Node: t.node.ID, Copy: t.copy, As: t.as, Item: t.item, Approved: t.approved, Next: t.next, Pending: t.pending, Delegated: t.delegated}
		switch t.status {
		case taskDone:
			tr.Status = statusDone
		case taskPaused:
			tr.Status = statusWaiting
		default:
			return nil, fmt.Errorf("flow: node %q has not run, and a step pauses only once every node in it has", t.node.ID)
		}
		for _, w := range t.writes {
			tr.Writes = append(tr.Writes, writeRecord{Channel: w.channel, Value: w.value, Reset: w.reset})
		}
		for _, s := range t.sends {
			tr.Sends = append(tr.Sends, sendRecord{Node: s.node, As: s.as, Item: s.item})
		}
		c.Tasks = append(c.Tasks, tr)
	}
	return json.Marshal(c)
}

// decode reads a checkpoint back into a run of this graph.
func (g *Graph) decode(thread string, data []byte) (*run, error) {
	var c checkpoint
	if err := json.Unmarshal(data, &c); err != nil {
		return nil, fmt.Errorf("%w: thread %q: %v", ErrCheckpoint, thread, err)
	}
	if c.V != CheckpointVersion {
		return nil, fmt.Errorf("%w: thread %q: version %d, and this build reads version %d", ErrCheckpoint, thread, c.V, CheckpointVersion)
	}
	r := &run{g: g, id: c.Run, thread: thread, state: c.State, visits: c.Visits, asked: c.Asked, wrote: c.Wrote}
	if r.id == "" {
		r.id = NewRunID() // kept before runs had ids
	}
	if r.state == nil {
		r.state = State{}
	}
	if r.visits == nil {
		r.visits = map[string]int{}
	}
	node := func(id string) (*gnode, error) {
		if n := g.byID[id]; n != nil {
			return n, nil
		}
		return nil, fmt.Errorf("%w: thread %q: node %q is not in this flow", ErrCheckpoint, thread, id)
	}
	for _, tr := range c.Tasks {
		n, err := node(tr.Node)
		if err != nil {
			return nil, err
		}
		t := &task{node: n, copy: tr.Copy, as: tr.As, item: tr.Item, approved: tr.Approved, next: tr.Next, pending: tr.Pending, delegated: tr.Delegated}
		switch tr.Status {
		case statusDone:
			t.status = taskDone
		case statusWaiting:
			if tr.Pending == nil {
				return nil, fmt.Errorf("%w: thread %q: node %q waits for nothing", ErrCheckpoint, thread, tr.Node)
			}
			t.status = taskPaused
		default:
			return nil, fmt.Errorf("%w: thread %q: node %q has status %q", ErrCheckpoint, thread, tr.Node, tr.Status)
		}
		for _, w := range tr.Writes {
			t.writes = append(t.writes, write{channel: w.Channel, value: w.Value, reset: w.Reset})
		}
		for _, s := range tr.Sends {
			if _, err := node(s.Node); err != nil {
				return nil, err
			}
			t.sends = append(t.sends, send{node: s.Node, as: s.As, item: s.Item})
		}
		for _, d := range tr.Next {
			if d != End {
				if _, err := node(d); err != nil {
					return nil, err
				}
			}
		}
		r.tasks = append(r.tasks, t)
	}
	return r, nil
}

// pause keeps a run that stopped to wait in the checkpointer, and says what
// it waits for.
func (r *run) pause(ctx context.Context, steps int) (Result, error) {
	data, err := r.encode()
	if err == nil {
		err = r.g.checkpointer.Put(ctx, r.thread, data)
	}
	if err != nil {
		return Result{}, fmt.Errorf("flow: thread %q stopped to wait, and could not be kept: %w", r.thread, err)
	}
	// From here the run waits, and Stop no longer finds it: Cancel ends
	// it. A stop asked for during the step that paused is this boundary's,
	// and taken now, so an acknowledged stop is never lost.
	if why := r.leave(); why != "" {
		if err := errors.Join(r.g.cancelChildren(ctx, r.thread, data), r.g.checkpointer.Delete(ctx, r.thread)); err != nil {
			return r.fail(ctx, errors.Join(&stopError{why: why}, fmt.Errorf("flow: the stopped run stays in the checkpointer: %w", err)))
		}
		return r.fail(ctx, &stopError{why: why})
	}
	t := r.firstPaused()
	p := t.pending
	p.Run = r.id
	// The node of this run that waits: for an agent node, its own id, while
	// the question (p.Node) is its child's.
	r.tell(ctx, Event{Kind: EventRunPaused, Node: t.node.ID, Pending: p, Steps: steps, Duration: r.spent()})
	return Result{Run: r.id, State: r.state, Pending: p, Steps: steps}, nil
}
