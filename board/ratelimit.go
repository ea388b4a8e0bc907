package board

import (
	"context"
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

// limiter counts failures per key in a sliding window. On a store of its
// own the counts are in memory; on a store several boards share, each
// failure is also written to the store (sharedlimit.go) and a key's count
// is every board's, so a limit holds across the boards however a caller
// spreads its attempts.
//
// A check that takes time (a password hashed) takes an attempt before it
// starts and gives it back when it ends (take, done): attempts in flight
// count against the limit like failures, so a burst of concurrent
// attempts can never check more than max between them.
type limiter struct {
	max    int
	window time.Duration
	now    func() time.Time

	// shared, when not nil, counts failures in the store.
	shared *sharedCount

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
func (l *limiter) take(ctx context.Context, key string) (retryAfter time.Duration, ok bool) {
	l.mu.Lock()
	now := l.now()
	f := l.live(key, now)
	if len(f) >= l.max {
		l.mu.Unlock()
		return f[0].Add(l.window).Sub(now), false
	}
	flying := l.inFlight[key]
	if len(f)+flying >= l.max {
		l.mu.Unlock()
		return inFlightRetry, false
	}
	l.inFlight[key]++
	l.mu.Unlock()
	if l.shared == nil {
		return 0, true
	}
	// The store's count includes this board's failures; the attempts in
	// flight on other boards are not counted, at most one a board each.
	if wait, full := l.shared.full(ctx, key, l.max-flying, l.window, now); full {
		l.done(ctx, key, false)
		return wait, false
	}
	return 0, true
}

// done ends an attempt take started, counting it as a failure when failed.
func (l *limiter) done(ctx context.Context, key string, failed bool) {
	l.mu.Lock()
	if n := l.inFlight[key] - 1; n > 0 {
		l.inFlight[key] = n
	} else {
		delete(l.inFlight, key)
	}
	if failed {
		l.failLocked(key)
	}
	l.mu.Unlock()
	if failed && l.shared != nil {
		l.shared.add(ctx, key, l.now())
	}
}

// blocked reports whether key has failed max times within the window, and
// if so how long until its oldest failure leaves it.
func (l *limiter) blocked(ctx context.Context, key string) (retryAfter time.Duration, ok bool) {
	l.mu.Lock()
	now := l.now()
	f := l.live(key, now)
	if len(f) >= l.max {
		l.mu.Unlock()
		return f[0].Add(l.window).Sub(now), true
	}
	l.mu.Unlock()
	if l.shared == nil {
		return 0, false
	}
	return l.shared.full(ctx, key, l.max, l.window, now)
}

// fail counts a failure for key.
func (l *limiter) fail(ctx context.Context, key string) {
	l.mu.Lock()
	l.failLocked(key)
	l.mu.Unlock()
	if l.shared != nil {
		l.shared.add(ctx, key, l.now())
	}
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
func (l *limiter) reset(ctx context.Context, key string) {
	l.mu.Lock()
	delete(l.fails, key)
	l.mu.Unlock()
	if l.shared != nil {
		l.shared.forget(ctx, key)
	}
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
