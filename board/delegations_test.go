package board_test

import (
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"connectrpc.com/connect/v2"
	"google.golang.org/protobuf/types/known/timestamppb"

	boardv1 "github.com/symphonix/symphonix/api/symphonix/board/v1"
	"github.com/symphonix/symphonix/api/symphonix/board/v1/boardv1connect"
	"github.com/symphonix/symphonix/identity"
	"github.com/symphonix/symphonix/internal/boardtest"
)

// delegCaps are the capabilities of an agent of this protocol that runs
// and delegates.
var delegCaps = []string{"runs", "live-runs", "delegation", "delegation-cycle"}

// delegated is a finished run of id that parent's node delegated to.
func delegated(id, parent string, start time.Time, chain ...string) *boardv1.Run {
	r := endedRun(id, 1)
	r.StartTime, r.EndTime = timestamppb.New(start), timestamppb.New(start.Add(time.Second))
	r.StartedBy = "delegation"
	r.Delegation = &boardv1.RunDelegation{ParentRunId: parent, ParentNode: "ask-" + id, InvocationId: "inv-" + id,
		Agent: chain[len(chain)-1], Chain: chain}
	return r
}

// storeAll sends summaries of runs, fifty at a time, and waits for each to
// be stored.
func (l *rawLink) storeAll(runs []*boardv1.Run) {
	l.t.Helper()
	for len(runs) > 0 {
		n := min(len(runs), 50)
		for _, r := range runs[:n] {
			l.send(summaryOf(r, 1, 0))
		}
		for range n {
			if m := l.next(); m.GetRunStored() == nil {
				l.t.Fatalf("summary: answered %v, want run_stored", m)
			}
		}
		runs = runs[n:]
	}
}

func failureOf(id string, seq uint32, f *boardv1.DelegationFailure) *boardv1.LinkRequest {
	return runEvent(id, seq, &boardv1.RunEvent{Kind: &boardv1.RunEvent_DelegationFailed{DelegationFailed: f}})
}

func cycle(n int) *boardv1.DelegationFailure {
	return &boardv1.DelegationFailure{Node: "ask", Target: "triage", Code: "AGENT_RECURSION",
		Message: fmt.Sprintf("triage is already in the chain (%d)", n), Chain: []string{"desk", "triage"}, InvocationId: fmt.Sprintf("inv-%d", n)}
}

func treeIDs(n *boardv1.RunTreeNode) string {
	s := n.GetRun().GetId()
	if len(n.GetChildren()) == 0 {
		return s
	}
	var kids []string
	for _, c := range n.GetChildren() {
		kids = append(kids, treeIDs(c))
	}
	return s + "(" + strings.Join(kids, " ") + ")"
}

