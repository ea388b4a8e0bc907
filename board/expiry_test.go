package board_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/symphonix/symphonix/board"
	"github.com/symphonix/symphonix/identity"
)

// bubbleBoard is a board on its own store inside a synctest bubble, served
// through its handler: time in it is the bubble's.
func bubbleBoard(t *testing.T, ttl time.Duration) *board.Board {
	t.Helper()
	return configuredBubbleBoard(t, board.Config{SessionTTL: ttl})
}

// serve sends one request through h and returns the status and body.
func serve(h http.Handler, method, path, body string, header map[string]string) (*http.Response, string) {
	req := httptest.NewRequest(method, path, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	for k, v := range header {
		req.Header.Set(k, v)
	}
	w := httptest.NewRecorder()
	h.ServeHTTP(w, req)
	return w.Result(), w.Body.String()
}

func signInBody(email, pw string) string {
	b, _ := json.Marshal(map[string]string{"email": email, "password": pw})
	return string(b)
}

// TestSessionExpires: a session works until its TTL and not a second
// after, with time driven by synctest.
func TestSessionExpires(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		b := bubbleBoard(t, 12*time.Hour)
		addWithPassword(t, b, "alice@example.com", identity.RoleViewer, password)
		resp, body := serve(b.Handler(), http.MethodPost, "/auth/signin", signInBody("alice@example.com", password), nil)
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("sign in: %s %s", resp.Status, body)
		}
		var s struct {
			CSRFToken string `json:"csrfToken"`
		}
		_ = json.Unmarshal([]byte(body), &s)
		var cookie string
		for _, c := range resp.Cookies() {
			if c.Name == board.SessionCookie {
				cookie = c.Value
				if c.MaxAge != int((12 * time.Hour).Seconds()) {
					t.Errorf("cookie Max-Age %d, want 12 h", c.MaxAge)
				}
			}
		}
		me := func() int {
			resp, _ := serve(b.Handler(), http.MethodPost, "/symphonix.board.v1.UserService/Me", "{}", map[string]string{
				"Cookie":         board.SessionCookie + "=" + cookie,
				board.CSRFHeader: s.CSRFToken,
			})
			return resp.StatusCode
		}
		if got := me(); got != http.StatusOK {
			t.Fatalf("Me at once: %d", got)
		}
		time.Sleep(12*time.Hour - time.Second)
		if got := me(); got != http.StatusOK {
			t.Fatalf("Me a second before expiry: %d, want 200", got)
		}
		time.Sleep(time.Second)
		if got := me(); got != http.StatusUnauthorized {
			t.Fatalf("Me at expiry: %d, want 401", got)
		}
	})
}

// TestSignInWindow: after five failures an account is refused (429) even
// with the right password, until fifteen minutes after the first.
func TestSignInWindow(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		b := bubbleBoard(t, 0)
		addWithPassword(t, b, "alice@example.com", identity.RoleViewer, password)
		for range 5 {
			if resp, _ := serve(b.Handler(), http.MethodPost, "/auth/signin", signInBody("alice@example.com", "wrong password!"), nil); resp.StatusCode != http.StatusUnauthorized {
				t.Fatalf("failure: %s, want 401", resp.Status)
			}
			time.Sleep(time.Minute)
		}
		resp, _ := serve(b.Handler(), http.MethodPost, "/auth/signin", signInBody("alice@example.com", password), nil)
		if resp.StatusCode != http.StatusTooManyRequests || resp.Header.Get("Retry-After") != "600" {
			t.Fatalf("right password after 5 failures: %s, Retry-After %q; want 429 and 600", resp.Status, resp.Header.Get("Retry-After"))
		}
		time.Sleep(10 * time.Minute)
		if resp, body := serve(b.Handler(), http.MethodPost, "/auth/signin", signInBody("alice@example.com", password), nil); resp.StatusCode != http.StatusOK {
			t.Fatalf("right password once the window passed: %s %s", resp.Status, body)
		}
	})
}

// TestSignInLimitPerSource: twenty failures from one address, across
// accounts, block that address, and not another.
func TestSignInLimitPerSource(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		b := bubbleBoard(t, 0)
		addWithPassword(t, b, "alice@example.com", identity.RoleViewer, password)
		for i := range 20 {
			email := string(rune('a'+i)) + "@example.com"
			if resp, _ := serve(b.Handler(), http.MethodPost, "/auth/signin", signInBody(email, "wrong password!"), nil); resp.StatusCode != http.StatusUnauthorized {
				t.Fatalf("failure %d: %s, want 401", i, resp.Status)
			}
		}
		if resp, _ := serve(b.Handler(), http.MethodPost, "/auth/signin", signInBody("alice@example.com", password), nil); resp.StatusCode != http.StatusTooManyRequests {
			t.Fatalf("from the same source: %s, want 429", resp.Status)
		}
		req := httptest.NewRequest(http.MethodPost, "/auth/signin", strings.NewReader(signInBody("alice@example.com", password)))
		req.Header.Set("Content-Type", "application/json")
		req.RemoteAddr = "198.51.100.7:4321"
		w := httptest.NewRecorder()
		b.Handler().ServeHTTP(w, req)
		if w.Code != http.StatusOK {
			t.Fatalf("from another source: %d, want 200", w.Code)
		}
	})
}

func addWithPassword(t *testing.T, b *board.Board, email string, role identity.Role, pw string) {
	t.Helper()
	_, link, err := b.Users().Add(t.Context(), identity.AddUser{Email: email, Role: role, Actor: "test"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := b.Users().Setup(t.Context(), identity.Setup{Token: link.Token, Password: pw}); err != nil {
		t.Fatal(err)
	}
}
