package board_test

import (
	"net/http"
	"net/netip"
	"strconv"
	"testing"
	"testing/synctest"
	"time"

	"github.com/symphonix/symphonix/board"
	"github.com/symphonix/symphonix/identity"
	"github.com/symphonix/symphonix/store"
)

// TestSignInBehindProxy: behind a trusted proxy, failed sign-ins are
// counted per client address the proxy reports, so one client's failures
// do not lock out another's; the per-account limit holds whatever the
// address. The requests come from httptest's peer, 192.0.2.1.
func TestSignInBehindProxy(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		b := configuredBubbleBoard(t, board.Config{TrustedProxies: []netip.Prefix{netip.MustParsePrefix("192.0.2.0/24")}})
		addWithPassword(t, b, "alice@example.com", identity.RoleViewer, password)
		addWithPassword(t, b, "bob@example.com", identity.RoleViewer, password)
		from := func(addr string) map[string]string {
			return map[string]string{"X-Forwarded-For": "198.51.100.99, " + addr}
		}
		for i := range 20 {
			email := strconv.Itoa(i) + "@example.com"
			if resp, _ := serve(b.Handler(), http.MethodPost, "/auth/signin", signInBody(email, "wrong password!"), from("203.0.113.1")); resp.StatusCode != http.StatusUnauthorized {
				t.Fatalf("failure %d: %s, want 401", i, resp.Status)
			}
		}
		if resp, _ := serve(b.Handler(), http.MethodPost, "/auth/signin", signInBody("alice@example.com", password), from("203.0.113.1")); resp.StatusCode != http.StatusTooManyRequests {
			t.Fatalf("the same client after 20 failures: %s, want 429", resp.Status)
		}
		if resp, body := serve(b.Handler(), http.MethodPost, "/auth/signin", signInBody("alice@example.com", password), from("203.0.113.2")); resp.StatusCode != http.StatusOK {
			t.Fatalf("another client behind the same proxy: %s %s, want 200", resp.Status, body)
		}
		for i := range 5 {
			addr := "203.0.113." + strconv.Itoa(10+i)
			if resp, _ := serve(b.Handler(), http.MethodPost, "/auth/signin", signInBody("bob@example.com", "wrong password!"), from(addr)); resp.StatusCode != http.StatusUnauthorized {
				t.Fatalf("bob's failure %d: %s, want 401", i, resp.Status)
			}
		}
		if resp, _ := serve(b.Handler(), http.MethodPost, "/auth/signin", signInBody("bob@example.com", password), from("203.0.113.20")); resp.StatusCode != http.StatusTooManyRequests {
			t.Fatalf("bob after 5 failures from 5 addresses: %s, want 429: the account's limit stays", resp.Status)
		}
	})
}

// TestForwardedForIgnored: a board that trusts no proxy never reads
// X-Forwarded-For: twenty failures from one peer lock that peer out,
// whatever each request says it came from.
func TestForwardedForIgnored(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		b := configuredBubbleBoard(t, board.Config{})
		addWithPassword(t, b, "alice@example.com", identity.RoleViewer, password)
		for i := range 20 {
			email := strconv.Itoa(i) + "@example.com"
			xff := map[string]string{"X-Forwarded-For": "203.0.113." + strconv.Itoa(i)}
			if resp, _ := serve(b.Handler(), http.MethodPost, "/auth/signin", signInBody(email, "wrong password!"), xff); resp.StatusCode != http.StatusUnauthorized {
				t.Fatalf("failure %d: %s, want 401", i, resp.Status)
			}
		}
		xff := map[string]string{"X-Forwarded-For": "203.0.113.200"}
		if resp, _ := serve(b.Handler(), http.MethodPost, "/auth/signin", signInBody("alice@example.com", password), xff); resp.StatusCode != http.StatusTooManyRequests {
			t.Fatalf("a new X-Forwarded-For from the same peer: %s, want 429", resp.Status)
		}
	})
}

// configuredBubbleBoard is bubbleBoard with cfg (its Store set here).
func configuredBubbleBoard(t *testing.T, cfg board.Config) *board.Board {
	t.Helper()
	db, err := store.Open(t.Context(), store.SQLiteDSN(t.TempDir()))
	if err != nil {
		t.Fatal(err)
	}
	cfg.Store = db
	if cfg.RevocationPoll == 0 {
		cfg.RevocationPoll = time.Hour
	}
	if cfg.HashesPerSecond == 0 {
		// These tests count sign-ins, not the board-wide hash rate
		// (TestHashRate): time stands still in their bubbles.
		cfg.HashesPerSecond = 1000
	}
	b, err := board.New(t.Context(), cfg)
	if err != nil {
		db.Close()
		t.Fatal(err)
	}
	t.Cleanup(func() {
		b.Close()
		db.Close()
	})
	return b
}
