package agentlink_test

import (
	"slices"
	"testing"
	"time"

	"github.com/symphonix/symphonix/agentlink"
	boardv1 "github.com/symphonix/symphonix/api/symphonix/board/v1"
)

// nextTriggers is the next trigger report the agent sent, skipping other
// reports.
func nextTriggers(t *testing.T, rec *recorder) *boardv1.TriggerReport {
	t.Helper()
	for {
		if m := rec.next(t).GetTriggers(); m != nil {
			return m
		}
	}
}

// TestReportTriggers: the newest report goes when the link comes up, with
// its next run time and latest occurrence; a burst of reports within a
// second goes as the newest alone, after the spacing; a link that comes
// back sends the newest again. The board's pauses reach the callback. A
// link that does not announce triggers refuses to report them, and more
// than MaxTriggers are refused.
func TestReportTriggers(t *testing.T) {
	t.Parallel()
	rec, url := newRecorder(t)
	paused := make(chan []string, 4)
	l, states := runLink(t, url, agentlink.Config{
		Capabilities:    []string{agentlink.CapabilityTriggers},
		OnTriggerPauses: func(ids []string) { paused <- ids },
	})
	next := time.Date(2026, 12, 2, 9, 30, 0, 0, time.UTC)
	first := []agentlink.Trigger{
		{ID: "morning", Kind: agentlink.TriggerSchedule, Schedule: "30 9 * * 1-5", TimeZone: "Europe/Paris", Description: "Every weekday at 09:30", Next: next, Overlap: "skip"},
		{ID: "hook", Kind: agentlink.TriggerWebhook, Method: "POST", Path: "/hooks/in", Signed: true, Delivers: true,
			Last: &agentlink.TriggerOccurrence{At: next, RunID: "r1", OK: true, Duration: time.Second, Delivery: agentlink.DeliveryFailed}},
	}
	if err := l.ReportTriggers(first); err != nil {
		t.Fatal(err)
	}
	awaitUp(t, states)
	m := nextTriggers(t, rec)
	if len(m.GetTriggers()) != 2 {
		t.Fatalf("the report on link-up: %v, want both triggers", m)
	}
	s, h := m.GetTriggers()[0], m.GetTriggers()[1]
	if s.GetKind() != boardv1.TriggerKind_TRIGGER_KIND_SCHEDULE || !s.GetNextRunTime().AsTime().Equal(next) || s.GetDescription() != "Every weekday at 09:30" {
		t.Errorf("the schedule as reported: %v", s)
	}
	if h.GetKind() != boardv1.TriggerKind_TRIGGER_KIND_WEBHOOK || !h.GetSigned() || h.GetLast().GetRunId() != "r1" ||
		h.GetLast().GetDelivery() != boardv1.DeliveryState_DELIVERY_STATE_FAILED {
		t.Errorf("the webhook as reported: %v", h)
	}

	// A burst: only the newest goes, no sooner than the spacing.
	sent := time.Now()
	for _, id := range []string{"a", "b", "c"} {
		if err := l.ReportTriggers([]agentlink.Trigger{{ID: id, Kind: agentlink.TriggerWebhook}}); err != nil {
			t.Fatal(err)
		}
	}
	m = nextTriggers(t, rec)
	if got := m.GetTriggers()[0].GetId(); got != "c" {
		t.Errorf("after a burst the board got %q: want the newest, c, alone", got)
	}
	if waited := time.Since(sent); waited < agentlink.TriggerSpacing/2 {
		t.Errorf("the burst's report went after %s: want the spacing kept", waited)
	}

	rec.push <- &boardv1.LinkResponse{Kind: &boardv1.LinkResponse_TriggerPauses{TriggerPauses: &boardv1.TriggerPauses{Paused: []string{"morning"}}}}
	select {
	case ids := <-paused:
		if !slices.Equal(ids, []string{"morning"}) {
			t.Errorf("OnTriggerPauses got %v, want [morning]", ids)
		}
	case <-time.After(within):
		t.Fatal("the board's TriggerPauses did not reach OnTriggerPauses")
	}

	// The link comes back: the newest report goes again.
	rec.drop <- struct{}{}
	awaitUp(t, states)
	if got := nextTriggers(t, rec).GetTriggers()[0].GetId(); got != "c" {
		t.Errorf("after a redial the board got %q: want the newest again", got)
	}

	if err := l.ReportTriggers(make([]agentlink.Trigger, agentlink.MaxTriggers+1)); err == nil {
		t.Error("more than MaxTriggers: reported")
	}
	other, _ := runLink(t, url, agentlink.Config{})
	if err := other.ReportTriggers(first); err == nil {
		t.Error("a link that does not announce triggers reported them")
	}
}
