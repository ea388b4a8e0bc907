package board_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"connectrpc.com/connect/v2"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/durationpb"
	"google.golang.org/protobuf/types/known/structpb"
	"google.golang.org/protobuf/types/known/timestamppb"

	boardv1 "github.com/symphonix/symphonix/api/symphonix/board/v1"
	"github.com/symphonix/symphonix/api/symphonix/board/v1/boardv1connect"
	"github.com/symphonix/symphonix/board"
	"github.com/symphonix/symphonix/ent/rundetail"
	"github.com/symphonix/symphonix/identity"
	"github.com/symphonix/symphonix/internal/boardtest"
)

func runsClient(bt *boardtest.Board, token string) boardv1connect.RunServiceClient {
	return boardv1connect.NewRunServiceClient(bt.Client(token))
}

// runsLink opens a link for name announcing caps.
func runsLink(t *testing.T, bt *boardtest.Board, name string, caps ...string) *rawLink {
	t.Helper()
	l, _ := openLinkWith(t, bt, &boardv1.Hello{Name: name, Protocol: board.Protocol, Capabilities: caps})
	return l
}

func runEvent(id string, seq uint32, e *boardv1.RunEvent) *boardv1.LinkRequest {
	e.RunId, e.Seq, e.Time = id, seq, timestamppb.Now()
	return &boardv1.LinkRequest{Kind: &boardv1.LinkRequest_RunEvent{RunEvent: e}}
}

func startOf(id string, seq uint32, thread string) *boardv1.LinkRequest {
	return runEvent(id, seq, &boardv1.RunEvent{Kind: &boardv1.RunEvent_Start{Start: &boardv1.RunStart{
		Thread: thread, StartedBy: "chat", StartedByWho: "ann@example.com",
	}}})
}

func stepOf(id string, seq uint32, step int32, node string, outcome boardv1.StepOutcome) *boardv1.LinkRequest {
	st := &boardv1.RunStep{Seq: step, Node: node, Kind: "handler", Copy: -1, StartTime: timestamppb.Now(), Outcome: outcome}
	if outcome != boardv1.StepOutcome_STEP_OUTCOME_UNSPECIFIED {
		st.Duration = durationpb.New(time.Millisecond)
		st.Tokens = &boardv1.Tokens{Input: 10, Output: 5, Total: 15}
	}
	return runEvent(id, seq, &boardv1.RunEvent{Kind: &boardv1.RunEvent_Step{Step: st}})
}

func pauseOf(id string, seq uint32, node string) *boardv1.LinkRequest {
	return runEvent(id, seq, &boardv1.RunEvent{Kind: &boardv1.RunEvent_Pause{Pause: &boardv1.RunPause{
		Kind: boardv1.PauseKind_PAUSE_KIND_APPROVAL, Node: node,
	}}})
}

func resumeOf(id string, seq uint32) *boardv1.LinkRequest {
	return runEvent(id, seq, &boardv1.RunEvent{Kind: &boardv1.RunEvent_Resume{Resume: &boardv1.RunResume{}}})
}

// endedRun is a finished run of id with steps steps.
func endedRun(id string, steps int) *boardv1.Run {
	start := time.Now().Add(-time.Minute)
	r := &boardv1.Run{Id: id, Thread: "t-" + id, StartedBy: "chat", State: boardv1.RunState_RUN_STATE_FINISHED,
		StartTime: timestamppb.New(start), EndTime: timestamppb.New(start.Add(30 * time.Second)),
		Duration: durationpb.New(20 * time.Second), StepCount: int32(steps), Tokens: &boardv1.Tokens{Input: 100, Output: 50, Total: 150}}
	for i := range steps {
		r.Steps = append(r.Steps, &boardv1.RunStep{Seq: int32(i + 1), Node: fmt.Sprintf("n%d", i+1), Kind: "llm", Copy: -1,
			StartTime: timestamppb.New(start.Add(time.Duration(i) * time.Second)), Duration: durationpb.New(time.Second),
			Outcome: boardv1.StepOutcome_STEP_OUTCOME_OK})
	}
	return r
}

func summaryOf(r *boardv1.Run, seq, dropped uint32) *boardv1.LinkRequest {
	return &boardv1.LinkRequest{Kind: &boardv1.LinkRequest_RunSummary{RunSummary: &boardv1.RunSummary{Run: r, Seq: seq, Dropped: dropped}}}
}

// stored sends a summary and wants its run_stored.
func (l *rawLink) stored(r *boardv1.Run, seq, dropped uint32) {
	l.t.Helper()
	l.send(summaryOf(r, seq, dropped))
	m := l.next()
	if got := m.GetRunStored(); got.GetRunId() != r.GetId() || got.GetSeq() != seq {
		l.t.Fatalf("summary of %s seq %d: answered %v, want run_stored naming them", r.GetId(), seq, m)
	}
}

func getRun(t *testing.T, runs boardv1connect.RunServiceClient, agentName, id string) *boardv1.Run {
	t.Helper()
	res, err := runs.GetRun(t.Context(), &boardv1.GetRunRequest{Agent: agentName, Id: id})
	if err != nil {
		t.Fatalf("GetRun(%s, %s): %v", agentName, id, err)
	}
	return res.GetRun()
}

// TestRunCapabilities: run events need live-runs, summaries need runs;
// either without is refused with an Error of no request_id, counted, and
// the link stays up.
func TestRunCapabilities(t *testing.T) {
	t.Parallel()
	bt := boardtest.Start(t, boardtest.Options{})
	l := runsLink(t, bt, "plain", "health")
	l.send(startOf("r1", 1, ""))
	if m := l.next(); m.GetError().GetCode() != boardv1.LinkErrorCode_LINK_ERROR_CODE_FAILED_PRECONDITION ||
		m.GetError().GetRequestId() != "" || !strings.Contains(m.GetError().GetMessage(), "live-runs") {
		t.Fatalf("a run event without live-runs: %v, want failed_precondition naming live-runs", m)
	}
	l.send(summaryOf(endedRun("r1", 1), 2, 0))
	if m := l.next(); m.GetError().GetCode() != boardv1.LinkErrorCode_LINK_ERROR_CODE_FAILED_PRECONDITION ||
		m.GetError().GetRequestId() != "" || !strings.Contains(m.GetError().GetMessage(), "runs capability") {
		t.Fatalf("a summary without runs: %v, want failed_precondition naming runs", m)
	}
	l.ping(1)
	if n := bt.Board.RunEventProblems()["capability"]; n != 1 {
		t.Errorf("capability count %d, want 1", n)
	}
	// Only runs: a summary is stored, a run event is not taken.
	l2 := runsLink(t, bt, "summaries", "runs")
	l2.stored(endedRun("r2", 2), 3, 0)
	l2.send(startOf("r3", 1, ""))
	if m := l2.next(); m.GetError() == nil {
		t.Fatalf("a run event from an agent announcing only runs: %v, want an error", m)
	}
	l2.ping(1)
	runs := runsClient(bt, bt.OperatorToken("vic", identity.RoleViewer))
	if r := getRun(t, runs, "summaries", "r2"); r.GetState() != boardv1.RunState_RUN_STATE_FINISHED || len(r.GetSteps()) != 2 {
		t.Errorf("stored run %v, want finished with 2 steps", r)
	}
	if _, err := runs.GetRun(t.Context(), &boardv1.GetRunRequest{Agent: "summaries", Id: "r3"}); connect.CodeOf(err) != connect.CodeNotFound {
		t.Errorf("GetRun of a run only an event refused named: %v, want not_found", err)
	}
}

