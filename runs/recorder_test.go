package runs_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/symphonix/symphonix/flow"
	"github.com/symphonix/symphonix/runs"
)

// clarifyFlow asks, then asks a model, then ends: a run that pauses once.
const clarifyFlow = `{
  "version": "0.8", "start": "clarify",
  "inputs": ["topic"], "outputs": ["answer"],
  "state": {
    "topic": { "type": "string" },
    "focus": { "type": "string" },
    "answer": { "type": "string" }
  },
  "nodes": [
    { "id": "clarify", "type": "ask", "ask": "What about {{topic}}?", "output": "focus" },
    { "id": "answer", "type": "llm", "prompt": "Tell me about {{focus}} in {{topic}}.", "output": "answer" }
  ],
  "edges": [
    { "from": "clarify", "to": "answer" },
    { "from": "answer", "to": "END" }
  ]
}`

// model answers with reply and reports usage.
type model struct{ reply string }

func (m model) Complete(context.Context, flow.ModelRequest) (flow.ModelReply, error) {
	return flow.ModelReply{Text: m.reply, Usage: &flow.Usage{InputTokens: 30, OutputTokens: 7, CachedTokens: 12}}, nil
}

// failingModel fails every call with err.
type failingModel struct{ err error }

func (m failingModel) Complete(context.Context, flow.ModelRequest) (flow.ModelReply, error) {
	return flow.ModelReply{}, m.err
}

// events collects a recorder's live events.
type events struct {
	mu  sync.Mutex
	all []runs.Event
}

func (e *events) add(ev runs.Event) {
	e.mu.Lock()
	e.all = append(e.all, ev)
	e.mu.Unlock()
}

func (e *events) take() []runs.Event {
	e.mu.Lock()
	defer e.mu.Unlock()
	out := e.all
	e.all = nil
	return out
}

// graph builds clarifyFlow watched by rec, its model counted by it.
func graph(t *testing.T, rec *runs.Recorder, cp flow.Checkpointer, reply string) *flow.Graph {
	t.Helper()
	f, err := flow.Load([]byte(clarifyFlow))
	if err != nil {
		t.Fatal(err)
	}
	g, err := flow.Build(f, flow.BuildOptions{Model: rec.WrapModel(model{reply}), Checkpointer: cp, Watch: rec.Watch})
	if err != nil {
		t.Fatal(err)
	}
	return g
}

