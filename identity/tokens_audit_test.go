package identity_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/symphonix/symphonix/audit"
	"github.com/symphonix/symphonix/identity"
	"github.com/symphonix/symphonix/store"
)

func TestTokensAudit(t *testing.T) {
	t.Parallel()
	db, err := store.Open(t.Context(), store.SQLiteDSN(t.TempDir()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	a := audit.New(db)
	tokens, err := identity.OpenTokens(t.Context(), db)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	ops, err := tokens.Mint(t.Context(), identity.MintOptions{Kind: identity.KindOperator, Name: "ops", Role: identity.RoleApprover, Now: now, TTL: time.Hour, Actor: "cli"})
	if err != nil {
		t.Fatal(err)
	}
	agent, err := tokens.Mint(t.Context(), identity.MintOptions{Kind: identity.KindAgent, Name: "refunds", Now: now, TTL: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	if err := tokens.RevokeBy(t.Context(), agent.ID, "cli", now); err != nil {
		t.Fatal(err)
	}
	if err := tokens.Revoke(t.Context(), agent.ID, now); err != nil { // again: no change, no entry
		t.Fatal(err)
	}
	if err := tokens.Revoke(t.Context(), "nope", now); !errors.Is(err, identity.ErrUnknownToken) {
		t.Fatalf("Revoke(nope) = %v, want %v", err, identity.ErrUnknownToken)
	}
	entries, err := a.List(t.Context(), 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	type line struct{ Actor, Action, Subject, Detail string }
	var got []line
	for _, e := range entries {
		got = append(got, line{e.Actor, e.Action, e.Subject, string(e.Detail)})
		for _, secret := range []string{ops.Token, agent.Token} {
			if strings.Contains(string(e.Detail), secret) {
				t.Errorf("entry %d detail carries a token", e.Seq)
			}
		}
	}
	want := []line{
		{"cli", "token.mint", ops.ID, `{"expires":"2026-03-01T13:00:00Z","kind":"operator","name":"ops","role":"approver"}`},
		{"board", "token.mint", agent.ID, `{"expires":"2026-03-01T13:00:00Z","kind":"agent","name":"refunds"}`},
		{"cli", "token.revoke", agent.ID, `{"expires":"2026-03-01T13:00:00Z","kind":"agent","name":"refunds"}`},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("audit log (-want +got):\n%s", diff)
	}
	if r, err := a.Verify(t.Context()); err != nil || !r.OK() || r.Entries != 3 {
		t.Fatalf("Verify = %+v, %v; want ok with 3 entries", r, err)
	}
}