// TestRunsStored: a run's start is stored as running, its steps are kept
// live (never written one by one), its pause is stored, its summary
// replaces all of it with its steps and is answered run_stored, idempotent
// by seq; dropped summaries add up on the agent.
func TestRunsStored(t *testing.T) {
	t.Parallel()
	bt := boardtest.Start(t, boardtest.Options{})
	l := runsLink(t, bt, "desk", "runs", "live-runs")
	runs := runsClient(bt, bt.OperatorToken("vic", identity.RoleViewer))

	l.send(startOf("run-1", 1, "thread-a"))
	l.send(stepOf("run-1", 2, 1, "plan", boardv1.StepOutcome_STEP_OUTCOME_UNSPECIFIED))
	l.send(stepOf("run-1", 3, 1, "plan", boardv1.StepOutcome_STEP_OUTCOME_OK))
	l.send(stepOf("run-1", 4, 2, "act", boardv1.StepOutcome_STEP_OUTCOME_UNSPECIFIED))
	l.ping(1)
	var listed []*boardv1.Run
	boardtest.Eventually(t, 30*time.Second, "the started run listed", func() bool {
		res, err := runs.ListRuns(t.Context(), &boardv1.ListRunsRequest{Agent: "desk"})
		if err != nil {
			t.Fatal(err)
		}
		listed = res.GetRuns()
		return len(listed) == 1
	})
	if r := listed[0]; r.GetState() != boardv1.RunState_RUN_STATE_RUNNING || r.GetThread() != "thread-a" || r.GetStartedBy() != "chat" ||
		r.GetStepCount() != 2 || r.GetTokens().GetTotal() != 15 || len(r.GetSteps()) != 0 {
		t.Errorf("listed %v, want running on thread-a, 2 steps, 15 tokens, no steps listed", r)
	}
	r := getRun(t, runs, "desk", "run-1")
	if len(r.GetSteps()) != 2 || r.GetSteps()[0].GetOutcome() != boardv1.StepOutcome_STEP_OUTCOME_OK ||
		r.GetSteps()[1].GetNode() != "act" || r.GetSteps()[1].GetOutcome() != boardv1.StepOutcome_STEP_OUTCOME_UNSPECIFIED {
		t.Errorf("live steps %v, want plan ok, then act running", r.GetSteps())
	}
	if n, err := bt.Store.RunStep.Query().Count(t.Context()); err != nil || n != 0 {
		t.Errorf("steps in the store while the run runs: %d %v, want none", n, err)
	}

	// A pause is stored.
	l.send(pauseOf("run-1", 5, "act"))
	l.ping(2)
	boardtest.Eventually(t, 30*time.Second, "the pause stored", func() bool {
		row, err := bt.Store.Run.Query().Only(t.Context())
		return err == nil && row.State == "paused" && row.PausedAt == "act" && row.Pause == "approval"
	})

	// The summary: stored with its steps, answered.
	sum := endedRun("run-1", 3)
	sum.Thread, sum.Error = "thread-a", strings.Repeat("é", 1000)
	l.stored(sum, 7, 3)
	r = getRun(t, runs, "desk", "run-1")
	if r.GetState() != boardv1.RunState_RUN_STATE_FINISHED || len(r.GetSteps()) != 3 || r.GetSteps()[2].GetNode() != "n3" ||
		r.GetEndTime() == nil || r.GetTokens().GetTotal() != 150 || r.GetAgent() != "desk" {
		t.Errorf("after its summary: %v, want finished with its 3 steps and tokens", r)
	}
	if n := len(r.GetError()); n > 1024 || !strings.Contains(r.GetError(), "cut by the board") {
		t.Errorf("an error of 2,000 bytes kept as %d bytes (%q…), want cut to 1 KiB, saying so", n, r.GetError()[:min(20, n)])
	}
	// The same summary again, and an older one: answered, nothing changes,
	// dropped not counted again.
	l.stored(sum, 7, 3)
	older := endedRun("run-1", 1)
	older.State = boardv1.RunState_RUN_STATE_PAUSED
	l.stored(older, 6, 0)
	if r := getRun(t, runs, "desk", "run-1"); r.GetState() != boardv1.RunState_RUN_STATE_FINISHED || len(r.GetSteps()) != 3 {
		t.Errorf("after an older summary: %v, want still finished with 3 steps", r)
	}
	if n, _ := bt.Store.Run.Query().Count(t.Context()); n != 1 {
		t.Errorf("%d run rows, want 1", n)
	}
	if n, _ := bt.Store.RunDetail.Query().Where(rundetail.Run(1)).Count(t.Context()); n != 1 {
		t.Errorf("%d step details, want 1", n)
	}
	if n, _ := bt.Store.RunStep.Query().Count(t.Context()); n != 0 {
		t.Errorf("%d step rows, want none: steps are kept in one value", n)
	}
	if a := getAgent(t, bt.Agents(bt.OperatorToken("vic", identity.RoleViewer)), "desk"); a.GetRunsDropped() != 3 {
		t.Errorf("runs_dropped %d, want 3", a.GetRunsDropped())
	}
	// Late events of the ended run are dropped.
	l.send(stepOf("run-1", 8, 4, "late", boardv1.StepOutcome_STEP_OUTCOME_OK))
	l.ping(3)
	if bt.Board.RunEventProblems()["after_end"] != 1 {
		t.Errorf("problems %v, want one after_end", bt.Board.RunEventProblems())
	}
}