func recorder(t *testing.T, cfg runs.Config) (*runs.Recorder, *runs.Outbox, *events) {
	t.Helper()
	box, err := runs.OpenOutbox(filepath.Join(t.TempDir(), ".symphonix", "runs-outbox.json"))
	if err != nil {
		t.Fatal(err)
	}
	ev := &events{}
	cfg.Outbox, cfg.OnEvent, cfg.Build, cfg.Outputs = box, ev.add, "sha256:abc", []string{"answer"}
	rec, err := runs.NewRecorder(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return rec, box, ev
}

// TestRecorderWithoutPayloads: a run that pauses and finishes is told live
// (start, steps, pause, resume) in seq order and summarised at the pause
// and the end, with its steps, tokens (cached too) and who started it;
// its input and output are named in withheld and never kept.
func TestRecorderWithoutPayloads(t *testing.T) {
	t.Parallel()
	rec, box, ev := recorder(t, runs.Config{})
	g := graph(t, rec, &flow.MemoryCheckpointer{}, "the reply is PLUM-42")
	ctx := runs.StartedBy(flow.WithRunID(t.Context(), "run-1"), runs.ByBoard, "ann@example.com")
	if _, err := g.Invoke(ctx, "t1", map[string]any{"topic": "SECRET-TOPIC-9"}); err != nil {
		t.Fatal(err)
	}
	paused, ok := box.Next(nil)
	if !ok || paused.Run.State != runs.StatePaused || paused.Run.Pause != runs.PauseAsk || paused.Run.PausedAt != "clarify" {
		t.Fatalf("after the pause the outbox holds %+v, %v; want the run paused at clarify", paused, ok)
	}
	if err := box.Stored("run-1", paused.Seq); err != nil {
		t.Fatal(err)
	}
	if _, err := g.Resume(t.Context(), "t1", "FOCUS-ANSWER-7"); err != nil {
		t.Fatal(err)
	}
	s, ok := box.Next(nil)
	if !ok {
		t.Fatal("no summary after the end")
	}
	r := s.Run
	if r.ID != "run-1" || r.Thread != "t1" || r.State != runs.StateFinished || r.StartedBy != "board" ||
		r.StartedByWho != "ann@example.com" || r.Build != "sha256:abc" || r.End.IsZero() {
		t.Errorf("summary = %+v; want run-1 on t1, finished, started by the board (ann), with its build and end", r)
	}
	if r.Input != nil || r.Output != nil || !slices.Equal(r.Withheld, []string{"input", "output"}) {
		t.Errorf("input %v output %v withheld %q; want neither, both withheld", r.Input, r.Output, r.Withheld)
	}
	// The ask's node is entered again when it is answered.
	if r.StepCount != 3 || len(r.Steps) != 3 || r.Steps[0].Node != "clarify" || r.Steps[0].Outcome != flow.OutcomePaused ||
		r.Steps[0].Pause != runs.PauseAsk || r.Steps[1].Node != "clarify" || r.Steps[1].Outcome != flow.OutcomeOK ||
		r.Steps[2].Node != "answer" || r.Steps[2].Kind != "llm" || r.Steps[2].Outcome != flow.OutcomeOK || r.Steps[2].Seq != 3 {
		t.Errorf("steps = %+v; want clarify paused (ask), clarify ok, answer ok", r.Steps)
	}
	want := runs.Tokens{Input: 30, Output: 7, Cached: 12, Total: 37}
	if r.Tokens != want || r.Steps[2].Tokens != want {
		t.Errorf("tokens: run %+v, answer's step %+v; want %+v", r.Tokens, r.Steps[2].Tokens, want)
	}
	var kinds []string
	var last uint32
	for _, e := range ev.take() {
		kinds = append(kinds, e.Kind)
		if e.Seq <= last {
			t.Errorf("event %s seq %d after %d: want increasing", e.Kind, e.Seq, last)
		}
		last = e.Seq
	}
	wantKinds := []string{"start", "step", "step", "pause", "resume", "step", "step", "step", "step"}
	if !slices.Equal(kinds, wantKinds) {
		t.Errorf("events = %q, want %q", kinds, wantKinds)
	}
	if s.Seq <= last || paused.Seq >= s.Seq {
		t.Errorf("summary seqs %d, %d and the last event's %d: want one order for events and summaries", paused.Seq, s.Seq, last)
	}
	data, err := os.ReadFile(box.Path())
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range []string{"SECRET-TOPIC-9", "FOCUS-ANSWER-7", "PLUM-42"} {
		if strings.Contains(string(data), v) {
			t.Errorf("the outbox file holds %q", v)
		}
	}
	if st, err := os.Stat(box.Path()); err != nil || st.Mode().Perm() != 0o600 {
		t.Errorf("outbox file mode = %v, %v; want 0600", st.Mode().Perm(), err)
	}
}

// TestRecorderFullDetail: with full detail, input and output are sent
// without the named secrets; one over 64 KiB is withheld.
func TestRecorderFullDetail(t *testing.T) {
	t.Parallel()
	const secret = "hunter2-very-secret-value"
	rec, box, _ := recorder(t, runs.Config{Detail: runs.DetailFull, Secrets: []string{secret}})
	g := graph(t, rec, &flow.MemoryCheckpointer{}, "reply with "+secret)
	if _, err := g.Invoke(t.Context(), "t1", map[string]any{"topic": "plums and " + secret}); err != nil {
		t.Fatal(err)
	}
	if _, err := g.Resume(t.Context(), "t1", "stones"); err != nil {
		t.Fatal(err)
	}
	var s runs.Summary
	for {
		n, ok := box.Next(nil)
		if !ok {
			break
		}
		s = n
		box.Stored(n.Run.ID, n.Seq)
	}
	topic, _ := s.Run.Input["topic"].(string)
	answer, _ := s.Run.Output["answer"].(string)
	if !strings.HasPrefix(topic, "plums and ") || strings.Contains(topic, secret) ||
		!strings.HasPrefix(answer, "reply with ") || strings.Contains(answer, secret) || len(s.Run.Withheld) != 0 {
		t.Errorf("input %v output %v withheld %q; want both, without the secret, nothing withheld", s.Run.Input, s.Run.Output, s.Run.Withheld)
	}

	rec2, box2, _ := recorder(t, runs.Config{Detail: runs.DetailFull})
	g2 := graph(t, rec2, &flow.MemoryCheckpointer{}, "x")
	if _, err := g2.Invoke(t.Context(), "t2", map[string]any{"topic": strings.Repeat("a", runs.MaxPayload)}); err != nil {
		t.Fatal(err)
	}
	if p, _ := box2.Next(nil); p.Run.Input != nil || !slices.Equal(p.Run.Withheld, []string{"input"}) {
		t.Errorf("an input over 64 KiB: input %d keys, withheld %q; want withheld", len(p.Run.Input), p.Run.Withheld)
	}
}

func TestParseDetail(t *testing.T) {
	t.Parallel()
	for _, ok := range []string{"", "full"} {
		if _, err := runs.ParseDetail(ok); err != nil {
			t.Errorf("ParseDetail(%q) = %v", ok, err)
		}
	}
	for _, bad := range []string{"FULL", "metadata", "none"} {
		if _, err := runs.ParseDetail(bad); err == nil || !strings.Contains(err.Error(), "MONITOR_DETAIL") {
			t.Errorf("ParseDetail(%q) = %v; want an error naming MONITOR_DETAIL", bad, err)
		}
	}
}

// TestRecorderFailsAndStops: a failed run's error is without the secrets;
// a stopped run is stopped; a paused run ended by Stopped is stopped; a
// paused run's record comes back from the outbox after a restart and its
// seq goes on.
func TestRecorderFailsAndStops(t *testing.T) {
	t.Parallel()
	const secret = "sk-proj-abcdefghijklmnopqrstuvwx"
	dir := t.TempDir()
	path := filepath.Join(dir, "outbox.json")
	box, err := runs.OpenOutbox(path)
	if err != nil {
		t.Fatal(err)
	}
	rec, err := runs.NewRecorder(runs.Config{Outbox: box})
	if err != nil {
		t.Fatal(err)
	}
	f, err := flow.Load([]byte(clarifyFlow))
	if err != nil {
		t.Fatal(err)
	}
	failing := failingModel{errors.New("provider said no to key " + secret)}
	cp := &flow.MemoryCheckpointer{}
	g, err := flow.Build(f, flow.BuildOptions{Model: failing, Checkpointer: cp, Watch: rec.Watch})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := g.Invoke(flow.WithRunID(t.Context(), "bad"), "t1", nil); err != nil {
		t.Fatal(err)
	}
	if _, err := g.Resume(t.Context(), "t1", "x"); err == nil {
		t.Fatal("Resume with a failing model = nil")
	}
	var s runs.Summary
	for n, ok := box.Next(nil); ok; n, ok = box.Next(nil) {
		s = n
		box.Stored(n.Run.ID, n.Seq)
	}
	if s.Run.State != runs.StateFailed || !strings.Contains(s.Run.Error, "provider said no") || strings.Contains(s.Run.Error, secret) {
		t.Errorf("failed run: state %q error %q; want failed, without the key", s.Run.State, s.Run.Error)
	}

	// Paused, then the agent restarts: the record comes back.
	if _, err := g.Invoke(flow.WithRunID(t.Context(), "waits"), "t2", nil); err != nil {
		t.Fatal(err)
	}
	p, _ := box.Next(nil)
	box.Stored("waits", p.Seq)
	box2, err := runs.OpenOutbox(path)
	if err != nil {
		t.Fatal(err)
	}
	rec2, err := runs.NewRecorder(runs.Config{Outbox: box2})
	if err != nil {
		t.Fatal(err)
	}
	if got, ok := rec2.Get("waits"); !ok || got.State != runs.StatePaused || len(got.Steps) != 1 {
		t.Fatalf("after a restart the record of the paused run = %+v, %v; want it, paused, with its step", got, ok)
	}
	if !rec2.Stopped("waits", "ended at the agent", p.Run.Start) || rec2.Stopped("nothing", "x", p.Run.Start) {
		t.Error("Stopped: want true for the paused run, false for one it does not know")
	}
	end, ok := box2.Next(nil)
	if !ok || end.Run.State != runs.StateStopped || end.Seq != p.Seq+1 || end.Run.Error != "ended at the agent" {
		t.Errorf("after Stopped the outbox holds %+v (seq %d); want it stopped, seq %d", end.Run, end.Seq, p.Seq+1)
	}
}

func writeFile(path, s string) error { return os.WriteFile(path, []byte(s), 0o600) }
