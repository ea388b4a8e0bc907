package agents

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/symphonix/symphonix/flow"
)

// Bounds of a delegation.
const (
	// MaxDepth is how many agents a chain holds, the root's included: a
	// call that would make it longer is AGENT_RECURSION.
	MaxDepth = 8
	// MaxInputBytes is the most JSON a child is handed.
	MaxInputBytes = 64 << 10
	// MaxOutputBytes is the most JSON that crosses back from a child.
	MaxOutputBytes = 64 << 10
	// DefaultTimeLimit is how long one call of a child (its start, or its
	// going on after an answer) may take when Call.TimeLimit is 0. Time
	// spent waiting for a person is not counted.
	DefaultTimeLimit = 5 * time.Minute
	// MaxMessageBytes is the most bytes of an *Error's message a report
	// carries.
	MaxMessageBytes = 1024
)

// ThreadPrefix begins the thread of every child run, in the parent's
// store: "delegation:<invocation>". The parent waits on such a thread; it
// is never a conversation of its own.
const ThreadPrefix = "delegation:"

// ChildThread reports whether thread is a child run's.
func ChildThread(thread string) bool { return strings.HasPrefix(thread, ThreadPrefix) }

// Call is one delegation: run the agent Name with Input as a child of the
// run ParentRun, whose node Node asked, at the end of Chain.
type Call struct {
	// Registry: the agents. Required.
	Registry *Registry
	// Graph returns the built graph of a registered agent: the compile
	// step, so a child runs under the parent's rules (its model, gate,
	// checkpointer). Required.
	Graph func(name string) (*flow.Graph, error)
	// Name is the agent to run, as given.
	Name string
	// Input is what it is handed.
	Input map[string]any
	// Allowed, when not nil, is the only agents that may be run.
	Allowed []string
	// Node, ParentRun and Thread are the asking node, its run and its
	// thread.
	Node, ParentRun, Thread string
	// Chain is the agents from the root run's to the asking one, the
	// asking one last.
	Chain []string
	// TimeLimit bounds one call of the child; 0 is DefaultTimeLimit.
	TimeLimit time.Duration
	// CanWait says whether the caller can keep a run that waits on the
	// child; a child that stops for a person when it cannot is cancelled,
	// and the call is AGENT_FAILED.
	CanWait bool
	// Resume, when set, is the waiting child to go on with Answer, rather
	// than a new one; Name must be its agent.
	Resume *flow.DelegatedRun
	Answer any
}

// Result is what a delegation came to.
type Result struct {
	Agent      string
	Run        string
	Invocation string
	// Output is the child's declared outputs that it wrote.
	Output map[string]any
	// Waiting is the child that stopped for a person, with Pending its
	// question; nil when it finished.
	Waiting  *flow.DelegatedRun
	Pending  *flow.Pending
	Duration time.Duration
}

