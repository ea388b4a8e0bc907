package agentlink_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"google.golang.org/protobuf/types/known/structpb"

	"github.com/symphonix/symphonix/agentlink"
	boardv1 "github.com/symphonix/symphonix/api/symphonix/board/v1"
	"github.com/symphonix/symphonix/api/symphonix/board/v1/boardv1connect"
	"github.com/symphonix/symphonix/identity"
	"github.com/symphonix/symphonix/internal/boardtest"
)

// memSummaries is an outbox in memory.
type memSummaries struct {
	mu   sync.Mutex
	list []agentlink.RunSummary
}

func (m *memSummaries) add(s agentlink.RunSummary) {
	m.mu.Lock()
	m.list = append(m.list, s)
	m.mu.Unlock()
}

func (m *memSummaries) Next(skip func(string, uint32) bool) (agentlink.RunSummary, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, s := range m.list {
		if !skip(s.Run.ID, s.Seq) {
			return s, true
		}
	}
	return agentlink.RunSummary{}, false
}

func (m *memSummaries) Stored(run string, seq uint32) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.list = slices.DeleteFunc(m.list, func(s agentlink.RunSummary) bool { return s.Run.ID == run && s.Seq == seq })
}

func (m *memSummaries) len() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.list)
}

func stored(run string, seq uint32) *boardv1.LinkResponse {
	return &boardv1.LinkResponse{Kind: &boardv1.LinkResponse_RunStored{RunStored: &boardv1.RunStored{RunId: run, Seq: seq}}}
}

// nothingWithin fails when the agent sends anything within d.
func (r *recorder) nothingWithin(t *testing.T, d time.Duration, why string) {
	t.Helper()
	select {
	case m := <-r.got:
		t.Errorf("%s: the agent sent %v", why, m)
	case <-time.After(d):
	}
}

// TestRunSummariesDelivered: after the welcome the outbox's summaries go
// one at a time, each once the board stored the one before, with what
// the run was (no input, what was withheld, steps, tokens); what the
// board has not stored goes again after the next welcome; one added while
// linked goes at once.
func TestRunSummariesDelivered(t *testing.T) {
	t.Parallel()
	rec, url := newRecorder(t)
	sums := &memSummaries{}
	start := time.Date(2026, 12, 2, 9, 0, 0, 0, time.UTC)
	sums.add(agentlink.RunSummary{Seq: 5, Dropped: 2, Run: agentlink.Run{
		ID: "r1", Thread: "t1", StartedBy: "chat", State: agentlink.RunFinished, Start: start, End: start.Add(time.Second),
		Duration: 900 * time.Millisecond, StepCount: 1, Withheld: []string{"input", "output"},
		Tokens: agentlink.Tokens{Input: 30, Output: 7, Cached: 12, Total: 37},
		Steps:  []agentlink.RunStep{{Seq: 1, Node: "answer", Kind: "llm", Copy: -1, Start: start, Duration: time.Second, Outcome: "ok"}},
	}})
	sums.add(agentlink.RunSummary{Seq: 2, Run: agentlink.Run{ID: "r2", State: agentlink.RunPaused, Pause: "approval", PausedAt: "refund"}})
	l, states := runLink(t, url, agentlink.Config{
		Capabilities: []string{agentlink.CapabilityRuns}, Summaries: sums, AnswerWithin: 30 * time.Second,
	})
	awaitUp(t, states)
	first := rec.next(t).GetRunSummary()
	r := first.GetRun()
	if first.GetSeq() != 5 || first.GetDropped() != 2 || r.GetId() != "r1" || r.GetState() != boardv1.RunState_RUN_STATE_FINISHED ||
		r.GetInput() != nil || !slices.Equal(r.GetWithheld(), []string{"input", "output"}) || r.GetTokens().GetCached() != 12 ||
		len(r.GetSteps()) != 1 || r.GetSteps()[0].GetOutcome() != boardv1.StepOutcome_STEP_OUTCOME_OK || r.GetSteps()[0].GetCopy() != -1 {
		t.Fatalf("first summary = %v; want r1 as the outbox has it", first)
	}
	rec.nothingWithin(t, 300*time.Millisecond, "before the board stored the first")
	rec.push <- stored("r1", 5)
	second := rec.next(t).GetRunSummary()
	if second.GetRun().GetId() != "r2" || second.GetRun().GetPause() != boardv1.PauseKind_PAUSE_KIND_APPROVAL {
		t.Fatalf("second summary = %v; want r2, paused at an approval", second)
	}
	if sums.len() != 1 {
		t.Errorf("the outbox holds %d after the board stored r1, want 1", sums.len())
	}

	rec.drop <- struct{}{}
	rec.hello(t)
	if again := rec.next(t).GetRunSummary(); again.GetRun().GetId() != "r2" {
		t.Fatalf("after the relink, sent %v; want r2 again", again)
	}
	rec.push <- stored("r2", 2)
	sums.add(agentlink.RunSummary{Seq: 1, Run: agentlink.Run{ID: "r3", State: agentlink.RunFailed, Error: "boom"}})
	l.SummaryAdded()
	if added := rec.next(t).GetRunSummary(); added.GetRun().GetId() != "r3" || added.GetRun().GetError() != "boom" {
		t.Fatalf("after SummaryAdded, sent %v; want r3", added)
	}
}