// TestRunSummaryBounds: a summary over the board's limits keeps the run:
// steps past 1,000 cut (steps_truncated), input past 64 KiB withheld; one
// the board cannot take (a bad id, no seq, a running state) is refused
// naming the field, and the link stays up.
func TestRunSummaryBounds(t *testing.T) {
	t.Parallel()
	bt := boardtest.Start(t, boardtest.Options{})
	l := runsLink(t, bt, "desk", "runs")
	runs := runsClient(bt, bt.OperatorToken("vic", identity.RoleViewer))
	big := endedRun("big", 1001)
	input, err := structpb.NewStruct(map[string]any{"text": strings.Repeat("x", 70<<10)})
	if err != nil {
		t.Fatal(err)
	}
	big.Input = input
	l.stored(big, 2, 0)
	r := getRun(t, runs, "desk", "big")
	if len(r.GetSteps()) != 1000 || !r.GetStepsTruncated() || r.GetInput() != nil || !strings.Contains(strings.Join(r.GetWithheld(), ","), "input") {
		t.Errorf("a summary of 1,001 steps and 70 KiB of input: %d steps, truncated %v, input %v, withheld %v; want 1,000, true, none, input",
			len(r.GetSteps()), r.GetStepsTruncated(), r.GetInput() != nil, r.GetWithheld())
	}
	for _, tc := range []struct {
		name  string
		run   *boardv1.Run
		seq   uint32
		field string
	}{
		{"a bad id", endedRun("no spaces", 1), 1, "run_summary.run.id"},
		{"an id too long", endedRun(strings.Repeat("a", 65), 1), 1, "run_summary.run.id"},
		{"no seq", endedRun("ok", 1), 0, "run_summary.seq"},
		{"running", func() *boardv1.Run { r := endedRun("ok", 1); r.State = boardv1.RunState_RUN_STATE_RUNNING; return r }(), 1, "run_summary.run.state"},
		{"a time far ahead", func() *boardv1.Run {
			r := endedRun("ok", 1)
			r.StartTime = timestamppb.New(time.Now().Add(48 * time.Hour))
			return r
		}(), 1, "run_summary.run.start_time"},
		{"a step without a seq", func() *boardv1.Run { r := endedRun("ok", 3); r.Steps[1].Seq = 0; return r }(), 1, "run_summary.run.steps[1].seq"},
		{"a step's unknown outcome", func() *boardv1.Run { r := endedRun("ok", 2); r.Steps[0].Outcome = 42; return r }(), 1, "run_summary.run.steps[0].outcome"},
	} {
		l.send(summaryOf(tc.run, tc.seq, 0))
		if m := l.next(); m.GetError().GetCode() != boardv1.LinkErrorCode_LINK_ERROR_CODE_INVALID_ARGUMENT ||
			!strings.HasPrefix(m.GetError().GetMessage(), tc.field+":") {
			t.Errorf("%s: %v, want invalid_argument naming %s", tc.name, m, tc.field)
		}
	}
	l.ping(1)
}

// TestRunEventProblems: an event for a run the board does not know (it
// restarted mid-run) makes the run, running, from what the event says;
// one seen already is dropped, a gap is taken and counted, one out of
// bounds is refused and counted, and past the link's rate events are
// dropped and counted; the link stays up through all of it.
func TestRunEventProblems(t *testing.T) {
	t.Parallel()
	bt := boardtest.Start(t, boardtest.Options{})
	l := runsLink(t, bt, "desk", "runs", "live-runs")
	runs := runsClient(bt, bt.OperatorToken("vic", identity.RoleViewer))

	l.send(stepOf("mid", 5, 3, "act", boardv1.StepOutcome_STEP_OUTCOME_OK))
	l.send(stepOf("mid", 5, 3, "again", boardv1.StepOutcome_STEP_OUTCOME_OK)) // seen
	l.send(stepOf("mid", 4, 2, "older", boardv1.StepOutcome_STEP_OUTCOME_OK)) // older
	l.send(stepOf("mid", 9, 4, "gap", boardv1.StepOutcome_STEP_OUTCOME_OK))   // a gap
	l.send(runEvent("bad id", 1, &boardv1.RunEvent{Kind: &boardv1.RunEvent_Resume{Resume: &boardv1.RunResume{}}}))
	if m := l.next(); m.GetError().GetCode() != boardv1.LinkErrorCode_LINK_ERROR_CODE_INVALID_ARGUMENT ||
		!strings.HasPrefix(m.GetError().GetMessage(), "run_event.run_id:") {
		t.Fatalf("a bad run id: %v, want invalid_argument naming run_event.run_id", m)
	}
	l.send(stepOf("mid", 10, 5, "paused", 42))
	if m := l.next(); m.GetError().GetCode() != boardv1.LinkErrorCode_LINK_ERROR_CODE_INVALID_ARGUMENT ||
		m.GetError().GetMessage() != "run_event.step.outcome: unknown value 42" {
		t.Fatalf("a step's unknown outcome: %v, want invalid_argument naming run_event.step.outcome", m)
	}
	l.ping(1)
	r := getRun(t, runs, "desk", "mid")
	if r.GetState() != boardv1.RunState_RUN_STATE_RUNNING || len(r.GetSteps()) != 2 || r.GetSteps()[0].GetNode() != "act" || r.GetSteps()[1].GetNode() != "gap" {
		t.Errorf("a run heard of mid-way: %v, want running with steps act and gap", r)
	}
	boardtest.Eventually(t, 30*time.Second, "the run heard of mid-way stored", func() bool {
		n, err := bt.Store.Run.Query().Count(t.Context())
		return err == nil && n == 1
	})
	p := bt.Board.RunEventProblems()
	if p["unknown_run"] != 1 || p["out_of_order"] != 2 || p["gap"] != 1 || p["invalid"] != 2 {
		t.Errorf("problems %v, want unknown_run 1, out_of_order 2, gap 1, invalid 2", p)
	}

	// Past the rate: dropped and counted, the link up.
	for i := range 700 {
		l.send(stepOf("mid", uint32(10+i), 5, "flood", boardv1.StepOutcome_STEP_OUTCOME_OK))
	}
	l.ping(2)
	if n := bt.Board.RunEventProblems()["rate"]; n == 0 {
		t.Errorf("700 events at once: none dropped for the rate, want some")
	}
}

