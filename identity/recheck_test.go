package identity_test

import (
	"errors"
	"testing"
	"time"

	"github.com/symphonix/symphonix/identity"
	"github.com/symphonix/symphonix/store"
)

// TestRecheck: credentials checked earlier are checked again: revoked,
// unknown and expired tokens, ended and expired sessions, disabled
// people, and a person's role as it is now.
func TestRecheck(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	db, err := store.Open(ctx, store.SQLiteDSN(t.TempDir()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	clock := func() time.Time { return now }
	tokens, err := identity.OpenTokens(ctx, db)
	if err != nil {
		t.Fatal(err)
	}
	sessions, err := identity.NewSessions(identity.SessionsConfig{Store: db, Tokens: tokens, TTL: time.Hour, Now: clock})
	if err != nil {
		t.Fatal(err)
	}
	users := identity.NewUsers(db, clock)

	mint := func(kind identity.Kind, name string, role identity.Role, ttl time.Duration) identity.Caller {
		t.Helper()
		m, err := tokens.Mint(ctx, identity.MintOptions{Kind: kind, Name: name, Role: role, TTL: ttl, Now: now, Actor: "test"})
		if err != nil {
			t.Fatal(err)
		}
		c, err := tokens.Verify(ctx, m.Token, kind, now)
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	signIn := func(email string, role identity.Role) identity.Caller {
		t.Helper()
		u, _, err := users.Add(ctx, identity.AddUser{Email: email, Role: role, Actor: "test"})
		if err != nil {
			t.Fatal(err)
		}
		s, err := sessions.Start(ctx, u.ID, u.Email, "test")
		if err != nil {
			t.Fatal(err)
		}
		c, _, err := sessions.Verify(ctx, s.Token)
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	ops := mint(identity.KindOperator, "ops", identity.RoleViewer, 0)
	revoked := mint(identity.KindOperator, "gone", identity.RoleAdmin, 0)
	short := mint(identity.KindOperator, "short", identity.RoleViewer, 30*time.Minute)
	agent := mint(identity.KindAgent, "desk", identity.RoleNone, 0)
	revokedAgent := mint(identity.KindAgent, "old-desk", identity.RoleNone, 0)
	unknown := ops
	unknown.TokenID = "0123456789abcdef"
	ann := signIn("ann@example.com", identity.RoleAdmin)
	bob := signIn("bob@example.com", identity.RoleAdmin)
	cat := signIn("cat@example.com", identity.RoleAdmin)
	dan := signIn("dan@example.com", identity.RoleAdmin)
	root := signIn("root@example.com", identity.RoleAdmin) // so that the others may be demoted
	now = now.Add(45 * time.Minute)
	late := signIn("late@example.com", identity.RoleViewer) // expires 15 minutes after the others

	for _, id := range []string{revoked.TokenID, revokedAgent.TokenID} {
		if err := tokens.Revoke(ctx, id, now); err != nil {
			t.Fatal(err)
		}
	}
	if err := sessions.End(ctx, bob); err != nil {
		t.Fatal(err)
	}
	if _, _, err := users.SetDisabled(ctx, "cat@example.com", true, "test"); err != nil {
		t.Fatal(err)
	}
	if _, err := users.SetRole(ctx, "dan@example.com", identity.RoleViewer, "test"); err != nil {
		t.Fatal(err)
	}
	callers := []identity.Caller{ops, revoked, short, agent, revokedAgent, unknown, ann, bob, cat, dan, root}
	want := []identity.Standing{
		{Role: identity.RoleViewer},
		{Role: identity.RoleAdmin, Err: identity.ErrRevoked},
		{Role: identity.RoleViewer, Err: identity.ErrExpired},
		{Role: identity.RoleNone},
		{Role: identity.RoleNone, Err: identity.ErrRevoked},
		{Role: identity.RoleViewer, Err: identity.ErrUnknownToken},
		{Role: identity.RoleAdmin},
		{Role: identity.RoleAdmin, Err: identity.ErrSessionEnded},
		{Role: identity.RoleAdmin, Err: identity.ErrSessionEnded}, // disabling ends the sessions
		{Role: identity.RoleViewer},
		{Role: identity.RoleAdmin},
	}
	names := []string{"ops", "revoked", "expired", "agent", "revoked agent", "unknown", "ann", "signed out", "disabled", "demoted", "root"}
	check := func(callers []identity.Caller, want []identity.Standing, names []string) {
		t.Helper()
		got, err := sessions.Recheck(ctx, callers)
		if err != nil {
			t.Fatal(err)
		}
		for i := range want {
			if got[i].Role != want[i].Role || !errors.Is(got[i].Err, want[i].Err) || (want[i].Err == nil) != (got[i].Err == nil) {
				t.Errorf("Recheck(%s) = %s, %v; want %s, %v", names[i], got[i].Role, got[i].Err, want[i].Role, want[i].Err)
			}
		}
	}
	check(callers, want, names)

	now = now.Add(15 * time.Minute) // the first sessions' hour is up; late's is not
	check([]identity.Caller{ann, late}, []identity.Standing{
		{Role: identity.RoleAdmin, Err: identity.ErrExpired},
		{Role: identity.RoleViewer},
	}, []string{"ann an hour on", "late"})
	// A session whose caller did not carry its expiry is expired by its row.
	ann.ExpiresAt = time.Time{}
	check([]identity.Caller{ann}, []identity.Standing{{Role: identity.RoleAdmin, Err: identity.ErrExpired}}, []string{"ann by her row"})
}
