package agents_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/symphonix/symphonix/agents"
	"github.com/symphonix/symphonix/approvals"
	"github.com/symphonix/symphonix/flow"
)

func researcherWorld(t *testing.T, limit time.Duration) *world {
	t.Helper()
	w := newWorld(t, map[string]any{"agents": map[string]any{"researcher": "researcher", "broken": "broken", "silent": "silent"}},
		map[string]map[string]any{
			"researcher/flow.json": child("Research a subject.", []string{"subject"}, []string{"findings"},
				map[string]any{"id": "research", "handler": "research"}),
			"broken/flow.json": child("Always fails.", []string{"subject"}, []string{"findings"},
				map[string]any{"id": "fail", "handler": "fail"}),
			"silent/flow.json": child("Writes nothing it promised.", []string{"subject"}, []string{"findings"},
				map[string]any{"id": "quiet", "handler": "quiet"}),
		}, limit)
	w.handlers["research"] = func(_ context.Context, s flow.State) (flow.Update, error) {
		return flow.Update{"findings": "all about " + s["subject"].(string), "extra": "kept inside"}, nil
	}
	w.handlers["fail"] = func(context.Context, flow.State) (flow.Update, error) { return nil, errors.New("it broke") }
	w.handlers["quiet"] = func(context.Context, flow.State) (flow.Update, error) { return flow.Update{"extra": "x"}, nil }
	return w
}

func call(w *world, name string, input map[string]any) agents.Call {
	return agents.Call{Registry: w.reg, Graph: w.graph, Name: name, Input: input, Node: "n", ParentRun: "p", Chain: []string{"root"}}
}

func TestCodesAreTheSeedsList(t *testing.T) {
	want := []string{"UNKNOWN_AGENT", "DUPLICATE_AGENT", "INVALID_REGISTRY", "INVALID_REGISTRY_ENTRY",
		"AGENT_FLOW_UNREADABLE", "AGENT_FLOW_INVALID", "AGENT_NOT_PERMITTED", "AGENT_DECISION_INVALID",
		"AGENT_INPUT_INVALID", "AGENT_OUTPUT_INVALID", "AGENT_FAILED", "AGENT_RECURSION"}
	if diff := cmp.Diff(want, agents.Codes); diff != "" {
		t.Errorf("Codes (-want +got):\n%s", diff)
	}
}

func TestAgentNodeGetsOnlyDeclaredOutputs(t *testing.T) {
	w := researcherWorld(t, 0)
	g := w.root(rootFlow(map[string]any{"id": "ask", "type": "agent", "agent": "researcher",
		"input": map[string]any{"subject": "{{topic}}"}, "output": "result"}))
	res, err := g.Invoke(t.Context(), "t1", map[string]any{"topic": "otters"})
	if err != nil {
		t.Fatalf("Invoke: %v", err)
	}
	want := map[string]any{"findings": "all about otters"}
	if diff := cmp.Diff(want, res.State["result"]); diff != "" {
		t.Errorf("result (-want +got):\n%s", diff)
	}
	// The child's run is its own, and says how it was delegated to.
	var child *flow.Event
	for _, e := range w.eventsCopy() {
		if e.Kind == flow.EventRunStarted && e.Delegation != nil {
			child = &e
		}
	}
	if child == nil {
		t.Fatal("no child run started")
	}
	d := child.Delegation
	if child.Run == res.Run || d.ParentRun != res.Run || d.ParentNode != "ask" || d.Agent != "researcher" || d.Invocation == "" {
		t.Errorf("child delegation = %+v (run %s), want parent run %s, node ask, agent researcher", d, child.Run, res.Run)
	}
	if diff := cmp.Diff([]string{"root", "researcher"}, d.Chain); diff != "" {
		t.Errorf("chain (-want +got):\n%s", diff)
	}
}

