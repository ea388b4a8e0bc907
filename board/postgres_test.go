package board_test

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"google.golang.org/protobuf/types/known/timestamppb"

	"github.com/symphonix/symphonix/agentlink"
	boardv1 "github.com/symphonix/symphonix/api/symphonix/board/v1"
	"github.com/symphonix/symphonix/board"
	"github.com/symphonix/symphonix/identity"
	"github.com/symphonix/symphonix/internal/boardtest"
)

// TestPostgres: the same board on PostgreSQL: an agent links, is online,
// survives a restart of the board, and its token is refused once revoked.
func TestPostgres(t *testing.T) {
	t.Parallel()
	bt := boardtest.Start(t, boardtest.Options{DSN: boardtest.PostgresDSN(t), RevocationPoll: 50 * time.Millisecond})
	m := bt.Mint(identity.MintOptions{Kind: identity.KindAgent, Name: "pg"})
	states, _ := runAgent(t, bt.URL, m.Token, agentlink.Identity{Name: "pg"}, nil)
	first := await(t, states, 5*time.Second)
	agents := bt.Agents(bt.OperatorToken("ops", identity.RoleViewer))
	if a := getAgent(t, agents, "pg"); a.GetState() != boardv1.AgentState_AGENT_STATE_ONLINE || a.GetSession() != first.Session {
		t.Fatalf("pg = %v, want online in %s", a, first.Session)
	}
	bt.Restart()
	await(t, states, 5*time.Second) // down
	back := await(t, states, 10*time.Second)
	agents = bt.Agents(bt.OperatorToken("ops", identity.RoleViewer))
	if a := getAgent(t, agents, "pg"); !back.Up || a.GetState() != boardv1.AgentState_AGENT_STATE_ONLINE || a.GetSession() != back.Session {
		t.Fatalf("after restart: %+v, stored %v", back, a)
	}
	if err := bt.Board.Tokens().Revoke(t.Context(), m.ID, time.Now()); err != nil {
		t.Fatal(err)
	}
	if s := await(t, states, 3*time.Second); s.Up {
		t.Fatalf("state after revoke = %+v, want down", s)
	}
}

// TestPostgresHealthAndPause: health rounds and a pause on PostgreSQL: the
// round is kept as the latest and in the history, and the pause reaches
// the link and is delivered once the agent answers.
func TestPostgresHealthAndPause(t *testing.T) {
	t.Parallel()
	bt := boardtest.Start(t, boardtest.Options{DSN: boardtest.PostgresDSN(t)})
	l, _ := openLinkWith(t, bt, &boardv1.Hello{Name: "pg-desk", Protocol: board.Protocol, Capabilities: []string{"health", "pause"}})
	l.send(healthReport(check("waiting", checkOK, ""), check("mcp:orders", checkError, "refused")))
	l.ping(1)
	admin := bt.Agents(bt.OperatorToken("ops", identity.RoleAdmin))
	if h := getAgent(t, admin, "pg-desk").GetHealth(); h.GetStatus() != boardv1.HealthStatus_HEALTH_STATUS_DEGRADED || len(h.GetChecks()) != 2 {
		t.Errorf("health = %v, want degraded with two lines", h)
	}
	res, err := admin.GetHealthHistory(t.Context(), &boardv1.GetHealthHistoryRequest{Name: "pg-desk"})
	if err != nil || len(res.GetRounds()) != 1 {
		t.Fatalf("history = %v, %v; want one round", res, err)
	}
	if _, err := admin.PauseAgent(t.Context(), &boardv1.PauseAgentRequest{Name: "pg-desk", Reason: "maintenance"}); err != nil {
		t.Fatal(err)
	}
	if m := l.next().GetPause(); !m.GetPaused() {
		t.Fatalf("the link got %v, want the pause", m)
	}
	l.send(pauseState(true, boardv1.PauseOrigin_PAUSE_ORIGIN_BOARD, "maintenance", "ops"))
	l.ping(2)
	if p := getAgent(t, admin, "pg-desk").GetPause(); !p.GetPaused() || !p.GetDelivered() {
		t.Errorf("pause = %v, want paused and delivered", p)
	}
}