// TestRunSummaryUnanswered: a summary the board does not store within
// the answer time is left for the next link, and the next one goes.
func TestRunSummaryUnanswered(t *testing.T) {
	t.Parallel()
	rec, url := newRecorder(t)
	sums := &memSummaries{}
	sums.add(agentlink.RunSummary{Seq: 1, Run: agentlink.Run{ID: "r1", State: agentlink.RunFinished}})
	sums.add(agentlink.RunSummary{Seq: 1, Run: agentlink.Run{ID: "r2", State: agentlink.RunFinished}})
	_, states := runLink(t, url, agentlink.Config{
		Capabilities: []string{agentlink.CapabilityRuns}, Summaries: sums, AnswerWithin: 200 * time.Millisecond,
	})
	awaitUp(t, states)
	if id := rec.next(t).GetRunSummary().GetRun().GetId(); id != "r1" {
		t.Fatalf("first = %q, want r1", id)
	}
	if id := rec.next(t).GetRunSummary().GetRun().GetId(); id != "r2" {
		t.Fatalf("after r1 went unanswered, sent %q; want r2", id)
	}
	rec.nothingWithin(t, 500*time.Millisecond, "both unanswered on this link")
	rec.drop <- struct{}{}
	rec.hello(t)
	if id := rec.next(t).GetRunSummary().GetRun().GetId(); id != "r1" {
		t.Errorf("after the relink, sent %q; want r1 again", id)
	}
}