// TestRunEvents: the welcome says the board reads run_events; a batch of
// events is taken in order as if each had come alone, an event in it that
// is out of bounds is refused naming its place and the rest are taken, and
// a batch of none or of too many is refused whole; the link stays up.
func TestRunEvents(t *testing.T) {
	t.Parallel()
	bt := boardtest.Start(t, boardtest.Options{})
	l, welcome := openLinkWith(t, bt, &boardv1.Hello{Name: "desk", Protocol: board.Protocol, Capabilities: []string{"runs", "live-runs"}})
	if !slices.Contains(welcome.GetAccepts(), "run_events") {
		t.Fatalf("welcome accepts %q, want run_events", welcome.GetAccepts())
	}
	runs := runsClient(bt, bt.OperatorToken("vic", identity.RoleViewer))
	batch := func(reqs ...*boardv1.LinkRequest) *boardv1.LinkRequest {
		e := &boardv1.RunEvents{}
		for _, r := range reqs {
			e.Events = append(e.Events, r.GetRunEvent())
		}
		return &boardv1.LinkRequest{Kind: &boardv1.LinkRequest_RunEvents{RunEvents: e}}
	}

	l.send(batch(
		startOf("r1", 1, "t1"),
		stepOf("r1", 2, 1, "look", boardv1.StepOutcome_STEP_OUTCOME_UNSPECIFIED),
		stepOf("r1", 3, 1, "look", boardv1.StepOutcome_STEP_OUTCOME_OK),
		stepOf("r1", 4, 2, "act", boardv1.StepOutcome_STEP_OUTCOME_UNSPECIFIED),
	))
	l.ping(1)
	r := getRun(t, runs, "desk", "r1")
	if r.GetThread() != "t1" || len(r.GetSteps()) != 2 || r.GetSteps()[0].GetOutcome() != boardv1.StepOutcome_STEP_OUTCOME_OK ||
		r.GetSteps()[1].GetNode() != "act" || r.GetTokens().GetTotal() != 15 {
		t.Fatalf("after a batch of four: %v, want thread t1, look done and act entered, 15 tokens", r)
	}

	bad := stepOf("bad id", 1, 1, "x", boardv1.StepOutcome_STEP_OUTCOME_OK)
	l.send(batch(stepOf("r1", 5, 2, "act", boardv1.StepOutcome_STEP_OUTCOME_OK), bad, stepOf("r1", 6, 3, "tell", boardv1.StepOutcome_STEP_OUTCOME_OK)))
	if m := l.next(); m.GetError().GetCode() != boardv1.LinkErrorCode_LINK_ERROR_CODE_INVALID_ARGUMENT ||
		!strings.HasPrefix(m.GetError().GetMessage(), "run_events.events[1].run_id:") {
		t.Fatalf("a bad event in a batch: %v, want invalid_argument naming run_events.events[1].run_id", m)
	}
	l.ping(2)
	if r := getRun(t, runs, "desk", "r1"); len(r.GetSteps()) != 3 || r.GetSteps()[2].GetNode() != "tell" {
		t.Errorf("the good events around a bad one: %v, want steps look, act, tell", r.GetSteps())
	}

	for _, n := range []int{0, 65} {
		reqs := make([]*boardv1.LinkRequest, n)
		for i := range reqs {
			reqs[i] = stepOf("r1", uint32(7+i), 4, "more", boardv1.StepOutcome_STEP_OUTCOME_OK)
		}
		l.send(batch(reqs...))
		if m := l.next(); m.GetError().GetCode() != boardv1.LinkErrorCode_LINK_ERROR_CODE_INVALID_ARGUMENT ||
			m.GetError().GetMessage() != fmt.Sprintf("run_events.events: %d events, want 1 to 64", n) {
			t.Fatalf("a batch of %d: %v, want invalid_argument naming run_events.events", n, m)
		}
	}
	l.ping(3)
	if r := getRun(t, runs, "desk", "r1"); len(r.GetSteps()) != 3 {
		t.Errorf("after batches refused whole: %d steps, want 3", len(r.GetSteps()))
	}
	if p := bt.Board.RunEventProblems(); p["invalid"] != 3 {
		t.Errorf("problems %v, want invalid 3", p)
	}

	// Without live-runs, a batch is refused once, not once an event.
	other := runsLink(t, bt, "quiet", "runs")
	other.send(batch(startOf("q1", 1, ""), stepOf("q1", 2, 1, "x", boardv1.StepOutcome_STEP_OUTCOME_OK)))
	if m := other.next(); m.GetError().GetCode() != boardv1.LinkErrorCode_LINK_ERROR_CODE_FAILED_PRECONDITION ||
		!strings.HasPrefix(m.GetError().GetMessage(), "run_events: ") {
		t.Fatalf("a batch without live-runs: %v, want failed_precondition naming run_events", m)
	}
	other.ping(1)
}