// TestPostgresDelegation: a run's delegation, its tree, a delegation
// failure, the agent's count of cycles and an alert that fires, on
// PostgreSQL.
func TestPostgresDelegation(t *testing.T) {
	t.Parallel()
	bt := boardtest.Start(t, boardtest.Options{DSN: boardtest.PostgresDSN(t)})
	l := runsLink(t, bt, "pg-desk", delegCaps...)
	t0 := time.Now().Add(-time.Minute)
	root := endedRun("root", 1)
	root.StartTime = timestamppb.New(t0)
	l.storeAll([]*boardv1.Run{root, delegated("kid", "root", t0.Add(time.Second), "pg-desk", "billing")})
	l.send(startOf("live", 1, ""))
	l.send(failureOf("live", 2, cycle(1)))
	l.ping(1)
	runs := runsClient(bt, bt.OperatorToken("vic", identity.RoleViewer))
	res, err := runs.GetRunTree(t.Context(), &boardv1.GetRunTreeRequest{Agent: "pg-desk", Id: "kid"})
	if err != nil || treeIDs(res.GetRoot()) != "root(kid)" {
		t.Fatalf("GetRunTree(kid) = %v %v, want root(kid)", res, err)
	}
	agents := bt.Agents(bt.OperatorToken("vic", identity.RoleViewer))
	boardtest.Eventually(t, 5*time.Second, "the cycle counted", func() bool {
		return cyclesOf(t, agents, "pg-desk").GetKnowledge() == boardv1.CycleKnowledge_CYCLE_KNOWLEDGE_REPORTED
	})
	fs, err := runs.ListDelegationFailures(t.Context(), &boardv1.ListDelegationFailuresRequest{Agent: "pg-desk", Code: "AGENT_RECURSION"})
	if err != nil || len(fs.GetFailures()) != 1 || fs.GetFailures()[0].GetChain()[1] != "triage" {
		t.Fatalf("ListDelegationFailures = %v %v, want the one cycle with its chain", fs, err)
	}
	alerts := alertsClient(bt, bt.OperatorToken("root", identity.RoleAdmin))
	if _, err := alerts.PutAlertRule(t.Context(), &boardv1.PutAlertRuleRequest{Rule: cycleRule("loops", "pg-*", 0)}); err != nil {
		t.Fatal(err)
	}
	al, err := alerts.ListAlerts(t.Context(), &boardv1.ListAlertsRequest{})
	if err != nil || len(al.GetAlerts()) != 1 || al.GetAlerts()[0].GetState() != boardv1.AlertState_ALERT_STATE_FIRING {
		t.Errorf("ListAlerts = %v %v, want loops firing for pg-desk", al, err)
	}
}

// TestPostgresEvalScores: eval scores on PostgreSQL: a report kept and
// flagged, a later one without a build keeping it, a publish beside them,
// and the newest 20 builds of a suite kept.
func TestPostgresEvalScores(t *testing.T) {
	t.Parallel()
	clock := &testClock{t: time.Now().Add(time.Minute)}
	bt := boardtest.Start(t, boardtest.Options{DSN: boardtest.PostgresDSN(t), Now: clock.now})
	old, now := evalBuild("pg-old"), evalBuild("pg-now")
	l := evalsLink(t, bt, "pg-desk", now)
	var builds []*boardv1.EvalScore
	for i := range 19 {
		builds = append(builds, evalScore(evalBuild(fmt.Sprint("pg", i)), evalDay(1, i), 0.5, true))
	}
	builds = append(builds, evalScore(old, evalDay(20, 9), 0.81, true))
	l.send(evalReport(evalSuite("refund.eval.json", builds...)))
	l.ping(1)
	clock.add(5 * time.Second)
	l.send(evalReport(evalSuite("refund.eval.json", evalScore(now, evalDay(21, 9), 0.62, true))))
	l.ping(2)
	publisher := evalsClient(bt, bt.AgentToken("pg-desk"))
	if _, err := publisher.PublishEvalScores(t.Context(), &boardv1.PublishEvalScoresRequest{Suite: "refund.eval.json",
		Score: evalScore(now, evalDay(22, 9), 0.6, true)}); err != nil {
		t.Fatal(err)
	}
	got := listEvals(t, evalsClient(bt, bt.OperatorToken("v", identity.RoleViewer)), "pg-desk")
	if len(got) != 1 {
		t.Fatalf("listed %v, want one suite", got)
	}
	s := got[0]
	if b := s.GetBuilds(); len(b) != 20 || b[0].GetBuild() != now || !b[0].GetDeployed() || b[0].GetTimes() != 2 ||
		b[0].GetSource() != boardv1.EvalSource_EVAL_SOURCE_PUBLISHED || b[1].GetBuild() != old || b[19].GetBuild() != evalBuild("pg1") {
		t.Errorf("builds: %v, want 20, the published deployed build first, then the old one, pg0 dropped", buildsOf(s))
	}
	want := fmt.Sprintf("the deployed build %s scored 0.60 on 2026-11-22, below the 0.81 of %s scored 2026-11-20", short(now), short(old))
	if !slices.Equal(s.GetFlags(), []boardv1.EvalFlag{boardv1.EvalFlag_EVAL_FLAG_REGRESSED}) || len(s.GetReasons()) != 1 || s.GetReasons()[0] != want {
		t.Errorf("flags = %v %q, want regressed: %q", s.GetFlags(), s.GetReasons(), want)
	}
}
