package board_test

import (
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"connectrpc.com/connect/v2"
	"google.golang.org/protobuf/types/known/durationpb"
	"google.golang.org/protobuf/types/known/timestamppb"

	boardv1 "github.com/symphonix/symphonix/api/symphonix/board/v1"
	"github.com/symphonix/symphonix/api/symphonix/board/v1/boardv1connect"
	"github.com/symphonix/symphonix/audit"
	"github.com/symphonix/symphonix/board"
	"github.com/symphonix/symphonix/identity"
	"github.com/symphonix/symphonix/internal/boardtest"
)

// testClock is a board clock a test moves by hand. It starts a minute
// ahead of the wall's, so that tokens minted by the wall's clock are valid
// already.
type testClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *testClock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *testClock) add(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

func triggersClient(bt *boardtest.Board, token string) boardv1connect.TriggerServiceClient {
	return boardv1connect.NewTriggerServiceClient(bt.Client(token))
}

// triggersLink opens a link for name announcing triggers, and reads the
// paused triggers the board tells it after the welcome.
func triggersLink(t *testing.T, bt *boardtest.Board, name string) (*rawLink, []string) {
	t.Helper()
	l, _ := openLinkWith(t, bt, &boardv1.Hello{Name: name, Protocol: board.Protocol, Capabilities: []string{"triggers", "runs", "live-runs"}})
	m := l.next()
	if m.GetTriggerPauses() == nil {
		t.Fatalf("after the welcome: %v, want trigger_pauses", m)
	}
	return l, m.GetTriggerPauses().GetPaused()
}

func nightly() *boardv1.Trigger {
	return &boardv1.Trigger{Id: "nightly-report", Kind: boardv1.TriggerKind_TRIGGER_KIND_SCHEDULE, Schedule: "30 2 * * *",
		TimeZone: "Europe/Paris", Description: "Every day at 02:30", Overlap: "skip", Delivers: true,
		NextRunTime: timestamppb.New(time.Now().Add(time.Hour)),
		Last: &boardv1.TriggerOccurrence{Time: timestamppb.New(time.Now().Add(-time.Hour)), RunId: "run-1", Ok: true,
			Duration: durationpb.New(3 * time.Second), Delivery: boardv1.DeliveryState_DELIVERY_STATE_DELIVERED}}
}

func hook() *boardv1.Trigger {
	return &boardv1.Trigger{Id: "ticket", Kind: boardv1.TriggerKind_TRIGGER_KIND_WEBHOOK, Method: "POST", Path: "/hooks/ticket", Signed: true}
}

func report(ts ...*boardv1.Trigger) *boardv1.LinkRequest {
	return &boardv1.LinkRequest{Kind: &boardv1.LinkRequest_Triggers{Triggers: &boardv1.TriggerReport{Triggers: ts}}}
}

func listTriggers(t *testing.T, c boardv1connect.TriggerServiceClient, agentName string) []*boardv1.AgentTrigger {
	t.Helper()
	res, err := c.ListTriggers(t.Context(), &boardv1.ListTriggersRequest{Agent: agentName})
	if err != nil {
		t.Fatalf("ListTriggers(%q): %v", agentName, err)
	}
	return res.GetTriggers()
}

func ids(ts []*boardv1.AgentTrigger) []string {
	var out []string
	for _, t := range ts {
		out = append(out, t.GetAgent()+"/"+t.GetTrigger().GetId())
	}
	return out
}

// triggerActions is the audit log's trigger entries, as
// "<action> <subject> by <actor>".
func triggerActions(t *testing.T, bt *boardtest.Board) []string {
	t.Helper()
	entries, err := audit.New(bt.Store).List(t.Context(), 0, 1000)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range entries {
		if strings.HasPrefix(e.Action, "trigger.") {
			out = append(out, e.Action+" "+e.Subject+" by "+e.Actor)
		}
	}
	return out
}

// TestTriggerReportKept: a report is kept as the agent's triggers, by id,
// with when it came and whether the agent is online; a later report takes
// its place; the list pages by agent and id.
func TestTriggerReportKept(t *testing.T) {
	t.Parallel()
	clock := &testClock{t: time.Now().Add(time.Minute)}
	bt := boardtest.Start(t, boardtest.Options{Now: clock.now})
	viewer := triggersClient(bt, bt.OperatorToken("v", identity.RoleViewer))
	l, paused := triggersLink(t, bt, "desk")
	if len(paused) != 0 {
		t.Errorf("paused = %q, want none", paused)
	}
	l.send(report(nightly(), hook()))
	l.ping(1)
	got := listTriggers(t, viewer, "desk")
	if strings.Join(ids(got), " ") != "desk/nightly-report desk/ticket" {
		t.Fatalf("listed %q, want nightly-report then ticket", ids(got))
	}
	n := got[0]
	if !n.GetOnline() || n.GetReportTime() == nil || n.GetPause() != nil ||
		n.GetTrigger().GetDescription() != "Every day at 02:30" || n.GetTrigger().GetLast().GetRunId() != "run-1" ||
		n.GetTrigger().GetLast().GetDelivery() != boardv1.DeliveryState_DELIVERY_STATE_DELIVERED {
		t.Errorf("nightly-report = %v, want it as reported, online, not paused", n)
	}
	if w := got[1].GetTrigger(); w.GetMethod() != "POST" || w.GetPath() != "/hooks/ticket" || !w.GetSigned() {
		t.Errorf("ticket = %v, want POST /hooks/ticket, signed", w)
	}

	// A later report replaces it; another agent's are listed after.
	clock.add(time.Second)
	l.send(report(hook()))
	l.ping(2)
	other, _ := triggersLink(t, bt, "alpha")
	other.send(report(nightly()))
	other.ping(1)
	all := listTriggers(t, viewer, "")
	if strings.Join(ids(all), " ") != "alpha/nightly-report desk/ticket" {
		t.Errorf("listed %q, want alpha's then desk's", ids(all))
	}
	// Pages of one.
	var paged []string
	token := ""
	for range 5 {
		res, err := viewer.ListTriggers(t.Context(), &boardv1.ListTriggersRequest{PageSize: 1, PageToken: token})
		if err != nil {
			t.Fatal(err)
		}
		paged = append(paged, ids(res.GetTriggers())...)
		if token = res.GetNextPageToken(); token == "" {
			break
		}
	}
	if strings.Join(paged, " ") != strings.Join(ids(all), " ") {
		t.Errorf("paged %q, want %q", paged, ids(all))
	}
	if _, err := viewer.ListTriggers(t.Context(), &boardv1.ListTriggersRequest{PageSize: -1}); connect.CodeOf(err) != connect.CodeInvalidArgument {
		t.Errorf("page_size -1: %v, want invalid_argument", err)
	}
}

// TestTriggerReportRefused: a report out of bounds is refused with an
// Error naming the field, keeps nothing, and the link stays up; one from
// an agent that did not announce triggers is refused too.
func TestTriggerReportRefused(t *testing.T) {
	t.Parallel()
	clock := &testClock{t: time.Now().Add(time.Minute)}
	bt := boardtest.Start(t, boardtest.Options{Now: clock.now})
	viewer := triggersClient(bt, bt.OperatorToken("v", identity.RoleViewer))
	l, _ := triggersLink(t, bt, "desk")
	many := make([]*boardv1.Trigger, 65)
	for i := range many {
		many[i] = hook()
		many[i].Id = "h" + strings.Repeat("x", i)
	}
	withKind := func(k boardv1.TriggerKind) *boardv1.Trigger { n := nightly(); n.Kind = k; return n }
	badLast := nightly()
	badLast.Last.RunId = "no spaces"
	future := nightly()
	future.Last.Time = timestamppb.New(time.Now().Add(48 * time.Hour))
	cases := []struct {
		name string
		r    *boardv1.LinkRequest
		says string
	}{
		{"too many", report(many...), "triggers.triggers: 65, at most 64"},
		{"an id with a slash", report(&boardv1.Trigger{Id: "a/b", Kind: boardv1.TriggerKind_TRIGGER_KIND_WEBHOOK, Method: "POST", Path: "/a"}), "triggers.triggers[0].id: want letters"},
		{"an id twice", report(hook(), hook()), `triggers.triggers[1].id: "ticket" twice`},
		{"no kind", report(withKind(0)), "triggers.triggers[0].kind: "},
		{"an unknown kind", report(withKind(9)), "triggers.triggers[0].kind: "},
		{"a schedule without its fields", report(&boardv1.Trigger{Id: "s", Kind: boardv1.TriggerKind_TRIGGER_KIND_SCHEDULE}), "triggers.triggers[0].schedule: required"},
		{"a webhook without a path", report(&boardv1.Trigger{Id: "w", Kind: boardv1.TriggerKind_TRIGGER_KIND_WEBHOOK, Method: "POST"}), "triggers.triggers[0].path: required"},
		{"a lower-case method", report(&boardv1.Trigger{Id: "w", Kind: boardv1.TriggerKind_TRIGGER_KIND_WEBHOOK, Method: "post", Path: "/w"}), "triggers.triggers[0].method"},
		{"an unknown overlap", report(&boardv1.Trigger{Id: "w", Kind: boardv1.TriggerKind_TRIGGER_KIND_WEBHOOK, Method: "POST", Path: "/w", Overlap: "pile"}), "triggers.triggers[0].overlap"},
		{"a bad run id", report(badLast), "triggers.triggers[0].last.run_id"},
		{"an occurrence in the future", report(future), "triggers.triggers[0].last.time"},
	}
	for _, tc := range cases {
		clock.add(2 * time.Second) // past the rate
		l.send(tc.r)
		m := l.next()
		if m.GetError().GetCode() != boardv1.LinkErrorCode_LINK_ERROR_CODE_INVALID_ARGUMENT || !strings.Contains(m.GetError().GetMessage(), tc.says) {
			t.Errorf("%s: %v, want invalid_argument saying %q", tc.name, m, tc.says)
		}
	}
	l.ping(1)
	if got := listTriggers(t, viewer, "desk"); len(got) != 0 {
		t.Errorf("after refusals: %q, want nothing kept", ids(got))
	}
	// An error too long is cut, not refused.
	long := nightly()
	long.Last.Error = strings.Repeat("e", 5000)
	clock.add(2 * time.Second)
	l.send(report(long))
	l.ping(2)
	if got := listTriggers(t, viewer, "desk"); len(got) != 1 || len(got[0].GetTrigger().GetLast().GetError()) > 1024 {
		t.Errorf("a long error: %v, want kept, cut to 1 KiB", got)
	}

	plain, _ := openLinkWith(t, bt, &boardv1.Hello{Name: "plain", Protocol: board.Protocol, Capabilities: []string{"runs"}})
	plain.send(report(hook()))
	if m := plain.next(); m.GetError().GetCode() != boardv1.LinkErrorCode_LINK_ERROR_CODE_FAILED_PRECONDITION ||
		!strings.Contains(m.GetError().GetMessage(), "triggers capability") {
		t.Errorf("from an agent without triggers: %v, want failed_precondition", m)
	}
	plain.ping(1)
}

// TestTriggerReportRate: a second report within a second of the last,
// kept or refused, is dropped and counted; one a second later is kept.
func TestTriggerReportRate(t *testing.T) {
	t.Parallel()
	clock := &testClock{t: time.Now().Add(time.Minute)}
	bt := boardtest.Start(t, boardtest.Options{Now: clock.now})
	viewer := triggersClient(bt, bt.OperatorToken("v", identity.RoleViewer))
	l, _ := triggersLink(t, bt, "desk")
	l.send(report(hook()))
	clock.add(500 * time.Millisecond)
	l.send(report(nightly()))
	l.ping(1) // nothing but the pong: a dropped report is not answered
	if got := ids(listTriggers(t, viewer, "desk")); strings.Join(got, " ") != "desk/ticket" {
		t.Errorf("after a report too soon: %q, want the first kept", got)
	}
	if n := bt.Board.TriggerReportsDropped(); n != 1 {
		t.Errorf("dropped = %d, want 1", n)
	}
	clock.add(time.Second)
	l.send(report(nightly()))
	l.ping(2)
	if got := ids(listTriggers(t, viewer, "desk")); strings.Join(got, " ") != "desk/nightly-report" {
		t.Errorf("a second later: %q, want the new report kept", got)
	}
	// A refused report counts too.
	clock.add(time.Second)
	l.send(report(&boardv1.Trigger{Id: "bad id"}))
	if m := l.next(); m.GetError().GetCode() != boardv1.LinkErrorCode_LINK_ERROR_CODE_INVALID_ARGUMENT {
		t.Fatalf("a bad report: %v, want invalid_argument", m)
	}
	l.send(report(hook()))
	l.ping(3)
	if n := bt.Board.TriggerReportsDropped(); n != 2 {
		t.Errorf("dropped = %d after a report right behind a refused one, want 2", n)
	}
	if got := ids(listTriggers(t, viewer, "desk")); strings.Join(got, " ") != "desk/nightly-report" {
		t.Errorf("after a report right behind a refused one: %q, want the earlier report kept", got)
	}
}

// TestTriggerPause: an admin pauses a reported trigger; the pause is kept
// with who and why, audited, pushed to the live link at once, told after
// every welcome, and survives a relink and the board's restart. Pausing
// again keeps the first reason; a resume is audited and pushed. The
// agent's own pause is separate.
func TestTriggerPause(t *testing.T) {
	t.Parallel()
	bt := boardtest.Start(t, boardtest.Options{})
	admin := triggersClient(bt, bt.OperatorToken("ops", identity.RoleAdmin))
	l, _ := triggersLink(t, bt, "desk")
	l.send(report(nightly(), hook()))
	l.ping(1)

	res, err := admin.PauseTrigger(t.Context(), &boardv1.PauseTriggerRequest{Agent: "desk", TriggerId: "nightly-report", Reason: "the warehouse is migrating"})
	if err != nil {
		t.Fatal(err)
	}
	if p := res.GetTrigger().GetPause(); !res.GetPushed() || !p.GetPaused() || p.GetBy() != "ops" || p.GetReason() != "the warehouse is migrating" || p.GetTime() == nil {
		t.Errorf("PauseTrigger = %v, want paused by ops with its reason, pushed", res)
	}
	if m := l.next().GetTriggerPauses(); m == nil || !slices.Equal(m.GetPaused(), []string{"nightly-report"}) {
		t.Fatalf("the link got %v, want nightly-report paused", m)
	}
	again, err := admin.PauseTrigger(t.Context(), &boardv1.PauseTriggerRequest{Agent: "desk", TriggerId: "nightly-report", Reason: "another reason"})
	if err != nil || again.GetTrigger().GetPause().GetReason() != "the warehouse is migrating" {
		t.Errorf("paused again: %v %v, want the first reason kept", again, err)
	}
	l.next() // pushed again: the same word

	// The agent itself, paused from the board, is another thing.
	agents := bt.Agents(bt.OperatorToken("ops", identity.RoleAdmin))
	if a := getAgent(t, agents, "desk"); a.GetPause() != nil {
		t.Errorf("the agent's pause = %v, want none: a trigger's pause is not the agent's", a.GetPause())
	}

	_ = l.s.Close()
	l, paused := triggersLink(t, bt, "desk")
	if !slices.Equal(paused, []string{"nightly-report"}) {
		t.Errorf("after a relink: %q, want nightly-report paused", paused)
	}
	_ = l.s.Close()
	bt.Restart()
	admin = triggersClient(bt, bt.OperatorToken("ops", identity.RoleAdmin))
	l, paused = triggersLink(t, bt, "desk")
	if !slices.Equal(paused, []string{"nightly-report"}) {
		t.Errorf("after a restart: %q, want nightly-report paused", paused)
	}
	listed := listTriggers(t, admin, "desk")
	if len(listed) != 2 || listed[0].GetPause().GetReason() != "the warehouse is migrating" || listed[1].GetPause() != nil {
		t.Errorf("listed after a restart: %v, want nightly-report paused, ticket not", listed)
	}

	r, err := admin.ResumeTrigger(t.Context(), &boardv1.ResumeTriggerRequest{Agent: "desk", TriggerId: "nightly-report"})
	if err != nil || r.GetTrigger().GetPause() != nil || !r.GetPushed() {
		t.Fatalf("ResumeTrigger = %v %v, want not paused, pushed", r, err)
	}
	if m := l.next().GetTriggerPauses(); m == nil || len(m.GetPaused()) != 0 {
		t.Fatalf("the link got %v, want nothing paused", m)
	}
	got := triggerActions(t, bt)
	if want := []string{"trigger.pause desk by ops", "trigger.resume desk by ops"}; strings.Join(got, "; ") != strings.Join(want, "; ") {
		t.Errorf("audit = %q, want %q", got, want)
	}
}

// TestTriggerPauseWhileAway: a trigger paused while its agent is away is
// not pushed, and is told after its next welcome.
func TestTriggerPauseWhileAway(t *testing.T) {
	t.Parallel()
	bt := boardtest.Start(t, boardtest.Options{})
	admin := triggersClient(bt, bt.OperatorToken("ops", identity.RoleAdmin))
	l, _ := triggersLink(t, bt, "desk")
	l.send(report(hook()))
	l.ping(1)
	_ = l.s.Close()
	agents := bt.Agents(bt.OperatorToken("ops", identity.RoleAdmin))
	boardtest.Eventually(t, 10*time.Second, "desk offline", func() bool {
		return getAgent(t, agents, "desk").GetState() == boardv1.AgentState_AGENT_STATE_OFFLINE
	})
	res, err := admin.PauseTrigger(t.Context(), &boardv1.PauseTriggerRequest{Agent: "desk", TriggerId: "ticket", Reason: "spam"})
	if err != nil || res.GetPushed() || res.GetTrigger().GetOnline() {
		t.Fatalf("PauseTrigger while away = %v %v, want kept, not pushed, offline", res, err)
	}
	if _, paused := triggersLink(t, bt, "desk"); !slices.Equal(paused, []string{"ticket"}) {
		t.Errorf("after the welcome: %q, want ticket paused", paused)
	}
}

// TestTriggerAccess: a viewer lists but neither pauses nor resumes; an
// agent's token cannot call TriggerService; bad requests name the field.
func TestTriggerAccess(t *testing.T) {
	t.Parallel()
	bt := boardtest.Start(t, boardtest.Options{})
	l, _ := triggersLink(t, bt, "desk")
	l.send(report(hook()))
	l.ping(1)
	viewer := triggersClient(bt, bt.OperatorToken("v", identity.RoleViewer))
	if got := listTriggers(t, viewer, "desk"); len(got) != 1 {
		t.Errorf("a viewer lists %q, want ticket", ids(got))
	}
	if _, err := viewer.PauseTrigger(t.Context(), &boardv1.PauseTriggerRequest{Agent: "desk", TriggerId: "ticket", Reason: "x"}); connect.CodeOf(err) != connect.CodePermissionDenied {
		t.Errorf("a viewer pauses: %v, want permission_denied", err)
	}
	if _, err := viewer.ResumeTrigger(t.Context(), &boardv1.ResumeTriggerRequest{Agent: "desk", TriggerId: "ticket"}); connect.CodeOf(err) != connect.CodePermissionDenied {
		t.Errorf("a viewer resumes: %v, want permission_denied", err)
	}
	agentTok := triggersClient(bt, bt.AgentToken("desk"))
	if _, err := agentTok.ListTriggers(t.Context(), &boardv1.ListTriggersRequest{}); connect.CodeOf(err) != connect.CodeUnauthenticated {
		t.Errorf("an agent lists: %v, want unauthenticated", err)
	}
	if _, err := agentTok.PauseTrigger(t.Context(), &boardv1.PauseTriggerRequest{Agent: "desk", TriggerId: "ticket", Reason: "x"}); connect.CodeOf(err) != connect.CodeUnauthenticated {
		t.Errorf("an agent pauses: %v, want unauthenticated", err)
	}
	admin := triggersClient(bt, bt.OperatorToken("ops", identity.RoleAdmin))
	cases := []struct {
		name string
		req  *boardv1.PauseTriggerRequest
		code connect.Code
		says string
	}{
		{"no reason", &boardv1.PauseTriggerRequest{Agent: "desk", TriggerId: "ticket"}, connect.CodeInvalidArgument, "reason: required"},
		{"a long reason", &boardv1.PauseTriggerRequest{Agent: "desk", TriggerId: "ticket", Reason: strings.Repeat("r", 1025)}, connect.CodeInvalidArgument, "reason: 1025 bytes, at most 1024"},
		{"no trigger", &boardv1.PauseTriggerRequest{Agent: "desk", Reason: "x"}, connect.CodeInvalidArgument, "trigger_id: required"},
		{"no agent", &boardv1.PauseTriggerRequest{TriggerId: "ticket", Reason: "x"}, connect.CodeInvalidArgument, "agent:"},
		{"an unknown trigger", &boardv1.PauseTriggerRequest{Agent: "desk", TriggerId: "nightly", Reason: "x"}, connect.CodeNotFound, `trigger_id: "nightly": agent "desk" has not reported`},
		{"an unknown agent", &boardv1.PauseTriggerRequest{Agent: "ghost", TriggerId: "ticket", Reason: "x"}, connect.CodeNotFound, `agent: "ghost"`},
	}
	for _, tc := range cases {
		_, err := admin.PauseTrigger(t.Context(), tc.req)
		if connect.CodeOf(err) != tc.code || !strings.Contains(err.Error(), tc.says) {
			t.Errorf("%s: %v, want %v saying %q", tc.name, err, tc.code, tc.says)
		}
	}
	if got := triggerActions(t, bt); len(got) != 0 {
		t.Errorf("audit = %q, want nothing for refusals", got)
	}
}

// TestRunTrigger: the trigger a run's start names is in the live view and
// stored; its summary's trigger (with the delivery's end) replaces it, and
// GetRun and ListRuns return it. A trigger out of bounds is refused.
func TestRunTrigger(t *testing.T) {
	t.Parallel()
	bt := boardtest.Start(t, boardtest.Options{})
	runs := runsClient(bt, bt.OperatorToken("v", identity.RoleViewer))
	l, _ := triggersLink(t, bt, "desk")
	occurred := time.Now().Add(-time.Minute).UTC().Truncate(time.Microsecond)
	rt := &boardv1.RunTrigger{TriggerId: "nightly-report", Kind: boardv1.TriggerKind_TRIGGER_KIND_SCHEDULE,
		OccurrenceTime: timestamppb.New(occurred), Delivery: boardv1.DeliveryState_DELIVERY_STATE_PENDING}
	l.send(runEvent("r1", 1, &boardv1.RunEvent{Kind: &boardv1.RunEvent_Start{Start: &boardv1.RunStart{StartedBy: "trigger", Trigger: rt}}}))
	l.ping(1)
	boardtest.Eventually(t, 10*time.Second, "the run stored with its trigger", func() bool {
		res, err := runs.GetRun(t.Context(), &boardv1.GetRunRequest{Agent: "desk", Id: "r1"})
		return err == nil && res.GetRun().GetTrigger().GetTriggerId() == "nightly-report"
	})
	if g := getRun(t, runs, "desk", "r1").GetTrigger(); g.GetKind() != boardv1.TriggerKind_TRIGGER_KIND_SCHEDULE ||
		!g.GetOccurrenceTime().AsTime().Equal(occurred) || g.GetDelivery() != boardv1.DeliveryState_DELIVERY_STATE_PENDING {
		t.Errorf("live run's trigger = %v, want as its start said", g)
	}

	r := endedRun("r1", 1)
	r.StartedBy = "trigger"
	r.Trigger = &boardv1.RunTrigger{TriggerId: "nightly-report", Kind: boardv1.TriggerKind_TRIGGER_KIND_SCHEDULE,
		OccurrenceTime: timestamppb.New(occurred), Delivery: boardv1.DeliveryState_DELIVERY_STATE_FAILED, DeliveryAttempts: 5}
	l.stored(r, 2, 0)
	if g := getRun(t, runs, "desk", "r1").GetTrigger(); g.GetDelivery() != boardv1.DeliveryState_DELIVERY_STATE_FAILED || g.GetDeliveryAttempts() != 5 {
		t.Errorf("GetRun's trigger = %v, want the summary's: failed after 5 attempts", g)
	}
	// A summary that does not say keeps what the start said.
	l.send(runEvent("r2", 1, &boardv1.RunEvent{Kind: &boardv1.RunEvent_Start{Start: &boardv1.RunStart{StartedBy: "trigger", Trigger: rt}}}))
	l.stored(endedRun("r2", 1), 2, 0)
	res, err := runs.ListRuns(t.Context(), &boardv1.ListRunsRequest{Agent: "desk"})
	if err != nil {
		t.Fatal(err)
	}
	for _, run := range res.GetRuns() {
		if run.GetTrigger().GetTriggerId() != "nightly-report" {
			t.Errorf("ListRuns: %s's trigger = %v, want nightly-report", run.GetId(), run.GetTrigger())
		}
	}
	if len(res.GetRuns()) != 2 {
		t.Errorf("ListRuns: %d runs, want 2", len(res.GetRuns()))
	}

	bad := endedRun("r3", 1)
	bad.Trigger = &boardv1.RunTrigger{TriggerId: "x y", Kind: boardv1.TriggerKind_TRIGGER_KIND_SCHEDULE, OccurrenceTime: timestamppb.Now()}
	l.send(summaryOf(bad, 1, 0))
	if m := l.next(); !strings.Contains(m.GetError().GetMessage(), "run_summary.run.trigger.trigger_id") {
		t.Errorf("a bad trigger id: %v, want an error naming run_summary.run.trigger.trigger_id", m)
	}
	l.send(runEvent("r4", 1, &boardv1.RunEvent{Kind: &boardv1.RunEvent_Start{Start: &boardv1.RunStart{Trigger: &boardv1.RunTrigger{
		TriggerId: "t", Kind: 7, OccurrenceTime: timestamppb.Now()}}}}))
	if m := l.next(); !strings.Contains(m.GetError().GetMessage(), "run_event.start.trigger.kind") {
		t.Errorf("an unknown kind: %v, want an error naming run_event.start.trigger.kind", m)
	}
	l.ping(2)
}
