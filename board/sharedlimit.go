package board

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"log/slog"
	"sync"
	"time"

	"github.com/symphonix/symphonix/ent"
	"github.com/symphonix/symphonix/ent/ratebucket"
	"github.com/symphonix/symphonix/ent/ratehit"
	"github.com/symphonix/symphonix/store"
)

// sharedCount keeps one limiter's failures in the store (rate_hits), for
// the boards sharing it. A key is kept as a hash: the store never holds
// the accounts, addresses or people a limit counts. When the store cannot
// be read, a limit answers as if full: a check the store cannot make is
// not waved through.
type sharedCount struct {
	db   *ent.Client
	name string
	log  *slog.Logger
}

// hitKey is the hash the store keeps for key.
func hitKey(key string) string {
	sum := sha256.Sum256([]byte(key))
	return hex.EncodeToString(sum[:])
}

// full reports whether key has failed max times within window before now,
// on any board, and if so how long until the oldest of them leaves it.
func (s *sharedCount) full(ctx context.Context, key string, max int, window time.Duration, now time.Time) (time.Duration, bool) {
	if max <= 0 {
		return inFlightRetry, true
	}
	hits, err := s.db.RateHit.Query().
		Where(ratehit.Limiter(s.name), ratehit.Key(hitKey(key)), ratehit.AtGT(now.Add(-window))).
		Order(ratehit.ByAt()).
		Limit(max).
		All(ctx)
	if err != nil {
		s.log.WarnContext(ctx, "read a rate limit's count", "limit", s.name, "err", err.Error())
		return inFlightRetry, true
	}
	if len(hits) < max {
		return 0, false
	}
	return hits[0].At.Add(window).Sub(now), true
}

// add records a failure of key at now.
func (s *sharedCount) add(ctx context.Context, key string, now time.Time) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second) // a failure is counted even for a caller gone
	defer cancel()
	err := s.db.RateHit.Create().SetLimiter(s.name).SetKey(hitKey(key)).SetAt(now.UTC().Truncate(time.Microsecond)).Exec(ctx)
	if err != nil {
		s.log.WarnContext(ctx, "record a failure a rate limit counts", "limit", s.name, "err", err.Error())
	}
}

// forget removes key's failures (a successful sign-in).
func (s *sharedCount) forget(ctx context.Context, key string) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	if _, err := s.db.RateHit.Delete().Where(ratehit.Limiter(s.name), ratehit.Key(hitKey(key))).Exec(ctx); err != nil {
		s.log.WarnContext(ctx, "forget a rate limit's failures", "limit", s.name, "err", err.Error())
	}
}

// sweep removes the failures that have left window.
func (s *sharedCount) sweep(ctx context.Context, window time.Duration, now time.Time) {
	if _, err := s.db.RateHit.Delete().Where(ratehit.Limiter(s.name), ratehit.AtLTE(now.Add(-window))).Exec(ctx); err != nil {
		s.log.WarnContext(ctx, "sweep a rate limit's old failures", "limit", s.name, "err", err.Error())
	}
}

// sharedLimiters are a board's limiters that count in the store, swept
// every sharedSweepEvery.
type sharedLimiters struct {
	mu   sync.Mutex
	all  []*limiter
	last time.Time
}

const sharedSweepEvery = time.Minute

// limiter makes a limiter of max failures per key within window, named
// name in the store when the store is shared.
func (b *Board) limiter(name string, max int, window time.Duration) *limiter {
	l := newLimiter(max, window, b.now)
	if b.notifies {
		l.shared = &sharedCount{db: b.db, name: name, log: b.log}
		b.shared.mu.Lock()
		b.shared.all = append(b.shared.all, l)
		b.shared.mu.Unlock()
	}
	return l
}

// sweepShared removes the failures every shared limiter no longer
// counts, and the callers' buckets that are full again, once a minute.
func (b *Board) sweepShared(ctx context.Context, now time.Time) {
	b.shared.mu.Lock()
	if now.Sub(b.shared.last) < sharedSweepEvery {
		b.shared.mu.Unlock()
		return
	}
	b.shared.last = now
	all := append([]*limiter(nil), b.shared.all...)
	b.shared.mu.Unlock()
	for _, l := range all {
		l.shared.sweep(ctx, l.window, now)
	}
	b.sweepBuckets(ctx, now)
	b.sweepRelays(ctx, now)
}

// takeAuditToken takes a token from the caller's audit bucket in the
// store (auditLimit). A bucket the store cannot read gives none.
func (b *Board) takeAuditToken(ctx context.Context, key string, now time.Time) bool {
	l := b.cfg.Limits
	ok, err := store.TakeToken(ctx, b.db, hitKey(key), float64(l.AuditBurst), l.AuditPerSecond, now)
	if err != nil {
		b.log.WarnContext(ctx, "take from a caller's audit bucket", "err", err.Error())
	}
	return ok
}

// sweepBuckets removes the callers' buckets that have filled up again: a
// bucket met again starts full.
func (b *Board) sweepBuckets(ctx context.Context, now time.Time) {
	l := b.cfg.Limits
	full := time.Duration(float64(l.AuditBurst) / l.AuditPerSecond * float64(time.Second))
	if _, err := b.db.RateBucket.Delete().Where(ratebucket.AtLT(now.Add(-full))).Exec(ctx); err != nil {
		b.log.WarnContext(ctx, "sweep the callers' audit buckets", "err", err.Error())
	}
}
