package ui_test

import (
	"strings"
	"testing"
	"time"

	"google.golang.org/protobuf/types/known/durationpb"
	"google.golang.org/protobuf/types/known/timestamppb"

	boardv1 "github.com/symphonix/symphonix/api/symphonix/board/v1"
	"github.com/symphonix/symphonix/api/symphonix/board/v1/boardv1connect"
	"github.com/symphonix/symphonix/identity"
	"github.com/symphonix/symphonix/internal/browsertest"
)

// treeOf is the tree the run page draws, as "id(child child)".
const treeOf = `() => {
	const walk = (li) => {
		const kids = Array.from(li.querySelectorAll(":scope > ul > li.tree-run")).map(walk);
		return li.dataset.run + (kids.length ? "(" + kids.join(" ") + ")" : "");
	};
	const root = document.querySelector("#run-tree-root > li.tree-run");
	return root ? walk(root) : "";
}`

// TestBrowserRunTree: a run's page draws the tree of delegations it
// belongs to — the trigger above the root run, each child indented under
// the run that delegated to it with its agent and node, linking to its
// page, and a circular delegation under the run where it was refused; an
// agent's page says "cannot tell" of cycles for an agent that does not
// announce delegation-cycle; the Alerts view lists a firing rule and a
// cannot-tell one.
func TestBrowserRunTree(t *testing.T) {
	bt := linkBoard(t)
	desk := openRawLink(t, bt, "desk", "runs", "live-runs", "delegation", "delegation-cycle")
	openRawLink(t, bt, "older", "runs", "live-runs")

	t0 := time.Now().Add(-time.Minute).Truncate(time.Millisecond)
	desk.runStart("root", t0, &boardv1.RunStart{StartedBy: "trigger",
		Trigger: &boardv1.RunTrigger{TriggerId: "nightly", Kind: boardv1.TriggerKind_TRIGGER_KIND_SCHEDULE, OccurrenceTime: timestamppb.New(t0)}})
	desk.runEvent("root", t0.Add(time.Second), &boardv1.RunEvent{Kind: &boardv1.RunEvent_DelegationFailed{DelegationFailed: &boardv1.DelegationFailure{
		Node: "ask_desk", Target: "desk", Code: "AGENT_RECURSION", Message: "desk is already in the chain", Chain: []string{"desk"}}}})
	ended := func(id string, start time.Time, d *boardv1.RunDelegation) *boardv1.Run {
		return &boardv1.Run{Id: id, State: boardv1.RunState_RUN_STATE_FINISHED, StartTime: timestamppb.New(start),
			EndTime: timestamppb.New(start.Add(2 * time.Second)), Duration: durationpb.New(1500 * time.Millisecond), Delegation: d,
			StartedBy: map[bool]string{true: "delegation", false: "trigger"}[d != nil]}
	}
	root := ended("root", t0, nil)
	root.Trigger = &boardv1.RunTrigger{TriggerId: "nightly", Kind: boardv1.TriggerKind_TRIGGER_KIND_SCHEDULE, OccurrenceTime: timestamppb.New(t0)}
	desk.runSummaries([]*boardv1.Run{
		root,
		ended("c1", t0.Add(time.Second), &boardv1.RunDelegation{ParentRunId: "root", ParentNode: "ask_triage", InvocationId: "i1", Agent: "triage", Chain: []string{"desk", "triage"}}),
		ended("c2", t0.Add(2*time.Second), &boardv1.RunDelegation{ParentRunId: "root", ParentNode: "ask_billing", InvocationId: "i2", Agent: "billing", Chain: []string{"desk", "billing"}}),
		ended("g1", t0.Add(3*time.Second), &boardv1.RunDelegation{ParentRunId: "c1", ParentNode: "ask_refunds", InvocationId: "i3", Agent: "refunds", Chain: []string{"desk", "triage", "refunds"}}),
	})

	b := browsertest.New(t)
	signInTo(t, b, bt, bt.OperatorToken("vic", identity.RoleViewer), "agents")
	b.Eval(`location.hash = "#run/desk/c1"; "set"`)
	b.Until("the tree drawn", `(want) => (`+treeOf+`)() === want && !document.getElementById("run-tree").hidden`, "root(c1(g1) c2)")
	if got := b.Eval(`document.getElementById("run-tree-trigger").textContent`); !strings.Contains(got, "nightly") || !strings.Contains(got, "schedule") {
		t.Errorf("the tree's trigger banner = %q, want nightly (schedule)", got)
	}
	line := b.Eval(`document.querySelector('#run-tree li[data-run="g1"] > .tree-line').textContent`)
	for _, want := range []string{"g1", "refunds", "ask_refunds", "finished", "1.5 s"} {
		if !strings.Contains(line, want) {
			t.Errorf("g1's line = %q, want it to contain %q", line, want)
		}
	}
	if got := b.Eval(`document.querySelector('#run-tree li[data-run="g1"] a.run-link').getAttribute("href")`); got != "#run/desk/g1" {
		t.Errorf("g1 links to %q, want #run/desk/g1", got)
	}
	if got := b.Eval(`document.querySelector('#run-tree li[data-run="c1"] a.run-link').getAttribute("aria-current") || ""`); got != "page" {
		t.Errorf("c1, the run shown, is not marked current (%q)", got)
	}
	cyc := b.Eval(`Array.from(document.querySelectorAll('#run-tree li[data-run="root"] > ul > li.tree-cycle')).map((x) => x.textContent).join("|")`)
	if !strings.Contains(cyc, "Circular delegation refused") || !strings.Contains(cyc, "ask_desk") {
		t.Errorf("the cycle under root = %q, want it refused at ask_desk", cyc)
	}
	noRunEnumNames(t, b, "the run's tree")

	// The agent pages: cycles reported for desk, cannot tell for older.
	b.Eval(`location.hash = "#agent/older"; "set"`)
	b.Until("older's cycles", `() => { const c = document.querySelector('dd[data-fact="delegation cycles"] .cycles'); return c !== null && c.dataset.cycles === "cannot tell"; }`)
	if got := b.Eval(`document.querySelector('dd[data-fact="delegation cycles"]').textContent`); !strings.Contains(got, "cannot tell") || strings.Contains(got, "none") {
		t.Errorf("older's cycles = %q, want cannot tell, never none", got)
	}
	b.Eval(`location.hash = "#agent/desk"; "set"`)
	b.Until("desk's cycles", `() => { const c = document.querySelector('#agent dd[data-fact="delegation cycles"] .cycles'); return c !== null && c.dataset.cycles === "reported"; }`)

	// The Alerts view.
	alerts := boardv1connect.NewAlertServiceClient(bt.Client(bt.OperatorToken("root", identity.RoleAdmin)))
	if _, err := alerts.PutAlertRule(t.Context(), &boardv1.PutAlertRuleRequest{Rule: &boardv1.AlertRule{Id: "loops", Agent: "*",
		Condition: boardv1.AlertCondition_ALERT_CONDITION_DELEGATION_CYCLE}}); err != nil {
		t.Fatal(err)
	}
	b.Click("the Alerts tab", "#tab-alerts")
	b.Until("the alerts listed", `() => Array.from(document.querySelectorAll("#alerts-rows tr")).map((r) => r.dataset.agent + "=" + r.dataset.state).join(",") === "desk=firing,older=cannot tell"`)
	if got := b.Eval(`document.querySelector('#alerts-rows tr[data-agent="older"] .reason').textContent`); !strings.Contains(got, "delegation-cycle") {
		t.Errorf("older's reason = %q, want it to name delegation-cycle", got)
	}
	if got := b.Eval(`(document.body.innerText.match(/\b(ALERT_STATE|CYCLE_KNOWLEDGE|ALERT_CONDITION)_[A-Z_]+/) || [""])[0]`); got != "" {
		t.Errorf("the page shows the enum name %s, want its word", got)
	}
}
