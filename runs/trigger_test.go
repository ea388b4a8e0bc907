package runs_test

import (
	"testing"
	"time"

	"github.com/symphonix/symphonix/flow"
	"github.com/symphonix/symphonix/runs"
)

// TestRecorderKeepsTheTrigger: a run started by a trigger carries it — id,
// kind, when it occurred, the request — in its start event and in the
// summaries it leaves in the outbox, started by "trigger"; a run nothing
// triggered carries none.
func TestRecorderKeepsTheTrigger(t *testing.T) {
	t.Parallel()
	rec, box, ev := recorder(t, runs.Config{})
	g := graph(t, rec, &flow.MemoryCheckpointer{}, "ok")
	at := time.Date(2026, 12, 2, 9, 30, 0, 0, time.UTC)
	tr := runs.Trigger{ID: "deploys", Kind: "webhook", At: at, Method: "POST", Path: "/hooks/deploy", Delivery: "pending"}
	ctx := runs.WithTrigger(runs.StartedBy(flow.WithRunID(t.Context(), "run-t"), runs.ByTrigger, "deploys"), tr)
	if _, err := g.Invoke(ctx, "t1", map[string]any{"topic": "x"}); err != nil {
		t.Fatal(err)
	}
	s, ok := box.Next(nil)
	if !ok || s.Run.StartedBy != "trigger" || s.Run.Trigger == nil || *s.Run.Trigger != tr {
		t.Fatalf("the summary %+v: want it started by trigger, carrying %+v", s.Run, tr)
	}
	start := ev.take()[0]
	if start.Kind != runs.EventStart || start.Trigger == nil || *start.Trigger != tr {
		t.Errorf("the start event %+v: want it carrying the trigger", start)
	}
	if err := box.Stored("run-t", s.Seq); err != nil {
		t.Fatal(err)
	}

	if _, err := g.Invoke(flow.WithRunID(t.Context(), "run-plain"), "t2", map[string]any{"topic": "x"}); err != nil {
		t.Fatal(err)
	}
	if s, ok := box.Next(nil); !ok || s.Run.Trigger != nil {
		t.Errorf("a run nothing triggered: %+v, want no trigger", s.Run)
	}
}
