package board_test

import (
	"testing"

	"connectrpc.com/connect/v2"

	boardv1 "github.com/symphonix/symphonix/api/symphonix/board/v1"
	"github.com/symphonix/symphonix/identity"
	"github.com/symphonix/symphonix/internal/boardtest"
)

func TestUserService(t *testing.T) {
	t.Parallel()
	bt := boardtest.Start(t, boardtest.Options{})
	for proto, opts := range boardtest.Protocols {
		t.Run(proto, func(t *testing.T) {
			t.Parallel()
			bt := bt
			if proto == "grpc" {
				bt = boardtest.Start(t, boardtest.Options{}) // its own people
			}
			ctx := t.Context()
			users := bt.Users(bt.OperatorToken("ops", identity.RoleAdmin), opts...)
			added, err := users.AddUser(ctx, &boardv1.AddUserRequest{Email: " Alice@Example.com", Name: "Alice", Role: "admin"})
			if err != nil {
				t.Fatal(err)
			}
			u := added.GetUser()
			if u.GetEmail() != "alice@example.com" || u.GetRole() != "admin" || u.GetHasPassword() || u.GetId() == "" {
				t.Errorf("AddUser = %v", u)
			}
			if p := added.GetSetupPath(); len(p) != len("/setup#token=")+43 || added.GetSetupExpiresAt() == nil {
				t.Errorf("setup path %q, expires %v", p, added.GetSetupExpiresAt())
			}
			if _, err := users.AddUser(ctx, &boardv1.AddUserRequest{Email: "alice@EXAMPLE.com", Role: "viewer"}); connect.CodeOf(err) != connect.CodeAlreadyExists {
				t.Errorf("AddUser twice: %v, want already_exists", err)
			}
			for name, req := range map[string]*boardv1.AddUserRequest{
				"bad email": {Email: "bob", Role: "viewer"},
				"bad role":  {Email: "bob@example.com", Role: "root"},
				"no role":   {Email: "bob@example.com"},
				"bad name":  {Email: "bob@example.com", Role: "viewer", Name: "a\x00b"},
			} {
				if _, err := users.AddUser(ctx, req); connect.CodeOf(err) != connect.CodeInvalidArgument {
					t.Errorf("AddUser with %s: %v, want invalid_argument", name, err)
				}
			}
			if _, err := users.SetRole(ctx, &boardv1.SetRoleRequest{Email: "alice@example.com", Role: "viewer"}); connect.CodeOf(err) != connect.CodeFailedPrecondition {
				t.Errorf("demoting the only admin: %v, want failed_precondition", err)
			}
			if _, err := users.DisableUser(ctx, &boardv1.DisableUserRequest{Email: "alice@example.com", Disabled: true}); connect.CodeOf(err) != connect.CodeFailedPrecondition {
				t.Errorf("disabling the only admin: %v, want failed_precondition", err)
			}
			if _, err := users.AddUser(ctx, &boardv1.AddUserRequest{Email: "bob@example.com", Role: "viewer"}); err != nil {
				t.Fatal(err)
			}
			r, err := users.SetRole(ctx, &boardv1.SetRoleRequest{Email: "BOB@example.com", Role: "approver"})
			if err != nil || r.GetUser().GetRole() != "approver" {
				t.Errorf("SetRole = %v, %v", r, err)
			}
			d, err := users.DisableUser(ctx, &boardv1.DisableUserRequest{Email: "bob@example.com", Disabled: true})
			if err != nil || !d.GetUser().GetDisabled() {
				t.Errorf("DisableUser = %v, %v", d, err)
			}
			if _, err := users.SetRole(ctx, &boardv1.SetRoleRequest{Email: "carol@example.com", Role: "viewer"}); connect.CodeOf(err) != connect.CodeNotFound {
				t.Errorf("SetRole of nobody: %v, want not_found", err)
			}
			list, err := users.ListUsers(ctx, &boardv1.ListUsersRequest{})
			if err != nil || len(list.GetUsers()) != 2 || list.GetUsers()[0].GetEmail() != "alice@example.com" {
				t.Errorf("ListUsers = %v, %v", list, err)
			}
			me, err := users.Me(ctx, &boardv1.MeRequest{})
			if err != nil || me.GetKind() != "operator" || me.GetName() != "ops" || me.GetRole() != "admin" || me.GetUser() != nil {
				t.Errorf("Me with an operator token = %v, %v", me, err)
			}
			// The verify secret is for signed-in people only.
			if _, err := users.SetVerifySecret(ctx, &boardv1.SetVerifySecretRequest{Secret: "a long enough secret"}); connect.CodeOf(err) != connect.CodePermissionDenied {
				t.Errorf("SetVerifySecret with an operator token: %v, want permission_denied", err)
			}
			viewer := bt.Users(bt.OperatorToken("ops", identity.RoleViewer), opts...)
			if _, err := viewer.AddUser(ctx, &boardv1.AddUserRequest{Email: "eve@example.com", Role: "admin"}); connect.CodeOf(err) != connect.CodePermissionDenied {
				t.Errorf("AddUser as a viewer: %v, want permission_denied", err)
			}
		})
	}
}

// TestSetVerifySecret: a signed-in person sets and removes their own verify
// secret; it is at least 12 characters and is not the password.
func TestSetVerifySecret(t *testing.T) {
	t.Parallel()
	bt := boardtest.Start(t, boardtest.Options{})
	bt.AddUser("alice@example.com", identity.RoleViewer, password)
	cookie, csrf := bt.SignIn("alice@example.com", password)
	users := sessionUsers(bt, cookie, csrf)
	ctx := t.Context()
	if _, err := users.SetVerifySecret(ctx, &boardv1.SetVerifySecretRequest{Secret: "too short"}); connect.CodeOf(err) != connect.CodeInvalidArgument {
		t.Errorf("a short secret: %v, want invalid_argument", err)
	}
	if _, err := users.SetVerifySecret(ctx, &boardv1.SetVerifySecretRequest{Secret: "the secret of alice"}); err != nil {
		t.Fatal(err)
	}
	me, err := users.Me(ctx, &boardv1.MeRequest{})
	if err != nil || !me.GetUser().GetHasVerifySecret() {
		t.Fatalf("Me = %v, %v; want a verify secret", me, err)
	}
	if _, err := users.SetVerifySecret(ctx, &boardv1.SetVerifySecretRequest{}); err != nil {
		t.Fatal(err)
	}
	if me, _ := users.Me(ctx, &boardv1.MeRequest{}); me.GetUser().GetHasVerifySecret() {
		t.Errorf("the verify secret is still set after removing it")
	}
}
