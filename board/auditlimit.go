package board

import (
	"context"
	"fmt"
	"maps"
	"strings"
	"sync"
	"time"

	"connectrpc.com/connect/v2"

	"github.com/symphonix/symphonix/audit"
	"github.com/symphonix/symphonix/identity"
)

// auditSummaryAfter is the longest the entries left out for one actor
// wait for their summary.
const auditSummaryAfter = 10 * time.Second

// auditLimit bounds how many audit entries one agent or one caller can
// make the board write by asking for things: a token bucket per actor,
// Limits.AuditBurst deep and refilled at Limits.AuditPerSecond. A request
// past it is refused (on the link) or its refusal is not written one by
// one (an RPC refused anyway); either way it is counted, and one
// "audit.limited" entry says how many of each were left out, when, and
// why: as soon as the actor may write again, or auditSummaryAfter after
// the first one left out, or when the board closes, whichever is first.
// Like sign-in's limits, a caller's count is every board's when several
// share the store.
type auditLimit struct {
	burst float64
	rate  float64 // per second
	now   func() time.Time
	write func(actor string, s auditSummary)
	// shared, when not nil, takes a caller's token from the store's bucket.
	shared func(ctx context.Context, key string, now time.Time) bool

	mu     sync.Mutex
	actors map[string]*actorAudit // by key (auditKey)
	// writing: summaries being written on goroutines of their own, so that
	// take never writes to the store itself (its caller may be in a
	// transaction).
	writing sync.WaitGroup
}

// actorAudit is one actor's bucket and what was left out since its last
// summary.
type actorAudit struct {
	actor  string
	tokens float64
	at     time.Time // when tokens was last brought up to date
	left   auditSummary
	timer  *time.Timer
}

// auditSummary is what an audit.limited entry says.
type auditSummary struct {
	counts      map[string]int // by action
	first, last time.Time
}

func newAuditLimit(l Limits, now func() time.Time, write func(actor string, s auditSummary)) *auditLimit {
	return &auditLimit{
		burst: float64(l.AuditBurst), rate: l.AuditPerSecond, now: now, write: write,
		actors: make(map[string]*actorAudit),
	}
}

// take reports whether the actor (key; named actor in the log) may make
// the board write one more entry for action now, and if not, how long
// until it may; an action left out is counted for its summary. A caller's
// bucket is the store's when boards share it (takeShared); an agent's is
// the board's that holds its one link.
func (a *auditLimit) take(ctx context.Context, key, actor, action string) (ok bool, retry time.Duration) {
	now := a.now()
	shared := a.shared != nil && !strings.HasPrefix(key, agentAuditKey)
	if shared {
		ok = a.shared(ctx, key, now)
	}
	a.mu.Lock()
	w := a.actors[key]
	if w == nil {
		w = &actorAudit{actor: actor, tokens: a.burst, at: now}
		a.actors[key] = w
		if len(a.actors) > 10000 {
			a.sweep(now)
		}
	}
	if !shared {
		w.tokens = min(a.burst, w.tokens+now.Sub(w.at).Seconds()*a.rate)
		w.at = now
		if ok = w.tokens >= 1; ok {
			w.tokens--
		}
		retry = time.Duration((1 - w.tokens) / a.rate * float64(time.Second))
	} else {
		retry = time.Duration(float64(time.Second) / a.rate)
	}
	if ok {
		s, due := a.due(w)
		a.mu.Unlock()
		if due {
			a.writing.Go(func() { a.write(actor, s) })
		}
		return true, 0
	}
	if w.left.counts == nil {
		w.left = auditSummary{counts: map[string]int{}, first: now}
		w.timer = time.AfterFunc(auditSummaryAfter, func() { a.flushKey(key) })
	}
	w.left.counts[action]++
	w.left.last = now
	a.mu.Unlock()
	return false, retry
}

