package board

import (
	"context"
	"errors"

	"connectrpc.com/connect/v2"
	"google.golang.org/protobuf/types/known/timestamppb"

	boardv1 "github.com/symphonix/symphonix/api/symphonix/board/v1"
	"github.com/symphonix/symphonix/identity"
)

// userService serves UserService. Pairing and identify are in
// people_pairing.go; the rest is here.
type userService struct{ b *Board }

func (s userService) Me(ctx context.Context, _ *boardv1.MeRequest) (*boardv1.MeResponse, error) {
	c, _ := identity.FromContext(ctx)
	out := &boardv1.MeResponse{Kind: callerKindProto(c.Kind), Name: c.Name, Role: roleProto(c.Role)}
	if c.Kind == identity.KindSession {
		u, err := s.b.users.ByID(ctx, c.UserID)
		if err != nil {
			return nil, err
		}
		out.User = userProto(u)
	}
	return out, nil
}

// ListUsers is a page of people, by email; its token holds the last email.
func (s userService) ListUsers(ctx context.Context, req *boardv1.ListUsersRequest) (*boardv1.ListUsersResponse, error) {
	pg, err := s.b.page("ListUsers", req.GetPageSize(), req.GetPageToken(), defaultPageSize, maxPageSize, 1)
	if err != nil {
		return nil, err
	}
	out := &boardv1.ListUsersResponse{Users: []*boardv1.User{}}
	after := pg.afterName()
	for {
		us, err := s.b.users.ListAfter(ctx, after, userPage)
		if err != nil {
			return nil, err
		}
		for _, u := range us {
			p := userProto(u)
			if !pg.take(p, u.Email) {
				out.NextPageToken = pg.next()
				return out, nil
			}
			out.Users = append(out.Users, p)
			after = u.Email
		}
		if len(us) < userPage {
			return out, nil
		}
	}
}

// userPage is how many people ListUsers reads from the store at once.
const userPage = 200

func (s userService) AddUser(ctx context.Context, req *boardv1.AddUserRequest) (*boardv1.AddUserResponse, error) {
	email, err := identity.CanonicalEmail(req.GetEmail())
	if err != nil {
		return nil, invalid("email", err)
	}
	role, err := roleFrom("role", req.GetRole(), true)
	if err != nil {
		return nil, err
	}
	u, link, err := s.b.users.Add(ctx, identity.AddUser{Email: email, Name: req.GetName(), Role: role})
	if err != nil {
		return nil, err
	}
	return &boardv1.AddUserResponse{
		User:            userProto(u),
		SetupPath:       link.Path(),
		SetupExpireTime: timestamppb.New(link.ExpiresAt),
	}, nil
}

func (s userService) SetUserRole(ctx context.Context, req *boardv1.SetUserRoleRequest) (*boardv1.SetUserRoleResponse, error) {
	if err := validUserID(req.GetUserId()); err != nil {
		return nil, err
	}
	role, err := roleFrom("role", req.GetRole(), true)
	if err != nil {
		return nil, err
	}
	u, err := s.b.users.SetRoleByID(ctx, req.GetUserId(), role, "")
	if err != nil {
		return nil, err
	}
	return &boardv1.SetUserRoleResponse{User: userProto(u)}, nil
}

func (s userService) DisableUser(ctx context.Context, req *boardv1.DisableUserRequest) (*boardv1.DisableUserResponse, error) {
	if err := validUserID(req.GetUserId()); err != nil {
		return nil, err
	}
	u, n, err := s.b.users.SetDisabledByID(ctx, req.GetUserId(), true, "")
	if err != nil {
		return nil, err
	}
	return &boardv1.DisableUserResponse{User: userProto(u), SessionsEnded: int32(n)}, nil
}

func (s userService) EnableUser(ctx context.Context, req *boardv1.EnableUserRequest) (*boardv1.EnableUserResponse, error) {
	if err := validUserID(req.GetUserId()); err != nil {
		return nil, err
	}
	u, _, err := s.b.users.SetDisabledByID(ctx, req.GetUserId(), false, "")
	if err != nil {
		return nil, err
	}
	return &boardv1.EnableUserResponse{User: userProto(u)}, nil
}

// maxUserIDLen is the longest person's id a request may name; the board's
// own are 28 bytes.
const maxUserIDLen = 64

// validUserID checks the user_id of a request.
func validUserID(id string) error {
	switch {
	case id == "":
		return connect.NewError(connect.CodeInvalidArgument, "user_id: required")
	case len(id) > maxUserIDLen:
		return connect.Errorf(connect.CodeInvalidArgument, "user_id: %d bytes, at most %d", len(id), maxUserIDLen)
	}
	return nil
}

func (s userService) SetVerifySecret(ctx context.Context, req *boardv1.SetVerifySecretRequest) (*boardv1.SetVerifySecretResponse, error) {
	c, _ := identity.FromContext(ctx)
	if req.GetSecret() != "" { // removing one hashes nothing
		release, free := s.b.hashSlots.try()
		if !free {
			return nil, errHashBusy
		}
		defer release()
	}
	if err := s.b.users.SetVerifySecret(ctx, c.UserID, req.GetSecret(), ""); err != nil {
		if errors.Is(err, identity.ErrWeakPassword) {
			return nil, invalid("secret", identity.ErrWeakPassword)
		}
		return nil, err
	}
	return &boardv1.SetVerifySecretResponse{}, nil
}

func (s userService) EnterPairingCode(ctx context.Context, req *boardv1.EnterPairingCodeRequest) (*boardv1.EnterPairingCodeResponse, error) {
	return s.b.enterPairingCode(ctx, req)
}

func (s userService) GetIdentify(ctx context.Context, _ *boardv1.GetIdentifyRequest) (*boardv1.GetIdentifyResponse, error) {
	return s.b.getIdentify(ctx)
}

func (s userService) SetIdentify(ctx context.Context, req *boardv1.SetIdentifyRequest) (*boardv1.SetIdentifyResponse, error) {
	return s.b.setIdentify(ctx, req)
}

// invalid is an invalid_argument naming the field.
func invalid(field string, err error) error {
	return connect.Errorf(connect.CodeInvalidArgument, "%s: %v", field, err)
}

func userProto(u identity.User) *boardv1.User {
	return &boardv1.User{
		Id:              u.ID,
		Email:           u.Email,
		Name:            u.Name,
		Role:            roleProto(u.Role),
		Disabled:        u.Disabled,
		HasPassword:     u.HasPassword,
		HasVerifySecret: u.HasVerifySecret,
		CreateTime:      timestamppb.New(u.CreatedAt),
	}
}
