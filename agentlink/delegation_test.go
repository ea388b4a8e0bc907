package agentlink_test

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/symphonix/symphonix/agentlink"
)

// TestDelegationOnTheWire: a child run's start and summary carry its
// RunDelegation, and a refused delegation goes as delegation_failed —
// each within the link's bounds: the chain's latest 32 names, names of at
// most 64 bytes, a message of at most 1 KiB.
func TestDelegationOnTheWire(t *testing.T) {
	t.Parallel()
	rec, url := newRecorder(t)
	at := time.Date(2026, 12, 2, 9, 0, 0, 0, time.UTC)
	long := make([]string, 40)
	for i := range long {
		long[i] = "a" + strings.Repeat("x", i)
	}
	long[39] = strings.Repeat("z", 100)
	sums := &memSummaries{}
	sums.add(agentlink.RunSummary{Seq: 3, Run: agentlink.Run{ID: "child", StartedBy: "delegation", State: agentlink.RunFinished,
		Delegation: &agentlink.RunDelegation{ParentRunID: "root", ParentNode: "hand-over", InvocationID: "inv1", Agent: "researcher", Chain: []string{"desk", "researcher"}}}})
	l, states := runLink(t, url, agentlink.Config{
		Capabilities: []string{agentlink.CapabilityRuns, agentlink.CapabilityLiveRuns, agentlink.CapabilityDelegation, agentlink.CapabilityDelegationCycle},
		Summaries:    sums, AnswerWithin: 30 * time.Second,
	})
	h := rec.hello(t)
	if caps := h.GetCapabilities(); !slices.Contains(caps, "delegation") || !slices.Contains(caps, "delegation-cycle") {
		t.Errorf("hello capabilities = %v, want delegation and delegation-cycle", caps)
	}
	awaitUp(t, states)
	sum := rec.next(t).GetRunSummary()
	if d := sum.GetRun().GetDelegation(); d.GetParentRunId() != "root" || d.GetParentNode() != "hand-over" || d.GetInvocationId() != "inv1" ||
		d.GetAgent() != "researcher" || !slices.Equal(d.GetChain(), []string{"desk", "researcher"}) {
		t.Errorf("summary's delegation = %v", d)
	}
	l.SendRunEvent(agentlink.RunEvent{RunID: "child", Seq: 1, At: at, Kind: agentlink.RunEventStart, StartedBy: "delegation",
		Delegation: &agentlink.RunDelegation{ParentRunID: "root", ParentNode: "hand-over", InvocationID: "inv1", Agent: "researcher", Chain: long}})
	start := rec.next(t).GetRunEvent().GetStart()
	if d := start.GetDelegation(); start.GetStartedBy() != "delegation" || d.GetAgent() != "researcher" || len(d.GetChain()) != 32 ||
		d.GetChain()[0] != long[8] || len(d.GetChain()[31]) != 64 {
		t.Errorf("start's delegation = %v, want the chain's latest 32, each at most 64 bytes", d)
	}
	l.SendRunEvent(agentlink.RunEvent{RunID: "root", Seq: 4, At: at, Kind: agentlink.RunEventDelegationFailed,
		Failure: &agentlink.DelegationFailure{Node: "ask", Target: "../" + strings.Repeat("x", 100), Code: "AGENT_RECURSION",
			Message: strings.Repeat("m", 5000), Chain: []string{"desk", "b"}, InvocationID: "inv2"}})
	f := rec.next(t).GetRunEvent().GetDelegationFailed()
	if f.GetRunId() != "root" || f.GetNode() != "ask" || f.GetCode() != "AGENT_RECURSION" || len(f.GetTarget()) != 64 ||
		!strings.HasPrefix(f.GetTarget(), "../") || len(f.GetMessage()) > 1024 || !slices.Equal(f.GetChain(), []string{"desk", "b"}) ||
		f.GetInvocationId() != "inv2" || f.GetTime() != nil {
		t.Errorf("delegation_failed = %v", f)
	}
}