func TestInvokeRaisesEachCode(t *testing.T) {
	w := researcherWorld(t, 0)
	ok := map[string]any{"subject": "otters"}
	tests := []struct {
		name string
		call func(agents.Call) agents.Call
		want string
		says string
	}{
		{"not a name", func(c agents.Call) agents.Call { c.Name = "../x"; return c }, agents.CodeUnknownAgent, "not an agent name"},
		{"not registered", func(c agents.Call) agents.Call { c.Name = "nobody"; return c }, agents.CodeUnknownAgent, "no agent \"nobody\""},
		{"not permitted", func(c agents.Call) agents.Call { c.Allowed = []string{"broken"}; return c }, agents.CodeNotPermitted, "not to \"researcher\""},
		{"in the chain", func(c agents.Call) agents.Call { c.Chain = []string{"root", "researcher"}; return c }, agents.CodeRecursion, "already in the chain"},
		{"too deep", func(c agents.Call) agents.Call {
			c.Chain = nil
			for i := range 50 {
				c.Chain = append(c.Chain, fmt.Sprintf("a%d", i))
			}
			return c
		}, agents.CodeRecursion, "at most 8"},
		{"undeclared input", func(c agents.Call) agents.Call {
			c.Input = map[string]any{"subject": "x", "password": "hunter2"}
			return c
		}, agents.CodeInputInvalid, `"password" is not one of its inputs`},
		{"empty input", func(c agents.Call) agents.Call { c.Input = map[string]any{"subject": "  "}; return c }, agents.CodeInputInvalid, `input "subject" holds nothing`},
		{"input of the wrong type", func(c agents.Call) agents.Call { c.Input = map[string]any{"subject": []any{"otters"}}; return c }, agents.CodeInputInvalid, `input "subject" must be a string, and it is a list`},
		{"input too large", func(c agents.Call) agents.Call {
			c.Input = map[string]any{"subject": strings.Repeat("x", agents.MaxInputBytes)}
			return c
		}, agents.CodeInputInvalid, "at most"},
		{"no outputs written", func(c agents.Call) agents.Call { c.Name = "silent"; return c }, agents.CodeOutputInvalid, "wrote none of its outputs"},
		{"child fails", func(c agents.Call) agents.Call { c.Name = "broken"; return c }, agents.CodeFailed, "it broke"},
		// Two checks fail: the first in the seed's order is the one reported.
		{"not a name and not permitted", func(c agents.Call) agents.Call { c.Name = "../x"; c.Allowed = []string{"broken"}; return c }, agents.CodeUnknownAgent, "not an agent name"},
		{"not permitted and not registered", func(c agents.Call) agents.Call { c.Name = "nobody"; c.Allowed = []string{"broken"}; return c }, agents.CodeNotPermitted, ""},
		{"not registered and in the chain", func(c agents.Call) agents.Call { c.Name = "nobody"; c.Chain = []string{"nobody"}; return c }, agents.CodeUnknownAgent, ""},
		{"in the chain and bad input", func(c agents.Call) agents.Call {
			c.Chain = []string{"researcher"}
			c.Input = map[string]any{}
			return c
		}, agents.CodeRecursion, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := w.runsOf("researcher") + w.runsOf("silent") + w.runsOf("broken")
			c := tt.call(call(w, "researcher", ok))
			_, err := agents.Invoke(t.Context(), c)
			var e *agents.Error
			if !errors.As(err, &e) {
				t.Fatalf("Invoke = %v, want an *agents.Error", err)
			}
			if e.Code != tt.want || !strings.Contains(e.Message, tt.says) {
				t.Errorf("Invoke = %s: %s, want %s saying %q", e.Code, e.Message, tt.want, tt.says)
			}
			ran := w.runsOf("researcher") + w.runsOf("silent") + w.runsOf("broken") - before
			if runs := tt.want == agents.CodeFailed || tt.want == agents.CodeOutputInvalid; runs != (ran == 1) {
				t.Errorf("children run: %d, want a run only for a call that got past the checks", ran)
			}
		})
	}
}

