package board_test

import (
	"strings"
	"testing"
	"time"

	"connectrpc.com/connect/v2"
	"google.golang.org/protobuf/types/known/timestamppb"

	boardv1 "github.com/symphonix/symphonix/api/symphonix/board/v1"
	"github.com/symphonix/symphonix/audit"
	"github.com/symphonix/symphonix/board"
	"github.com/symphonix/symphonix/identity"
	"github.com/symphonix/symphonix/internal/boardtest"
)

func pauseState(paused bool, origin boardv1.PauseOrigin, reason, by string) *boardv1.LinkRequest {
	return &boardv1.LinkRequest{Kind: &boardv1.LinkRequest_PauseState{PauseState: &boardv1.PauseState{
		Paused: paused, Reason: reason, By: by, Time: timestamppb.Now(), Origin: origin,
	}}}
}

// pauseActions is the audit log's pause and resume entries, as
// "<action> <subject> by <actor>: <reason>".
func pauseActions(t *testing.T, bt *boardtest.Board) []string {
	t.Helper()
	entries, err := audit.New(bt.Store).List(t.Context(), 0, 1000)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range entries {
		if e.Action == "agent.pause" || e.Action == "agent.resume" {
			out = append(out, e.Action+" "+e.Subject+" by "+e.Actor)
		}
	}
	return out
}

// TestPauseFromTheBoard: an admin pauses a linked agent; the pause reaches
// its link at once, is undelivered until the agent says it acted on it, and
// is audited with who and why. A resume goes the same way.
func TestPauseFromTheBoard(t *testing.T) {
	t.Parallel()
	bt := boardtest.Start(t, boardtest.Options{})
	admin := bt.Agents(bt.OperatorToken("ops", identity.RoleAdmin))
	l, _ := openLinkWith(t, bt, &boardv1.Hello{Name: "desk", Protocol: board.Protocol, Capabilities: []string{"pause", "users"}})
	l.ping(1)

	res, err := admin.PauseAgent(t.Context(), &boardv1.PauseAgentRequest{Name: "desk", Reason: "the refunds API is down"})
	if err != nil {
		t.Fatal(err)
	}
	if p := res.GetAgent().GetPause(); !p.GetPaused() || p.GetDelivered() || p.GetBy() != "ops" ||
		p.GetOrigin() != boardv1.PauseOrigin_PAUSE_ORIGIN_BOARD || p.GetReason() != "the refunds API is down" {
		t.Errorf("after PauseAgent: %v, want paused by ops, from the board, not yet delivered", p)
	}
	m := l.next().GetPause()
	if m == nil || !m.GetPaused() || m.GetReason() != "the refunds API is down" || m.GetBy() != "ops" || m.GetTime() == nil {
		t.Fatalf("the link got %v, want the pause with its reason and who", m)
	}
	// A state from before the agent read it does not count; the answer does.
	l.send(pauseState(false, boardv1.PauseOrigin_PAUSE_ORIGIN_LOCAL, "", ""))
	l.ping(2)
	if p := getAgent(t, admin, "desk").GetPause(); !p.GetPaused() || p.GetDelivered() {
		t.Errorf("after an older state: %v, want still paused and undelivered", p)
	}
	l.send(pauseState(true, boardv1.PauseOrigin_PAUSE_ORIGIN_BOARD, m.GetReason(), m.GetBy()))
	l.ping(3)
	if p := getAgent(t, admin, "desk").GetPause(); !p.GetPaused() || !p.GetDelivered() || p.GetBy() != "ops" {
		t.Errorf("after the agent's answer: %v, want paused, delivered, by ops", p)
	}

	if _, err := admin.ResumeAgent(t.Context(), &boardv1.ResumeAgentRequest{Name: "desk"}); err != nil {
		t.Fatal(err)
	}
	if m := l.next().GetPause(); m == nil || m.GetPaused() {
		t.Fatalf("the link got %v, want the resume", m)
	}
	got := pauseActions(t, bt)
	if want := []string{"agent.pause desk by ops", "agent.resume desk by ops"}; strings.Join(got, "; ") != strings.Join(want, "; ") {
		t.Errorf("audit = %q, want %q", got, want)
	}
}