// TestRunTree: a child run reported with its delegation is in GetRun, and
// in its parent's tree under its parent, children in start order; a tree
// asked from a grandchild finds the root; a triggered root carries its
// trigger.
func TestRunTree(t *testing.T) {
	t.Parallel()
	bt := boardtest.Start(t, boardtest.Options{})
	l := runsLink(t, bt, "desk", delegCaps...)
	t0 := time.Now().Add(-10 * time.Minute)
	root := endedRun("root", 2)
	root.StartTime, root.StartedBy = timestamppb.New(t0), "trigger"
	root.Trigger = &boardv1.RunTrigger{TriggerId: "nightly", Kind: boardv1.TriggerKind_TRIGGER_KIND_SCHEDULE, OccurrenceTime: timestamppb.New(t0)}
	l.storeAll([]*boardv1.Run{
		root,
		delegated("c2", "root", t0.Add(2*time.Second), "desk", "billing"),
		delegated("c1", "root", t0.Add(time.Second), "desk", "triage"),
		delegated("g1", "c1", t0.Add(3*time.Second), "desk", "triage", "refunds"),
		endedRun("other", 1),
	})
	runs := runsClient(bt, bt.OperatorToken("vic", identity.RoleViewer))
	c1 := getRun(t, runs, "desk", "c1")
	if d := c1.GetDelegation(); d.GetParentRunId() != "root" || d.GetParentNode() != "ask-c1" || d.GetInvocationId() != "inv-c1" ||
		d.GetAgent() != "triage" || strings.Join(d.GetChain(), ",") != "desk,triage" {
		t.Errorf("GetRun(c1).delegation = %v, want root's ask-c1, inv-c1, triage, chain desk,triage", d)
	}
	if d := getRun(t, runs, "desk", "root").GetDelegation(); d != nil {
		t.Errorf("GetRun(root).delegation = %v, want none", d)
	}
	for _, from := range []string{"root", "c1", "g1"} {
		res, err := runs.GetRunTree(t.Context(), &boardv1.GetRunTreeRequest{Agent: "desk", Id: from})
		if err != nil {
			t.Fatalf("GetRunTree(%s): %v", from, err)
		}
		if got, want := treeIDs(res.GetRoot()), "root(c1(g1) c2)"; got != want || res.GetTruncated() {
			t.Errorf("GetRunTree(%s) = %s truncated %v, want %s, not truncated", from, got, res.GetTruncated(), want)
		}
		if tr := res.GetRoot().GetRun().GetTrigger(); tr.GetTriggerId() != "nightly" {
			t.Errorf("GetRunTree(%s): root's trigger %v, want nightly", from, tr)
		}
		if s := res.GetRoot().GetRun().GetSteps(); len(s) != 0 {
			t.Errorf("GetRunTree(%s): root carries %d steps, want none", from, len(s))
		}
	}
	res, err := runs.GetRunTree(t.Context(), &boardv1.GetRunTreeRequest{Agent: "desk", Id: "other"})
	if err != nil || treeIDs(res.GetRoot()) != "other" {
		t.Errorf("GetRunTree(other) = %v %v, want a tree of one", res, err)
	}
	_, err = runs.GetRunTree(t.Context(), &boardv1.GetRunTreeRequest{Agent: "desk", Id: "nope"})
	if connect.CodeOf(err) != connect.CodeNotFound {
		t.Errorf("GetRunTree(nope): %v, want not_found", err)
	}
	_, err = runs.GetRunTree(t.Context(), &boardv1.GetRunTreeRequest{Agent: "desk", Id: "no such/run"})
	if connect.CodeOf(err) != connect.CodeInvalidArgument || !strings.Contains(err.Error(), "id:") {
		t.Errorf("GetRunTree(bad id): %v, want invalid_argument naming id", err)
	}
}

// TestRunTreeFromStartEvent: a delegation said in a run's start event is
// stored with the run, and the child is in its parent's tree.
func TestRunTreeFromStartEvent(t *testing.T) {
	t.Parallel()
	bt := boardtest.Start(t, boardtest.Options{})
	l := runsLink(t, bt, "desk", delegCaps...)
	l.send(startOf("p", 1, ""))
	l.send(runEvent("k", 1, &boardv1.RunEvent{Kind: &boardv1.RunEvent_Start{Start: &boardv1.RunStart{StartedBy: "delegation",
		Delegation: &boardv1.RunDelegation{ParentRunId: "p", ParentNode: "n", InvocationId: "i1", Agent: "triage", Chain: []string{"desk", "triage"}}}}}))
	l.ping(1)
	runs := runsClient(bt, bt.OperatorToken("vic", identity.RoleViewer))
	boardtest.Eventually(t, 5*time.Second, "k under p", func() bool {
		res, err := runs.GetRunTree(t.Context(), &boardv1.GetRunTreeRequest{Agent: "desk", Id: "k"})
		return err == nil && treeIDs(res.GetRoot()) == "p(k)"
	})
	if d := getRun(t, runs, "desk", "k").GetDelegation(); d.GetParentRunId() != "p" || d.GetAgent() != "triage" {
		t.Errorf("GetRun(k).delegation = %v, want p's, triage", d)
	}
}

