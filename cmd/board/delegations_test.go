package main

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"google.golang.org/protobuf/types/known/durationpb"
	"google.golang.org/protobuf/types/known/timestamppb"

	boardv1 "github.com/symphonix/symphonix/api/symphonix/board/v1"
	"github.com/symphonix/symphonix/api/symphonix/board/v1/boardv1connect"
	"github.com/symphonix/symphonix/board"
	"github.com/symphonix/symphonix/identity"
	"github.com/symphonix/symphonix/internal/boardtest"
)

// TestDelegationCommands: runs tree, delegations list and alerts, against
// a real board and an agent's link that reports a parent run, a child
// delegated to, and a circular delegation.
func TestDelegationCommands(t *testing.T) {
	t.Parallel()
	b := boardtest.Start(t, boardtest.Options{})
	f := &fleet{b: b, admin: b.OperatorToken("ops", identity.RoleAdmin)}
	link := boardv1connect.NewAgentLinkServiceClient(b.Client(b.AgentToken("desk")))
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	s, err := link.Link(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = s.Close() }()
	send := func(r *boardv1.LinkRequest) {
		t.Helper()
		if err := s.Send(r); err != nil {
			t.Fatal(err)
		}
	}
	next := func() *boardv1.LinkResponse {
		t.Helper()
		for {
			m, err := s.Receive()
			if err != nil {
				t.Fatal(err)
			}
			if m.GetPing() == nil && m.GetSwitches() == nil {
				return m
			}
		}
	}
	send(&boardv1.LinkRequest{Kind: &boardv1.LinkRequest_Hello{Hello: &boardv1.Hello{Name: "desk", Protocol: board.Protocol,
		Capabilities: []string{"runs", "live-runs", "delegation", "delegation-cycle"}}}})
	if m := next(); m.GetWelcome() == nil {
		t.Fatalf("hello: %v, want a welcome", m)
	}
	t0 := time.Now().Add(-time.Minute)
	summary := func(id string, start time.Time, d *boardv1.RunDelegation) {
		t.Helper()
		r := &boardv1.Run{Id: id, State: boardv1.RunState_RUN_STATE_FINISHED, StartTime: timestamppb.New(start),
			EndTime: timestamppb.New(start.Add(2 * time.Second)), Duration: durationpb.New(2 * time.Second), Delegation: d}
		if d == nil { // the root: a schedule started it
			r.StartedBy, r.Trigger = "trigger", &boardv1.RunTrigger{TriggerId: "nightly", Kind: boardv1.TriggerKind_TRIGGER_KIND_SCHEDULE,
				OccurrenceTime: timestamppb.New(start)}
		}
		send(&boardv1.LinkRequest{Kind: &boardv1.LinkRequest_RunSummary{RunSummary: &boardv1.RunSummary{Run: r, Seq: 1}}})
		if m := next(); m.GetRunStored() == nil {
			t.Fatalf("summary %s: %v, want run_stored", id, m)
		}
	}
	summary("parent", t0, nil)
	summary("child", t0.Add(time.Second), &boardv1.RunDelegation{ParentRunId: "parent", ParentNode: "ask_billing",
		InvocationId: "i1", Agent: "billing", Chain: []string{"desk", "billing"}})
	send(&boardv1.LinkRequest{Kind: &boardv1.LinkRequest_RunEvent{RunEvent: &boardv1.RunEvent{RunId: "live", Seq: 1,
		Kind: &boardv1.RunEvent_Start{Start: &boardv1.RunStart{}}}}})
	send(&boardv1.LinkRequest{Kind: &boardv1.LinkRequest_RunEvent{RunEvent: &boardv1.RunEvent{RunId: "live", Seq: 2,
		Kind: &boardv1.RunEvent_DelegationFailed{DelegationFailed: &boardv1.DelegationFailure{Node: "ask_desk", Target: "desk",
			Code: "AGENT_RECURSION", Message: "desk is already in the chain", Chain: []string{"desk"}}}}}})

	out := f.ok(t, "runs", "tree", "desk", "child")
	if first, _, _ := strings.Cut(out, "\n"); first != "trigger nightly (schedule) at "+t0.UTC().Truncate(time.Second).Format(time.RFC3339) {
		t.Errorf("runs tree's first line = %q, want the trigger that started the root", first)
	}
	if !regexpLine(out, `^parent\s+desk\s+finished\s+2s$`) || !regexpLine(out, `^  child\s+ask_billing → billing\s+finished\s+2s$`) {
		t.Errorf("runs tree:\n%s", out)
	}
	var tree struct {
		Root struct {
			Children []json.RawMessage `json:"children"`
		} `json:"root"`
	}
	if err := json.Unmarshal([]byte(f.ok(t, "runs", "tree", "desk", "parent", "-o", "json")), &tree); err != nil || len(tree.Root.Children) != 1 {
		t.Errorf("runs tree -o json: %v, %d children, want 1", err, len(tree.Root.Children))
	}
	boardtest.Eventually(t, 5*time.Second, "the failure listed", func() bool {
		return strings.Contains(f.ok(t, "delegations", "list", "desk", "--code", "AGENT_RECURSION"), "desk is already in the chain")
	})
	if out := f.ok(t, "delegations", "list", "desk", "--code", "AGENT_FAILED"); strings.Contains(out, "AGENT_RECURSION") {
		t.Errorf("delegations list --code AGENT_FAILED:\n%s", out)
	}
	_, _, err = f.board(t, "delegations", "list", "desk", "--code", "BORED")
	wantExit(t, err, 1, "code")

	f.ok(t, "alerts", "rule", "put", "--id", "loops", "--agent", "*", "--condition", "delegation-cycle", "--window", "1h")
	if out := f.ok(t, "alerts", "rule", "list"); !regexpLine(out, `^loops\s+\*\s+delegation_cycle\s+1h0m0s\s+ops`) {
		t.Errorf("alerts rule list:\n%s", out)
	}
	if out := f.ok(t, "alerts", "list"); !regexpLine(out, `^loops\s+desk\s+firing\s+1\s`) {
		t.Errorf("alerts list:\n%s", out)
	}
	_, _, err = f.board(t, "alerts", "rule", "put", "--agent", "*", "--condition", "delegation-cycle", "--window", "1s")
	wantExit(t, err, 1, "window")
	if out := f.ok(t, "alerts", "rule", "delete", "loops"); out != "alert rule loops deleted\n" {
		t.Errorf("alerts rule delete: %q", out)
	}
	f.ok(t, "alerts", "rule", "put", "--id", "again", "--agent", "*", "--condition", "delegation-cycle", "--window", "1h")
	if out := f.ok(t, "alerts", "rule", "delete", "again", "-o", "json"); !strings.Contains(out, `"deleted": true`) || !strings.Contains(out, `"id": "again"`) {
		t.Errorf("alerts rule delete -o json: %q", out)
	}
	if out := f.ok(t, "alerts", "list", "-o", "json"); strings.TrimSpace(out) != "[]" {
		t.Errorf("alerts list with no rules: %q, want []", out)
	}
}