// TestRunEventsNeverQueued: a live event goes on the link that is up, and
// is dropped when none is, or when live-runs is not announced; the hello
// carries the declared inputs; a raise carries its run's id.
func TestRunEventsNeverQueued(t *testing.T) {
	t.Parallel()
	rec, url := newRecorder(t)
	at := time.Date(2026, 12, 2, 9, 0, 0, 0, time.UTC)
	ev := agentlink.RunEvent{RunID: "r1", Seq: 1, At: at, Kind: agentlink.RunEventStart, Thread: "t1", StartedBy: "board", StartedByWho: "ann"}
	states := make(chan agentlink.State, 64)
	l, err := agentlink.New(agentlink.Config{BoardURL: url, Token: "t",
		Identity:     agentlink.Identity{Name: "desk", Inputs: []agentlink.FlowInput{{Name: "topic", Type: "string", Description: "what to ask"}}},
		Capabilities: []string{agentlink.CapabilityLiveRuns}, MinBackoff: 10 * time.Millisecond, MaxBackoff: 20 * time.Millisecond,
		OnState: func(s agentlink.State) { states <- s }})
	if err != nil {
		t.Fatal(err)
	}
	if l.SendRunEvent(ev) {
		t.Error("SendRunEvent before any link = true, want it dropped")
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); _ = l.Run(ctx) }()
	t.Cleanup(func() { cancel(); <-done })
	h := rec.hello(t)
	if in := h.GetInputs(); len(in) != 1 || in[0].GetName() != "topic" || in[0].GetType() != "string" || in[0].GetDescription() != "what to ask" {
		t.Errorf("hello inputs = %v; want topic", in)
	}
	awaitUp(t, states)
	if !l.SendRunEvent(ev) {
		t.Fatal("SendRunEvent while linked = false")
	}
	got := rec.next(t).GetRunEvent()
	if got.GetRunId() != "r1" || got.GetSeq() != 1 || got.GetStart().GetStartedBy() != "board" || !got.GetTime().AsTime().Equal(at) {
		t.Errorf("event = %v; want r1's start", got)
	}
	step := agentlink.RunEvent{RunID: "r1", Seq: 2, At: at, Kind: agentlink.RunEventStep,
		Step: agentlink.RunStep{Seq: 1, Node: "n", Kind: "tool", Copy: -1, Start: at}}
	l.SendRunEvent(step)
	if s := rec.next(t).GetRunEvent().GetStep(); s.GetNode() != "n" || s.GetOutcome() != boardv1.StepOutcome_STEP_OUTCOME_UNSPECIFIED || s.GetDuration() != nil {
		t.Errorf("an entered step = %v; want no outcome, no duration", s)
	}

	plain, _ := agentlink.New(agentlink.Config{BoardURL: url, Token: "t", Identity: agentlink.Identity{Name: "x"}})
	if plain.SendRunEvent(ev) {
		t.Error("SendRunEvent on a link without live-runs = true")
	}
	if _, err := agentlink.New(agentlink.Config{BoardURL: url, Token: "t",
		Identity: agentlink.Identity{Name: "x", Inputs: make([]agentlink.FlowInput, agentlink.MaxInputs+1)}}); err == nil {
		t.Error("New with 65 inputs = nil, want an error naming Identity.Inputs")
	}
}

// TestRunEventsBatched: to a board whose welcome lists run_events, live
// events waiting together go in one message, in order, at most
// MaxRunEventBatch to a message; to one that does not, each alone.
func TestRunEventsBatched(t *testing.T) {
	t.Parallel()
	for _, batches := range []bool{true, false} {
		var accepts []string
		if batches {
			accepts = []string{"run_events"}
		}
		l, rec := liveLink(t, nil, accepts...)
		const n = 200
		at := time.Now()
		for i := range n {
			if !l.SendRunEvent(agentlink.RunEvent{RunID: "r1", Seq: uint32(i + 1), At: at, Kind: agentlink.RunEventStep,
				Step: agentlink.RunStep{Seq: i + 1, Node: "n", Kind: "tool", Copy: -1, Start: at}}) {
				t.Fatalf("SendRunEvent %d = false", i+1)
			}
		}
		var seqs []uint32
		messages, most := 0, 0
		for len(seqs) < n {
			m := rec.next(t)
			var got []*boardv1.RunEvent
			switch {
			case m.GetRunEvents() != nil:
				got = m.GetRunEvents().GetEvents()
				if !batches {
					t.Fatalf("run_events to a board that does not read them")
				}
			case m.GetRunEvent() != nil:
				got = []*boardv1.RunEvent{m.GetRunEvent()}
			default:
				continue
			}
			messages++
			most = max(most, len(got))
			for _, e := range got {
				seqs = append(seqs, e.GetSeq())
			}
		}
		for i, s := range seqs {
			if s != uint32(i+1) {
				t.Fatalf("batches %v: event %d has seq %d, want %d: out of order or lost", batches, i, s, i+1)
			}
		}
		switch {
		case batches && (messages >= n || most > agentlink.MaxRunEventBatch):
			t.Errorf("%d events queued at once went in %d messages of at most %d, want fewer messages of at most %d",
				n, messages, most, agentlink.MaxRunEventBatch)
		case !batches && messages != n:
			t.Errorf("without run_events: %d messages, want %d", messages, n)
		}
	}
}