// TestRunTreeTruncated: a tree of more than 1,000 runs, or deeper than 32
// levels, is cut and says so.
func TestRunTreeTruncated(t *testing.T) {
	t.Parallel()
	bt := boardtest.Start(t, boardtest.Options{})
	runs := runsClient(bt, bt.OperatorToken("vic", identity.RoleViewer))
	t0 := time.Now().Add(-time.Hour)

	wide := runsLink(t, bt, "wide", delegCaps...)
	batch := []*boardv1.Run{endedRun("w", 1)}
	batch[0].StartTime = timestamppb.New(t0)
	for i := range 1005 {
		batch = append(batch, delegated(fmt.Sprintf("w%04d", i), "w", t0.Add(time.Duration(i+1)*time.Millisecond), "wide", "x"))
	}
	wide.storeAll(batch)
	res, err := runs.GetRunTree(t.Context(), &boardv1.GetRunTreeRequest{Agent: "wide", Id: "w0007"})
	if err != nil {
		t.Fatal(err)
	}
	if n := len(res.GetRoot().GetChildren()); n != 999 || !res.GetTruncated() || res.GetRoot().GetRun().GetId() != "w" {
		t.Errorf("wide tree: root %s with %d children, truncated %v; want w with 999, truncated", res.GetRoot().GetRun().GetId(), n, res.GetTruncated())
	}
	if first := res.GetRoot().GetChildren()[0].GetRun().GetId(); first != "w0000" {
		t.Errorf("wide tree: first child %s, want w0000 (start order)", first)
	}

	deep := runsLink(t, bt, "deep", delegCaps...)
	var chain []*boardv1.Run
	top := endedRun("d00", 1)
	top.StartTime = timestamppb.New(t0)
	chain = append(chain, top)
	for i := 1; i < 40; i++ {
		chain = append(chain, delegated(fmt.Sprintf("d%02d", i), fmt.Sprintf("d%02d", i-1), t0.Add(time.Duration(i)*time.Second), "deep", "x"))
	}
	deep.storeAll(chain)
	depth := func(n *boardv1.RunTreeNode) int {
		d := 1
		for len(n.GetChildren()) > 0 {
			n, d = n.GetChildren()[0], d+1
		}
		return d
	}
	res, err = runs.GetRunTree(t.Context(), &boardv1.GetRunTreeRequest{Agent: "deep", Id: "d05"})
	if err != nil {
		t.Fatal(err)
	}
	if d := depth(res.GetRoot()); d != 32 || !res.GetTruncated() || res.GetRoot().GetRun().GetId() != "d00" {
		t.Errorf("deep tree from d05: root %s, %d levels, truncated %v; want d00, 32, truncated", res.GetRoot().GetRun().GetId(), d, res.GetTruncated())
	}
	// From the bottom: the walk up stops 32 levels up.
	res, err = runs.GetRunTree(t.Context(), &boardv1.GetRunTreeRequest{Agent: "deep", Id: "d39"})
	if err != nil {
		t.Fatal(err)
	}
	if id := res.GetRoot().GetRun().GetId(); id != "d08" || !res.GetTruncated() {
		t.Errorf("deep tree from d39: root %s truncated %v; want d08 (31 levels up), truncated", id, res.GetTruncated())
	}
}

