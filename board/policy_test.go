package board

import (
	"context"
	"net/http"
	"testing"
	"time"

	"connectrpc.com/connect/v2"

	"github.com/symphonix/symphonix/store"
)

// adminOnly is a procedure only admins may call; no service serves it, so
// it exists only for this test (added before any test runs).
const adminOnly = "/symphonix.test.v1.Test/AdminOnly"

func init() {
	policy[adminOnly] = access{kind: KindOperator, role: RoleAdmin}
}

func TestAuthenticateRoles(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	db, err := store.Open(ctx, store.SQLiteDSN(t.TempDir()))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	b, err := New(ctx, Config{Store: db})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	mint := func(kind Kind, role Role) string {
		m, err := b.tokens.Mint(ctx, MintOptions{Kind: kind, Name: "someone", Role: role})
		if err != nil {
			t.Fatal(err)
		}
		return "Bearer " + m.Token
	}
	tests := []struct {
		name      string
		procedure string
		header    string
		want      connect.Code // 0: allowed
	}{
		{"viewer below admin", adminOnly, mint(KindOperator, RoleViewer), connect.CodePermissionDenied},
		{"approver below admin", adminOnly, mint(KindOperator, RoleApprover), connect.CodePermissionDenied},
		{"admin", adminOnly, mint(KindOperator, RoleAdmin), 0},
		{"agent on an operator procedure", adminOnly, mint(KindAgent, RoleNone), connect.CodeUnauthenticated},
		{"no policy, even for an admin", "/symphonix.board.v1.AgentService/DeleteEverything", mint(KindOperator, RoleAdmin), connect.CodePermissionDenied},
		{"lower-case bearer", adminOnly, "bearer " + mint(KindOperator, RoleAdmin)[len("Bearer "):], 0},
		{"no scheme", adminOnly, mint(KindOperator, RoleAdmin)[len("Bearer "):], connect.CodeUnauthenticated},
		{"basic", adminOnly, "Basic dXNlcjpwYXNz", connect.CodeUnauthenticated},
	}
	for _, tt := range tests {
		_, err := b.authenticate(ctx, tt.procedure, http.Header{"Authorization": {tt.header}})
		if got := connect.CodeOf(err); (tt.want == 0 && err != nil) || (tt.want != 0 && got != tt.want) {
			t.Errorf("%s: authenticate = %v, want code %v", tt.name, err, tt.want)
		}
	}
}

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
