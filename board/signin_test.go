package board_test

import (
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"connectrpc.com/connect/v2"
	"google.golang.org/protobuf/encoding/protojson"

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
	var got boardv1.Session
	if err := protojson.Unmarshal(body, &got); err != nil {
		t.Fatalf("sign in = %s: not a Session: %v", body, err)
	}
	if got.GetEmail() != "alice@example.com" || got.GetRole() != boardv1.Role_ROLE_APPROVER || got.GetCsrfToken() == "" ||
		got.GetExpireTime().AsTime().Before(time.Now().Add(11*time.Hour)) {
		t.Errorf("sign in = %s, want alice@example.com, approver, a csrf token and 12 hours", body)
	}
	// The API's JSON: camelCase names, enums by name, times in RFC 3339.
	var raw map[string]any
	if err := json.Unmarshal(body, &raw); err != nil || raw["role"] != "ROLE_APPROVER" || raw["csrfToken"] != got.GetCsrfToken() {
		t.Errorf("sign in = %s, want role ROLE_APPROVER and csrfToken", body)
	}
	if at, _ := raw["expireTime"].(string); !strings.HasSuffix(at, "Z") {
		t.Errorf("sign in = %s, want expireTime in RFC 3339", body)
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
	if csrf == nil || csrf.HttpOnly || csrf.Value != got.GetCsrfToken() || csrf.SameSite != http.SameSiteStrictMode {
		t.Errorf("csrf cookie = %+v, want readable, the token %q, SameSite=Strict", csrf, got.GetCsrfToken())
	}
	for proto, opts := range boardtest.Protocols {
		users := boardv1connect.NewUserServiceClient(bt.SessionClient(session.Value, got.GetCsrfToken(), opts...))
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

// TestAuthBodies: /auth takes and gives the API's messages as protobuf
// JSON. A body that is not the message, or holds a field it does not
// have, is refused with an AuthError naming what was wrong, and so is
// everything else that is not a success; setup answers the User.
func TestAuthBodies(t *testing.T) {
	t.Parallel()
	bt := boardtest.Start(t, boardtest.Options{})
	bt.AddUser("alice@example.com", identity.RoleAdmin, password)
	_, link, err := bt.Board.Users().Add(t.Context(), identity.AddUser{Email: "bob@example.com", Name: "Bob", Role: identity.RoleApprover, Actor: "test"})
	if err != nil {
		t.Fatal(err)
	}
	post := func(path, body, contentType string) (int, []byte) {
		req, err := http.NewRequest(http.MethodPost, bt.URL+path, strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Content-Type", contentType)
		resp, data := bt.Do(req)
		return resp.StatusCode, data
	}
	tests := []struct {
		name, path, body, contentType string
		status                        int
		want                          string // the AuthError's error
	}{
		{"a field SignInRequest does not have", "/auth/signin", `{"email": "alice@example.com", "password": "x", "remember": true}`, "application/json",
			http.StatusBadRequest, `SignInRequest: unknown field "remember": this board does not know it`},
		{"not JSON", "/auth/signin", `email=alice@example.com`, "application/json", http.StatusBadRequest, "body: not a JSON SignInRequest"},
		{"a number for the email", "/auth/signin", `{"email": 5, "password": "x"}`, "application/json", http.StatusBadRequest, "body: not a JSON SignInRequest"},
		{"a form", "/auth/signin", `email=alice@example.com`, "application/x-www-form-urlencoded", http.StatusUnsupportedMediaType, "send application/json"},
		{"too large", "/auth/signin", `{"email": "` + strings.Repeat("a", 9<<10) + `"}`, "application/json", http.StatusRequestEntityTooLarge, "body: more than 8192 bytes"},
		{"a field SetupRequest does not have", "/auth/setup", `{"token": "t", "role": "ROLE_ADMIN"}`, "application/json",
			http.StatusBadRequest, `SetupRequest: unknown field "role": this board does not know it`},
		{"a wrong password", "/auth/signin", `{"email": "alice@example.com", "password": "not the password"}`, "application/json",
			http.StatusUnauthorized, "wrong email or password"},
	}
	for _, tt := range tests {
		status, body := post(tt.path, tt.body, tt.contentType)
		var e boardv1.AuthError
		if err := protojson.Unmarshal(body, &e); err != nil || status != tt.status || e.GetError() != tt.want {
			t.Errorf("%s: %d %s (%v), want %d and the AuthError %q", tt.name, status, body, err, tt.status, tt.want)
		}
	}
	// Setup, in the API's names (and its JSON's other spelling of them).
	status, body := post("/auth/setup", `{"token": "`+link.Token+`", "password": "`+password+`"}`, "application/json")
	var u boardv1.User
	if err := protojson.Unmarshal(body, &u); err != nil || status != http.StatusOK || u.GetEmail() != "bob@example.com" ||
		u.GetRole() != boardv1.Role_ROLE_APPROVER || !u.GetHasPassword() || u.GetId() == "" || u.GetCreateTime() == nil {
		t.Fatalf("setup = %d %s (%v), want bob's User, an approver with a password", status, body, err)
	}
	cookie, _ := bt.SignIn("bob@example.com", password)
	req, err := http.NewRequest(http.MethodGet, bt.URL+"/auth/session", nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Cookie", board.SessionCookie+"="+cookie)
	resp, body := bt.Do(req)
	var s boardv1.Session
	if err := protojson.Unmarshal(body, &s); err != nil || resp.StatusCode != http.StatusOK || s.GetEmail() != "bob@example.com" ||
		s.GetName() != "Bob" || s.GetRole() != boardv1.Role_ROLE_APPROVER || s.GetCsrfToken() != "" || s.GetExpireTime() == nil {
		t.Errorf("GET /auth/session = %d %s (%v), want bob's Session without its CSRF token", resp.StatusCode, body, err)
	}
}