// Invoke runs one registered agent. The checks come in this order and
// none is skipped: the name is an agent name, it is in Allowed (when
// there is a list), it is registered, it is not already in the chain (nor
// would make it longer than MaxDepth), and the input fits its contract.
// Then the child runs, as its own run with a flow.Delegation on its
// context, and only its declared outputs come back. Every refusal is an
// *Error with its code, the chain and, once it has one, the invocation.
func Invoke(ctx context.Context, c Call) (Result, error) {
	name := c.Name
	where := fmt.Sprintf("node %q", c.Node)
	refuse := func(e *Error) (Result, error) {
		if e.Chain == nil {
			e.Chain = slices.Clone(c.Chain)
		}
		return Result{}, e
	}
	if !flow.ValidAgentName(name) {
		return refuse(fail(CodeUnknownAgent, clipName(name), fmt.Sprintf("%s: %q is not an agent name (%s)", where, clipName(name), flow.AgentNamePattern)))
	}
	if c.Allowed != nil && !slices.Contains(c.Allowed, name) {
		return refuse(fail(CodeNotPermitted, name, fmt.Sprintf("%s may delegate to %s, and not to %q", where, strings.Join(c.Allowed, ", "), name)))
	}
	a, ok := c.Registry.Agent(name)
	if !ok {
		return refuse(fail(CodeUnknownAgent, name, fmt.Sprintf("%s: no agent %q is registered", where, name)))
	}
	if c.Resume == nil {
		if slices.Contains(c.Chain, name) {
			return refuse(fail(CodeRecursion, name, fmt.Sprintf("%s: agent %q is already in the chain %s: a delegation may not go round in a circle", where, name, strings.Join(c.Chain, " → "))))
		}
		if len(c.Chain) >= MaxDepth {
			return refuse(fail(CodeRecursion, name, fmt.Sprintf("%s: the chain is already %d agents deep, and a chain holds at most %d", where, len(c.Chain), MaxDepth)))
		}
		if err := CheckInput(a.Contract, c.Input, where); err != nil {
			return refuse(err.(*Error))
		}
	} else if c.Resume.Agent != name {
		return refuse(fail(CodeFailed, name, fmt.Sprintf("%s waits on agent %q, not on %q", where, c.Resume.Agent, name)))
	}

	g, err := c.Graph(name)
	if err != nil {
		return refuse(&Error{Code: CodeFailed, Agent: name, Message: fmt.Sprintf("%s: agent %q could not be built", where, name), Err: err})
	}
	d := c.Resume
	if d == nil {
		inv := newID()
		d = &flow.DelegatedRun{Agent: name, Run: flow.NewRunID(), Invocation: inv, Thread: ThreadPrefix + inv,
			Chain: append(slices.Clip(c.Chain), name)}
	}
	failed := func(e *Error) (Result, error) {
		e.Chain, e.Invocation = slices.Clone(c.Chain), d.Invocation
		return Result{Agent: name, Run: d.Run, Invocation: d.Invocation}, e
	}
	limit := c.TimeLimit
	if limit <= 0 {
		limit = DefaultTimeLimit
	}
	cctx, cancel := context.WithTimeout(ctx, limit)
	defer cancel()
	cctx = flow.WithDelegation(cctx, &flow.Delegation{ParentRun: c.ParentRun, ParentNode: c.Node, Invocation: d.Invocation, Agent: name, Chain: slices.Clone(d.Chain)})
	start := time.Now()
	var res flow.Result
	if c.Resume == nil {
		res, err = g.Invoke(flow.WithRunID(cctx, d.Run), d.Thread, c.Input)
	} else {
		res, err = g.Resume(cctx, d.Thread, c.Answer)
	}
	took := time.Since(start)
	if err != nil {
		if ctx.Err() == nil && errors.Is(cctx.Err(), context.DeadlineExceeded) {
			return failed(fail(CodeFailed, name, fmt.Sprintf("%s: agent %q did not finish within %s and was ended", where, name, limit)))
		}
		return failed(&Error{Code: CodeFailed, Agent: name, Message: fmt.Sprintf("%s: agent %q failed: %v", where, name, err), Err: err})
	}
	if !res.Finished() {
		if !c.CanWait {
			_ = g.Cancel(context.WithoutCancel(ctx), d.Thread)
			return failed(fail(CodeFailed, name, fmt.Sprintf("%s: agent %q stopped to wait for a person, and the run that asked cannot wait", where, name)))
		}
		return Result{Agent: name, Run: d.Run, Invocation: d.Invocation, Waiting: d, Pending: res.Pending, Duration: took}, nil
	}
	out, err := DeclaredOutputs(a.Contract, res.State, where)
	if err != nil {
		return failed(err.(*Error))
	}
	return Result{Agent: name, Run: d.Run, Invocation: d.Invocation, Output: out, Duration: took}, nil
}

// newID returns a new invocation id: 32 lower-case hex digits.
func newID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}
