package board_test

import (
	"crypto/ed25519"
	"crypto/rand"
	"net/http"
	"testing"
	"time"

	"connectrpc.com/connect/v2"
	"github.com/golang-jwt/jwt/v5"

	boardv1 "github.com/symphonix/symphonix/api/symphonix/board/v1"
	"github.com/symphonix/symphonix/api/symphonix/board/v1/boardv1connect"
	"github.com/symphonix/symphonix/identity"
	"github.com/symphonix/symphonix/internal/boardtest"
)

func sessionUsers(bt *boardtest.Board, cookie, csrf string) boardv1connect.UserServiceClient {
	return boardv1connect.NewUserServiceClient(bt.SessionClient(cookie, csrf))
}

// TestCSRF: a request the session cookie authenticates is refused without
// the CSRF header or with a wrong one, for RPCs and for signing out; a
// bearer token needs none.
func TestCSRF(t *testing.T) {
	t.Parallel()
	bt := boardtest.Start(t, boardtest.Options{})
	bt.AddUser("alice@example.com", identity.RoleAdmin, password)
	cookie, csrf := bt.SignIn("alice@example.com", password)
	_, other := bt.SignIn("alice@example.com", password) // her other session's token
	add := &boardv1.AddUserRequest{Email: "bob@example.com", Role: boardv1.Role_ROLE_VIEWER}
	for name, h := range map[string]string{"missing": "", "wrong": "nope", "another session's": other} {
		for proto, opts := range boardtest.Protocols {
			users := boardv1connect.NewUserServiceClient(bt.SessionClient(cookie, h, opts...))
			_, err := users.AddUser(t.Context(), add)
			if connect.CodeOf(err) != connect.CodePermissionDenied {
				t.Errorf("%s/%s: AddUser with %s CSRF token: %v, want permission_denied", name, proto, name, err)
			}
			if _, err := users.Me(t.Context(), &boardv1.MeRequest{}); connect.CodeOf(err) != connect.CodePermissionDenied {
				t.Errorf("%s/%s: Me with %s CSRF token: %v, want permission_denied", name, proto, name, err)
			}
		}
		resp, body := bt.PostJSON("/auth/signout", map[string]string{}, cookie, h)
		if resp.StatusCode != http.StatusForbidden {
			t.Errorf("sign out with %s CSRF token: %s %s, want 403", name, resp.Status, body)
		}
	}
	if _, err := identity.NewUsers(bt.Store, nil).ByEmail(t.Context(), "bob@example.com"); err == nil {
		t.Fatalf("bob was added by a request without the right CSRF token")
	}
	if _, err := sessionUsers(bt, cookie, csrf).AddUser(t.Context(), add); err != nil {
		t.Fatalf("AddUser with the CSRF token: %v", err)
	}
	// A bearer token needs no CSRF header.
	if _, err := bt.Users(bt.OperatorToken("ops", identity.RoleAdmin)).ListUsers(t.Context(), &boardv1.ListUsersRequest{}); err != nil {
		t.Errorf("ListUsers with an operator token: %v", err)
	}
}

// TestSignOut ends the session: its cookie is refused afterwards.
func TestSignOut(t *testing.T) {
	t.Parallel()
	bt := boardtest.Start(t, boardtest.Options{})
	bt.AddUser("alice@example.com", identity.RoleViewer, password)
	cookie, csrf := bt.SignIn("alice@example.com", password)
	resp, body := bt.PostJSON("/auth/signout", map[string]string{}, cookie, csrf)
	if resp.StatusCode != http.StatusNoContent {
		t.Fatalf("sign out: %s %s", resp.Status, body)
	}
	if _, err := sessionUsers(bt, cookie, csrf).Me(t.Context(), &boardv1.MeRequest{}); connect.CodeOf(err) != connect.CodeUnauthenticated {
		t.Errorf("Me after sign-out: %v, want unauthenticated", err)
	}
	if resp, _ := bt.Do(mustRequest(t, http.MethodGet, bt.URL+"/auth/session", cookie)); resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("GET /auth/session after sign-out: %s, want 401", resp.Status)
	}
}

