package board_test

import (
	"encoding/json"
	"net/http"
	"strconv"
	"sync"
	"testing"

	"connectrpc.com/connect/v2"

	boardv1 "github.com/symphonix/symphonix/api/symphonix/board/v1"
	"github.com/symphonix/symphonix/api/symphonix/board/v1/boardv1connect"
	"github.com/symphonix/symphonix/audit"
	"github.com/symphonix/symphonix/board"
	"github.com/symphonix/symphonix/identity"
	"github.com/symphonix/symphonix/internal/boardtest"
)

const password = "correct horse battery"

// TestSignIn: a person signs in over HTTP and is then the caller of an
// RPC through the cookie and CSRF header, with their own role.
func TestSignIn(t *testing.T) {
	t.Parallel()
	bt := boardtest.Start(t, boardtest.Options{})
	bt.AddUser("Alice@Example.com", identity.RoleApprover, password)
	resp, body := bt.PostJSON("/auth/signin", map[string]string{"email": "  ALICE@example.com ", "password": password}, "", "")
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("sign in: %s %s", resp.Status, body)
	}
	var got struct {
		Email     string `json:"email"`
		Role      string `json:"role"`
		CSRFToken string `json:"csrf_token"`
	}
	if err := json.Unmarshal(body, &got); err != nil {
		t.Fatal(err)
	}
	if got.Email != "alice@example.com" || got.Role != "approver" || got.CSRFToken == "" {
		t.Errorf("sign in = %s, want alice@example.com, approver and a csrf token", body)
	}
	var session, csrf *http.Cookie
	for _, c := range resp.Cookies() {
		switch c.Name {
		case board.SessionCookie:
			session = c
		case board.CSRFCookie:
			csrf = c
		}
	}
	if session == nil || !session.HttpOnly || session.SameSite != http.SameSiteStrictMode || session.Path != "/" || session.Secure {
		t.Errorf("session cookie = %+v, want HttpOnly, SameSite=Strict, Path=/, not Secure over plain HTTP", session)
	}
	if csrf == nil || csrf.HttpOnly || csrf.Value != got.CSRFToken || csrf.SameSite != http.SameSiteStrictMode {
		t.Errorf("csrf cookie = %+v, want readable, the token %q, SameSite=Strict", csrf, got.CSRFToken)
	}
	for proto, opts := range boardtest.Protocols {
		users := boardv1connect.NewUserServiceClient(bt.SessionClient(session.Value, got.CSRFToken, opts...))
		me, err := users.Me(t.Context(), &boardv1.MeRequest{})
		if err != nil {
			t.Fatalf("%s: Me: %v", proto, err)
		}
		if me.GetKind() != boardv1.CallerKind_CALLER_KIND_SESSION || me.GetName() != "alice@example.com" || me.GetRole() != boardv1.Role_ROLE_APPROVER || me.GetUser().GetEmail() != "alice@example.com" {
			t.Errorf("%s: Me = %v", proto, me)
		}
		// An approver is not an admin.
		if _, err := users.ListUsers(t.Context(), &boardv1.ListUsersRequest{}); connect.CodeOf(err) != connect.CodePermissionDenied {
			t.Errorf("%s: ListUsers as an approver: %v, want permission_denied", proto, err)
		}
	}
	resp, body = bt.Do(mustRequest(t, http.MethodGet, bt.URL+"/auth/session", session.Value))
	if resp.StatusCode != http.StatusOK {
		t.Errorf("GET /auth/session: %s %s", resp.Status, body)
	}
}