// liveLink is a link announcing live-runs, up with a recording board whose
// welcome lists accepts; it stops when the test ends.
// With sums, it announces runs too and delivers what sums holds.
func liveLink(t *testing.T, sums *memSummaries, accepts ...string) (*agentlink.Link, *recorder) {
	t.Helper()
	rec, url := newRecorder(t)
	rec.accepts = accepts
	cfg := agentlink.Config{Capabilities: []string{agentlink.CapabilityLiveRuns}}
	if sums != nil {
		cfg.Capabilities = append(cfg.Capabilities, agentlink.CapabilityRuns)
		cfg.Summaries, cfg.AnswerWithin = sums, 30*time.Second
	}
	l, states := runLink(t, url, cfg)
	rec.hello(t)
	awaitUp(t, states)
	return l, rec
}

// TestRunEventsLinger: to a board that reads run_events, a step's event
// waits up to RunEventLinger for the run's next steps, and any other event
// goes at once, carrying the steps that waited before it; a summary goes
// only after the steps waiting when it was added.
func TestRunEventsLinger(t *testing.T) {
	t.Parallel()
	sums := &memSummaries{}
	l, rec := liveLink(t, sums, "run_events")
	events := func() []*boardv1.RunEvent {
		for {
			m := rec.next(t)
			if e := m.GetRunEvent(); e != nil {
				return []*boardv1.RunEvent{e}
			}
			if m.GetRunEvents() != nil {
				return m.GetRunEvents().GetEvents()
			}
		}
	}
	step := func(seq uint32) agentlink.RunEvent {
		return agentlink.RunEvent{RunID: "r1", Seq: seq, At: time.Now(), Kind: agentlink.RunEventStep,
			Step: agentlink.RunStep{Seq: int(seq), Node: "n", Kind: "tool", Copy: -1, Start: time.Now()}}
	}

	// A lone step is sent once the linger is over, not before.
	sent := time.Now()
	l.SendRunEvent(step(1))
	got := events()
	if waited := time.Since(sent); len(got) != 1 || waited < agentlink.RunEventLinger*3/4 {
		t.Errorf("a lone step: %d events after %s, want 1 after about %s", len(got), waited, agentlink.RunEventLinger)
	}

	// Steps a moment apart wait together; a pause takes them with it.
	for seq := uint32(2); seq <= 4; seq++ {
		l.SendRunEvent(step(seq))
		time.Sleep(10 * time.Millisecond)
	}
	l.SendRunEvent(agentlink.RunEvent{RunID: "r1", Seq: 5, At: time.Now(), Kind: agentlink.RunEventPause, Pause: "approval", Node: "refund"})
	got = events()
	var seqs []uint32
	for _, e := range got {
		seqs = append(seqs, e.GetSeq())
	}
	if !slices.Equal(seqs, []uint32{2, 3, 4, 5}) || got[len(got)-1].GetPause() == nil {
		t.Errorf("three steps and a pause went as %v, want [2 3 4 5] in one message, the pause last", seqs)
	}

	// The run ends: its last step goes before its summary, not after it.
	l.SendRunEvent(step(6))
	sums.add(agentlink.RunSummary{Seq: 7, Run: agentlink.Run{ID: "r1", State: agentlink.RunFinished}})
	l.SummaryAdded()
	var order []string
	for len(order) < 2 {
		m := rec.next(t)
		switch {
		case m.GetRunEvent() != nil:
			order = append(order, fmt.Sprintf("event %d", m.GetRunEvent().GetSeq()))
		case m.GetRunEvents() != nil:
			order = append(order, fmt.Sprintf("%d events", len(m.GetRunEvents().GetEvents())))
		case m.GetRunSummary() != nil:
			order = append(order, fmt.Sprintf("summary %d", m.GetRunSummary().GetSeq()))
		}
	}
	if !slices.Equal(order, []string{"event 6", "summary 7"}) {
		t.Errorf("the last step and the summary went as %v, want [event 6 summary 7]", order)
	}
}

