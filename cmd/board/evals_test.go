package main

import (
	"context"
	"strings"
	"testing"
	"time"

	"google.golang.org/protobuf/types/known/timestamppb"

	boardv1 "github.com/symphonix/symphonix/api/symphonix/board/v1"
	"github.com/symphonix/symphonix/api/symphonix/board/v1/boardv1connect"
	"github.com/symphonix/symphonix/board"
	"github.com/symphonix/symphonix/identity"
	"github.com/symphonix/symphonix/internal/boardtest"
)

// TestEvalsList: evals list (all, one agent, -o json) against a real board
// and an agent's link that reports two builds' scores, the deployed one
// worse.
func TestEvalsList(t *testing.T) {
	t.Parallel()
	b := boardtest.Start(t, boardtest.Options{})
	f := &fleet{b: b, admin: b.OperatorToken("ops", identity.RoleViewer)}
	deployed, older := "sha256:"+strings.Repeat("b", 64), "sha256:"+strings.Repeat("a", 64)
	link := boardv1connect.NewAgentLinkServiceClient(b.Client(b.AgentToken("refund-bot")))
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
	send(&boardv1.LinkRequest{Kind: &boardv1.LinkRequest_Hello{Hello: &boardv1.Hello{Name: "refund-bot", Protocol: board.Protocol,
		Build: deployed, Capabilities: []string{"evals"}}}})
	if m := next(); m.GetWelcome() == nil {
		t.Fatalf("hello: %v, want a welcome", m)
	}
	day := time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC)
	send(&boardv1.LinkRequest{Kind: &boardv1.LinkRequest_Evals{Evals: &boardv1.EvalReport{Suites: []*boardv1.EvalSuiteScores{{
		Suite: "refund.eval.json", Builds: []*boardv1.EvalScore{
			{Build: older, ScoreTime: timestamppb.New(day.Add(-24 * time.Hour)), Score: 0.81, Passed: true, Cases: 4, Completed: 4, Scored: 4, Times: 1},
			{Build: deployed, ScoreTime: timestamppb.New(day), Score: 0.62, Passed: false, Cases: 4, Completed: 4, Scored: 4, Times: 1},
		}}}}}})
	send(&boardv1.LinkRequest{Kind: &boardv1.LinkRequest_Ping{Ping: &boardv1.Ping{Seq: 1}}})
	if m := next(); m.GetPong() == nil {
		t.Fatalf("ping: %v, want its pong", m)
	}

	out := f.ok(t, "evals", "list")
	if !regexpLine(out, `^AGENT\s+SUITE\s+BUILD\s+DEPLOYED\s+SCORE\s+PASSED\s+WHEN\s+FLAGS$`) ||
		!regexpLine(out, `^refund-bot\s+refund\.eval\.json\s+bbbbbbbbbbbb\s+\*\s+0\.62\s+no\s+2026-11-30T09:00:00Z\s+regressed, below threshold$`) ||
		!regexpLine(out, `^refund-bot\s+refund\.eval\.json\s+aaaaaaaaaaaa\s+-\s+0\.81\s+yes\s+2026-11-29T09:00:00Z\s+-$`) {
		t.Errorf("evals list:\n%s", out)
	}
	type row struct {
		Agent         string   `json:"agent"`
		Suite         string   `json:"suite"`
		DeployedBuild string   `json:"deployed_build"`
		Flags         []string `json:"flags"`
		Reasons       []string `json:"reasons"`
		Builds        []struct {
			Build    string `json:"build"`
			Deployed bool   `json:"deployed"`
			Source   string `json:"source"`
		} `json:"builds"`
	}
	rows := decodeJSON[[]row](t, f.ok(t, "evals", "list", "--agent", "refund-bot", "--output", "json"))
	if len(rows) != 1 || rows[0].DeployedBuild != deployed || len(rows[0].Builds) != 2 || !rows[0].Builds[0].Deployed ||
		rows[0].Builds[0].Source != "EVAL_SOURCE_REPORTED" || strings.Join(rows[0].Flags, " ") != "EVAL_FLAG_REGRESSED EVAL_FLAG_BELOW_THRESHOLD" ||
		len(rows[0].Reasons) != 2 {
		t.Errorf("evals list --agent refund-bot --output json = %+v", rows)
	}
	if out := f.ok(t, "evals", "list", "--agent", "nobody"); strings.Contains(out, "refund-bot") {
		t.Errorf("evals list --agent nobody:\n%s", out)
	}
	_, _, err = f.board(t, "evals", "list", "refund-bot")
	wantExit(t, err, 2, "")
}
