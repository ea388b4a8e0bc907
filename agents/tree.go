package agents

import (
	"fmt"
	"strings"
	"time"

	"github.com/symphonix/symphonix/flow"
)

// Tree is a run's shape: the root run, and its steps, some of which are
// delegations with steps of their own.
type Tree struct {
	// Agent is the root agent's name when the events say it (the first
	// name of a child's chain); "" for a run that delegated nothing.
	Agent string
	Run   string
	Steps []Step
}

// The kinds of Step.
const (
	StepNode  = "node"
	StepAgent = "agent"
)

// Step is one step of a run: a node it entered, or a child it delegated
// to.
type Step struct {
	// Type is StepNode or StepAgent.
	Type string
	// ID is a node step's node.
	ID string
	// For an agent step: the agent, the node that delegated, the child's
	// run and its parent's, and the invocation; whether it finished,
	// how long its steps took, why it failed, and its own steps.
	Agent      string
	Node       string
	Run        string
	ParentRun  string
	Invocation string
	OK         bool
	Duration   time.Duration
	Error      string
	Steps      []Step
}

// BuildTree turns a flat list of events, as a Watcher heard them, back
// into the run's shape (agentTree). Each child run is placed under the
// run that delegated to it, by the flow.Delegation on its events; a list
// from a single flow reads as a tree of one. The same events always make
// the same tree.
func BuildTree(events []flow.Event) Tree {
	type tnode struct {
		step Step
		kids []*tnode
	}
	var t Tree
	root := &tnode{}
	runs := map[string]*tnode{}
	for _, e := range events {
		n := runs[e.Run]
		if n == nil {
			d := e.Delegation
			switch {
			case d == nil && t.Run == "":
				t.Run, n = e.Run, root
			case d != nil:
				if t.Agent == "" && len(d.Chain) > 1 {
					t.Agent = d.Chain[0]
				}
				parent := runs[d.ParentRun]
				if parent == nil {
					continue // its parent is not in these events
				}
				n = &tnode{step: Step{Type: StepAgent, Agent: d.Agent, Node: d.ParentNode,
					Run: e.Run, ParentRun: d.ParentRun, Invocation: d.Invocation}}
				parent.kids = append(parent.kids, n)
			default:
				continue
			}
			runs[e.Run] = n
		}
		switch e.Kind {
		case flow.EventNodeEntered:
			n.kids = append(n.kids, &tnode{step: Step{Type: StepNode, ID: e.Node}})
		case flow.EventRunFinished, flow.EventRunFailed, flow.EventRunStopped, flow.EventRunPaused:
			if n != root {
				n.step.OK = e.Kind == flow.EventRunFinished
				n.step.Duration += e.Duration
				n.step.Error = ""
				if e.Err != nil {
					n.step.Error = e.Err.Error()
				}
			}
		}
	}
	var steps func(*tnode) []Step
	steps = func(n *tnode) []Step {
		var out []Step
		for _, k := range n.kids {
			s := k.step
			s.Steps = steps(k)
			out = append(out, s)
		}
		return out
	}
	t.Steps = steps(root)
	return t
}

// AgentsIn flattens a tree's delegations, depth first, each without its
// steps.
func AgentsIn(t Tree) []Step {
	var out []Step
	var walk func([]Step)
	walk = func(ss []Step) {
		for _, s := range ss {
			if s.Type != StepAgent {
				continue
			}
			c := s
			c.Steps = nil
			out = append(out, c)
			walk(s.Steps)
		}
	}
	walk(t.Steps)
	return out
}

// DescribeTree writes a tree out for a terminal, one step a line,
// indented by depth.
func DescribeTree(t Tree) string {
	var b strings.Builder
	root := t.Agent
	if root == "" {
		root = "run"
	}
	fmt.Fprintf(&b, "%s %s\n", root, t.Run)
	var walk func([]Step, string)
	walk = func(ss []Step, indent string) {
		for _, s := range ss {
			switch s.Type {
			case StepNode:
				fmt.Fprintf(&b, "%s%s\n", indent, s.ID)
			case StepAgent:
				how := "ok"
				if !s.OK {
					how = "not finished"
					if s.Error != "" {
						how = "failed: " + s.Error
					}
				}
				fmt.Fprintf(&b, "%s→ %s (node %s, run %s): %s\n", indent, s.Agent, s.Node, s.Run, how)
				walk(s.Steps, indent+"  ")
			}
		}
	}
	walk(t.Steps, "  ")
	return b.String()
}