// TestRunEventsBurstTaken: a burst of a run's events, sent in batches,
// is taken whole by the board, in order: every step finished, nothing
// counted as a problem.
func TestRunEventsBurstTaken(t *testing.T) {
	t.Parallel()
	bt := boardtest.Start(t, boardtest.Options{})
	a := startAgent(t, bt, "desk", func(c *agentlink.Config) {
		c.Capabilities = []string{agentlink.CapabilityRuns, agentlink.CapabilityLiveRuns}
	})
	a.awaitState(t, true)
	const steps = 100
	at := time.Now()
	seq := uint32(1)
	a.link.SendRunEvent(agentlink.RunEvent{RunID: "r1", Seq: seq, At: at, Kind: agentlink.RunEventStart, Thread: "t1", StartedBy: "board"})
	for i := 1; i <= steps; i++ {
		st := agentlink.RunStep{Seq: i, Node: fmt.Sprintf("n%03d", i), Kind: "handler", Copy: -1, Start: at}
		seq++
		a.link.SendRunEvent(agentlink.RunEvent{RunID: "r1", Seq: seq, At: at, Kind: agentlink.RunEventStep, Step: st})
		st.Duration, st.Outcome = time.Millisecond, "ok"
		seq++
		a.link.SendRunEvent(agentlink.RunEvent{RunID: "r1", Seq: seq, At: at, Kind: agentlink.RunEventStep, Step: st})
	}
	runs := boardv1connect.NewRunServiceClient(bt.Client(bt.OperatorToken("vic", identity.RoleViewer)))
	boardtest.Eventually(t, 30*time.Second, "every step of the burst finished on the board", func() bool {
		res, err := runs.GetRun(t.Context(), &boardv1.GetRunRequest{Agent: "desk", Id: "r1"})
		if err != nil {
			return false
		}
		st := res.GetRun().GetSteps()
		return len(st) == steps && st[steps-1].GetOutcome() == boardv1.StepOutcome_STEP_OUTCOME_OK
	})
	res, err := runs.GetRun(t.Context(), &boardv1.GetRunRequest{Agent: "desk", Id: "r1"})
	if err != nil {
		t.Fatal(err)
	}
	for i, st := range res.GetRun().GetSteps() {
		if st.GetNode() != fmt.Sprintf("n%03d", i+1) || st.GetOutcome() != boardv1.StepOutcome_STEP_OUTCOME_OK {
			t.Fatalf("step %d: %v, want n%03d finished", i+1, st, i+1)
		}
	}
	for why, n := range bt.Board.RunEventProblems() {
		if n != 0 {
			t.Errorf("%d events counted %s, want none", n, why)
		}
	}
}

// TestIdentityInputs: the declared inputs come from the flow, each typed
// by its channel; a file or untyped channel takes any value.
func TestIdentityInputs(t *testing.T) {
	t.Parallel()
	id, err := agentlink.IdentityOf([]byte(`{"name": "desk", "inputs": ["topic", "n", "doc", "free"],
		"state": {"topic": {"type": "string", "description": "about"}, "n": {"type": "number"}, "doc": {"type": "file"}, "free": {}}}`))
	if err != nil {
		t.Fatal(err)
	}
	want := []agentlink.FlowInput{{Name: "topic", Type: "string", Description: "about"}, {Name: "n", Type: "number"}, {Name: "doc"}, {Name: "free"}}
	if !slices.Equal(id.Inputs, want) {
		t.Errorf("Inputs = %+v, want %+v", id.Inputs, want)
	}
}