// TestDelegationRefusals: delegation fields out of bounds are counted and
// the event dropped whole, the link staying up; a delegation from an
// agent not announcing delegation is refused as a capability problem.
func TestDelegationRefusals(t *testing.T) {
	t.Parallel()
	bt := boardtest.Start(t, boardtest.Options{})
	l := runsLink(t, bt, "desk", delegCaps...)
	l.send(startOf("r", 1, ""))
	long := strings.Repeat("a", 65)
	chain33 := make([]string, 33)
	for i := range chain33 {
		chain33[i] = "a"
	}
	start := func(d *boardv1.RunDelegation) *boardv1.RunEvent {
		return &boardv1.RunEvent{Kind: &boardv1.RunEvent_Start{Start: &boardv1.RunStart{Delegation: d}}}
	}
	good := func() *boardv1.RunDelegation {
		return &boardv1.RunDelegation{ParentRunId: "r", ParentNode: "n", InvocationId: "i", Agent: "a", Chain: []string{"a"}}
	}
	with := func(f func(*boardv1.RunDelegation)) *boardv1.RunEvent { d := good(); f(d); return start(d) }
	goodFailure := func() *boardv1.DelegationFailure { return cycle(0) }
	failing := func(f func(*boardv1.DelegationFailure)) *boardv1.RunEvent {
		x := goodFailure()
		f(x)
		return &boardv1.RunEvent{Kind: &boardv1.RunEvent_DelegationFailed{DelegationFailed: x}}
	}
	for i, c := range []struct {
		name, field string
		e           *boardv1.RunEvent
	}{
		{"parent run id shape", "delegation.parent_run_id", with(func(d *boardv1.RunDelegation) { d.ParentRunId = "a b" })},
		{"parent run id missing", "delegation.parent_run_id", with(func(d *boardv1.RunDelegation) { d.ParentRunId = "" })},
		{"parent node missing", "delegation.parent_node", with(func(d *boardv1.RunDelegation) { d.ParentNode = "" })},
		{"invocation id shape", "delegation.invocation_id", with(func(d *boardv1.RunDelegation) { d.InvocationId = "x/y" })},
		{"agent long", "delegation.agent", with(func(d *boardv1.RunDelegation) { d.Agent = long })},
		{"chain long", "delegation.chain", with(func(d *boardv1.RunDelegation) { d.Chain = chain33 })},
		{"chain name", "delegation.chain[1]", with(func(d *boardv1.RunDelegation) { d.Chain = []string{"a", "b c"} })},
		{"failure code", "delegation_failed.code", failing(func(f *boardv1.DelegationFailure) { f.Code = "AGENT_BORED" })},
		{"failure message", "delegation_failed.message", failing(func(f *boardv1.DelegationFailure) { f.Message = strings.Repeat("m", 1025) })},
		{"failure chain", "delegation_failed.chain", failing(func(f *boardv1.DelegationFailure) { f.Chain = chain33 })},
		{"failure node", "delegation_failed.node", failing(func(f *boardv1.DelegationFailure) { f.Node = "" })},
		{"failure target", "delegation_failed.target", failing(func(f *boardv1.DelegationFailure) { f.Target = long })},
		{"failure run", "delegation_failed.run_id", failing(func(f *boardv1.DelegationFailure) { f.RunId = "other" })},
		{"failure agent", "delegation_failed.agent", failing(func(f *boardv1.DelegationFailure) { f.Agent = "desk" })},
	} {
		id := fmt.Sprintf("bad%d", i)
		if c.e.GetDelegationFailed() != nil {
			id = "r"
		}
		l.send(runEvent(id, uint32(2+i), c.e))
		m := l.next()
		if m.GetError().GetCode() != boardv1.LinkErrorCode_LINK_ERROR_CODE_INVALID_ARGUMENT || !strings.Contains(m.GetError().GetMessage(), c.field) {
			t.Errorf("%s: answered %v, want invalid_argument naming %s", c.name, m, c.field)
		}
	}
	l.ping(1)
	if n := bt.Board.RunEventProblems()["invalid"]; n != 14 {
		t.Errorf("invalid count %d, want 14", n)
	}
	runs := runsClient(bt, bt.OperatorToken("vic", identity.RoleViewer))
	if _, err := runs.GetRun(t.Context(), &boardv1.GetRunRequest{Agent: "desk", Id: "bad0"}); connect.CodeOf(err) != connect.CodeNotFound {
		t.Errorf("GetRun of a run whose start was refused: %v, want not_found", err)
	}
	fs, err := runs.ListDelegationFailures(t.Context(), &boardv1.ListDelegationFailuresRequest{Agent: "desk"})
	if err != nil || len(fs.GetFailures()) != 0 {
		t.Errorf("failures after refusals: %v %v, want none", fs, err)
	}

	// No delegation capability: refused, counted, the link stays up.
	old := runsLink(t, bt, "old", "runs", "live-runs")
	old.send(startOf("o", 1, ""))
	old.send(failureOf("o", 2, cycle(1)))
	if m := old.next(); m.GetError().GetCode() != boardv1.LinkErrorCode_LINK_ERROR_CODE_FAILED_PRECONDITION ||
		!strings.Contains(m.GetError().GetMessage(), "delegation") {
		t.Fatalf("delegation_failed without delegation: %v, want failed_precondition naming delegation", m)
	}
	old.ping(2)
	if n := bt.Board.RunEventProblems()["capability"]; n != 1 {
		t.Errorf("capability count %d, want 1", n)
	}
	fs, err = runs.ListDelegationFailures(t.Context(), &boardv1.ListDelegationFailuresRequest{Agent: "old"})
	if err != nil || len(fs.GetFailures()) != 0 {
		t.Errorf("failures of an agent without delegation: %v %v, want none", fs, err)
	}
}

// clock is a board clock a test moves on: the real time plus what the
// test added, so that tokens minted by the real clock are taken.
type clock struct {
	mu    sync.Mutex
	ahead time.Duration
}

func (c *clock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return time.Now().Add(c.ahead) }

func (c *clock) add(d time.Duration) { c.mu.Lock(); defer c.mu.Unlock(); c.ahead += d }

func cyclesOf(t *testing.T, agents boardv1connect.AgentServiceClient, name string) *boardv1.DelegationCycles {
	t.Helper()
	return getAgent(t, agents, name).GetDelegationCycles()
}

