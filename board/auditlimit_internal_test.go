package board

import (
	"maps"
	"sync"
	"testing"
	"testing/synctest"
	"time"
)

// summaries collects what an auditLimit writes.
type summaries struct {
	mu  sync.Mutex
	got []string // actor
	s   []auditSummary
}

func (w *summaries) write(actor string, s auditSummary) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.got = append(w.got, actor)
	w.s = append(w.s, s)
}

func (w *summaries) count() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return len(w.got)
}

// TestAuditLimit: an actor may make the board write its burst at once and
// its rate after that; what is past it is counted, and one summary says so:
// when the actor may write again, or auditSummaryAfter after the first left
// out, whichever is first, and never twice; other actors are not affected.
func TestAuditLimit(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		var w summaries
		a := newAuditLimit(Limits{AuditBurst: 3, AuditPerSecond: 0.5}, time.Now, w.write)
		for i := range 3 {
			if ok, _ := a.take(t.Context(), "agent desk", "desk", "approval.raise"); !ok {
				t.Fatalf("take %d of a burst of 3 refused", i+1)
			}
		}
		for i, action := range []string{"approval.raise", "verify", "verify"} {
			ok, retry := a.take(t.Context(), "agent desk", "desk", action)
			if ok || retry != 2*time.Second {
				t.Fatalf("take %d past the burst = %v, retry in %s; want refused, 2s (one at 0.5 a second)", i+1, ok, retry)
			}
		}
		if ok, _ := a.take(t.Context(), "agent till", "till", "verify"); !ok {
			t.Fatal("another actor refused")
		}
		if n := w.count(); n != 0 {
			t.Fatalf("%d summaries before any is due", n)
		}
		// One comes back after 2 s: the summary is written, then the take
		// goes on.
		time.Sleep(2 * time.Second)
		if ok, _ := a.take(t.Context(), "agent desk", "desk", "pair.code"); !ok {
			t.Fatal("refused once the bucket had refilled")
		}
		synctest.Wait()
		if w.count() != 1 || w.got[0] != "desk" || !maps.Equal(w.s[0].counts, map[string]int{"approval.raise": 1, "verify": 2}) {
			t.Fatalf("summaries %v %v, want one for desk: 1 raise, 2 verifies", w.got, w.s)
		}
		if w.s[0].last.Before(w.s[0].first) {
			t.Errorf("summary from %s to %s", w.s[0].first, w.s[0].last)
		}
		// Left out again, and nothing comes back for a while: the summary
		// is written auditSummaryAfter after the first, once.
		a.take(t.Context(), "agent desk", "desk", "verify")
		time.Sleep(auditSummaryAfter + time.Second)
		synctest.Wait()
		if w.count() != 2 || !maps.Equal(w.s[1].counts, map[string]int{"verify": 1}) {
			t.Fatalf("summaries %v %v, want a second, of 1 verify", w.got, w.s)
		}
		a.take(t.Context(), "agent desk", "desk", "verify")
		time.Sleep(time.Hour)
		a.flush()
		if w.count() != 2 {
			t.Fatalf("%d summaries, want no more: nothing was left out", w.count())
		}
		// Left out, then the board closes: flush writes it.
		for range 4 {
			a.take(t.Context(), "agent till", "till", "verify")
		}
		a.flush()
		if w.count() != 3 || w.got[2] != "till" || w.s[2].counts["verify"] != 1 {
			t.Fatalf("summaries %v %v, want a third, for till's one verify left out", w.got, w.s)
		}
		time.Sleep(auditSummaryAfter)
		synctest.Wait()
		if w.count() != 3 {
			t.Fatalf("%d summaries after flush and a wait, want 3: flush stops the timer", w.count())
		}
	})
}