// TestDisableEndsSessions: disabling a person ends their live session on
// its next request, and enabling them again does not bring it back.
func TestDisableEndsSessions(t *testing.T) {
	t.Parallel()
	bt := boardtest.Start(t, boardtest.Options{})
	bt.AddUser("alice@example.com", identity.RoleAdmin, password)
	bobID := bt.AddUser("bob@example.com", identity.RoleApprover, password).ID
	cookie, csrf := bt.SignIn("bob@example.com", password)
	bob := sessionUsers(bt, cookie, csrf)
	if _, err := bob.Me(t.Context(), &boardv1.MeRequest{}); err != nil {
		t.Fatalf("Me before: %v", err)
	}
	ac, acsrf := bt.SignIn("alice@example.com", password)
	got, err := sessionUsers(bt, ac, acsrf).DisableUser(t.Context(), &boardv1.DisableUserRequest{UserId: bobID})
	if err != nil {
		t.Fatal(err)
	}
	if !got.GetUser().GetDisabled() || got.GetSessionsEnded() != 1 {
		t.Errorf("DisableUser = %v, want disabled and 1 session ended", got)
	}
	if _, err := bob.Me(t.Context(), &boardv1.MeRequest{}); connect.CodeOf(err) != connect.CodeUnauthenticated {
		t.Fatalf("Me after disable: %v, want unauthenticated", err)
	}
	if _, _, err := bt.Board.Users().SetDisabled(t.Context(), "bob@example.com", false, "test"); err != nil {
		t.Fatal(err)
	}
	if _, err := bob.Me(t.Context(), &boardv1.MeRequest{}); connect.CodeOf(err) != connect.CodeUnauthenticated {
		t.Errorf("Me after enabling again: %v, want unauthenticated (the session stays ended)", err)
	}
	bt.SignIn("bob@example.com", password)
}

// TestSessionRoleIsLive: a session's role is the person's role now, not
// the one they signed in with.
func TestSessionRoleIsLive(t *testing.T) {
	t.Parallel()
	bt := boardtest.Start(t, boardtest.Options{})
	bt.AddUser("bob@example.com", identity.RoleAdmin, password)
	bt.AddUser("alice@example.com", identity.RoleAdmin, password)
	cookie, csrf := bt.SignIn("bob@example.com", password)
	users := sessionUsers(bt, cookie, csrf)
	if _, err := users.ListUsers(t.Context(), &boardv1.ListUsersRequest{}); err != nil {
		t.Fatalf("ListUsers as an admin: %v", err)
	}
	if _, err := bt.Board.Users().SetRole(t.Context(), "bob@example.com", identity.RoleViewer, "test"); err != nil {
		t.Fatal(err)
	}
	if _, err := users.ListUsers(t.Context(), &boardv1.ListUsersRequest{}); connect.CodeOf(err) != connect.CodePermissionDenied {
		t.Errorf("ListUsers after demotion: %v, want permission_denied", err)
	}
}