// TestSignInFailures: an unknown email, a wrong password, a person with
// no password (there is no default) and a disabled person all get the
// same answer, and every failure is audited without the password.
func TestSignInFailures(t *testing.T) {
	t.Parallel()
	bt := boardtest.Start(t, boardtest.Options{})
	bt.AddUser("alice@example.com", identity.RoleAdmin, password)
	bt.AddUser("nopass@example.com", identity.RoleAdmin, "")
	bt.AddUser("gone@example.com", identity.RoleViewer, password)
	if _, _, err := bt.Board.Users().SetDisabled(t.Context(), "gone@example.com", true, "test"); err != nil {
		t.Fatal(err)
	}
	cases := map[string][2]string{
		"unknown email":        {"bob@example.com", password},
		"not an email":         {"bob", password},
		"wrong password":       {"alice@example.com", password + "!"},
		"no password":          {"nopass@example.com", ""},
		"no password, a guess": {"nopass@example.com", "password1234"},
		"disabled":             {"gone@example.com", password},
	}
	var first string
	for name, c := range cases {
		resp, body := bt.PostJSON("/auth/signin", map[string]string{"email": c[0], "password": c[1]}, "", "")
		if resp.StatusCode != http.StatusUnauthorized {
			t.Errorf("%s: %s %s, want 401", name, resp.Status, body)
		}
		if len(resp.Cookies()) != 0 {
			t.Errorf("%s: cookies set: %v", name, resp.Cookies())
		}
		if first == "" {
			first = string(body)
		} else if string(body) != first {
			t.Errorf("%s: answer %s, want the same as the others: %s", name, body, first)
		}
	}
	entries, err := audit.New(bt.Store).List(t.Context(), 0, 1000)
	if err != nil {
		t.Fatal(err)
	}
	fails := 0
	for _, e := range entries {
		if e.Action == "signin.fail" {
			fails++
			var d map[string]any
			_ = json.Unmarshal(e.Detail, &d)
			if d["email"] == nil || d["source"] == nil {
				t.Errorf("signin.fail detail %s: want email and source", e.Detail)
			}
			for _, v := range d {
				if v == password || v == password+"!" {
					t.Errorf("signin.fail detail %s holds the password", e.Detail)
				}
			}
		}
	}
	if fails != len(cases) {
		t.Errorf("%d signin.fail entries, want %d", fails, len(cases))
	}
}

// TestSignInLimited: the sixth failed sign-in for one account within the
// window is answered 429 with Retry-After, and so is the right password
// until the window passes (TestLimiter drives the window with synctest).
func TestSignInLimited(t *testing.T) {
	t.Parallel()
	bt := boardtest.Start(t, boardtest.Options{})
	bt.AddUser("alice@example.com", identity.RoleAdmin, password)
	for i := range 5 {
		resp, _ := bt.PostJSON("/auth/signin", map[string]string{"email": "alice@example.com", "password": "wrong password " + strconv.Itoa(i)}, "", "")
		if resp.StatusCode != http.StatusUnauthorized {
			t.Fatalf("attempt %d: %s, want 401", i+1, resp.Status)
		}
	}
	for _, pw := range []string{"wrong again, sixth", password} {
		resp, body := bt.PostJSON("/auth/signin", map[string]string{"email": "Alice@example.com", "password": pw}, "", "")
		if resp.StatusCode != http.StatusTooManyRequests {
			t.Fatalf("sixth attempt: %s %s, want 429", resp.Status, body)
		}
		if s, err := strconv.Atoi(resp.Header.Get("Retry-After")); err != nil || s <= 0 || s > 15*60 {
			t.Errorf("Retry-After %q, want seconds within 15 minutes", resp.Header.Get("Retry-After"))
		}
	}
	// Another account from the same source is not locked by alice's.
	bt.AddUser("bob@example.com", identity.RoleAdmin, password)
	bt.SignIn("bob@example.com", password)
}

func mustRequest(t *testing.T, method, url, cookie string) *http.Request {
	t.Helper()
	req, err := http.NewRequest(method, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	if cookie != "" {
		req.Header.Set("Cookie", board.SessionCookie+"="+cookie)
	}
	return req
}

// TestSignInBurst: a concurrent burst of wrong passwords for one account
// checks no more of them than the account's limit: the rest are answered
// 429 without being checked, and only the checked ones are audited.
func TestSignInBurst(t *testing.T) {
	t.Parallel()
	const burst = 12
	// A hashing slot for every request, so that the hashing bound does
	// not stand in for the limit.
	bt := boardtest.Start(t, boardtest.Options{ConcurrentHashes: burst})
	bt.AddUser("alice@example.com", identity.RoleAdmin, password)
	codes := make(chan int, burst)
	var wg sync.WaitGroup
	for i := range burst {
		wg.Go(func() {
			resp, _ := bt.PostJSON("/auth/signin", map[string]string{"email": "alice@example.com", "password": "wrong password " + strconv.Itoa(i)}, "", "")
			codes <- resp.StatusCode
		})
	}
	wg.Wait()
	close(codes)
	got := map[int]int{}
	for c := range codes {
		got[c]++
	}
	if got[http.StatusUnauthorized] > 5 || got[http.StatusUnauthorized]+got[http.StatusTooManyRequests] != burst {
		t.Errorf("answers to %d concurrent wrong passwords: %v; want at most 5 × 401 and the rest 429", burst, got)
	}
	entries, err := audit.New(bt.Store).List(t.Context(), 0, 1000)
	if err != nil {
		t.Fatal(err)
	}
	fails := 0
	for _, e := range entries {
		if e.Action == "signin.fail" {
			fails++
		}
	}
	if fails != got[http.StatusUnauthorized] {
		t.Errorf("%d signin.fail entries, want one per 401 (%d)", fails, got[http.StatusUnauthorized])
	}
}
