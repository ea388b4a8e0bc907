package identity

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/symphonix/symphonix/ent"
	"github.com/symphonix/symphonix/store"
)

// openTokens opens a store in a temporary folder and its Tokens; the
// store is closed when the test ends.
func openTokens(t *testing.T) (*ent.Client, *Tokens) {
	t.Helper()
	db, err := store.Open(t.Context(), store.SQLiteDSN(t.TempDir()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	tokens, err := OpenTokens(t.Context(), db)
	if err != nil {
		t.Fatal(err)
	}
	return db, tokens
}

func TestTokensVerifyKinds(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db, tokens := openTokens(t)
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
	db, tokens := openTokens(t)
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

// TestCheckRowsMany: many claims checked in one read each get their own
// answer, in order: the good ones their callers, a revoked one ErrRevoked,
// one whose row is gone ErrUnknownToken.
func TestCheckRowsMany(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db, tokens := openTokens(t)
	now := time.Now()
	mint := func(o MintOptions) Minted {
		m, err := tokens.Mint(ctx, o)
		if err != nil {
			t.Fatal(err)
		}
		return m
	}
	agentTok := mint(MintOptions{Kind: KindAgent, Name: "desk"})
	opTok := mint(MintOptions{Kind: KindOperator, Name: "ops", Role: RoleViewer})
	revoked := mint(MintOptions{Kind: KindAgent, Name: "old"})
	gone := mint(MintOptions{Kind: KindAgent, Name: "gone"})
	if err := tokens.Revoke(ctx, revoked.ID, now); err != nil {
		t.Fatal(err)
	}
	if err := db.Token.DeleteOneID(gone.ID).Exec(ctx); err != nil {
		t.Fatal(err)
	}
	var claims []Claim
	for _, c := range []struct {
		tok  Minted
		kind Kind
	}{{agentTok, KindAgent}, {revoked, KindAgent}, {opTok, KindOperator}, {gone, KindAgent}, {agentTok, KindAgent}} {
		cl, err := tokens.Claim(c.tok.Token, c.kind, now)
		if err != nil {
			t.Fatalf("Claim(%s): %v", c.tok.ID, err)
		}
		claims = append(claims, cl)
	}
	callers, errs := tokens.CheckRows(ctx, claims)
	if callers[0].Name != "desk" || errs[0] != nil || callers[4].Name != "desk" || errs[4] != nil {
		t.Errorf("the agent's = %+v, %v and %+v, %v; want desk twice", callers[0], errs[0], callers[4], errs[4])
	}
	if callers[2].Name != "ops" || callers[2].Role != RoleViewer || errs[2] != nil {
		t.Errorf("the operator's = %+v, %v; want ops, viewer", callers[2], errs[2])
	}
	if !errors.Is(errs[1], ErrRevoked) || !errors.Is(errs[3], ErrUnknownToken) {
		t.Errorf("the revoked one's = %v, the deleted one's = %v; want ErrRevoked and ErrUnknownToken", errs[1], errs[3])
	}
	if _, err := tokens.Claim(opTok.Token, KindAgent, now); !errors.Is(err, ErrWrongKind) {
		t.Errorf("Claim of an operator token as an agent's = %v, want ErrWrongKind", err)
	}
	_, errs = tokens.CheckRows(ctx, make([]Claim, MaxCheckRows+1))
	if !errors.Is(errs[0], ErrStore) {
		t.Errorf("CheckRows of %d claims = %v; want them refused", MaxCheckRows+1, errs[0])
	}
}
