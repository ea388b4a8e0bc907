package store_test

import (
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/symphonix/symphonix/ent"
	"github.com/symphonix/symphonix/internal/boardtest"
	"github.com/symphonix/symphonix/store"
)

// TestTakeToken: a bucket shared by two clients of one PostgreSQL store
// gives burst tokens between them however many ask at once, refills at
// its rate, ignores a clock that went back, and an SQLite store has none.
func TestTakeToken(t *testing.T) {
	t.Parallel()
	dsn := boardtest.PostgresDSN(t)
	var clients [2]*ent.Client
	for i := range clients {
		c, err := store.Open(t.Context(), dsn)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		clients[i] = c
	}
	now := time.Date(2026, 12, 3, 10, 0, 0, 0, time.UTC)
	var got atomic.Int32
	var wg sync.WaitGroup
	for i := range 40 {
		wg.Go(func() {
			ok, err := store.TakeToken(t.Context(), clients[i%2], "caller", 10, 2, now)
			if err != nil {
				t.Error(err)
			}
			if ok {
				got.Add(1)
			}
		})
	}
	wg.Wait()
	if n := got.Load(); n != 10 {
		t.Fatalf("40 takes at once from a bucket of 10 gave %d tokens", n)
	}
	take := func(at time.Time) bool {
		t.Helper()
		ok, err := store.TakeToken(t.Context(), clients[1], "caller", 10, 2, at)
		if err != nil {
			t.Fatal(err)
		}
		return ok
	}
	if take(now.Add(-time.Hour)) {
		t.Error("a clock an hour back refilled the bucket")
	}
	if !take(now.Add(500*time.Millisecond)) || take(now.Add(500*time.Millisecond)) {
		t.Error("half a second at 2 a second refills other than one token")
	}
	if ok, _ := store.TakeToken(t.Context(), clients[0], "other", 10, 2, now); !ok {
		t.Error("another caller's bucket is not full")
	}
	lite, err := store.Open(t.Context(), store.SQLiteDSN(t.TempDir()))
	if err != nil {
		t.Fatal(err)
	}
	defer lite.Close()
	if _, err := store.TakeToken(t.Context(), lite, "caller", 10, 2, now); !errors.Is(err, store.ErrNoNotifications) {
		t.Errorf("SQLite store: %v, want ErrNoNotifications", err)
	}
}