func TestCycleRefusedBeforeItRunsAgain(t *testing.T) {
	deleg := func(id, to string) map[string]any {
		f := child("Hands work on to "+to+".", []string{"subject"}, []string{"findings"},
			map[string]any{"id": id, "type": "agent", "agent": to, "input": map[string]any{"subject": "{{subject}}"}, "output": "result"})
		f["state"].(map[string]any)["result"] = map[string]any{"type": "object"}
		return f
	}
	w := newWorld(t, map[string]any{"agents": []any{
		map[string]any{"name": "a", "flow": "a/flow.json"}, map[string]any{"name": "b", "flow": "b"},
	}}, map[string]map[string]any{"a/flow.json": deleg("toB", "b"), "b/flow.json": deleg("toA", "a")}, 0)
	w.del.Root = "a"
	g := w.root(rootFlow(map[string]any{"id": "start", "type": "agent", "agent": "b",
		"input": map[string]any{"subject": "{{topic}}"}, "output": "result"}))
	_, err := g.Invoke(t.Context(), "t1", map[string]any{"topic": "loops"})
	got := codes(err)
	if !slices.Contains(got, agents.CodeRecursion) {
		t.Fatalf("Invoke = %v (codes %v), want AGENT_RECURSION inside", err, got)
	}
	if n := w.runsOf("a"); n != 0 {
		t.Errorf("a ran %d times as a child, want 0: the cycle is refused before it runs again", n)
	}
	if n := w.runsOf("b"); n != 1 {
		t.Errorf("b ran %d times, want 1", n)
	}
}

func TestApprovalInsideChildPausesParent(t *testing.T) {
	payer := child("Pays an invoice.", []string{"subject"}, []string{"findings"},
		map[string]any{"id": "pay", "handler": "pay", "approval": map[string]any{"ask": "Pay {{subject}}?", "show": []any{"subject"}}})
	w := newWorld(t, map[string]any{"agents": map[string]any{"payer": "payer"}}, map[string]map[string]any{"payer/flow.json": payer}, 0)
	paid := 0
	w.handlers["pay"] = func(_ context.Context, s flow.State) (flow.Update, error) {
		paid++
		return flow.Update{"findings": "paid " + s["subject"].(string)}, nil
	}
	f := rootFlow(map[string]any{"id": "delegate", "type": "agent", "agent": "payer",
		"input": map[string]any{"subject": "{{topic}}"}, "output": "result"})
	g := w.root(f)
	res, err := g.Invoke(t.Context(), "t1", map[string]any{"topic": "INV-7"})
	if err != nil {
		t.Fatalf("Invoke: %v", err)
	}
	if res.Finished() || paid != 0 {
		t.Fatalf("Invoke finished=%v paid=%d, want paused before paying", res.Finished(), paid)
	}
	p := res.Pending
	wantDigest, _ := approvals.Digest(map[string]any{"subject": "INV-7"}, "")
	if p.Kind != flow.PendingApproval || p.Question != "Pay INV-7?" || p.Digest != wantDigest || p.Agent != "payer" || p.Run != res.Run {
		t.Errorf("Pending = %+v, want the child's approval (digest %s) on the parent's run %s", p, wantDigest, res.Run)
	}
	// A graph built afresh from the same store sees the same question.
	g2 := w.root(f)
	p2, err := g2.Pending(t.Context(), "t1")
	if err != nil || p2 == nil || p2.Digest != p.Digest {
		t.Fatalf("Pending from a new graph = %+v, %v; want digest %s", p2, err, p.Digest)
	}
	res, err = g2.Resume(t.Context(), "t1", "yes")
	if err != nil {
		t.Fatalf("Resume: %v", err)
	}
	if !res.Finished() || paid != 1 {
		t.Fatalf("Resume finished=%v paid=%d, want finished having paid once", res.Finished(), paid)
	}
	if diff := cmp.Diff(map[string]any{"findings": "paid INV-7"}, res.State["result"]); diff != "" {
		t.Errorf("result (-want +got):\n%s", diff)
	}
	if threads, _ := w.store.Threads(t.Context()); len(threads) != 0 {
		t.Errorf("threads left waiting: %v, want none", threads)
	}
}

func TestCancelledParentCancelsItsChild(t *testing.T) {
	payer := child("Pays an invoice.", []string{"subject"}, []string{"findings"},
		map[string]any{"id": "pay", "handler": "pay", "approval": map[string]any{"ask": "Pay?", "show": []any{"subject"}}})
	w := newWorld(t, map[string]any{"agents": map[string]any{"payer": "payer"}}, map[string]map[string]any{"payer/flow.json": payer}, 0)
	w.handlers["pay"] = func(context.Context, flow.State) (flow.Update, error) { return nil, nil }
	g := w.root(rootFlow(map[string]any{"id": "delegate", "type": "agent", "agent": "payer",
		"input": map[string]any{"subject": "{{topic}}"}, "output": "result"}))
	if _, err := g.Invoke(t.Context(), "t1", map[string]any{"topic": "INV-7"}); err != nil {
		t.Fatal(err)
	}
	if threads, _ := w.store.Threads(t.Context()); len(threads) != 2 {
		t.Fatalf("threads waiting = %v, want the parent's and the child's", threads)
	}
	if err := g.Cancel(t.Context(), "t1"); err != nil {
		t.Fatalf("Cancel: %v", err)
	}
	if threads, _ := w.store.Threads(t.Context()); len(threads) != 0 {
		t.Errorf("threads left waiting after Cancel = %v, want none: the child is cancelled with its parent", threads)
	}
}

