package board

import (
	"net/http"
	"testing"

	"connectrpc.com/connect/v2"

	"github.com/symphonix/symphonix/identity"
	"github.com/symphonix/symphonix/store"
)

// adminOnly is a procedure only admins may call; no service serves it, so
// it exists only for this test (added before any test runs).
const adminOnly = "/symphonix.test.v1.Test/AdminOnly"

func init() {
	policy[adminOnly] = access{kind: identity.KindOperator, role: identity.RoleAdmin}
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
	mint := func(kind identity.Kind, role identity.Role) string {
		m, err := b.tokens.Mint(ctx, identity.MintOptions{Kind: kind, Name: "someone", Role: role})
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
		{"viewer below admin", adminOnly, mint(identity.KindOperator, identity.RoleViewer), connect.CodePermissionDenied},
		{"approver below admin", adminOnly, mint(identity.KindOperator, identity.RoleApprover), connect.CodePermissionDenied},
		{"admin", adminOnly, mint(identity.KindOperator, identity.RoleAdmin), 0},
		{"agent on an operator procedure", adminOnly, mint(identity.KindAgent, identity.RoleNone), connect.CodeUnauthenticated},
		{"no policy, even for an admin", "/symphonix.board.v1.AgentService/DeleteEverything", mint(identity.KindOperator, identity.RoleAdmin), connect.CodePermissionDenied},
		{"lower-case bearer", adminOnly, "bearer " + mint(identity.KindOperator, identity.RoleAdmin)[len("Bearer "):], 0},
		{"no scheme", adminOnly, mint(identity.KindOperator, identity.RoleAdmin)[len("Bearer "):], connect.CodeUnauthenticated},
		{"basic", adminOnly, "Basic dXNlcjpwYXNz", connect.CodeUnauthenticated},
	}
	for _, tt := range tests {
		_, err := b.authenticate(ctx, tt.procedure, http.Header{"Authorization": {tt.header}})
		if got := connect.CodeOf(err); (tt.want == 0 && err != nil) || (tt.want != 0 && got != tt.want) {
			t.Errorf("%s: authenticate = %v, want code %v", tt.name, err, tt.want)
		}
	}
}
