package board

import (
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
			if _, blocked := l.blocked("alice"); blocked {
				t.Fatalf("blocked after %d failures, want after 5", i)
			}
			l.fail("alice")
			time.Sleep(time.Minute)
		}
		wait, blocked := l.blocked("alice")
		if !blocked || wait != 10*time.Minute {
			t.Fatalf("after 5 failures: blocked %v for %s, want 10m0s (the first failure leaves at 15m)", blocked, wait)
		}
		if _, blocked := l.blocked("bob"); blocked {
			t.Errorf("bob blocked by alice's failures")
		}
		time.Sleep(wait - time.Second)
		if _, blocked := l.blocked("alice"); !blocked {
			t.Errorf("unblocked a second early")
		}
		time.Sleep(time.Second)
		if _, blocked := l.blocked("alice"); blocked {
			t.Errorf("still blocked once the first failure left the window")
		}
		l.fail("alice") // four in the window again, plus this one
		if _, blocked := l.blocked("alice"); !blocked {
			t.Errorf("not blocked with 5 failures in the window")
		}
		l.reset("alice")
		if _, blocked := l.blocked("alice"); blocked {
			t.Errorf("blocked after reset")
		}
		time.Sleep(15 * time.Minute)
		l.fail("carol")
		if len(l.fails) != 1 {
			t.Errorf("%d keys kept, want only carol's", len(l.fails))
		}
	})
}