func TestRefusedApprovalInsideChild(t *testing.T) {
	payer := child("Pays an invoice.", []string{"subject"}, []string{"findings"},
		map[string]any{"id": "pay", "handler": "pay", "approval": map[string]any{"ask": "Pay?", "show": []any{"subject"}}})
	w := newWorld(t, map[string]any{"agents": map[string]any{"payer": "payer"}}, map[string]map[string]any{"payer/flow.json": payer}, 0)
	w.handlers["pay"] = func(context.Context, flow.State) (flow.Update, error) {
		t.Error("paid after a no")
		return nil, nil
	}
	g := w.root(rootFlow(map[string]any{"id": "delegate", "type": "agent", "agent": "payer",
		"input": map[string]any{"subject": "{{topic}}"}, "output": "result"}))
	if _, err := g.Invoke(t.Context(), "t1", map[string]any{"topic": "INV-7"}); err != nil {
		t.Fatal(err)
	}
	_, err := g.Resume(t.Context(), "t1", "no")
	// The child ends without writing its outputs: nothing crosses back.
	if got := codes(err); !slices.Contains(got, agents.CodeOutputInvalid) {
		t.Errorf("Resume(no) = %v, want AGENT_OUTPUT_INVALID", err)
	}
}

func TestHangingChildEndsAtItsLimitAndOnErrorApplies(t *testing.T) {
	w := newWorld(t, map[string]any{"agents": map[string]any{"slow": "slow"}}, map[string]map[string]any{
		"slow/flow.json": child("Never answers.", []string{"subject"}, []string{"findings"}, map[string]any{"id": "hang", "handler": "hang"}),
	}, 50*time.Millisecond)
	w.handlers["hang"] = func(ctx context.Context, _ flow.State) (flow.Update, error) {
		<-ctx.Done()
		return nil, ctx.Err()
	}
	w.handlers["fallback"] = func(context.Context, flow.State) (flow.Update, error) {
		return flow.Update{"fallback": "used"}, nil
	}
	g := w.root(rootFlow(map[string]any{"id": "delegate", "type": "agent", "agent": "slow",
		"input": map[string]any{"subject": "{{topic}}"}, "output": "result", "onError": "fallback"},
		map[string]any{"id": "fallback", "handler": "fallback"}))
	res, err := g.Invoke(t.Context(), "t1", map[string]any{"topic": "x"})
	if err != nil {
		t.Fatalf("Invoke: %v, want the parent's onError to carry it on", err)
	}
	if res.State["fallback"] != "used" {
		t.Errorf("fallback = %v, want used", res.State["fallback"])
	}
	msg, _ := res.State[flow.ErrorChannel].(map[string]any)["message"].(string)
	if !strings.Contains(msg, agents.CodeFailed) || !strings.Contains(msg, "did not finish within 50ms") {
		t.Errorf("__error = %q, want AGENT_FAILED at its limit", msg)
	}
}

