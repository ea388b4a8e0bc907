package board

import (
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"
)

// TestLimiter: max failures within the window block a key until the oldest
// leaves the window; other keys are not affected; a reset forgets.
func TestLimiter(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		l := newLimiter(5, 15*time.Minute, time.Now)
		for i := range 5 {
			if _, blocked := l.blocked(t.Context(), "alice"); blocked {
				t.Fatalf("blocked after %d failures, want after 5", i)
			}
			l.fail(t.Context(), "alice")
			time.Sleep(time.Minute)
		}
		wait, blocked := l.blocked(t.Context(), "alice")
		if !blocked || wait != 10*time.Minute {
			t.Fatalf("after 5 failures: blocked %v for %s, want 10m0s (the first failure leaves at 15m)", blocked, wait)
		}
		if _, blocked := l.blocked(t.Context(), "bob"); blocked {
			t.Errorf("bob blocked by alice's failures")
		}
		time.Sleep(wait - time.Second)
		if _, blocked := l.blocked(t.Context(), "alice"); !blocked {
			t.Errorf("unblocked a second early")
		}
		time.Sleep(time.Second)
		if _, blocked := l.blocked(t.Context(), "alice"); blocked {
			t.Errorf("still blocked once the first failure left the window")
		}
		l.fail(t.Context(), "alice") // four in the window again, plus this one
		if _, blocked := l.blocked(t.Context(), "alice"); !blocked {
			t.Errorf("not blocked with 5 failures in the window")
		}
		l.reset(t.Context(), "alice")
		if _, blocked := l.blocked(t.Context(), "alice"); blocked {
			t.Errorf("blocked after reset")
		}
		time.Sleep(15 * time.Minute)
		l.fail(t.Context(), "carol")
		if len(l.fails) != 1 {
			t.Errorf("%d keys kept, want only carol's", len(l.fails))
		}
	})
}

// TestLimiterTakes: attempts in flight count against the limit, so
// however many are taken at once, at most max pass; one that ends without
// failing gives its place back, and one that fails keeps it for the window.
func TestLimiterTakes(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		l := newLimiter(5, 15*time.Minute, time.Now)
		var taken atomic.Int32
		var wg sync.WaitGroup
		for range 100 {
			wg.Go(func() {
				if _, ok := l.take(t.Context(), "alice"); ok {
					taken.Add(1)
				}
			})
		}
		wg.Wait()
		if n := taken.Load(); n != 5 {
			t.Fatalf("%d of 100 concurrent attempts taken, want 5", n)
		}
		if wait, ok := l.take(t.Context(), "alice"); ok || wait != inFlightRetry {
			t.Errorf("take with 5 in flight = %s, %v; want %s, false", wait, ok, inFlightRetry)
		}
		if _, ok := l.take(t.Context(), "bob"); !ok {
			t.Errorf("bob refused for alice's attempts")
		}
		l.done(t.Context(), "alice", false) // not checked: its place is free again
		if _, ok := l.take(t.Context(), "alice"); !ok {
			t.Fatalf("refused after an attempt ended unchecked")
		}
		for range 5 {
			l.done(t.Context(), "alice", true)
		}
		wait, ok := l.take(t.Context(), "alice")
		if ok || wait != 15*time.Minute {
			t.Errorf("take after 5 failures = %s, %v; want 15m0s, false", wait, ok)
		}
		if len(l.inFlight) != 1 {
			t.Errorf("in flight kept for %d keys, want only bob's", len(l.inFlight))
		}
	})
}