// TestDelegationCycles: an agent announcing delegation-cycle with none
// reported is NONE_REPORTED, with one REPORTED; one not announcing it is
// CANNOT_TELL, online or not, whatever it reported before.
func TestDelegationCycles(t *testing.T) {
	t.Parallel()
	bt := boardtest.Start(t, boardtest.Options{OfflineGrace: -1})
	agents := bt.Agents(bt.OperatorToken("vic", identity.RoleViewer))
	l := runsLink(t, bt, "desk", delegCaps...)
	runsLink(t, bt, "older", "runs", "live-runs", "delegation")
	if c := cyclesOf(t, agents, "desk"); c.GetKnowledge() != boardv1.CycleKnowledge_CYCLE_KNOWLEDGE_NONE_REPORTED || c.GetCount() != 0 {
		t.Errorf("desk, none reported: %v, want NONE_REPORTED", c)
	}
	if c := cyclesOf(t, agents, "older"); c.GetKnowledge() != boardv1.CycleKnowledge_CYCLE_KNOWLEDGE_CANNOT_TELL {
		t.Errorf("older: %v, want CANNOT_TELL", c)
	}
	l.send(startOf("r", 1, ""))
	f := cycle(1)
	f.Code = "AGENT_FAILED"
	l.send(failureOf("r", 2, f))
	l.send(failureOf("r", 3, cycle(2)))
	l.ping(1)
	boardtest.Eventually(t, 5*time.Second, "desk's cycle counted", func() bool {
		c := cyclesOf(t, agents, "desk")
		return c.GetKnowledge() == boardv1.CycleKnowledge_CYCLE_KNOWLEDGE_REPORTED && c.GetCount() == 1 && c.GetLastTime() != nil
	})
	m := scrapeMetrics(t, bt.HTTPClient(), bt.URL+"/metrics", bt.OperatorToken("vic", identity.RoleViewer))
	for code, want := range map[string]float64{"AGENT_RECURSION": 1, "AGENT_FAILED": 1, "UNKNOWN_AGENT": 0} {
		if got, ok := m.value("symphonix_delegation_failures_total", "code", code); !ok || got != want {
			t.Errorf("symphonix_delegation_failures_total{code=%s} = %v (there: %v), want %v", code, got, ok, want)
		}
	}
	runs := runsClient(bt, bt.OperatorToken("vic", identity.RoleViewer))
	fs, err := runs.ListDelegationFailures(t.Context(), &boardv1.ListDelegationFailuresRequest{Agent: "desk"})
	if err != nil || len(fs.GetFailures()) != 2 || fs.GetFailures()[0].GetCode() != "AGENT_RECURSION" || fs.GetFailures()[0].GetAgent() != "desk" ||
		fs.GetFailures()[0].GetRunId() != "r" || fs.GetFailures()[0].GetTime() == nil {
		t.Fatalf("ListDelegationFailures(desk) = %v %v, want the cycle then the failure, with agent, run and time", fs, err)
	}
	fs, err = runs.ListDelegationFailures(t.Context(), &boardv1.ListDelegationFailuresRequest{Agent: "desk", Code: "AGENT_FAILED"})
	if err != nil || len(fs.GetFailures()) != 1 || fs.GetFailures()[0].GetCode() != "AGENT_FAILED" {
		t.Errorf("ListDelegationFailures(desk, AGENT_FAILED) = %v %v, want the one", fs, err)
	}
	if _, err := runs.ListDelegationFailures(t.Context(), &boardv1.ListDelegationFailuresRequest{Agent: "desk", Code: "nope"}); connect.CodeOf(err) != connect.CodeInvalidArgument || !strings.Contains(err.Error(), "code:") {
		t.Errorf("ListDelegationFailures(code nope): %v, want invalid_argument naming code", err)
	}

	// The same agent back without delegation-cycle: its old report says
	// nothing of now.
	l.hangUp()
	boardtest.Eventually(t, 5*time.Second, "desk offline", func() bool {
		return getAgent(t, agents, "desk").GetState() != boardv1.AgentState_AGENT_STATE_ONLINE
	})
	runsLink(t, bt, "desk", "runs", "live-runs")
	if c := cyclesOf(t, agents, "desk"); c.GetKnowledge() != boardv1.CycleKnowledge_CYCLE_KNOWLEDGE_CANNOT_TELL || c.GetCount() != 1 {
		t.Errorf("desk without delegation-cycle: %v, want CANNOT_TELL, count 1 kept", c)
	}
	// Offline, an agent that did not announce it still cannot tell.
	bt.Board.DropLinksForTest()
	boardtest.Eventually(t, 5*time.Second, "older offline", func() bool {
		return getAgent(t, agents, "older").GetState() != boardv1.AgentState_AGENT_STATE_ONLINE
	})
	if c := cyclesOf(t, agents, "older"); c.GetKnowledge() != boardv1.CycleKnowledge_CYCLE_KNOWLEDGE_CANNOT_TELL {
		t.Errorf("older, offline: %v, want CANNOT_TELL", c)
	}
	res, err := agents.ListAgents(t.Context(), &boardv1.ListAgentsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range res.GetAgents() {
		if a.GetDelegationCycles().GetKnowledge() != boardv1.CycleKnowledge_CYCLE_KNOWLEDGE_CANNOT_TELL {
			t.Errorf("ListAgents: %s is %v, want CANNOT_TELL", a.GetName(), a.GetDelegationCycles())
		}
	}
}

// TestDelegationFailuresSwept: past 1,000 failures of an agent, the
// oldest go; the pages hold the latest 1,000, newest first.
func TestDelegationFailuresSwept(t *testing.T) {
	t.Parallel()
	clk := &clock{}
	bt := boardtest.Start(t, boardtest.Options{Now: clk.Now})
	l := runsLink(t, bt, "desk", delegCaps...)
	l.send(startOf("r", 1, ""))
	const total = 1005
	for i := range total {
		if i%400 == 0 {
			// The link's allowance of run events refills, once it has
			// taken what was sent before.
			l.ping(uint64(10 + i))
			clk.add(10 * time.Second)
		}
		f := cycle(i)
		f.Code = "AGENT_FAILED"
		if i == 3 {
			f.Code = "AGENT_RECURSION"
		}
		l.send(failureOf("r", uint32(i+2), f))
	}
	l.ping(1)
	if n := bt.Board.RunEventProblems()["rate"]; n != 0 {
		t.Fatalf("%d events dropped for the rate", n)
	}
	runs := runsClient(bt, bt.OperatorToken("vic", identity.RoleViewer))
	var all []*boardv1.DelegationFailure
	boardtest.Eventually(t, 10*time.Second, "1,000 failures kept", func() bool {
		all = nil
		tok := ""
		for {
			res, err := runs.ListDelegationFailures(t.Context(), &boardv1.ListDelegationFailuresRequest{Agent: "desk", PageSize: 300, PageToken: tok})
			if err != nil {
				t.Fatal(err)
			}
			all = append(all, res.GetFailures()...)
			if tok = res.GetNextPageToken(); tok == "" {
				break
			}
		}
		return len(all) == 1000 && strings.Contains(all[0].GetMessage(), fmt.Sprintf("(%d)", total-1))
	})
	if last := all[len(all)-1].GetMessage(); !strings.Contains(last, "(5)") {
		t.Errorf("oldest kept: %q, want (5): the first five swept", last)
	}
	// The one cycle was among those swept: the count follows.
	agents := bt.Agents(bt.OperatorToken("vic", identity.RoleViewer))
	if c := cyclesOf(t, agents, "desk"); c.GetCount() != 0 || c.GetKnowledge() != boardv1.CycleKnowledge_CYCLE_KNOWLEDGE_NONE_REPORTED {
		t.Errorf("desk after the sweep: %v, want NONE_REPORTED, 0", c)
	}
}

// TestDelegationFailuresInSummaries: a run summary lists the run's
// delegation failures, so one whose live event never arrived is stored all
// the same, one whose event did arrive is not stored twice (and keeps the
// time it was first stored with), a later summary of the run does not add
// them again, and one listing none removes nothing; a summary listing a
// bad failure is refused naming it.
func TestDelegationFailuresInSummaries(t *testing.T) {
	t.Parallel()
	bt := boardtest.Start(t, boardtest.Options{})
	agents := bt.Agents(bt.OperatorToken("vic", identity.RoleViewer))
	runs := runsClient(bt, bt.OperatorToken("vic", identity.RoleViewer))
	l := runsLink(t, bt, "desk", delegCaps...)
	list := func() []*boardv1.DelegationFailure {
		t.Helper()
		res, err := runs.ListDelegationFailures(t.Context(), &boardv1.ListDelegationFailuresRequest{Agent: "desk"})
		if err != nil {
			t.Fatal(err)
		}
		return res.GetFailures()
	}

	// The live event of the first failure arrives; the second's is lost.
	l.send(startOf("r", 1, ""))
	l.send(failureOf("r", 2, cycle(1)))
	l.ping(1)
	boardtest.Eventually(t, 5*time.Second, "the live failure stored", func() bool { return len(list()) == 1 })
	first := list()[0].GetTime().AsTime()

	at := time.Now().Add(-time.Second).UTC()
	lost := &boardv1.DelegationFailure{Node: "ask-sql", Target: "sql", Code: "AGENT_FAILED", Message: "sql failed",
		Chain: []string{"desk"}, Time: timestamppb.New(at)}
	seen := cycle(1)
	seen.Time = timestamppb.New(at)
	r := endedRun("r", 1)
	r.DelegationFailures = []*boardv1.DelegationFailure{seen, lost}
	l.stored(r, 5, 0)
	got := list()
	if len(got) != 2 {
		t.Fatalf("after the summary: %v, want the cycle once and the lost failure", got)
	}
	byCode := map[string]*boardv1.DelegationFailure{}
	for _, f := range got {
		byCode[f.GetCode()] = f
	}
	if f := byCode["AGENT_FAILED"]; f.GetTarget() != "sql" || !f.GetTime().AsTime().Equal(at.Truncate(time.Microsecond)) {
		t.Errorf("the lost failure = %v, want sql at %v (when it happened)", f, at)
	}
	if f := byCode["AGENT_RECURSION"]; !f.GetTime().AsTime().Equal(first) {
		t.Errorf("the cycle's time = %v, want %v, as first stored", f.GetTime().AsTime(), first)
	}
	if c := cyclesOf(t, agents, "desk"); c.GetCount() != 1 {
		t.Errorf("cycles = %v, want 1", c)
	}
	// A later summary of the run lists them again: nothing is added; one
	// that lists none takes nothing away.
	l.stored(r, 6, 0)
	if got := list(); len(got) != 2 {
		t.Errorf("after a second summary: %d failures, want 2", len(got))
	}
	r.DelegationFailures = nil
	l.stored(r, 7, 0)
	if got := list(); len(got) != 2 {
		t.Errorf("after a summary listing none: %d failures, want 2 kept", len(got))
	}
	m := scrapeMetrics(t, bt.HTTPClient(), bt.URL+"/metrics", bt.OperatorToken("vic", identity.RoleViewer))
	for code, want := range map[string]float64{"AGENT_RECURSION": 1, "AGENT_FAILED": 1} {
		if v, _ := m.value("symphonix_delegation_failures_total", "code", code); v != want {
			t.Errorf("symphonix_delegation_failures_total{code=%s} = %v, want %v: each failure counted once", code, v, want)
		}
	}

	// The live event and the summary sent back to back (one batch, or
	// two): the failure is kept once.
	r2 := endedRun("r2", 1)
	once := cycle(7)
	l.send(startOf("r2", 1, ""))
	l.send(failureOf("r2", 2, once))
	once = cycle(7)
	once.Time = timestamppb.New(at)
	r2.DelegationFailures = []*boardv1.DelegationFailure{once}
	l.stored(r2, 3, 0)
	l.ping(2)
	n := 0
	for _, f := range list() {
		if f.GetRunId() == "r2" {
			n++
		}
	}
	if n != 1 {
		t.Errorf("r2's failures = %d, want its one failure kept once", n)
	}

	// A failure without its time, or with a bad code, refuses the summary.
	for name, f := range map[string]*boardv1.DelegationFailure{
		"time": {Node: "n", Target: "sql", Code: "AGENT_FAILED", Chain: []string{"desk"}},
		"code": {Node: "n", Target: "sql", Code: "NOPE", Chain: []string{"desk"}, Time: timestamppb.New(at)},
	} {
		bad := endedRun("bad-"+name, 1)
		bad.DelegationFailures = []*boardv1.DelegationFailure{f}
		l.send(summaryOf(bad, 1, 0))
		if e := l.next().GetError(); e == nil || !strings.Contains(e.GetMessage(), "run_summary.run.delegation_failures[0]") || !strings.Contains(e.GetMessage(), name) {
			t.Errorf("a failure without a good %s: answered %v, want an error naming it", name, e)
		}
	}
}
