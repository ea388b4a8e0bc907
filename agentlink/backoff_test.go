package agentlink_test

import (
	"context"
	"log/slog"
	"net"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/symphonix/symphonix/agentlink"
)

func TestBackoff(t *testing.T) {
	t.Parallel()
	const min, max = 250 * time.Millisecond, 30 * time.Second
	tests := []struct {
		attempt int
		r       float64
		want    time.Duration
	}{
		{0, 0, 125 * time.Millisecond},
		{0, 0.999999999, 250 * time.Millisecond},
		{1, 0, 250 * time.Millisecond},
		{1, 0.5, 375 * time.Millisecond},
		{3, 0, time.Second},
		{7, 0, 15 * time.Second},
		{8, 0, 15 * time.Second}, // 64 s capped at 30 s
		{8, 0.999999999, 30 * time.Second},
		{1000, 0.5, 22500 * time.Millisecond},
	}
	for _, tt := range tests {
		got := agentlink.Backoff(tt.attempt, min, max, tt.r).Round(time.Millisecond)
		if got != tt.want {
			t.Errorf("Backoff(%d, %v, %v, %v) = %v, want %v", tt.attempt, min, max, tt.r, got, tt.want)
		}
	}
}

// retries records the waits Run announces in its log.
type retries struct {
	mu    sync.Mutex
	waits []time.Duration
	at    []time.Time
	msgs  []string
	// changed is signalled (without blocking) at every wait recorded.
	changed chan struct{}
}

func (r *retries) Enabled(context.Context, slog.Level) bool { return true }
func (r *retries) WithAttrs([]slog.Attr) slog.Handler       { return r }
func (r *retries) WithGroup(string) slog.Handler            { return r }
func (r *retries) Handle(_ context.Context, rec slog.Record) error {
	rec.Attrs(func(a slog.Attr) bool {
		if a.Key == "retry_in" {
			r.mu.Lock()
			r.waits = append(r.waits, a.Value.Duration())
			r.at = append(r.at, time.Now())
			r.msgs = append(r.msgs, rec.Message)
			r.mu.Unlock()
			if r.changed != nil {
				select {
				case r.changed <- struct{}{}:
				default:
				}
			}
		}
		return true
	})
	return nil
}

// TestRunRedialsWithBackoff: with no board listening, Run redials with
// exponentially growing, jittered, capped waits, and stops when told.
func TestRunRedialsWithBackoff(t *testing.T) {
	t.Parallel()
	// A port nobody listens on: every dial is refused at once.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()

	synctest.Test(t, func(t *testing.T) {
		rec := &retries{}
		link, err := agentlink.New(agentlink.Config{
			BoardURL:   "http://" + addr,
			Token:      "t",
			Identity:   agentlink.Identity{Name: "lonely"},
			MinBackoff: time.Second,
			MaxBackoff: 16 * time.Second,
			Logger:     slog.New(rec),
		})
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancel(t.Context())
		done := make(chan error)
		go func() { done <- link.Run(ctx) }()
		start := time.Now()
		time.Sleep(2 * time.Minute)
		cancel()
		if err := <-done; err != nil {
			t.Fatalf("Run = %v, want nil after cancel", err)
		}
		rec.mu.Lock()
		defer rec.mu.Unlock()
		t.Logf("%d redials: %v", len(rec.waits), rec.waits)
		if len(rec.waits) < 8 {
			t.Fatalf("%d redials in 2 minutes, want at least 8: %v", len(rec.waits), rec.waits)
		}
		prev := start
		for i, w := range rec.waits {
			full := time.Second << min(i, 4)
			if w < full/2 || w > full {
				t.Errorf("wait %d = %v, want within [%v, %v]", i, w, full/2, full)
			}
			if i > 0 {
				if gap := rec.at[i].Sub(prev); gap < rec.waits[i-1] {
					t.Errorf("redial %d came %v after the previous, before its wait of %v", i, gap, rec.waits[i-1])
				}
			}
			prev = rec.at[i]
		}
	})
}
