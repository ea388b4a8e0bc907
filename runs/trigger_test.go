package runs_test

import (
	"testing"
	"time"

	"github.com/symphonix/symphonix/flow"
	"github.com/symphonix/symphonix/runs"
)

// TestRecorderKeepsTheTrigger: a run started by a trigger carries it — id,
// kind, when it occurred, the request — in its start event and in the
// summaries it leaves in the outbox, started by "trigger", and one more
// summary says how its delivery came out; a run nothing triggered carries
// none.
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
	if rec.Delivered("run-t", runs.DeliveryDelivered, 1) {
		t.Error("Delivered for a run that has not finished: want it refused")
	}
	if _, err := g.Resume(ctx, "t1", "the focus"); err != nil {
		t.Fatal(err)
	}
	s, ok = box.Next(nil)
	if !ok || s.Run.State != runs.StateFinished || s.Run.Trigger.Delivery != runs.DeliveryPending {
		t.Fatalf("the finished run's summary %+v: want its delivery pending", s.Run)
	}
	if err := box.Stored("run-t", s.Seq); err != nil {
		t.Fatal(err)
	}
	// The delivery after the run: one more summary says how it came out.
	if !rec.Delivered("run-t", runs.DeliveryDelivered, 2) {
		t.Fatal("Delivered: the recorder did not know the run as delivering")
	}
	d, ok := box.Next(nil)
	if !ok || d.Seq <= s.Seq || d.Run.State != runs.StateFinished || d.Run.Trigger.Delivery != runs.DeliveryDelivered || d.Run.Trigger.DeliveryAttempts != 2 {
		t.Fatalf("after the delivery the outbox holds %+v (seq %d after %d): want the run finished, delivered in 2 attempts", d.Run, d.Seq, s.Seq)
	}
	if err := box.Stored("run-t", d.Seq); err != nil {
		t.Fatal(err)
	}
	if rec.Delivered("run-t", runs.DeliveryFailed, 3) {
		t.Error("Delivered twice for one run: want the second refused")
	}

	if _, err := g.Invoke(flow.WithRunID(t.Context(), "run-plain"), "t2", map[string]any{"topic": "x"}); err != nil {
		t.Fatal(err)
	}
	if s, ok := box.Next(nil); !ok || s.Run.Trigger != nil {
		t.Errorf("a run nothing triggered: %+v, want no trigger", s.Run)
	}
}
