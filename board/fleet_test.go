package board_test

import (
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"connectrpc.com/connect/v2"
	"google.golang.org/protobuf/types/known/durationpb"

	boardv1 "github.com/symphonix/symphonix/api/symphonix/board/v1"
	"github.com/symphonix/symphonix/board"
	"github.com/symphonix/symphonix/ent"
	"github.com/symphonix/symphonix/ent/agent"
	"github.com/symphonix/symphonix/ent/fleetsample"
	"github.com/symphonix/symphonix/identity"
	"github.com/symphonix/symphonix/internal/boardtest"
)

// stillClock is a board's clock held at half past the next minute: the
// board's loop never sees a minute end, so it samples nothing itself, and
// the tokens minted now are not from its future.
func stillClock() (time.Time, func() time.Time) {
	at := time.Now().UTC().Truncate(time.Minute).Add(90 * time.Second)
	return at, func() time.Time { return at }
}

// fleetHistory calls GetFleetHistory as a viewer.
func fleetHistory(t *testing.T, bt *boardtest.Board, window time.Duration) *boardv1.GetFleetHistoryResponse {
	t.Helper()
	res, err := bt.Agents(bt.OperatorToken("vic", identity.RoleViewer)).GetFleetHistory(t.Context(),
		&boardv1.GetFleetHistoryRequest{Window: durationpb.New(window)})
	if err != nil {
		t.Fatalf("GetFleetHistory(%v): %v", window, err)
	}
	return res
}

