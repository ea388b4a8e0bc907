package board_test

import (
	"errors"
	"strings"
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
			added, err := users.AddUser(ctx, &boardv1.AddUserRequest{Email: " Alice@Example.com", Name: "Alice", Role: boardv1.Role_ROLE_ADMIN})
			if err != nil {
				t.Fatal(err)
			}
			u := added.GetUser()
			if u.GetEmail() != "alice@example.com" || u.GetRole() != boardv1.Role_ROLE_ADMIN || u.GetHasPassword() || u.GetId() == "" {
				t.Errorf("AddUser = %v", u)
			}
			if p := added.GetSetupPath(); len(p) != len("/setup#token=")+43 || added.GetSetupExpireTime() == nil {
				t.Errorf("setup path %q, expires %v", p, added.GetSetupExpireTime())
			}
			if _, err := users.AddUser(ctx, &boardv1.AddUserRequest{Email: "alice@EXAMPLE.com", Role: boardv1.Role_ROLE_VIEWER}); connect.CodeOf(err) != connect.CodeAlreadyExists {
				t.Errorf("AddUser twice: %v, want already_exists", err)
			}
			for _, tt := range []struct {
				name string
				req  *boardv1.AddUserRequest
				want string // the message begins with it
			}{
				{"bad email", &boardv1.AddUserRequest{Email: "bob", Role: boardv1.Role_ROLE_VIEWER}, "email:"},
				{"unknown role", &boardv1.AddUserRequest{Email: "bob@example.com", Role: 42}, "role: unknown value 42"},
				{"no role", &boardv1.AddUserRequest{Email: "bob@example.com"}, "role: required"},
				{"bad name", &boardv1.AddUserRequest{Email: "bob@example.com", Role: boardv1.Role_ROLE_VIEWER, Name: "a\x00b"}, "name:"},
			} {
				var ce *connect.Error
				if _, err := users.AddUser(ctx, tt.req); !errors.As(err, &ce) || ce.Code() != connect.CodeInvalidArgument || !strings.HasPrefix(ce.Message(), tt.want) {
					t.Errorf("AddUser with %s: %v, want invalid_argument %q…", tt.name, err, tt.want)
				}
			}
			alice := u.GetId()
			if _, err := users.SetUserRole(ctx, &boardv1.SetUserRoleRequest{UserId: alice, Role: boardv1.Role_ROLE_VIEWER}); connect.CodeOf(err) != connect.CodeFailedPrecondition {
				t.Errorf("demoting the only admin: %v, want failed_precondition", err)
			}
			if _, err := users.DisableUser(ctx, &boardv1.DisableUserRequest{UserId: alice}); connect.CodeOf(err) != connect.CodeFailedPrecondition {
				t.Errorf("disabling the only admin: %v, want failed_precondition", err)
			}
			added, err = users.AddUser(ctx, &boardv1.AddUserRequest{Email: "bob@example.com", Role: boardv1.Role_ROLE_VIEWER})
			if err != nil {
				t.Fatal(err)
			}
			bob := added.GetUser().GetId()
			r, err := users.SetUserRole(ctx, &boardv1.SetUserRoleRequest{UserId: bob, Role: boardv1.Role_ROLE_APPROVER})
			if err != nil || r.GetUser().GetRole() != boardv1.Role_ROLE_APPROVER || r.GetUser().GetEmail() != "bob@example.com" {
				t.Errorf("SetUserRole = %v, %v", r, err)
			}
			for range 2 { // disabling a disabled person changes nothing
				d, err := users.DisableUser(ctx, &boardv1.DisableUserRequest{UserId: bob})
				if err != nil || !d.GetUser().GetDisabled() {
					t.Errorf("DisableUser = %v, %v", d, err)
				}
			}
			for range 2 {
				e, err := users.EnableUser(ctx, &boardv1.EnableUserRequest{UserId: bob})
				if err != nil || e.GetUser().GetDisabled() || e.GetUser().GetId() != bob {
					t.Errorf("EnableUser = %v, %v", e, err)
				}
			}
			for _, tt := range []struct {
				name string
				call func() error
				code connect.Code
				want string // the message begins with it
			}{
				{"SetUserRole of nobody", func() error {
					_, err := users.SetUserRole(ctx, &boardv1.SetUserRoleRequest{UserId: "usr-nobody", Role: boardv1.Role_ROLE_VIEWER})
					return err
				}, connect.CodeNotFound, ""},
				{"SetUserRole without an id", func() error {
					_, err := users.SetUserRole(ctx, &boardv1.SetUserRoleRequest{Role: boardv1.Role_ROLE_VIEWER})
					return err
				}, connect.CodeInvalidArgument, "user_id: required"},
				{"SetUserRole without a role", func() error {
					_, err := users.SetUserRole(ctx, &boardv1.SetUserRoleRequest{UserId: bob})
					return err
				}, connect.CodeInvalidArgument, "role: required"},
				{"SetUserRole to an unknown role", func() error {
					_, err := users.SetUserRole(ctx, &boardv1.SetUserRoleRequest{UserId: bob, Role: 42})
					return err
				}, connect.CodeInvalidArgument, "role: unknown value 42"},
				{"DisableUser of nobody", func() error {
					_, err := users.DisableUser(ctx, &boardv1.DisableUserRequest{UserId: "usr-nobody"})
					return err
				}, connect.CodeNotFound, ""},
				{"DisableUser without an id", func() error {
					_, err := users.DisableUser(ctx, &boardv1.DisableUserRequest{})
					return err
				}, connect.CodeInvalidArgument, "user_id: required"},
				{"EnableUser of nobody", func() error {
					_, err := users.EnableUser(ctx, &boardv1.EnableUserRequest{UserId: "usr-nobody"})
					return err
				}, connect.CodeNotFound, ""},
				{"EnableUser with a huge id", func() error {
					_, err := users.EnableUser(ctx, &boardv1.EnableUserRequest{UserId: strings.Repeat("x", 100)})
					return err
				}, connect.CodeInvalidArgument, "user_id: 100 bytes, at most 64"},
			} {
				var ce *connect.Error
				if err := tt.call(); !errors.As(err, &ce) || ce.Code() != tt.code || !strings.HasPrefix(ce.Message(), tt.want) {
					t.Errorf("%s: %v, want %v %q…", tt.name, err, tt.code, tt.want)
				}
			}
			list, err := users.ListUsers(ctx, &boardv1.ListUsersRequest{})
			if err != nil || len(list.GetUsers()) != 2 || list.GetUsers()[0].GetEmail() != "alice@example.com" {
				t.Errorf("ListUsers = %v, %v", list, err)
			}
			me, err := users.Me(ctx, &boardv1.MeRequest{})
			if err != nil || me.GetKind() != boardv1.CallerKind_CALLER_KIND_OPERATOR || me.GetName() != "ops" || me.GetRole() != boardv1.Role_ROLE_ADMIN || me.GetUser() != nil {
				t.Errorf("Me with an operator token = %v, %v", me, err)
			}
			// The verify secret is for signed-in people only.
			if _, err := users.SetVerifySecret(ctx, &boardv1.SetVerifySecretRequest{Secret: "a long enough secret"}); connect.CodeOf(err) != connect.CodePermissionDenied {
				t.Errorf("SetVerifySecret with an operator token: %v, want permission_denied", err)
			}
			viewer := bt.Users(bt.OperatorToken("ops", identity.RoleViewer), opts...)
			if _, err := viewer.AddUser(ctx, &boardv1.AddUserRequest{Email: "eve@example.com", Role: boardv1.Role_ROLE_ADMIN}); connect.CodeOf(err) != connect.CodePermissionDenied {
				t.Errorf("AddUser as a viewer: %v, want permission_denied", err)
			}
			if _, err := viewer.EnableUser(ctx, &boardv1.EnableUserRequest{UserId: bob}); connect.CodeOf(err) != connect.CodePermissionDenied {
				t.Errorf("EnableUser as a viewer: %v, want permission_denied", err)
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
