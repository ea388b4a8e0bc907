package board_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"connectrpc.com/connect/v2"

	boardv1 "github.com/symphonix/symphonix/api/symphonix/board/v1"
	"github.com/symphonix/symphonix/api/symphonix/board/v1/boardv1connect"
	"github.com/symphonix/symphonix/board"
	"github.com/symphonix/symphonix/identity"
	"github.com/symphonix/symphonix/internal/boardtest"
	"github.com/symphonix/symphonix/store"
)

// TestHashingBusy: with every hashing slot taken, a sign-in and a setup
// that would hash are answered 503 with Retry-After at once (no time
// passes in the bubble), and a busy sign-in does not count against the
// limits; once a slot is free they go through.
func TestHashingBusy(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		b := bubbleBoard(t, 0)
		addWithPassword(t, b, "alice@example.com", identity.RoleViewer, password)
		_, link, err := b.Users().Add(t.Context(), identity.AddUser{Email: "bob@example.com", Role: identity.RoleViewer, Actor: "test"})
		if err != nil {
			t.Fatal(err)
		}
		setup := setupBody(link.Token, password)
		release := b.HoldHashSlotsForTest()
		start := time.Now()
		for i := range 2 * 5 {
			pw := password
			if i%2 == 0 {
				pw = "wrong password!"
			}
			resp, body := serve(b.Handler(), http.MethodPost, "/auth/signin", signInBody("alice@example.com", pw), nil)
			if resp.StatusCode != http.StatusServiceUnavailable || resp.Header.Get("Retry-After") != "1" {
				t.Fatalf("sign-in with every slot taken: %s %s, Retry-After %q; want 503 and 1", resp.Status, body, resp.Header.Get("Retry-After"))
			}
		}
		if resp, body := serve(b.Handler(), http.MethodPost, "/auth/setup", setup, nil); resp.StatusCode != http.StatusServiceUnavailable || resp.Header.Get("Retry-After") != "1" {
			t.Fatalf("setup with every slot taken: %s %s, want 503 with Retry-After", resp.Status, body)
		}
		if waited := time.Since(start); waited != 0 {
			t.Errorf("busy answers took %s, want at once", waited)
		}
		release()
		for range 5 {
			if resp, body := serve(b.Handler(), http.MethodPost, "/auth/signin", signInBody("alice@example.com", "wrong password!"), nil); resp.StatusCode != http.StatusUnauthorized {
				t.Fatalf("a wrong password once slots are free: %s %s, want 401 (the busy answers counted nothing)", resp.Status, body)
			}
		}
		addWithPassword(t, b, "carol@example.com", identity.RoleViewer, password)
		if resp, body := serve(b.Handler(), http.MethodPost, "/auth/signin", signInBody("carol@example.com", password), nil); resp.StatusCode != http.StatusOK {
			t.Fatalf("sign-in once slots are free: %s %s", resp.Status, body)
		}
		if resp, body := serve(b.Handler(), http.MethodPost, "/auth/setup", setup, nil); resp.StatusCode != http.StatusOK {
			t.Fatalf("setup once slots are free: %s %s", resp.Status, body)
		}
	})
}

