package board

import (
	"sync"
	"time"
)

// Sign-in limits (docs/people.md): failed sign-ins within a sliding window,
// counted per account and per source address. A sign-in over either limit
// is answered 429 without its password being checked.
const (
	signinWindow     = 15 * time.Minute
	signinPerAccount = 5
	signinPerSource  = 20
)

// limiter counts failures per key in a sliding window. It is in memory:
// several boards sharing one database each keep their own counts.
type limiter struct {
	max    int
	window time.Duration
	now    func() time.Time

	mu    sync.Mutex
	fails map[string][]time.Time // oldest first; at most max per key
}

func newLimiter(max int, window time.Duration, now func() time.Time) *limiter {
	return &limiter{max: max, window: window, now: now, fails: make(map[string][]time.Time)}
}

// blocked reports whether key has failed max times within the window, and
// if so how long until its oldest failure leaves it.
func (l *limiter) blocked(key string) (retryAfter time.Duration, ok bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	now := l.now()
	f := l.live(key, now)
	if len(f) < l.max {
		return 0, false
	}
	return f[0].Add(l.window).Sub(now), true
}

// fail counts a failure for key.
func (l *limiter) fail(key string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	now := l.now()
	f := append(l.live(key, now), now)
	if len(f) > l.max {
		f = f[len(f)-l.max:]
	}
	l.fails[key] = f
	if len(l.fails) > 10000 {
		l.sweep(now)
	}
}

// reset forgets key's failures (a successful sign-in).
func (l *limiter) reset(key string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	delete(l.fails, key)
}

// live drops key's failures that have left the window and returns the rest.
func (l *limiter) live(key string, now time.Time) []time.Time {
	f := l.fails[key]
	i := 0
	for i < len(f) && !now.Before(f[i].Add(l.window)) {
		i++
	}
	f = f[i:]
	if len(f) == 0 {
		delete(l.fails, key)
		return nil
	}
	l.fails[key] = f
	return f
}

// sweep drops every key with no failure left in the window, so the map
// stays as small as the window's traffic.
func (l *limiter) sweep(now time.Time) {
	for k := range l.fails {
		l.live(k, now)
	}
}
