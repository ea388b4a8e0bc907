package board

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/symphonix/symphonix/store"
)

func testBoard(t *testing.T) *Board {
	t.Helper()
	ctx := t.Context()
	db, err := store.Open(ctx, store.SQLiteDSN(t.TempDir()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	b, err := New(ctx, Config{Store: db})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(b.Close)
	return b
}

// TestServedServices: the services health answers for are exactly the
// services the board registers, so that a new service is not unknown to
// a load balancer's health check.
func TestServedServices(t *testing.T) {
	t.Parallel()
	b := testBoard(t)
	registered := map[string]bool{"": true}
	for p := range b.metrics.procedures {
		service, _, ok := strings.Cut(strings.TrimPrefix(p, "/"), "/")
		if !ok {
			t.Fatalf("procedure %q: not /service/method", p)
		}
		registered[service] = true
	}
	for s := range registered {
		if !servedServices[s] {
			t.Errorf("%s is registered but not in servedServices", s)
		}
	}
	for s := range servedServices {
		if !registered[s] {
			t.Errorf("%s is in servedServices but not registered", s)
		}
	}
}

// TestReadyzFlood: however many ask /readyz at once, and again within a
// second, the store is asked once.
func TestReadyzFlood(t *testing.T) {
	t.Parallel()
	b := testBoard(t)
	srv := httptest.NewServer(b.Handler())
	defer srv.Close()
	var wg sync.WaitGroup
	start := time.Now()
	for range 200 {
		wg.Go(func() {
			resp, err := srv.Client().Get(srv.URL + "/readyz")
			if err != nil {
				t.Error(err)
				return
			}
			resp.Body.Close()
			if resp.StatusCode != http.StatusOK {
				t.Errorf("GET /readyz = %s, want 200", resp.Status)
			}
		})
	}
	wg.Wait()
	// Within readyFor of the first check, one check; a slow machine may
	// have let the first answer age, and asked once more.
	want := 1 + int64(time.Since(start)/readyFor)
	if n := b.ready.checks.Load(); n < 1 || n > want {
		t.Errorf("200 /readyz asked the store %d times, want 1 (at most %d)", n, want)
	}
}