// TestPauseRefusals: only admins pause; a reason is required; an agent
// that never linked, or whose hello did not announce pause (an older
// agent), cannot be paused, and its link never gets a pause.
func TestPauseRefusals(t *testing.T) {
	t.Parallel()
	bt := boardtest.Start(t, boardtest.Options{})
	admin := bt.Agents(bt.OperatorToken("ops", identity.RoleAdmin))
	old, w := openLinkWith(t, bt, &boardv1.Hello{Name: "old", Protocol: board.MinProtocol, Capabilities: []string{"users", "pairing"}})
	if w.GetProtocol() != board.MinProtocol {
		t.Errorf("an agent of protocol %s welcomed with %q", board.MinProtocol, w.GetProtocol())
	}
	openLinkWith(t, bt, &boardv1.Hello{Name: "desk", Protocol: board.Protocol, Capabilities: []string{"pause"}})

	cases := []struct {
		name  string
		token string
		req   *boardv1.PauseAgentRequest
		code  connect.Code
		says  string
	}{
		{"a viewer", bt.OperatorToken("v", identity.RoleViewer), &boardv1.PauseAgentRequest{Name: "desk", Reason: "x"}, connect.CodePermissionDenied, ""},
		{"an approver", bt.OperatorToken("a", identity.RoleApprover), &boardv1.PauseAgentRequest{Name: "desk", Reason: "x"}, connect.CodePermissionDenied, ""},
		{"no reason", "", &boardv1.PauseAgentRequest{Name: "desk"}, connect.CodeInvalidArgument, "reason: required"},
		{"a long reason", "", &boardv1.PauseAgentRequest{Name: "desk", Reason: strings.Repeat("r", 513)}, connect.CodeInvalidArgument, "reason: 513 bytes, at most 512"},
		{"a reason with a control character", "", &boardv1.PauseAgentRequest{Name: "desk", Reason: "a\x00b"}, connect.CodeInvalidArgument, "reason: control characters"},
		{"no name", "", &boardv1.PauseAgentRequest{Reason: "x"}, connect.CodeInvalidArgument, "name:"},
		{"never linked", "", &boardv1.PauseAgentRequest{Name: "ghost", Reason: "x"}, connect.CodeNotFound, `agent "ghost": not found`},
		{"an older agent", "", &boardv1.PauseAgentRequest{Name: "old", Reason: "x"}, connect.CodeFailedPrecondition, "did not announce the pause capability"},
	}
	for _, tc := range cases {
		c := admin
		if tc.token != "" {
			c = bt.Agents(tc.token)
		}
		_, err := c.PauseAgent(t.Context(), tc.req)
		if connect.CodeOf(err) != tc.code || !strings.Contains(err.Error(), tc.says) {
			t.Errorf("%s: %v, want %v saying %q", tc.name, err, tc.code, tc.says)
		}
	}
	old.ping(1) // nothing but the pong came
	if a := getAgent(t, admin, "old"); a.GetPause() != nil {
		t.Errorf("old = %v, want never paused", a.GetPause())
	}
	if got := pauseActions(t, bt); len(got) != 0 {
		t.Errorf("audit = %q, want nothing for refusals", got)
	}
}

