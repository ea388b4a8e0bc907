package board_test

import (
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"connectrpc.com/connect/v2"

	boardv1 "github.com/symphonix/symphonix/api/symphonix/board/v1"
	"github.com/symphonix/symphonix/api/symphonix/board/v1/boardv1connect"
	"github.com/symphonix/symphonix/audit"
	"github.com/symphonix/symphonix/board"
	"github.com/symphonix/symphonix/identity"
	"github.com/symphonix/symphonix/internal/boardtest"
)

// TestForgetAgent: an admin forgets an agent only once it has been offline
// for the board's forget-after, with a reason; it is gone from the board
// with its switches, watchers are told, the audit log keeps who and why,
// and when it links again it is new, every tool off.
func TestForgetAgent(t *testing.T) {
	t.Parallel()
	var ahead atomic.Int64 // how far the board's clock is ahead of now
	bt := boardtest.Start(t, boardtest.Options{
		OfflineGrace: -1, ForgetAfter: time.Hour,
		Now: func() time.Time { return time.Now().Add(time.Duration(ahead.Load())) },
	})
	adminToken := bt.OperatorToken("ops", identity.RoleAdmin)
	admin := bt.Agents(adminToken)
	viewer := bt.Agents(bt.OperatorToken("vic", identity.RoleViewer))
	tools := boardv1connect.NewToolServiceClient(bt.Client(adminToken))
	hi := &boardv1.Hello{Name: "desk", Protocol: board.Protocol, Tools: []string{"orders.refund"}}
	l, _ := openLinkWith(t, bt, hi)
	l.ping(1)
	if _, err := tools.SetToolSwitch(t.Context(), &boardv1.SetToolSwitchRequest{Agent: "desk", Tool: "orders.refund", On: true}); err != nil {
		t.Fatal(err)
	}
	watch, err := admin.WatchAgents(t.Context(), &boardv1.WatchAgentsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	defer watch.Close()

	forget := func(c boardv1connect.AgentServiceClient, name, reason string) error {
		_, err := c.ForgetAgent(t.Context(), &boardv1.ForgetAgentRequest{Name: name, Reason: reason})
		return err
	}
	wantCode := func(what string, err error, code connect.Code, words string) {
		t.Helper()
		if connect.CodeOf(err) != code || !strings.Contains(err.Error(), words) {
			t.Errorf("%s: %v, want %s saying %q", what, err, code, words)
		}
	}
	wantCode("online", forget(admin, "desk", "retired"), connect.CodeFailedPrecondition, "is online")
	wantCode("a viewer", forget(viewer, "desk", "retired"), connect.CodePermissionDenied, "")
	wantCode("no reason", forget(admin, "desk", ""), connect.CodeInvalidArgument, "reason")
	wantCode("unknown", forget(admin, "nobody", "retired"), connect.CodeNotFound, "not found")

	_ = l.s.CloseSend()
	boardtest.Eventually(t, time.Minute, "desk offline", func() bool {
		return getAgent(t, admin, "desk").GetState() == boardv1.AgentState_AGENT_STATE_OFFLINE
	})
	wantCode("just gone", forget(admin, "desk", "retired"), connect.CodeFailedPrecondition, "may be forgotten from")

	ahead.Store(int64(2 * time.Hour))
	res, err := admin.ForgetAgent(t.Context(), &boardv1.ForgetAgentRequest{Name: "desk", Reason: "retired with the old desk"})
	if err != nil {
		t.Fatal(err)
	}
	if a := res.GetAgent(); a.GetName() != "desk" || a.GetState() != boardv1.AgentState_AGENT_STATE_OFFLINE {
		t.Errorf("ForgetAgent answered %v, want desk as it was", a)
	}
	if _, err := admin.GetAgent(t.Context(), &boardv1.GetAgentRequest{Name: "desk"}); connect.CodeOf(err) != connect.CodeNotFound {
		t.Errorf("GetAgent after forgetting: %v, want not_found", err)
	}
	for {
		m, err := watch.Receive()
		if err != nil {
			t.Fatalf("the watch ended before the agent was forgotten: %v", err)
		}
		if m.GetForgotten() {
			if m.GetAgent().GetName() != "desk" {
				t.Errorf("forgotten: %v, want desk", m.GetAgent())
			}
			break
		}
	}
	entries, err := audit.New(bt.Store).List(t.Context(), 0, 1000)
	if err != nil {
		t.Fatal(err)
	}
	var forgot []string
	for _, e := range entries {
		if e.Action == "agent.forget" {
			forgot = append(forgot, e.Subject+" by "+e.Actor+": "+string(e.Detail))
		}
	}
	if len(forgot) != 1 || !strings.Contains(forgot[0], "desk by ops: ") || !strings.Contains(forgot[0], `"reason":"retired with the old desk"`) ||
		!strings.Contains(forgot[0], `"tools_on":["orders.refund"]`) {
		t.Errorf("audit = %q, want one agent.forget of desk by ops with the reason and its switches", forgot)
	}

	// It links again: new, its tool off.
	l, _ = openLinkWith(t, bt, hi)
	l.ping(2)
	if a := getAgent(t, admin, "desk"); a.GetState() != boardv1.AgentState_AGENT_STATE_ONLINE {
		t.Errorf("after linking again: %v, want online", a)
	}
	sw, err := tools.GetSwitches(t.Context(), &boardv1.GetSwitchesRequest{Agent: "desk"})
	if err != nil {
		t.Fatal(err)
	}
	if s := sw.GetSwitches(); len(s.GetOn()) != 0 || s.GetSpoken() {
		t.Errorf("after linking again: switches %v, want none on and the board never having spoken", s)
	}
}
