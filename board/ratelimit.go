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
//
// A check that takes time (a password hashed) takes an attempt before it
// starts and gives it back when it ends (take, done): attempts in flight
// count against the limit like failures, so a burst of concurrent
// attempts can never check more than max between them.
type limiter struct {
	max    int
	window time.Duration
	now    func() time.Time

	mu       sync.Mutex
	fails    map[string][]time.Time // oldest first; at most max per key
	inFlight map[string]int         // attempts taken and not yet done
}

func newLimiter(max int, window time.Duration, now func() time.Time) *limiter {
	return &limiter{max: max, window: window, now: now, fails: make(map[string][]time.Time), inFlight: make(map[string]int)}
}

// inFlightRetry is what a key told to wait only because of attempts in
// flight is told: they end in about a second.
const inFlightRetry = time.Second

// take starts an attempt for key, or reports that key is at its limit and
// how long until it may not be. The check and the count are one step:
// key's failures in the window and its attempts in flight stay at most
// max. Every take that succeeds is followed by one done.
func (l *limiter) take(key string) (retryAfter time.Duration, ok bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	now := l.now()
	f := l.live(key, now)
	if len(f) >= l.max {
		return f[0].Add(l.window).Sub(now), false
	}
	if len(f)+l.inFlight[key] >= l.max {
		return inFlightRetry, false
	}
	l.inFlight[key]++
	return 0, true
}

// done ends an attempt take started, counting it as a failure when failed.
func (l *limiter) done(key string, failed bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if n := l.inFlight[key] - 1; n > 0 {
		l.inFlight[key] = n
	} else {
		delete(l.inFlight, key)
	}
	if failed {
		l.failLocked(key)
	}
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
	l.failLocked(key)
}

func (l *limiter) failLocked(key string) {
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
