package identity

import (
	"context"
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
