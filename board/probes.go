package board

import (
	"context"
	"log/slog"
	"net/http"
	"sync"
	"sync/atomic"
	"time"
)

// The probes (docs/probes.md), answered without a credential on the
// board's own address and on Config.MetricsListen:
//
//   - GET /healthz: 200 while the process serves HTTP (liveness).
//   - GET /readyz: 200 while the board takes work (readiness): its store
//     answers a query within storeCheckWithin and it is not shutting down;
//     503 otherwise, with a short reason.
//
// grpc.health.v1's Check answers from the same readiness. A probe says
// nothing else: no version, no counts. However often it is asked, the
// store is asked at most once a readyFor, one query at a time.

// Bounds on the readiness check (docs/limits.md).
const (
	// storeCheckWithin is how long the store has to answer.
	storeCheckWithin = time.Second
	// readyFor is how long an answer from the store is kept.
	readyFor = time.Second
)

// The reasons /readyz gives for 503.
const (
	notReadyStore    = "store: not answering"
	notReadyShutdown = "shutting down"
)

// readiness is the store's last answer, kept for readyFor.
type readiness struct {
	mu      sync.Mutex
	checked time.Time     // when the last check ended; zero before the first
	ok      bool          // whether it answered
	running chan struct{} // closed when the check in flight ends; nil when none
	checks  atomic.Int64  // checks begun, for tests
}

// probeRoutes adds /healthz and /readyz to mux.
func (b *Board) probeRoutes(mux *http.ServeMux) {
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, r *http.Request) {
		probeAnswer(w, http.StatusOK, "ok")
	})
	mux.HandleFunc("GET /readyz", func(w http.ResponseWriter, r *http.Request) {
		if why := b.notReady(r.Context()); why != "" {
			probeAnswer(w, http.StatusServiceUnavailable, why)
			return
		}
		probeAnswer(w, http.StatusOK, "ready")
	})
}

func probeAnswer(w http.ResponseWriter, status int, text string) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	_, _ = w.Write([]byte(text + "\n"))
}

// notReady says why the board does not take work now, or "" when it does.
func (b *Board) notReady(ctx context.Context) string {
	if b.isDraining() {
		return notReadyShutdown
	}
	if !b.storeAnswers(ctx) {
		return notReadyStore
	}
	if b.isDraining() { // began while the store was asked
		return notReadyShutdown
	}
	return ""
}

// isDraining says whether the board has begun to shut down.
func (b *Board) isDraining() bool {
	select {
	case <-b.draining:
		return true
	default:
		return false
	}
}

// drain turns the board not ready, once.
func (b *Board) drain() {
	b.drainOnce.Do(func() { close(b.draining) })
}

// storeAnswers says whether the store answered its last check, made at
// most readyFor ago; when that is older, it asks again, or waits for the
// check another probe began. A caller that goes away stops waiting (and
// is told no); the check goes on for the next.
func (b *Board) storeAnswers(ctx context.Context) bool {
	r := &b.ready
	r.mu.Lock()
	if !r.checked.IsZero() && time.Since(r.checked) < readyFor {
		ok := r.ok
		r.mu.Unlock()
		return ok
	}
	wait := r.running
	if wait == nil {
		wait = make(chan struct{})
		r.running = wait
		go b.checkStore(wait)
	}
	r.mu.Unlock()
	select {
	case <-wait:
	case <-ctx.Done():
		return false
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.ok
}

// checkStore asks the store one small query on a table of the schema,
// keeps whether it answered within storeCheckWithin, and closes done.
func (b *Board) checkStore(done chan struct{}) {
	b.ready.checks.Add(1)
	ctx, cancel := context.WithTimeout(context.Background(), storeCheckWithin)
	defer cancel()
	_, err := b.db.Agent.Query().Limit(1).IDs(ctx)
	if err != nil {
		b.log.LogAttrs(ctx, slog.LevelWarn, "readiness: the store did not answer", slog.String("err", err.Error()))
	}
	r := &b.ready
	r.mu.Lock()
	r.ok, r.checked, r.running = err == nil, time.Now(), nil
	r.mu.Unlock()
	close(done)
}