// TestSetupRefusedWithoutHashing: a burst of setups with links that are
// no good is refused 400 even while every hashing slot is taken: they are
// refused on the cheap checks, before asking for one, so none hashed.
func TestSetupRefusedWithoutHashing(t *testing.T) {
	t.Parallel()
	bt := boardtest.Start(t, boardtest.Options{})
	_, used, err := bt.Board.Users().Add(t.Context(), identity.AddUser{Email: "used@example.com", Role: identity.RoleViewer, Actor: "test"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := bt.Board.Users().Setup(t.Context(), identity.Setup{Token: used.Token, Password: password}); err != nil {
		t.Fatal(err)
	}
	_, fresh, err := bt.Board.Users().Add(t.Context(), identity.AddUser{Email: "fresh@example.com", Role: identity.RoleViewer, Actor: "test"})
	if err != nil {
		t.Fatal(err)
	}
	bad := []map[string]string{
		{"token": strings.Repeat("A", 43), "password": password},
		{"token": "short", "password": password},
		{"token": used.Token, "password": password},
		{"token": fresh.Token, "password": "short"},
		{"token": strings.Repeat("A", 43), "email": "root@example.com", "name": "Root", "password": password},
	}
	release := bt.Board.HoldHashSlotsForTest()
	defer release()
	const burst = 60
	var wg sync.WaitGroup
	for i := range burst {
		wg.Go(func() {
			body := bad[i%len(bad)]
			resp, got := bt.PostJSON("/auth/setup", body, "", "")
			if resp.StatusCode != http.StatusBadRequest {
				t.Errorf("setup %v with every hashing slot taken: %s %s, want 400 without hashing", body, resp.Status, got)
			}
		})
	}
	wg.Wait()
	// The control: a good link does want a slot.
	if resp, got := bt.PostJSON("/auth/setup", map[string]string{"token": fresh.Token, "password": password}, "", ""); resp.StatusCode != http.StatusServiceUnavailable {
		t.Errorf("setup with a good link and every slot taken: %s %s, want 503", resp.Status, got)
	}
}

func setupBody(token, pw string) string {
	b, _ := json.Marshal(map[string]string{"token": token, "password": pw})
	return string(b)
}

// TestVerifySecretsBusy: checking and setting verify secrets hash too, and
// take a slot like a password: with none free, both are refused as
// unavailable at once, and go through once one is.
func TestVerifySecretsBusy(t *testing.T) {
	t.Parallel()
	bt, a := verifyBoard(t, boardtest.Options{})
	bt.AddUser("bob@example.com", identity.RoleViewer, password)
	cookie, csrf := bt.SignIn("bob@example.com", password)
	users := boardv1connect.NewUserServiceClient(bt.SessionClient(cookie, csrf))

	release := bt.Board.HoldHashSlotsForTest()
	got := a.link.Verify(t.Context(), "ann@example.com", secret, 5*time.Second)
	if got.OK || !strings.Contains(got.Why, "busy") {
		t.Errorf("Verify with every slot taken = %+v, want refused as busy", got)
	}
	if _, err := users.SetVerifySecret(t.Context(), &boardv1.SetVerifySecretRequest{Secret: secret}); connect.CodeOf(err) != connect.CodeUnavailable {
		t.Errorf("SetVerifySecret with every slot taken: %v, want unavailable", err)
	}
	release()
	if got := a.link.Verify(t.Context(), "ann@example.com", secret, 5*time.Second); !got.OK {
		t.Errorf("Verify once a slot is free = %+v, want ok", got)
	}
	if _, err := users.SetVerifySecret(t.Context(), &boardv1.SetVerifySecretRequest{Secret: secret}); err != nil {
		t.Errorf("SetVerifySecret once a slot is free: %v", err)
	}
}

// TestHashRate: with the board's own rate (5 hashes a second for its one
// slot, bursts of 10), sign-ins one after another, each from its own
// address, are hashed up to the burst and then answered 503 with
// Retry-After at once, without being hashed; as time passes, hashing
// starts again at the rate.
func TestHashRate(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		db, err := store.Open(t.Context(), store.SQLiteDSN(t.TempDir()))
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		b, err := board.New(t.Context(), board.Config{Store: db, RevocationPoll: time.Hour, ConcurrentHashes: 1})
		if err != nil {
			t.Fatal(err)
		}
		defer b.Close()
		signIn := func(i int) int {
			req := httptest.NewRequest(http.MethodPost, "/auth/signin", strings.NewReader(signInBody(fmt.Sprintf("nobody%d@example.com", i), "wrong password!")))
			req.Header.Set("Content-Type", "application/json")
			req.RemoteAddr = fmt.Sprintf("192.0.2.%d:1234", i%250+1)
			w := httptest.NewRecorder()
			b.Handler().ServeHTTP(w, req)
			if w.Code == http.StatusServiceUnavailable && w.Header().Get("Retry-After") != "1" {
				t.Errorf("sign-in %d: 503 without Retry-After: 1", i)
			}
			return w.Code
		}
		for i := range 10 {
			if code := signIn(i); code != http.StatusUnauthorized {
				t.Fatalf("sign-in %d of the burst: %d, want 401 (hashed, wrong)", i, code)
			}
		}
		if code := signIn(10); code != http.StatusServiceUnavailable {
			t.Fatalf("sign-in past the burst, no time passed: %d, want 503", code)
		}
		time.Sleep(time.Second)
		hashed := 0
		for i := range 10 {
			if signIn(11+i) == http.StatusUnauthorized {
				hashed++
			}
		}
		if hashed != 5 {
			t.Errorf("a second later, %d of 10 sign-ins were hashed, want 5 (the rate)", hashed)
		}
	})
}