// TestPauseWhileAway: an agent paused while it is away gets the pause after
// its next welcome, and again after every welcome until it says it acted
// on it; the board keeps it across its own restart.
func TestPauseWhileAway(t *testing.T) {
	t.Parallel()
	bt := boardtest.Start(t, boardtest.Options{})
	admin := bt.Agents(bt.OperatorToken("ops", identity.RoleAdmin))
	hello := &boardv1.Hello{Name: "desk", Protocol: board.Protocol, Capabilities: []string{"pause"}}
	l, _ := openLinkWith(t, bt, hello)
	_ = l.s.Close()
	boardtest.Eventually(t, 10*time.Second, "desk offline", func() bool {
		return getAgent(t, admin, "desk").GetState() == boardv1.AgentState_AGENT_STATE_OFFLINE
	})
	if _, err := admin.PauseAgent(t.Context(), &boardv1.PauseAgentRequest{Name: "desk", Reason: "maintenance"}); err != nil {
		t.Fatal(err)
	}
	bt.Restart()
	admin = bt.Agents(bt.OperatorToken("ops", identity.RoleAdmin))

	l, _ = openLinkWith(t, bt, hello)
	if m := l.next().GetPause(); !m.GetPaused() || m.GetReason() != "maintenance" {
		t.Fatalf("after the welcome: %v, want the pause made while away", m)
	}
	_ = l.s.Close()
	l, _ = openLinkWith(t, bt, hello)
	if m := l.next().GetPause(); !m.GetPaused() {
		t.Fatalf("after a welcome, still unanswered: %v, want the pause again", m)
	}
	l.send(pauseState(true, boardv1.PauseOrigin_PAUSE_ORIGIN_BOARD, "maintenance", "ops"))
	l.ping(1)
	_ = l.s.Close()
	l, _ = openLinkWith(t, bt, hello)
	l.ping(2) // and nothing before the pong: it was delivered
	if p := getAgent(t, admin, "desk").GetPause(); !p.GetPaused() || !p.GetDelivered() {
		t.Errorf("desk = %v, want paused and delivered", p)
	}
}

// TestPauseOnTheAgent: a pause set on the agent's machine is the latest
// word once the agent says so: kept with the agent's reason and who, and
// audited as the agent's. A link saying it is not paused, of an agent
// nobody ever paused, writes nothing.
func TestPauseOnTheAgent(t *testing.T) {
	t.Parallel()
	bt := boardtest.Start(t, boardtest.Options{})
	admin := bt.Agents(bt.OperatorToken("ops", identity.RoleAdmin))
	l, _ := openLinkWith(t, bt, &boardv1.Hello{Name: "desk", Protocol: board.Protocol, Capabilities: []string{"pause"}})
	l.send(pauseState(false, boardv1.PauseOrigin_PAUSE_ORIGIN_UNSPECIFIED, "", ""))
	l.ping(1)
	if p := getAgent(t, admin, "desk").GetPause(); p != nil {
		t.Errorf("after not paused: %v, want none", p)
	}
	l.send(pauseState(true, boardv1.PauseOrigin_PAUSE_ORIGIN_LOCAL, "disk full", "alice"))
	l.ping(2)
	p := getAgent(t, admin, "desk").GetPause()
	if !p.GetPaused() || p.GetOrigin() != boardv1.PauseOrigin_PAUSE_ORIGIN_LOCAL || p.GetReason() != "disk full" || p.GetBy() != "alice" || !p.GetDelivered() {
		t.Errorf("after a local pause: %v, want paused locally by alice for disk full", p)
	}
	// Said again after a relink: nothing new.
	l.send(pauseState(true, boardv1.PauseOrigin_PAUSE_ORIGIN_LOCAL, "disk full", "alice"))
	l.send(pauseState(true, boardv1.PauseOrigin_PAUSE_ORIGIN_LOCAL, strings.Repeat("x", 600), "alice"))
	if m := l.next(); m.GetError().GetCode() != boardv1.LinkErrorCode_LINK_ERROR_CODE_INVALID_ARGUMENT ||
		!strings.Contains(m.GetError().GetMessage(), "pause_state.reason: 600 bytes, at most 512") {
		t.Errorf("a long reason: %v, want invalid_argument naming pause_state.reason", m)
	}
	l.ping(3)
	if got, want := pauseActions(t, bt), []string{"agent.pause desk by desk"}; strings.Join(got, "; ") != strings.Join(want, "; ") {
		t.Errorf("audit = %q, want %q", got, want)
	}
}