// minuteSamples are the store's minute samples, oldest first.
func minuteSamples(t *testing.T, db *ent.Client, res string) []*ent.FleetSample {
	t.Helper()
	rows, err := db.FleetSample.Query().Where(fleetsample.Resolution(res)).Order(ent.Asc(fleetsample.FieldAt)).All(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	return rows
}

// TestFleetSample: a minute's sample holds what is true of the fleet: the
// agents online and their health, the approvals pending, the approvals
// decided within the minute and their latency, and the runs started,
// ended and failed within it. Sampling the minute again changes nothing;
// GetFleetHistory returns it, and as the latest.
func TestFleetSample(t *testing.T) {
	t.Parallel()
	now, clock := stillClock()
	bt := boardtest.Start(t, boardtest.Options{Now: clock})
	ctx := t.Context()
	putRule(t, approvalsClient(bt, bt.OperatorToken("root", identity.RoleAdmin)), &boardv1.Rule{Agent: "*", Node: "*", Role: boardv1.Role_ROLE_APPROVER})
	links := openLinks(t, bt, 4)
	links[3].hangUp()
	boardtest.Eventually(t, 10*time.Second, "three agents online", func() bool {
		n, err := bt.Store.Agent.Query().Where(agent.Online(true)).Count(ctx)
		return err == nil && n == 3
	})
	for name, status := range map[string]string{"agent-000": "ok", "agent-001": "degraded", "agent-003": "ok"} {
		if err := bt.Store.Agent.Update().Where(agent.Name(name)).SetHealthStatus(status).Exec(ctx); err != nil {
			t.Fatal(err)
		}
	}

	// Six approvals: four decided within the minute sampled (one of them
	// approved by way of another minute's raise), one a second after it,
	// one still pending.
	minute := now.Truncate(time.Minute).Add(-5 * time.Minute)
	ann := approver(bt, "ann")
	decisions := []struct {
		say             string
		raised, decided time.Duration // from minute
		state           string
	}{
		{"yes", 0, 10 * time.Second, board.StateApproved},
		{"no", 5 * time.Second, 25 * time.Second, board.StateRejected},
		{"yes", 0, 50 * time.Second, board.StateApproved},
		{"yes", -2 * time.Minute, 59*time.Second + 999*time.Millisecond, board.StateApproved},
		{"yes", 0, time.Minute, board.StateApproved},
	}
	var pushed []*boardv1.ApprovalDecision
	for i, d := range decisions {
		a := links[0].raisedAmid(refund(fmt.Sprintf("run-%d", i), i), &pushed)
		if _, err := decide(ann, t, a.GetApprovalId(), d.say, digestOf(i), ""); err != nil {
			t.Fatalf("decide %d: %v", i, err)
		}
		got, err := bt.Store.Approval.Get(ctx, a.GetApprovalId())
		if err != nil || got.State != d.state {
			t.Fatalf("approval %d: %v %v, want %s", i, got, err, d.state)
		}
		// When it was raised and decided, as if minutes ago.
		retime(t, bt.Store, got, minute.Add(d.raised), minute.Add(d.decided))
	}
	links[1].raised(refund("run-pending", 99))

	// Runs: two started within the minute, one before; of those that
	// ended within it, one finished and one failed; one ended after it.
	for i, r := range []struct {
		state      string
		start, end time.Duration
	}{
		{"finished", -time.Hour, 30 * time.Second},
		{"failed", 10 * time.Second, 20 * time.Second},
		{"running", 40 * time.Second, -1},
		{"failed", -time.Hour, 2 * time.Minute},
	} {
		c := bt.Store.Run.Create().SetAgent("agent-000").SetRunID(fmt.Sprintf("r%d", i)).SetState(r.state).
			SetStartTime(minute.Add(r.start)).SetUpdatedAt(minute)
		if r.end >= 0 {
			c.SetEndTime(minute.Add(r.end))
		}
		if err := c.Exec(ctx); err != nil {
			t.Fatal(err)
		}
	}

	if err := bt.Board.SampleFleetForTest(ctx, minute); err != nil {
		t.Fatal(err)
	}
	rows := minuteSamples(t, bt.Store, "minute")
	var s *ent.FleetSample
	for _, r := range rows {
		if r.At.Equal(minute) {
			s = r
		}
	}
	if s == nil {
		t.Fatalf("no sample of %v among %v", minute, rows)
	}
	want := ent.FleetSample{
		Minutes: 1, AgentsOnline: 3, ApprovalsPending: 1,
		HealthOk: 1, HealthDegraded: 1, HealthNone: 1,
		Decisions: 4, LatencyP50Ms: 20_000, LatencyP99Ms: 2*60_000 + 59_999,
		RunsStarted: 2, RunsEnded: 2, RunsFailed: 1,
	}
	if got, want := counts(s), counts(&want); got != want {
		t.Fatalf("sample:\n got %s\nwant %s", got, want)
	}

	// Again, with another agent online: the minute is sampled already.
	openLink(t, bt, "late")
	if err := bt.Board.SampleFleetForTest(ctx, minute); err != nil {
		t.Fatal(err)
	}
	again := minuteSamples(t, bt.Store, "minute")
	if len(again) != len(rows) {
		t.Fatalf("sampled again: %d samples, want %d", len(again), len(rows))
	}

	res := fleetHistory(t, bt, time.Hour)
	if res.GetResolution() != boardv1.FleetResolution_FLEET_RESOLUTION_MINUTE {
		t.Fatalf("resolution %v, want minutes", res.GetResolution())
	}
	var seen *boardv1.FleetSample
	for _, p := range res.GetSamples() {
		if p.GetTime().AsTime().Equal(minute) {
			seen = p
		}
	}
	if seen == nil || seen.GetAgentsOnline() != 3 || seen.GetDecisions() != 4 || seen.GetHealthDegraded() != 1 ||
		seen.GetDecisionLatencyP50().AsDuration() != 20*time.Second || seen.GetDecisionLatencyP99().AsDuration() != 2*time.Minute+59999*time.Millisecond ||
		seen.GetRunsFailed() != 1 || seen.GetMinutes() != 1 {
		t.Fatalf("GetFleetHistory's sample of the minute: %v", seen)
	}
	if l := res.GetLatest(); l == nil || l.GetTime().AsTime().Before(minute) {
		t.Fatalf("latest %v, want the newest minute sample", l)
	}
}

// counts is what a sample holds, but its resolution and start.
func counts(s *ent.FleetSample) string {
	return fmt.Sprintf("minutes %d online %d pending %d health ok/degraded/unknown/none %d/%d/%d/%d decisions %d p50 %dms p99 %dms runs started/ended/failed %d/%d/%d",
		s.Minutes, s.AgentsOnline, s.ApprovalsPending, s.HealthOk, s.HealthDegraded, s.HealthUnknown, s.HealthNone,
		s.Decisions, s.LatencyP50Ms, s.LatencyP99Ms, s.RunsStarted, s.RunsEnded, s.RunsFailed)
}

// retime writes approval a again as raised at raised and decided at
// decided (its raise time cannot be updated).
func retime(t *testing.T, db *ent.Client, a *ent.Approval, raised, decided time.Time) {
	t.Helper()
	ctx := t.Context()
	if err := db.Approval.DeleteOne(a).Exec(ctx); err != nil {
		t.Fatal(err)
	}
	err := db.Approval.Create().SetID(a.ID).SetAgent(a.Agent).SetRun(a.Run).SetNode(a.Node).SetShow(a.Show).
		SetDigest(a.Digest).SetState(a.State).SetSay(a.Say).SetCreatedAt(raised).SetDecidedAt(decided).Exec(ctx)
	if err != nil {
		t.Fatal(err)
	}
}

// sample is a minute or hour sample written to the store by hand.
func sample(db *ent.Client, res string, at time.Time, online, decisions, started, failed int) *ent.FleetSampleCreate {
	return db.FleetSample.Create().SetResolution(res).SetAt(at.UTC()).SetAgentsOnline(online).SetApprovalsPending(online * 2).
		SetHealthOk(online).SetDecisions(decisions).SetRunsStarted(started).SetRunsEnded(started).SetRunsFailed(failed)
}

// TestFleetFold: the minutes of a complete hour are folded into one hour
// sample (gauges their mean, counts their sums, latency from the hour's
// decisions), once; the hour under way is not; minutes older than 48 h
// and hours older than 30 days are swept.
func TestFleetFold(t *testing.T) {
	t.Parallel()
	now, clock := stillClock()
	bt := boardtest.Start(t, boardtest.Options{Now: clock})
	ctx := t.Context()
	db := bt.Store
	hour := now.Truncate(time.Hour).Add(-3 * time.Hour)
	for i, online := range []int{1, 2, 3, 4} {
		if err := sample(db, "minute", hour.Add(time.Duration(i*15)*time.Minute), online, i, 10, i).Exec(ctx); err != nil {
			t.Fatal(err)
		}
	}
	// The hour under way, and a minute past 48 h, its hour folded too but
	// then swept; an hour past 30 days, swept; one within, kept.
	for _, c := range []*ent.FleetSampleCreate{
		sample(db, "minute", now.Truncate(time.Minute), 9, 9, 9, 9),
		sample(db, "minute", now.Add(-board.FleetMinuteKeepForTest-time.Hour), 5, 0, 0, 0),
		sample(db, "hour", now.Truncate(time.Hour).Add(-board.FleetHourKeepForTest-time.Hour), 5, 0, 0, 0),
		sample(db, "hour", now.Truncate(time.Hour).Add(-board.FleetHourKeepForTest+time.Hour), 6, 0, 0, 0),
	} {
		if err := c.Exec(ctx); err != nil {
			t.Fatal(err)
		}
	}
	// Decisions within the hour: 1 s to 100 s; and one an hour later.
	for i := 1; i <= 100; i++ {
		at := hour.Add(time.Duration(i) * 30 * time.Second)
		if err := db.Approval.Create().SetID(fmt.Sprintf("a%d", i)).SetAgent("desk").SetRun(fmt.Sprintf("r%d", i)).SetNode("pay").
			SetShow("{}").SetDigest(digestOf(i)).SetState(board.StateApproved).
			SetCreatedAt(at.Add(-time.Duration(i) * time.Second)).SetDecidedAt(at).Exec(ctx); err != nil {
			t.Fatal(err)
		}
	}
	if err := db.Approval.Create().SetID("later").SetAgent("desk").SetRun("later").SetNode("pay").
		SetShow("{}").SetDigest(digestOf(0)).SetState(board.StateRejected).
		SetCreatedAt(hour.Add(-time.Hour)).SetDecidedAt(hour.Add(time.Hour)).Exec(ctx); err != nil {
		t.Fatal(err)
	}

	for range 2 { // folding twice folds once
		if err := bt.Board.FoldFleetForTest(ctx, now); err != nil {
			t.Fatal(err)
		}
	}
	hours := minuteSamples(t, db, "hour")
	var folded *ent.FleetSample
	for _, h := range hours {
		if h.At.Equal(hour) {
			folded = h
		}
		if h.At.Equal(now.Truncate(time.Hour)) {
			t.Fatalf("the hour under way was folded: %+v", h)
		}
		if h.At.Before(now.Add(-board.FleetHourKeepForTest)) {
			t.Fatalf("an hour past 30 days was kept: %+v", h)
		}
	}
	if len(hours) != 2 { // the one kept and the one folded
		t.Fatalf("hours %v, want 2", hours)
	}
	if folded == nil || folded.Minutes != 4 || folded.AgentsOnline != 3 || folded.ApprovalsPending != 5 || folded.HealthOk != 3 ||
		folded.Decisions != 6 || folded.RunsStarted != 40 || folded.RunsEnded != 40 || folded.RunsFailed != 6 ||
		folded.LatencyP50Ms != 50_000 || folded.LatencyP99Ms != 99_000 {
		t.Fatalf("folded hour: %+v", folded)
	}
	minutes := minuteSamples(t, db, "minute")
	if len(minutes) != 5 || minutes[0].At.Before(now.Add(-board.FleetMinuteKeepForTest)) {
		t.Fatalf("minutes after the sweep: %v, want the 5 within 48 h", minutes)
	}

	res := fleetHistory(t, bt, 7*24*time.Hour)
	if res.GetResolution() != boardv1.FleetResolution_FLEET_RESOLUTION_HOUR || len(res.GetSamples()) != 1 ||
		!res.GetSamples()[0].GetTime().AsTime().Equal(hour) || res.GetSamples()[0].GetMinutes() != 4 {
		t.Fatalf("GetFleetHistory(7d): %v, want the folded hour", res)
	}
	if l := res.GetLatest(); l.GetAgentsOnline() != 9 {
		t.Fatalf("latest %v, want the minute under way's", l)
	}
}

// TestFleetHistoryWindow: the window is required, 1 minute to 30 days;
// the answer holds at most 1,440 samples, all within the window, oldest
// first.
func TestFleetHistoryWindow(t *testing.T) {
	t.Parallel()
	asked, clock := stillClock()
	bt := boardtest.Start(t, boardtest.Options{Now: clock})
	ctx := t.Context()
	agents := bt.Agents(bt.OperatorToken("vic", identity.RoleViewer))
	for _, w := range []*durationpb.Duration{nil, durationpb.New(59 * time.Second), durationpb.New(-time.Hour),
		durationpb.New(31 * 24 * time.Hour), {Seconds: 1, Nanos: -1}} {
		_, err := agents.GetFleetHistory(ctx, &boardv1.GetFleetHistoryRequest{Window: w})
		if connect.CodeOf(err) != connect.CodeInvalidArgument || !strings.Contains(err.Error(), "window:") {
			t.Errorf("window %v: %v, want invalid_argument naming the window", w, err)
		}
	}
	if _, err := bt.Agents(bt.AgentToken("desk")).GetFleetHistory(ctx, &boardv1.GetFleetHistoryRequest{Window: durationpb.New(time.Hour)}); connect.CodeOf(err) != connect.CodeUnauthenticated && connect.CodeOf(err) != connect.CodePermissionDenied {
		t.Errorf("an agent's token: %v, want refused", err)
	}

	now := asked.Truncate(time.Minute)
	var creates []*ent.FleetSampleCreate
	for i := range 1600 {
		creates = append(creates, sample(bt.Store, "minute", now.Add(-time.Duration(i)*time.Minute), i, 0, 0, 0))
	}
	for i := range 800 {
		creates = append(creates, sample(bt.Store, "hour", now.Truncate(time.Hour).Add(-time.Duration(i)*time.Hour), i, 0, 0, 0))
	}
	for len(creates) > 0 {
		n := min(len(creates), 500)
		if err := bt.Store.FleetSample.CreateBulk(creates[:n]...).Exec(ctx); err != nil {
			t.Fatal(err)
		}
		creates = creates[n:]
	}
	for _, c := range []struct {
		window time.Duration
		res    boardv1.FleetResolution
		least  int
		most   int
	}{
		{time.Hour, boardv1.FleetResolution_FLEET_RESOLUTION_MINUTE, 60, 60},
		{24 * time.Hour, boardv1.FleetResolution_FLEET_RESOLUTION_MINUTE, board.FleetMaxPointsForTest, board.FleetMaxPointsForTest},
		{24*time.Hour + time.Minute, boardv1.FleetResolution_FLEET_RESOLUTION_HOUR, 24, 25},
		{30 * 24 * time.Hour, boardv1.FleetResolution_FLEET_RESOLUTION_HOUR, 720, 721},
	} {
		res := fleetHistory(t, bt, c.window)
		s := res.GetSamples()
		if res.GetResolution() != c.res || len(s) < c.least || len(s) > c.most {
			t.Errorf("window %v: %v with %d samples, want %v with %d to %d", c.window, res.GetResolution(), len(s), c.res, c.least, c.most)
			continue
		}
		for i, p := range s {
			if p.GetTime().AsTime().Before(asked.Add(-c.window)) {
				t.Errorf("window %v: sample at %v is outside it", c.window, p.GetTime().AsTime())
			}
			if i > 0 && !p.GetTime().AsTime().After(s[i-1].GetTime().AsTime()) {
				t.Errorf("window %v: not oldest first at %d", c.window, i)
			}
		}
		if res.GetLatest().GetAgentsOnline() != 0 || !res.GetLatest().GetTime().AsTime().Equal(now) {
			t.Errorf("window %v: latest %v, want the minute at %v", c.window, res.GetLatest(), now)
		}
	}
}

// TestFleetSampleAcrossBoards: two boards of one PostgreSQL store record
// each minute once, and fold each hour once: sampling side by side, and
// from their loops when the minute ends.
func TestFleetSampleAcrossBoards(t *testing.T) {
	t.Parallel()
	dsn := boardtest.PostgresDSN(t)
	var clock atomic.Pointer[time.Time]
	start := time.Now().UTC().Add(time.Minute) // tokens minted now are not from its future
	clock.Store(&start)
	now := func() time.Time { return *clock.Load() }
	boards := []*boardtest.Board{
		boardtest.Start(t, boardtest.Options{DSN: dsn, Now: now}),
		boardtest.Start(t, boardtest.Options{DSN: dsn, Now: now}),
	}
	ctx := t.Context()
	openLink(t, boards[0], "desk")
	minute := start.Truncate(time.Minute).Add(-10 * time.Minute)
	for range 5 {
		var wg sync.WaitGroup
		for _, b := range boards {
			wg.Go(func() {
				if err := b.Board.SampleFleetForTest(ctx, minute); err != nil {
					t.Error(err)
				}
				if err := b.Board.FoldFleetForTest(ctx, start.Add(time.Hour)); err != nil {
					t.Error(err)
				}
			})
		}
		wg.Wait()
	}
	count := func(res string, at time.Time) int {
		n, err := boards[1].Store.FleetSample.Query().Where(fleetsample.Resolution(res), fleetsample.At(at)).Count(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	if n := count("minute", minute); n != 1 {
		t.Fatalf("%d samples of the minute, want 1", n)
	}
	if n := count("hour", minute.Truncate(time.Hour)); n != 1 {
		t.Fatalf("%d samples of its hour, want 1", n)
	}

	// The minute both boards started in ends: their loops sample it, once.
	later := start.Truncate(time.Minute).Add(time.Minute + time.Second)
	clock.Store(&later)
	started := start.Truncate(time.Minute)
	boardtest.Eventually(t, 10*time.Second, "the loops' sample", func() bool { return count("minute", started) == 1 })
	time.Sleep(2 * time.Second) // both loops have ticked
	if n := count("minute", started); n != 1 {
		t.Fatalf("%d samples of the minute the loops sampled, want 1", n)
	}
	s, err := boards[0].Store.FleetSample.Query().Where(fleetsample.Resolution("minute"), fleetsample.At(started)).Only(ctx)
	if err != nil || s.AgentsOnline != 1 {
		t.Fatalf("the loops' sample: %+v %v, want one agent online", s, err)
	}
}