// TestFireAndStop: the board's Fire reaches OnFire and is answered with
// Fired, or with the Refusal's code and words, or internal without the
// error's words; Stop likewise; an agent with no OnFire refuses.
func TestFireAndStop(t *testing.T) {
	t.Parallel()
	rec, url := newRecorder(t)
	fires := make(chan agentlink.Fire, 4)
	var refuse error
	var mu sync.Mutex
	_, states := runLink(t, url, agentlink.Config{
		Capabilities: []string{agentlink.CapabilityFire},
		OnFire: func(_ context.Context, f agentlink.Fire) (agentlink.Fired, error) {
			fires <- f
			mu.Lock()
			defer mu.Unlock()
			if refuse != nil {
				return agentlink.Fired{}, refuse
			}
			return agentlink.Fired{RunID: "run-9", Thread: "t9"}, nil
		},
		OnStop: func(_ context.Context, s agentlink.Stop) error {
			if s.RunID != "run-9" {
				return &agentlink.Refusal{Code: "not_found", Message: "run_id: no run " + s.RunID + " runs here"}
			}
			return nil
		},
	})
	awaitUp(t, states)
	in, _ := structpb.NewStruct(map[string]any{"topic": "plums"})
	fire := func(id string) {
		rec.push <- &boardv1.LinkResponse{Kind: &boardv1.LinkResponse_Fire{Fire: &boardv1.Fire{RequestId: id, Input: in, Thread: "t9", By: "ann"}}}
	}
	fire("f1")
	f := <-fires
	if f.Input["topic"] != "plums" || f.Thread != "t9" || f.By != "ann" {
		t.Errorf("OnFire got %+v", f)
	}
	if got := rec.next(t).GetFired(); got.GetRequestId() != "f1" || got.GetRunId() != "run-9" || got.GetThread() != "t9" {
		t.Errorf("answer = %v; want Fired run-9 for f1", got)
	}

	mu.Lock()
	refuse = &agentlink.Refusal{Code: "invalid_argument", Message: "input.topic: want a string"}
	mu.Unlock()
	fire("f2")
	<-fires
	if e := rec.next(t).GetError(); e.GetRequestId() != "f2" || e.GetCode() != boardv1.LinkErrorCode_LINK_ERROR_CODE_INVALID_ARGUMENT || e.GetMessage() != "input.topic: want a string" {
		t.Errorf("refused fire answered %v; want invalid_argument naming input.topic", e)
	}
	mu.Lock()
	refuse = errors.New("disk /secret/path is full")
	mu.Unlock()
	fire("f3")
	<-fires
	if e := rec.next(t).GetError(); e.GetCode() != boardv1.LinkErrorCode_LINK_ERROR_CODE_INTERNAL || e.GetMessage() == "" || strings.Contains(e.GetMessage(), "secret") {
		t.Errorf("failed fire answered %v; want internal, without the error's words", e)
	}

	rec.push <- &boardv1.LinkResponse{Kind: &boardv1.LinkResponse_Stop{Stop: &boardv1.Stop{RequestId: "s1", RunId: "run-9", Reason: "enough"}}}
	if got := rec.next(t).GetStopped(); got.GetRequestId() != "s1" {
		t.Errorf("stop answered %v; want Stopped s1", got)
	}
	rec.push <- &boardv1.LinkResponse{Kind: &boardv1.LinkResponse_Stop{Stop: &boardv1.Stop{RequestId: "s2", RunId: "nope"}}}
	if e := rec.next(t).GetError(); e.GetRequestId() != "s2" || e.GetCode() != boardv1.LinkErrorCode_LINK_ERROR_CODE_NOT_FOUND {
		t.Errorf("stop of an unknown run answered %v; want not_found", e)
	}

	rec2, url2 := newRecorder(t)
	_, states2 := runLink(t, url2, agentlink.Config{})
	awaitUp(t, states2)
	rec2.push <- &boardv1.LinkResponse{Kind: &boardv1.LinkResponse_Fire{Fire: &boardv1.Fire{RequestId: "f4"}}}
	if e := rec2.next(t).GetError(); e.GetRequestId() != "f4" || e.GetCode() != boardv1.LinkErrorCode_LINK_ERROR_CODE_FAILED_PRECONDITION {
		t.Errorf("fire at an agent without fire answered %v; want failed_precondition", e)
	}
}