// due takes w's summary, if it has one to write. a.mu is held.
func (a *auditLimit) due(w *actorAudit) (auditSummary, bool) {
	if w.left.counts == nil {
		return auditSummary{}, false
	}
	s := w.left
	w.left = auditSummary{}
	w.timer.Stop()
	w.timer = nil
	return s, true
}

// flushKey writes key's summary, if it has one.
func (a *auditLimit) flushKey(key string) {
	a.mu.Lock()
	w := a.actors[key]
	if w == nil {
		a.mu.Unlock()
		return
	}
	s, due := a.due(w)
	a.mu.Unlock()
	if due {
		a.write(w.actor, s)
	}
}

// flush writes every summary not yet written.
func (a *auditLimit) flush() {
	a.mu.Lock()
	keys := make([]string, 0, len(a.actors))
	for k := range a.actors {
		keys = append(keys, k)
	}
	a.mu.Unlock()
	for _, k := range keys {
		a.flushKey(k)
	}
	a.writing.Wait()
}

// sweep forgets the actors whose buckets are full again and who have no
// summary waiting, so the map stays as small as the traffic. a.mu is held.
func (a *auditLimit) sweep(now time.Time) {
	for k, w := range a.actors {
		if w.left.counts == nil && w.tokens+now.Sub(w.at).Seconds()*a.rate >= a.burst {
			delete(a.actors, k)
		}
	}
}

// agentAuditKey begins an agent's audit key.
const agentAuditKey = "agent "

// auditKey is whose audit budget a request of the caller in ctx draws on:
// an agent's (whichever of its tokens it uses), a signed-in person's, or
// an operator token's.
func auditKey(ctx context.Context) (key, actor string) {
	c, _ := identity.FromContext(ctx)
	if c.Kind == identity.KindAgent {
		return agentAuditKey + c.Name, c.Name
	}
	return streamKey(c), identity.ActorOf(ctx, c.Name)
}

// auditLimits is the board's auditLimit, made on first use.
func (b *Board) auditLimits() *auditLimit {
	b.auditOnce.Do(func() {
		b.audits = newAuditLimit(b.cfg.Limits, b.now, b.writeAuditSummary)
		if b.notifies {
			b.audits.shared = b.takeAuditToken
		}
	})
	return b.audits
}

// mayAudit reports whether the caller in ctx may make the board write one
// more audit entry for action; see auditLimit.
func (b *Board) mayAudit(ctx context.Context, action string) (bool, time.Duration) {
	key, actor := auditKey(ctx)
	return b.auditLimits().take(ctx, key, actor, action)
}

// tooManyAudited is why a link request was refused by the audit limit.
func (b *Board) tooManyAudited(retry time.Duration) string {
	l := b.cfg.Limits
	return fmt.Sprintf("too many requests from this agent: at most %d at once and %g a second; try again in %s",
		l.AuditBurst, l.AuditPerSecond, roundUp(retry))
}

// auditLimited is a link request what refused by the audit limit.
func (b *Board) auditLimited(what string, retry time.Duration) error {
	return &linkRequestError{code: connect.CodeResourceExhausted, msg: what + ": " + b.tooManyAudited(retry)}
}

// writeAuditSummary appends an audit.limited entry for actor.
func (b *Board) writeAuditSummary(actor string, s auditSummary) {
	ctx := context.Background()
	total := 0
	for _, n := range s.counts {
		total += n
	}
	err := b.audit.AppendNow(ctx, audit.Record{
		Actor: actor, Action: "audit.limited",
		Detail: map[string]any{
			"left_out": maps.Clone(s.counts), "total": total,
			"from": s.first.UTC().Format(time.RFC3339Nano), "to": s.last.UTC().Format(time.RFC3339Nano),
			"burst": b.cfg.Limits.AuditBurst, "per_second": b.cfg.Limits.AuditPerSecond,
		},
		At: b.now().UTC().Truncate(time.Microsecond),
	})
	if err != nil {
		b.log.ErrorContext(ctx, "audit a summary of entries left out", "actor", actor, "left_out", total, "err", err.Error())
	}
}
