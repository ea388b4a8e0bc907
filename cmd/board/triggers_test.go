package main

import (
	"context"
	"slices"
	"testing"
	"time"

	"google.golang.org/protobuf/types/known/timestamppb"

	boardv1 "github.com/symphonix/symphonix/api/symphonix/board/v1"
	"github.com/symphonix/symphonix/api/symphonix/board/v1/boardv1connect"
	"github.com/symphonix/symphonix/board"
	"github.com/symphonix/symphonix/identity"
	"github.com/symphonix/symphonix/internal/boardtest"
)

// TestTriggersCommands: triggers list (all, one agent, -o json), pause
// (which wants a reason) and resume, against a real board and an agent's
// link that reports two triggers and is told of each pause.
func TestTriggersCommands(t *testing.T) {
	t.Parallel()
	b := boardtest.Start(t, boardtest.Options{})
	f := &fleet{b: b, admin: b.OperatorToken("ops", identity.RoleAdmin)}
	link := boardv1connect.NewAgentLinkServiceClient(b.Client(b.AgentToken("nightly-bot")))
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
	// next is the board's next message that is not a ping nor switches.
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
	send(&boardv1.LinkRequest{Kind: &boardv1.LinkRequest_Hello{Hello: &boardv1.Hello{Name: "nightly-bot", Protocol: board.Protocol, Capabilities: []string{"triggers"}}}})
	if m := next(); m.GetWelcome() == nil {
		t.Fatalf("hello: %v, want a welcome", m)
	}
	if m := next(); m.GetTriggerPauses() == nil {
		t.Fatalf("after the welcome: %v, want trigger_pauses", m)
	}
	send(&boardv1.LinkRequest{Kind: &boardv1.LinkRequest_Triggers{Triggers: &boardv1.TriggerReport{Triggers: []*boardv1.Trigger{
		{Id: "nightly-report", Kind: boardv1.TriggerKind_TRIGGER_KIND_SCHEDULE, Schedule: "30 9 * * 1-5", TimeZone: "Europe/Paris",
			Description: "Every weekday at 09:30", NextRunTime: timestamppb.New(time.Date(2030, 1, 7, 8, 30, 0, 0, time.UTC))},
		{Id: "ticket", Kind: boardv1.TriggerKind_TRIGGER_KIND_WEBHOOK, Method: "POST", Path: "/hooks/ticket"},
	}}}})
	send(&boardv1.LinkRequest{Kind: &boardv1.LinkRequest_Ping{Ping: &boardv1.Ping{Seq: 1}}})
	if m := next(); m.GetPong() == nil {
		t.Fatalf("ping: %v, want its pong", m)
	}

	out := f.ok(t, "triggers", "list")
	if !regexpLine(out, `^nightly-bot\s+nightly-report\s+schedule\s+Every weekday at 09:30 \(Europe/Paris\)\s+2030-01-07T08:30:00Z\s+-\s+no$`) ||
		!regexpLine(out, `^nightly-bot\s+ticket\s+webhook\s+POST /hooks/ticket\s+-\s+-\s+no$`) {
		t.Errorf("triggers list:\n%s", out)
	}
	if out := f.ok(t, "triggers", "pause", "nightly-bot", "nightly-report", "--reason", "the warehouse is migrating"); out != "nightly-bot: trigger nightly-report paused; the agent was told now\n" {
		t.Errorf("triggers pause: %q", out)
	}
	if m := next().GetTriggerPauses(); !slices.Equal(m.GetPaused(), []string{"nightly-report"}) {
		t.Errorf("the link got %v, want nightly-report paused", m)
	}
	type row struct {
		Agent   string `json:"agent"`
		Trigger struct {
			ID string `json:"id"`
		} `json:"trigger"`
		Pause *struct {
			Paused bool   `json:"paused"`
			By     string `json:"by"`
			Reason string `json:"reason"`
		} `json:"pause"`
	}
	rows := decodeJSON[[]row](t, f.ok(t, "triggers", "list", "nightly-bot", "-o", "json"))
	if len(rows) != 2 || rows[0].Trigger.ID != "nightly-report" || rows[0].Pause == nil || !rows[0].Pause.Paused ||
		rows[0].Pause.By != "ops" || rows[0].Pause.Reason != "the warehouse is migrating" || rows[1].Pause != nil {
		t.Errorf("triggers list nightly-bot -o json = %+v", rows)
	}
	out = f.ok(t, "triggers", "list", "nightly-bot")
	if !regexpLine(out, `nightly-report.*by ops: the warehouse is migrating$`) {
		t.Errorf("triggers list nightly-bot:\n%s", out)
	}
	if out := f.ok(t, "triggers", "resume", "nightly-bot", "nightly-report"); out != "nightly-bot: trigger nightly-report resumed; the agent was told now\n" {
		t.Errorf("triggers resume: %q", out)
	}
	if m := next().GetTriggerPauses(); m == nil || len(m.GetPaused()) != 0 {
		t.Errorf("the link got %v, want nothing paused", m)
	}

	_, _, err = f.board(t, "triggers", "pause", "nightly-bot", "ticket")
	wantExit(t, err, 2, "--reason")
	_, _, err = f.board(t, "triggers", "pause", "nightly-bot", "nope", "--reason", "x")
	wantExit(t, err, 1, "nope")
	_, _, err = f.board(t, "triggers", "resume", "nightly-bot")
	wantExit(t, err, 2, "TRIGGER")
}