// TestSessionsRefused is the JWT attack table for session cookies: every
// cookie here must be refused with unauthenticated, though it comes with
// the session's real CSRF token.
func TestSessionsRefused(t *testing.T) {
	t.Parallel()
	bt := boardtest.Start(t, boardtest.Options{})
	alice := bt.AddUser("alice@example.com", identity.RoleAdmin, password)
	bob := bt.AddUser("bob@example.com", identity.RoleAdmin, password)
	cookie, csrf := bt.SignIn("alice@example.com", password)
	var real jwt.RegisteredClaims
	if _, _, err := jwt.NewParser().ParseUnverified(cookie, &real); err != nil {
		t.Fatal(err)
	}
	ended, endedCSRF := bt.SignIn("alice@example.com", password)
	if resp, body := bt.PostJSON("/auth/signout", map[string]string{}, ended, endedCSRF); resp.StatusCode != http.StatusNoContent {
		t.Fatalf("sign out: %s %s", resp.Status, body)
	}
	now := time.Now()
	claims := func(edit func(jwt.MapClaims)) jwt.MapClaims {
		c := jwt.MapClaims{
			"iss": identity.Issuer,
			"sub": alice.ID,
			"aud": []string{identity.Audience},
			"exp": now.Add(time.Hour).Unix(),
			"nbf": now.Add(-time.Minute).Unix(),
			"iat": now.Add(-time.Minute).Unix(),
			"jti": real.ID,
		}
		if edit != nil {
			edit(c)
		}
		return c
	}
	header := func(edit func(map[string]any)) map[string]any {
		h := map[string]any{"typ": "session+jwt", "kid": bt.KeyID()}
		if edit != nil {
			edit(h)
		}
		return h
	}
	_, otherKey, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	control := bt.Forge(jwt.SigningMethodEdDSA, nil, header(nil), claims(nil))
	if _, err := sessionUsers(bt, control, csrf).Me(t.Context(), &boardv1.MeRequest{}); err != nil {
		t.Fatalf("control cookie refused: %v", err)
	}
	cases := map[string]string{
		"malformed":                       "not.a.jwt",
		"garbage":                         "eyJhbGciOiJFZERTQSJ9.e30",
		"alg none":                        mustNone(t, header(nil), claims(nil)),
		"hs256 with public key as secret": bt.Forge(jwt.SigningMethodHS256, bt.PublicKey(), header(nil), claims(nil)),
		"other key same kid":              bt.Forge(jwt.SigningMethodEdDSA, otherKey, header(nil), claims(nil)),
		"unknown kid":                     bt.Forge(jwt.SigningMethodEdDSA, nil, header(func(h map[string]any) { h["kid"] = "nope" }), claims(nil)),
		"wrong aud":                       bt.Forge(jwt.SigningMethodEdDSA, nil, header(nil), claims(func(c jwt.MapClaims) { c["aud"] = []string{"someone-else"} })),
		"no aud":                          bt.Forge(jwt.SigningMethodEdDSA, nil, header(nil), claims(func(c jwt.MapClaims) { delete(c, "aud") })),
		"wrong iss":                       bt.Forge(jwt.SigningMethodEdDSA, nil, header(nil), claims(func(c jwt.MapClaims) { c["iss"] = "evil" })),
		"typ JWT":                         bt.Forge(jwt.SigningMethodEdDSA, nil, header(func(h map[string]any) { h["typ"] = "JWT" }), claims(nil)),
		"operator typ":                    bt.Forge(jwt.SigningMethodEdDSA, nil, header(func(h map[string]any) { h["typ"] = "operator+jwt" }), claims(nil)),
		"agent typ":                       bt.Forge(jwt.SigningMethodEdDSA, nil, header(func(h map[string]any) { h["typ"] = "agent+jwt" }), claims(nil)),
		"expired (forged)":                bt.Forge(jwt.SigningMethodEdDSA, nil, header(nil), claims(func(c jwt.MapClaims) { c["exp"] = now.Add(-time.Minute).Unix() })),
		"no exp":                          bt.Forge(jwt.SigningMethodEdDSA, nil, header(nil), claims(func(c jwt.MapClaims) { delete(c, "exp") })),
		"not yet valid":                   bt.Forge(jwt.SigningMethodEdDSA, nil, header(nil), claims(func(c jwt.MapClaims) { c["nbf"] = now.Add(time.Hour).Unix() })),
		"issued in the future":            bt.Forge(jwt.SigningMethodEdDSA, nil, header(nil), claims(func(c jwt.MapClaims) { c["iat"] = now.Add(time.Hour).Unix() })),
		"unknown jti":                     bt.Forge(jwt.SigningMethodEdDSA, nil, header(nil), claims(func(c jwt.MapClaims) { c["jti"] = "0123456789abcdef" })),
		"someone else's sub":              bt.Forge(jwt.SigningMethodEdDSA, nil, header(nil), claims(func(c jwt.MapClaims) { c["sub"] = bob.ID })),
		"ended session":                   ended,
		"tampered payload":                control[:len(control)-3] + "AAA",
	}
	for name, tok := range cases {
		for proto, opts := range boardtest.Protocols {
			t.Run(name+"/"+proto, func(t *testing.T) {
				t.Parallel()
				users := boardv1connect.NewUserServiceClient(bt.SessionClient(tok, csrf, opts...))
				_, err := users.Me(t.Context(), &boardv1.MeRequest{})
				if got := connect.CodeOf(err); got != connect.CodeUnauthenticated {
					t.Fatalf("Me with %s cookie: code %v (%v), want unauthenticated", name, got, err)
				}
			})
		}
	}
}