// TestAgentInputs: a hello's inputs are kept on the agent and shown by
// GetAgent, ListAgents and WatchAgents; inputs out of bounds refuse the
// hello naming the field.
func TestAgentInputs(t *testing.T) {
	t.Parallel()
	bt := boardtest.Start(t, boardtest.Options{})
	agents := bt.Agents(bt.OperatorToken("vic", identity.RoleViewer))
	watch, err := agents.WatchAgents(t.Context(), &boardv1.WatchAgentsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	defer watch.Close()
	in := []*boardv1.FlowInput{{Name: "order_id", Type: "string", Description: "the order"}, {Name: "amount", Type: "number"}}
	openLinkWith(t, bt, &boardv1.Hello{Name: "desk", Protocol: board.Protocol, Inputs: in})
	want := func(where string, a *boardv1.Agent) {
		t.Helper()
		got := a.GetInputs()
		if len(got) != 2 || got[0].GetName() != "order_id" || got[0].GetType() != "string" || got[0].GetDescription() != "the order" ||
			got[1].GetName() != "amount" || got[1].GetType() != "number" {
			t.Errorf("%s: inputs %v, want order_id string, amount number", where, got)
		}
	}
	want("GetAgent", getAgent(t, agents, "desk"))
	res, err := agents.ListAgents(t.Context(), &boardv1.ListAgentsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	want("ListAgents", res.GetAgents()[0])
	for {
		m, err := watch.Receive()
		if err != nil {
			t.Fatal(err)
		}
		if m.GetAgent().GetName() == "desk" {
			want("WatchAgents", m.GetAgent())
			break
		}
	}

	for _, tc := range []struct {
		inputs []*boardv1.FlowInput
		field  string
	}{
		{[]*boardv1.FlowInput{{Name: "x", Type: "date"}}, "inputs[0].type"},
		{[]*boardv1.FlowInput{{Name: ""}}, "inputs[0].name"},
		{[]*boardv1.FlowInput{{Name: "a"}, {Name: "a"}}, "inputs[1].name"},
		{[]*boardv1.FlowInput{{Name: "a b"}}, "inputs[0].name"},
		{make([]*boardv1.FlowInput, 65), "inputs: 65"},
	} {
		link := boardv1connect.NewAgentLinkServiceClient(bt.Client(bt.AgentToken("bad")))
		s, err := link.Link(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		if err := s.Send(hello(&boardv1.Hello{Name: "bad", Protocol: board.Protocol, Inputs: tc.inputs})); err != nil {
			t.Fatal(err)
		}
		_, err = s.Receive()
		if connect.CodeOf(err) != connect.CodeInvalidArgument || !strings.Contains(err.Error(), tc.field) {
			t.Errorf("inputs %v: %v, want invalid_argument naming %s", tc.inputs, err, tc.field)
		}
		_ = s.Close()
	}
}

// TestApprovalRunID: a raise's run_id is kept and shown with the
// approval; a bad one is refused naming it; GetRun gives a paused run the
// approval raised for it when the agent did not say which.
func TestApprovalRunID(t *testing.T) {
	t.Parallel()
	bt := boardtest.Start(t, boardtest.Options{})
	l := runsLink(t, bt, "desk", "runs", "live-runs")
	viewer := bt.OperatorToken("vic", identity.RoleViewer)
	raised := l.raised(&boardv1.Raise{Run: "waiting-1", Node: "approve", Show: `{"a":1}`, Digest: "sha256:" + strings.Repeat("a", 64), RunId: "run-7"})
	res, err := approvalsClient(bt, viewer).GetApproval(t.Context(), &boardv1.GetApprovalRequest{Id: raised.GetApprovalId()})
	if err != nil {
		t.Fatal(err)
	}
	if res.GetApproval().GetRunId() != "run-7" {
		t.Errorf("approval run_id %q, want run-7", res.GetApproval().GetRunId())
	}
	if m := l.raise(&boardv1.Raise{Run: "waiting-2", Node: "approve", Show: `{}`, Digest: "sha256:" + strings.Repeat("b", 64), RunId: "no/slash"}); m.GetError().GetCode() != boardv1.LinkErrorCode_LINK_ERROR_CODE_INVALID_ARGUMENT ||
		!strings.HasPrefix(m.GetError().GetMessage(), "raise.run_id:") {
		t.Errorf("a bad run_id: %v, want invalid_argument naming raise.run_id", m)
	}

	paused := endedRun("run-7", 2)
	paused.State, paused.EndTime, paused.Pause, paused.PausedAt = boardv1.RunState_RUN_STATE_PAUSED, nil, boardv1.PauseKind_PAUSE_KIND_APPROVAL, "approve"
	paused.Steps[1].Node, paused.Steps[1].Outcome, paused.Steps[1].Pause = "approve", boardv1.StepOutcome_STEP_OUTCOME_PAUSED, boardv1.PauseKind_PAUSE_KIND_APPROVAL
	l.stored(paused, 4, 0)
	r := getRun(t, runsClient(bt, viewer), "desk", "run-7")
	if r.GetApprovalId() != raised.GetApprovalId() || r.GetSteps()[1].GetApprovalId() != raised.GetApprovalId() {
		t.Errorf("paused run: approval %q, step's %q; want both %q", r.GetApprovalId(), r.GetSteps()[1].GetApprovalId(), raised.GetApprovalId())
	}
}

// TestListRuns: newest first, filtered by agent, state, thread (which
// needs agent) and start time, a page at a time; a bad page_size or
// filter is refused naming the field; GetRun of no run is not_found.
func TestListRuns(t *testing.T) {
	t.Parallel()
	bt := boardtest.Start(t, boardtest.Options{})
	runs := runsClient(bt, bt.OperatorToken("vic", identity.RoleViewer))
	a := runsLink(t, bt, "alpha", "runs")
	b := runsLink(t, bt, "beta", "runs")
	base := time.Now().Add(-time.Hour).Truncate(time.Second)
	for i := range 7 {
		r := endedRun(fmt.Sprintf("a%d", i), 1)
		r.StartTime, r.EndTime = timestamppb.New(base.Add(time.Duration(i)*time.Minute)), timestamppb.New(base.Add(time.Duration(i)*time.Minute+time.Second))
		if i%2 == 1 {
			r.State = boardv1.RunState_RUN_STATE_FAILED
		}
		a.stored(r, 1, 0)
	}
	rb := endedRun("b0", 1)
	rb.Thread = "shared"
	b.stored(rb, 1, 0)

	list := func(req *boardv1.ListRunsRequest) []string {
		t.Helper()
		var ids []string
		for {
			res, err := runs.ListRuns(t.Context(), req)
			if err != nil {
				t.Fatalf("ListRuns(%v): %v", req, err)
			}
			for _, r := range res.GetRuns() {
				ids = append(ids, r.GetId())
			}
			if req.PageToken = res.GetNextPageToken(); req.PageToken == "" {
				return ids
			}
		}
	}
	if got := strings.Join(list(&boardv1.ListRunsRequest{Agent: "alpha", PageSize: 3}), " "); got != "a6 a5 a4 a3 a2 a1 a0" {
		t.Errorf("alpha's runs, 3 a page: %s, want a6 … a0", got)
	}
	if got := strings.Join(list(&boardv1.ListRunsRequest{Agent: "alpha", State: boardv1.RunState_RUN_STATE_FAILED, PageSize: 2}), " "); got != "a5 a3 a1" {
		t.Errorf("alpha's failed runs: %s, want a5 a3 a1", got)
	}
	if got := strings.Join(list(&boardv1.ListRunsRequest{Agent: "alpha",
		StartAfter: timestamppb.New(base.Add(2 * time.Minute)), StartBefore: timestamppb.New(base.Add(5 * time.Minute))}), " "); got != "a4 a3 a2" {
		t.Errorf("alpha's runs from minute 2 to before 5: %s, want a4 a3 a2", got)
	}
	if got := strings.Join(list(&boardv1.ListRunsRequest{Agent: "beta", Thread: "shared"}), " "); got != "b0" {
		t.Errorf("beta's runs of thread shared: %s, want b0", got)
	}
	if got := len(list(&boardv1.ListRunsRequest{})); got != 8 {
		t.Errorf("every run: %d, want 8", got)
	}
	first, err := runs.ListRuns(t.Context(), &boardv1.ListRunsRequest{Agent: "alpha", PageSize: 2})
	if err != nil {
		t.Fatal(err)
	}
	for name, tc := range map[string]struct {
		req   *boardv1.ListRunsRequest
		field string
	}{
		"negative page":        {&boardv1.ListRunsRequest{PageSize: -1}, "page_size"},
		"thread without agent": {&boardv1.ListRunsRequest{Thread: "shared"}, "thread"},
		"unknown state":        {&boardv1.ListRunsRequest{State: 42}, "state"},
		"another list's token": {&boardv1.ListRunsRequest{Agent: "beta", PageToken: first.GetNextPageToken()}, "page_token"},
	} {
		_, err := runs.ListRuns(t.Context(), tc.req)
		var ce *connect.Error
		if !errors.As(err, &ce) || ce.Code() != connect.CodeInvalidArgument || !strings.HasPrefix(ce.Message(), tc.field) {
			t.Errorf("%s: %v, want invalid_argument naming %s", name, err, tc.field)
		}
	}
	if res, err := runs.ListRuns(t.Context(), &boardv1.ListRunsRequest{PageSize: 1000}); err != nil || len(res.GetRuns()) != 8 {
		t.Errorf("page_size 1,000: %d runs, %v; want all 8 (read as 500)", len(res.GetRuns()), err)
	}
	if _, err := runs.GetRun(t.Context(), &boardv1.GetRunRequest{Agent: "alpha", Id: "none"}); connect.CodeOf(err) != connect.CodeNotFound {
		t.Errorf("GetRun of no run: %v, want not_found", err)
	}
	if _, err := runs.GetRun(t.Context(), &boardv1.GetRunRequest{Agent: "alpha"}); connect.CodeOf(err) != connect.CodeInvalidArgument {
		t.Errorf("GetRun without id: %v, want invalid_argument", err)
	}
}

// TestWatchRuns: a watch sends the runs running or paused, synced, then
// each start, step, pause, resume and end as it happens, only the agent's
// or run's asked for, and heartbeats while nothing happens.
func TestWatchRuns(t *testing.T) {
	t.Parallel()
	bt := boardtest.Start(t, boardtest.Options{WatchHeartbeat: 500 * time.Millisecond})
	runs := runsClient(bt, bt.OperatorToken("vic", identity.RoleViewer))
	l := runsLink(t, bt, "desk", "runs", "live-runs")
	other := runsLink(t, bt, "other", "runs", "live-runs")
	l.send(startOf("before", 1, ""))
	l.ping(1)

	all, err := runs.WatchRuns(t.Context(), &boardv1.WatchRunsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	defer all.Close()
	mine, err := runs.WatchRuns(t.Context(), &boardv1.WatchRunsRequest{Agent: "desk", Run: "r1"})
	if err != nil {
		t.Fatal(err)
	}
	defer mine.Close()
	next := func(s boardv1connect.RunServiceWatchRunsClientStream) *boardv1.WatchRunsResponse {
		t.Helper()
		for {
			m, err := s.Receive()
			if err != nil {
				t.Fatalf("watch: %v", err)
			}
			if m.GetKind() != boardv1.RunEventKind_RUN_EVENT_KIND_HEARTBEAT {
				return m
			}
		}
	}
	if m := next(all); m.GetKind() != boardv1.RunEventKind_RUN_EVENT_KIND_SNAPSHOT || m.GetRun().GetId() != "before" {
		t.Fatalf("first: %v, want the snapshot of before", m)
	}
	if m := next(all); m.GetKind() != boardv1.RunEventKind_RUN_EVENT_KIND_SYNCED {
		t.Fatalf("then: %v, want synced", m)
	}
	if m := next(mine); m.GetKind() != boardv1.RunEventKind_RUN_EVENT_KIND_SYNCED {
		t.Fatalf("r1's watch first: %v, want synced", m)
	}
	other.send(startOf("r1", 1, "")) // another agent's r1: not mine
	l.send(startOf("r1", 1, "t"))
	l.send(stepOf("r1", 2, 1, "plan", boardv1.StepOutcome_STEP_OUTCOME_OK))
	l.send(pauseOf("r1", 3, "approve"))
	l.send(resumeOf("r1", 4))
	done := endedRun("r1", 2)
	l.stored(done, 5, 0)
	want := []boardv1.RunEventKind{boardv1.RunEventKind_RUN_EVENT_KIND_STARTED, boardv1.RunEventKind_RUN_EVENT_KIND_STEP,
		boardv1.RunEventKind_RUN_EVENT_KIND_PAUSED, boardv1.RunEventKind_RUN_EVENT_KIND_RESUMED, boardv1.RunEventKind_RUN_EVENT_KIND_ENDED}
	for i, k := range want {
		m := next(mine)
		if m.GetKind() != k || m.GetRun().GetAgent() != "desk" || m.GetRun().GetId() != "r1" || len(m.GetRun().GetSteps()) != 0 {
			t.Fatalf("r1's watch, change %d: %v, want %s of desk's r1 without steps", i, m, k)
		}
		if k == boardv1.RunEventKind_RUN_EVENT_KIND_STEP && m.GetStep().GetNode() != "plan" {
			t.Errorf("the step: %v, want plan", m.GetStep())
		}
		if k == boardv1.RunEventKind_RUN_EVENT_KIND_ENDED && m.GetRun().GetState() != boardv1.RunState_RUN_STATE_FINISHED {
			t.Errorf("ended: %v, want finished", m.GetRun())
		}
	}
	// All of them, the other agent's too.
	agents := map[string]bool{}
	for len(agents) < 2 {
		agents[next(all).GetRun().GetAgent()] = true
	}
	// Heartbeats while nothing happens.
	m, err := mine.Receive()
	if err != nil || m.GetKind() != boardv1.RunEventKind_RUN_EVENT_KIND_HEARTBEAT {
		t.Errorf("with nothing happening: %v %v, want a heartbeat", m, err)
	}
	s, err := runs.WatchRuns(t.Context(), &boardv1.WatchRunsRequest{Run: "r1"})
	if err == nil {
		_, err = s.Receive()
	}
	if connect.CodeOf(err) != connect.CodeInvalidArgument {
		t.Errorf("a run without its agent: %v, want invalid_argument", err)
	}
}

// TestWatchRunsFallsBehind: a watcher that does not read is dropped with
// resource_exhausted once 256 changes wait for it, and one watching
// another agent is not.
func TestWatchRunsFallsBehind(t *testing.T) {
	t.Parallel()
	bt := boardtest.Start(t, boardtest.Options{})
	slow := bt.Board.SlowRunWatcherForTest(t, "")
	elsewhere := bt.Board.SlowRunWatcherForTest(t, "quiet")
	l := runsLink(t, bt, "desk", "runs", "live-runs")
	l.send(startOf("r", 1, ""))
	for i := range board.WatcherBufferForTest + 1 {
		l.send(stepOf("r", uint32(i+2), int32(i+1), "n", boardv1.StepOutcome_STEP_OUTCOME_OK))
	}
	l.ping(1)
	if !slow() {
		t.Errorf("a watcher %d changes behind was not dropped", board.WatcherBufferForTest+2)
	}
	if elsewhere() {
		t.Errorf("a watcher of another agent was dropped")
	}
}

// TestRunRetention: runs past the retention — by their end, or by their
// start for one that never ended — are deleted with their steps when the
// board starts (and every hour), by the board's clock; the others stay.
func TestRunRetention(t *testing.T) {
	t.Parallel()
	var ahead atomic.Int64
	bt := boardtest.Start(t, boardtest.Options{Now: func() time.Time { return time.Now().Add(time.Duration(ahead.Load())) }})
	l := runsLink(t, bt, "desk", "runs", "live-runs")
	day := 24 * time.Hour
	at := func(r *boardv1.Run, ago time.Duration) *boardv1.Run {
		end := time.Now().Add(-ago)
		r.StartTime, r.EndTime = timestamppb.New(end.Add(-time.Minute)), timestamppb.New(end)
		return r
	}
	l.stored(at(endedRun("ten-days", 2), 10*day), 3, 0)
	l.stored(at(endedRun("one-day", 2), day), 3, 0)
	l.send(startOf("running", 1, ""))
	l.ping(1)
	runs := runsClient(bt, bt.OperatorToken("vic", identity.RoleViewer))
	// An error is no ids: the first call after a restart may go out on
	// the connection the old board's end closed.
	ids := func() string {
		t.Helper()
		res, err := runs.ListRuns(t.Context(), &boardv1.ListRunsRequest{})
		if err != nil {
			t.Logf("ListRuns: %v", err)
			return "(failed)"
		}
		var out []string
		for _, r := range res.GetRuns() {
			out = append(out, r.GetId())
		}
		slices.Sort(out)
		return strings.Join(out, " ")
	}
	boardtest.Eventually(t, 30*time.Second, "the running run stored", func() bool { return ids() == "one-day running ten-days" })

	ahead.Store(int64(25 * day)) // the cutoff is 5 days ago
	bt.Restart()
	boardtest.Eventually(t, 60*time.Second, "the run ended 10 days ago swept", func() bool { return ids() == "one-day running" })
	if n, err := bt.Store.RunDetail.Query().Count(t.Context()); err != nil || n != 1 {
		t.Errorf("%d step details left, %v; want one-day's", n, err)
	}
	ahead.Store(int64(31 * day))
	bt.Restart()
	boardtest.Eventually(t, 60*time.Second, "every run swept", func() bool { return ids() == "" })
	if n, err := bt.Store.RunDetail.Query().Count(t.Context()); err != nil || n != 0 {
		t.Errorf("%d step details left, %v; want none", n, err)
	}
}

// TestWatchRunsApprovalNamed: a run paused for an approval is told to
// watchers when it pauses, and again when its summary names the approval,
// which the agent learns only once the board answers the raise.
func TestWatchRunsApprovalNamed(t *testing.T) {
	t.Parallel()
	bt := boardtest.Start(t, boardtest.Options{})
	runs := runsClient(bt, bt.OperatorToken("vic", identity.RoleViewer))
	l := runsLink(t, bt, "desk", "runs", "live-runs")
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second) // a change that never comes fails the test
	defer cancel()
	w, err := runs.WatchRuns(ctx, &boardv1.WatchRunsRequest{Agent: "desk", Run: "r1"})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	next := func() *boardv1.WatchRunsResponse {
		t.Helper()
		for {
			m, err := w.Receive()
			if err != nil {
				t.Fatalf("watch: %v", err)
			}
			if k := m.GetKind(); k != boardv1.RunEventKind_RUN_EVENT_KIND_HEARTBEAT && k != boardv1.RunEventKind_RUN_EVENT_KIND_SYNCED {
				return m
			}
		}
	}
	l.send(startOf("r1", 1, "t"))
	l.send(pauseOf("r1", 2, "approve"))
	for _, k := range []boardv1.RunEventKind{boardv1.RunEventKind_RUN_EVENT_KIND_STARTED, boardv1.RunEventKind_RUN_EVENT_KIND_PAUSED} {
		if m := next(); m.GetKind() != k {
			t.Fatalf("watch: %v, want %s", m, k)
		}
	}
	paused := &boardv1.Run{Id: "r1", Thread: "t", StartedBy: "chat", State: boardv1.RunState_RUN_STATE_PAUSED,
		StartTime: timestamppb.New(time.Now().Add(-time.Second)), Pause: boardv1.PauseKind_PAUSE_KIND_APPROVAL, PausedAt: "approve"}
	l.stored(paused, 3, 0) // paused, as the live view has it: nothing new
	paused.ApprovalId = "ap-1"
	l.stored(paused, 4, 0)
	m := next()
	if m.GetKind() != boardv1.RunEventKind_RUN_EVENT_KIND_PAUSED || m.GetRun().GetApprovalId() != "ap-1" {
		t.Fatalf("watch after the summary naming the approval: %v, want paused with approval ap-1", m)
	}
}

// TestRunStepsOfAnOlderBoard: a run whose steps an older board kept as
// rows of their own is read with them; its next summary's steps take
// their place; the sweep deletes the rows with their run.
func TestRunStepsOfAnOlderBoard(t *testing.T) {
	t.Parallel()
	var ahead atomic.Int64
	bt := boardtest.Start(t, boardtest.Options{Now: func() time.Time { return time.Now().Add(time.Duration(ahead.Load())) }})
	l := runsLink(t, bt, "desk", "runs", "live-runs")
	old := endedRun("old", 2)
	l.stored(old, 3, 0)
	ctx := t.Context()
	row, err := bt.Store.Run.Query().Only(ctx)
	if err != nil {
		t.Fatal(err)
	}
	// As an older board left it: no detail, a row per step.
	if _, err := bt.Store.RunDetail.Delete().Exec(ctx); err != nil {
		t.Fatal(err)
	}
	for i, node := range []string{"fetch", "decide", "answer"} {
		err := bt.Store.RunStep.Create().SetRun(row.ID).SetSeq(i + 1).SetNode(node).SetKind("llm").
			SetOutcome("ok").SetDurationNs(int64(time.Second)).SetTokensTotal(10).Exec(ctx)
		if err != nil {
			t.Fatal(err)
		}
	}
	runs := runsClient(bt, bt.OperatorToken("vic", identity.RoleViewer))
	r := getRun(t, runs, "desk", "old")
	var nodes []string
	for _, st := range r.GetSteps() {
		nodes = append(nodes, st.GetNode())
	}
	if strings.Join(nodes, ",") != "fetch,decide,answer" || r.GetSteps()[2].GetTokens().GetTotal() != 10 {
		t.Errorf("steps of the older board's rows: %v, want fetch, decide, answer", r.GetSteps())
	}

	newer := endedRun("old", 4)
	l.stored(newer, 4, 0)
	if r := getRun(t, runs, "desk", "old"); len(r.GetSteps()) != 4 || r.GetSteps()[0].GetNode() != "n1" {
		t.Errorf("after a new summary: %v, want its 4 steps", r.GetSteps())
	}

	ahead.Store(int64(40 * 24 * time.Hour))
	bt.Restart()
	boardtest.Eventually(t, 60*time.Second, "the run swept", func() bool {
		n, err := bt.Store.Run.Query().Count(ctx)
		return err == nil && n == 0
	})
	if n, err := bt.Store.RunStep.Query().Count(ctx); err != nil || n != 0 {
		t.Errorf("%d step rows left, %v; want none", n, err)
	}
	if n, err := bt.Store.RunDetail.Query().Count(ctx); err != nil || n != 0 {
		t.Errorf("%d step details left, %v; want none", n, err)
	}
}

// TestRunStepsPostgres: on PostgreSQL, each run's latest summary's steps
// are what the board reads back, summaries of many runs written together.
func TestRunStepsPostgres(t *testing.T) {
	t.Parallel()
	bt := boardtest.Start(t, boardtest.Options{DSN: boardtest.PostgresDSN(t)})
	l := runsLink(t, bt, "desk", "runs", "live-runs")
	for i := range 5 {
		l.send(summaryOf(endedRun(fmt.Sprintf("run-%d", i), i+1), 3, 0))
	}
	for range 5 {
		if m := l.next(); m.GetRunStored() == nil {
			t.Fatalf("answered %v, want run_stored", m)
		}
	}
	l.stored(endedRun("run-0", 7), 4, 0)
	runs := runsClient(bt, bt.OperatorToken("vic", identity.RoleViewer))
	for i := range 5 {
		want := i + 1
		if i == 0 {
			want = 7
		}
		if r := getRun(t, runs, "desk", fmt.Sprintf("run-%d", i)); len(r.GetSteps()) != want {
			t.Errorf("run-%d: %d steps, want %d", i, len(r.GetSteps()), want)
		}
	}
}

// TestRunWritesBatched: one batch of run writes — starts of runs the store
// does not hold (created in one insert), a pause and a summary of one of
// them, a summary of a run never started, a write older than the row —
// leaves each run in memory as the store holds it, on SQLite and on
// PostgreSQL; a summary without a trigger or a delegation keeps its
// start's, and a second batch updates the rows.
func TestRunWritesBatched(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		dsn  func(t testing.TB) string
	}{
		{"sqlite", func(testing.TB) string { return "" }},
		{"postgres", boardtest.PostgresDSN},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			bt := boardtest.Start(t, boardtest.Options{DSN: tc.dsn(t)})
			now := time.Now()
			start := func(id string) *boardv1.Run {
				return &boardv1.Run{Id: id, Agent: "desk", Thread: "t-" + id, StartedBy: "chat", StartedByWho: "ann@example.com",
					State: boardv1.RunState_RUN_STATE_RUNNING, StartTime: timestamppb.New(now),
					Trigger: &boardv1.RunTrigger{TriggerId: "nightly", Kind: boardv1.TriggerKind_TRIGGER_KIND_SCHEDULE,
						OccurrenceTime: timestamppb.New(now)},
					Delegation: &boardv1.RunDelegation{ParentRunId: "p", ParentNode: "n", InvocationId: "i-" + id, Agent: "desk",
						Chain: []string{"desk"}}}
			}
			paused := start("run-a")
			paused.State, paused.Pause, paused.PausedAt = boardv1.RunState_RUN_STATE_PAUSED, boardv1.PauseKind_PAUSE_KIND_APPROVAL, "act"
			sumA := endedRun("run-a", 3)
			sumA.Withheld = []string{"input"}
			sumA.Input, _ = structpb.NewStruct(map[string]any{"q": "why"})
			sumC := endedRun("run-c", 2)
			ws := []board.RunWriteForTest{
				{Agent: "desk", Run: start("run-a"), Seq: 1, Start: true},
				{Agent: "desk", Run: start("run-b"), Seq: 1, Start: true},
				{Agent: "desk", Run: paused, Seq: 3},
				{Agent: "desk", Run: sumC, Seq: 5, Summary: true},
				{Agent: "desk", Run: sumA, Seq: 9, Summary: true},
				{Agent: "desk", Run: start("run-a"), Seq: 2, Start: true}, // older than the row: not kept
				{Agent: "other", Run: start("run-a"), Seq: 1, Start: true},
			}
			kept, held, read, err := bt.Board.WriteRunsForTest(ws)
			if err != nil {
				t.Fatal(err)
			}
			if want := []bool{true, true, true, true, true, false, true}; !slices.Equal(kept, want) {
				t.Errorf("kept %v, want %v", kept, want)
			}
			for i := range ws {
				if !proto.Equal(held[i], read[i]) {
					t.Errorf("write %d: held %v, stored %v", i, held[i], read[i])
				}
			}
			a := read[4]
			if a.GetState() != boardv1.RunState_RUN_STATE_FINISHED || a.GetTrigger().GetTriggerId() != "nightly" ||
				a.GetDelegation().GetInvocationId() != "i-run-a" || a.GetPause() != boardv1.PauseKind_PAUSE_KIND_UNSPECIFIED ||
				a.GetEndTime() == nil || a.GetTokens().GetTotal() != 150 || !slices.Equal(a.GetWithheld(), []string{"input"}) ||
				a.GetInput().GetFields()["q"].GetStringValue() != "why" {
				t.Errorf("run-a after its summary: %v, want finished, its start's trigger and delegation kept", a)
			}
			if c := read[3]; c.GetState() != boardv1.RunState_RUN_STATE_FINISHED || c.GetThread() != "t-run-c" || c.GetStepCount() != 2 {
				t.Errorf("run-c, created from its summary: %v", c)
			}
			if n, err := bt.Store.Run.Query().Count(t.Context()); err != nil || n != 4 {
				t.Errorf("%d rows (%v), want 4", n, err)
			}

			// A second batch: the rows are updated in place; a summary
			// without its input clears it.
			sumB := endedRun("run-b", 1)
			sumB.Trigger = nil
			again := endedRun("run-a", 4)
			ws = []board.RunWriteForTest{
				{Agent: "desk", Run: sumB, Seq: 4, Summary: true},
				{Agent: "desk", Run: again, Seq: 10, Summary: true},
				{Agent: "desk", Run: sumC, Seq: 5, Summary: true}, // again: not kept
			}
			kept, held, read, err = bt.Board.WriteRunsForTest(ws)
			if err != nil {
				t.Fatal(err)
			}
			if want := []bool{true, true, false}; !slices.Equal(kept, want) {
				t.Errorf("second batch kept %v, want %v", kept, want)
			}
			for i := range ws {
				if !proto.Equal(held[i], read[i]) {
					t.Errorf("second batch, write %d: held %v, stored %v", i, held[i], read[i])
				}
			}
			if a := read[1]; a.GetStepCount() != 4 || a.GetInput() != nil || a.GetWithheld() != nil || a.GetTrigger() == nil {
				t.Errorf("run-a after a second summary: %v, want 4 steps, no input, its trigger kept", a)
			}
			if n, err := bt.Store.RunDetail.Query().Count(t.Context()); err != nil || n != 3 {
				t.Errorf("%d step details (%v), want 3", n, err)
			}
		})
	}
}
