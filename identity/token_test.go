package identity

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/symphonix/symphonix/store"
)

func TestTokensVerifyKinds(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db, err := store.Open(ctx, store.SQLiteDSN(t.TempDir()))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	tokens, err := OpenTokens(ctx, db)
	if err != nil {
		t.Fatal(err)
	}
	// Reopening finds the same key: tokens survive a restart.
	again, err := OpenTokens(ctx, db)
	if err != nil || again.kid != tokens.kid {
		t.Fatalf("reopened key %s (%v), want %s", again.kid, err, tokens.kid)
	}
	op, err := tokens.Mint(ctx, MintOptions{Kind: KindOperator, Name: "alice", Role: RoleApprover})
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	c, err := again.Verify(ctx, op.Token, KindOperator, now)
	if err != nil || c.Name != "alice" || c.Role != RoleApprover || c.TokenID != op.ID {
		t.Fatalf("Verify = %+v, %v; want alice, approver, %s", c, err, op.ID)
	}
	if _, err := tokens.Verify(ctx, op.Token, KindAgent, now); err == nil {
		t.Errorf("an operator token verified as an agent token")
	}
	for name, o := range map[string]MintOptions{
		"operator without role": {Kind: KindOperator, Name: "x"},
		"agent with role":       {Kind: KindAgent, Name: "x", Role: RoleAdmin},
		"unknown kind":          {Kind: "robot", Name: "x"},
		"empty name":            {Kind: KindAgent},
		"control character":     {Kind: KindAgent, Name: "a\nb"},
		"negative ttl":          {Kind: KindAgent, Name: "x", TTL: -time.Second},
	} {
		if _, err := tokens.Mint(ctx, o); err == nil {
			t.Errorf("Mint(%s): no error", name)
		}
	}
	if err := tokens.Revoke(ctx, "nope", now); err == nil {
		t.Errorf("Revoke of an unknown id: no error")
	}
}

// TestVerifyStoreGone: a token that cannot be looked up because the store
// fails is ErrStore, none of the refusals: nothing is known against it.
func TestVerifyStoreGone(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db, err := store.Open(ctx, store.SQLiteDSN(t.TempDir()))
	if err != nil {
		t.Fatal(err)
	}
	tokens, err := OpenTokens(ctx, db)
	if err != nil {
		t.Fatal(err)
	}
	m, err := tokens.Mint(ctx, MintOptions{Kind: KindAgent, Name: "patient"})
	if err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	_, err = tokens.Verify(ctx, m.Token, KindAgent, time.Now())
	if !errors.Is(err, ErrStore) {
		t.Fatalf("Verify with the store closed = %v, want ErrStore", err)
	}
	for _, refusal := range []error{ErrNoToken, ErrBadToken, ErrRevoked, ErrWrongKind, ErrUnknownToken} {
		if errors.Is(err, refusal) {
			t.Errorf("Verify with the store closed = %v, which is also %v", err, refusal)
		}
	}
}
