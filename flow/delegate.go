package flow

import (
	"context"
	"errors"
	"fmt"
)

// Delegate runs the child an agent node delegates to: the agent it names,
// or the one a model chooses among those it lists. It is the one place
// the engine reaches another agent; package agents implements it, so the
// engine never knows what a registry is. A child that stops for a person
// comes back with Pending set, and the parent run waits on the child's
// question; an error fails the node, and its retry and onError apply.
type Delegate func(ctx context.Context, call DelegateCall) (DelegateResult, error)

// ErrNoDelegate: the flow has an agent node and the build was given no
// Delegate.
var ErrNoDelegate = errors.New("flow: an agent node needs a Delegate, and BuildOptions.Delegate is nil")

// DelegateCall is one agent node asking for its child.
type DelegateCall struct {
	// Run, Thread and Node are the parent run, its thread and the agent
	// node asking.
	Run, Thread, Node string
	// Agent is the agent the node names; "" when a model chooses among
	// Agents, being asked Prompt (every {{channel}} filled in) with Model.
	Agent  string
	Agents []string
	Prompt string
	Model  Model
	// Input is the node's input for a named agent, every {{channel}}
	// filled in.
	Input map[string]any
	// CanWait says whether the parent can keep a run that waits: a child
	// that stops for a person when it cannot is a failure.
	CanWait bool
	// Resume, when set, is the child this node waits on, and Answer the
	// person's answer to it: the child goes on from where it stopped.
	Resume *DelegatedRun
	Answer any
	// Cancel, when set, is the waiting child to end without an answer,
	// because the parent waiting on it was cancelled: nothing else is
	// asked, and the result is ignored.
	Cancel *DelegatedRun
}

// DelegateResult is what a child came to.
type DelegateResult struct {
	// Run is the child's run; Agent the registered agent it ran as.
	Run   DelegatedRun
	Agent string
	// Output is the child's declared outputs that it wrote, by name:
	// what the node writes to its output channel.
	Output map[string]any
	// Pending is what the child waits for when it stopped for a person;
	// nil when it finished.
	Pending *Pending
}

// DelegatedRun names one child run, kept with a parent that waits on it.
type DelegatedRun struct {
	Agent      string   `json:"agent"`
	Run        string   `json:"run"`
	Thread     string   `json:"thread,omitempty"`
	Invocation string   `json:"invocation"`
	Chain      []string `json:"chain,omitempty"`
}

// Delegation is how a run was delegated to: the parent run and node, the
// call's id, the agent it runs as, and the chain of agents from the root
// run's to this one's, this one last. A Delegate puts it on the context
// of the child's run (WithDelegation), and the engine copies it into every
// Event of that run.
type Delegation struct {
	ParentRun  string
	ParentNode string
	Invocation string
	Agent      string
	Chain      []string
}

type delegationKey struct{}

// WithDelegation returns ctx saying the run made on it is the child d
// describes.
func WithDelegation(ctx context.Context, d *Delegation) context.Context {
	return context.WithValue(ctx, delegationKey{}, d)
}

// DelegationOf returns what WithDelegation put on ctx, or nil for a run
// nobody delegated to.
func DelegationOf(ctx context.Context) *Delegation {
	d, _ := ctx.Value(delegationKey{}).(*Delegation)
	return d
}

// DelegateFailure is a delegation an agent node asked for and did not get,
// as a Delegate's error describes it: the code saying why (package
// agents' codes), the agent asked for as given, the chain when it was
// asked, and the call's id when it got one.
type DelegateFailure struct {
	Code       string
	Target     string
	Chain      []string
	Invocation string
}

// DelegateError is an error that says which delegation failed and why; a
// Watcher reads it out of a failed agent node's Event.Err with errors.As.
type DelegateError interface {
	error
	DelegateFailure() DelegateFailure
}

// delegate runs an agent node: a new child, or the child it waits on
// going on with the person's answer. A child that stops leaves the task
// paused on the child's question; one that finishes has its outputs
// written to the node's output, as an object by name.
func (r *run) delegate(ctx context.Context, t *task, v State) ([]write, error) {
	n := t.node
	call := DelegateCall{Run: r.id, Thread: r.thread, Node: n.ID, Agent: n.Agent, Agents: n.Agents,
		CanWait: r.g.checkpointer != nil}
	if n.Agents != nil {
		call.Prompt, call.Model = render(n.Prompt, v), r.g.model
	} else {
		call.Input, _ = renderArgs(n.args, v).(map[string]any)
		if call.Input == nil {
			call.Input = map[string]any{}
		}
	}
	if t.delegated != nil && t.answered {
		// Taken once: a retry after a failed resumption starts a new child.
		call.Resume, call.Answer = t.delegated, t.answer
		t.delegated, t.answered, t.answer = nil, false, nil
	}
	res, err := r.g.delegateFn(ctx, call)
	if err != nil {
		return nil, err
	}
	if res.Pending != nil {
		if r.g.checkpointer == nil {
			return nil, fmt.Errorf("agent %q stopped to wait for a person, and this graph has no Checkpointer to wait in", res.Agent)
		}
		d := res.Run
		p := *res.Pending
		if p.Agent == "" {
			p.Agent = res.Agent
		}
		t.delegated, t.pending, t.status = &d, &p, taskPaused
		return nil, nil
	}
	out := res.Output
	if out == nil {
		out = map[string]any{}
	}
	val, err := jsonValue(out)
	if err != nil {
		return nil, fmt.Errorf("agent %q: its outputs are %w", res.Agent, err)
	}
	return []write{{channel: n.Output, value: val}}, nil
}

// cancelChildren ends the children the run in data waits on, so a parent
// cancelled leaves none waiting in the store. A checkpoint this graph
// cannot read has no children it knows of.
func (g *Graph) cancelChildren(ctx context.Context, thread string, data []byte) error {
	if g.delegateFn == nil {
		return nil
	}
	r, err := g.decode(thread, data)
	if err != nil {
		return nil
	}
	var errs []error
	for _, t := range r.tasks {
		if t.status == taskPaused && t.delegated != nil {
			_, err := g.delegateFn(ctx, DelegateCall{Run: r.id, Thread: thread, Node: t.node.ID, Agent: t.delegated.Agent, Cancel: t.delegated})
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}