func TestTreeFromEvents(t *testing.T) {
	w := researcherWorld(t, 0)
	g := w.root(rootFlow(map[string]any{"id": "ask", "type": "agent", "agent": "researcher",
		"input": map[string]any{"subject": "{{topic}}"}, "output": "result"}))
	res, err := g.Invoke(t.Context(), "t1", map[string]any{"topic": "otters"})
	if err != nil {
		t.Fatal(err)
	}
	events := w.eventsCopy()
	tree := agents.BuildTree(events)
	if diff := cmp.Diff(tree, agents.BuildTree(events)); diff != "" {
		t.Errorf("the same events made two trees:\n%s", diff)
	}
	if tree.Run != res.Run || tree.Agent != "root" || len(tree.Steps) != 2 {
		t.Fatalf("tree = %+v, want root run %s with a node step and an agent step", tree, res.Run)
	}
	inv := agents.AgentsIn(tree)
	if len(inv) != 1 || inv[0].Agent != "researcher" || inv[0].Node != "ask" || inv[0].ParentRun != res.Run || !inv[0].OK {
		t.Errorf("AgentsIn = %+v, want researcher from node ask, ok", inv)
	}
	if s := tree.Steps[1].Steps; len(s) != 1 || s[0].ID != "research" {
		t.Errorf("child steps = %+v, want the research node", s)
	}
	desc := agents.DescribeTree(tree)
	if !strings.Contains(desc, "→ researcher (node ask") || !strings.Contains(desc, "    research") {
		t.Errorf("DescribeTree =\n%s", desc)
	}
	// A single-flow trace is a tree of one.
	one := agents.BuildTree([]flow.Event{{Kind: flow.EventRunStarted, Run: "r"}, {Kind: flow.EventNodeEntered, Run: "r", Node: "x"}})
	if one.Run != "r" || len(one.Steps) != 1 || len(agents.AgentsIn(one)) != 0 {
		t.Errorf("single-flow tree = %+v", one)
	}
}

// TestChainDeeperThanTheLimit: agents that hand work on down a line are
// refused at the ninth, before it runs, with AGENT_RECURSION saying how
// deep the chain is.
func TestChainDeeperThanTheLimit(t *testing.T) {
	entries := map[string]any{}
	flows := map[string]map[string]any{}
	for i := range 12 {
		name := fmt.Sprintf("c%d", i)
		entries[name] = name
		f := child("Hands work on down the line.", []string{"subject"}, []string{"findings"},
			map[string]any{"id": "next", "type": "agent", "agent": fmt.Sprintf("c%d", i+1), "input": map[string]any{"subject": "{{subject}}"}, "output": "result"})
		f["state"].(map[string]any)["result"] = map[string]any{"type": "object"}
		flows[name+"/flow.json"] = f
	}
	w := newWorld(t, map[string]any{"agents": entries}, flows, 0)
	g := w.root(rootFlow(map[string]any{"id": "start", "type": "agent", "agent": "c0",
		"input": map[string]any{"subject": "{{topic}}"}, "output": "result"}))
	_, err := g.Invoke(t.Context(), "t1", map[string]any{"topic": "deep"})
	got := codes(err)
	if len(got) == 0 || got[len(got)-1] != agents.CodeRecursion || !strings.Contains(err.Error(), "already 8 agents deep") {
		t.Fatalf("Invoke = %v (codes %v), want AGENT_RECURSION at the limit", err, got)
	}
	// root, c0 … c6 make 8: c7 is refused before it runs.
	for i := range 12 {
		n, want := w.runsOf(fmt.Sprintf("c%d", i)), 0
		if i < 7 {
			want = 1
		}
		if n != want {
			t.Errorf("c%d ran %d times, want %d", i, n, want)
		}
	}
}

// TestAskInsideChild: a child's question is the parent's; the answer given
// to the parent is the child's answer.
func TestAskInsideChild(t *testing.T) {
	asker := child("Asks which colour.", []string{"subject"}, []string{"findings"},
		map[string]any{"id": "which", "type": "ask", "ask": "Which colour for {{subject}}?", "output": "findings"})
	w := newWorld(t, map[string]any{"agents": map[string]any{"asker": "asker"}}, map[string]map[string]any{"asker/flow.json": asker}, 0)
	g := w.root(rootFlow(map[string]any{"id": "delegate", "type": "agent", "agent": "asker",
		"input": map[string]any{"subject": "{{topic}}"}, "output": "result"}))
	res, err := g.Invoke(t.Context(), "t1", map[string]any{"topic": "the shed"})
	if err != nil || res.Pending == nil || res.Pending.Kind != flow.PendingAsk || res.Pending.Question != "Which colour for the shed?" {
		t.Fatalf("Invoke = %+v, %v; want the child's question", res.Pending, err)
	}
	res, err = g.Resume(t.Context(), "t1", "green")
	if err != nil || !res.Finished() {
		t.Fatalf("Resume = %+v, %v", res, err)
	}
	if diff := cmp.Diff(map[string]any{"findings": "green"}, res.State["result"]); diff != "" {
		t.Errorf("result (-want +got):\n%s", diff)
	}
}
