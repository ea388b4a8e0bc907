package identity

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"math"
	"net/mail"
	"strings"
	"time"

	"github.com/symphonix/symphonix/audit"
	"github.com/symphonix/symphonix/ent"
	entsession "github.com/symphonix/symphonix/ent/session"
	"github.com/symphonix/symphonix/ent/user"
	"github.com/symphonix/symphonix/store"
)

// Errors about people that callers branch on.
var (
	ErrNoUser     = errors.New("no such user")
	ErrUserExists = errors.New("a user with that email exists")
	ErrBadEmail   = errors.New("not an email address")
	// ErrLastAdmin: the change would leave no enabled admin.
	ErrLastAdmin = errors.New("would leave the board without an enabled admin")
	// ErrNoRole: a person needs a role.
	ErrNoRole = errors.New("role: required")
	// ErrBadName: a display name too long or with control characters.
	ErrBadName = errors.New("name: at most 200 characters, no control characters")
)

// Users is the people the board knows, kept in the store. Every change is
// audited in the same transaction.
type Users struct {
	db    *ent.Client
	audit *audit.Log
	now   func() time.Time
}

// NewUsers returns the people kept in db. A nil now means time.Now.
func NewUsers(db *ent.Client, now func() time.Time) *Users {
	if now == nil {
		now = time.Now
	}
	return &Users{db: db, audit: audit.New(db), now: now}
}

// User is one person, without any secret.
type User struct {
	ID              string
	Email           string
	Name            string
	Role            Role
	Disabled        bool
	HasPassword     bool
	HasVerifySecret bool
	CreatedAt       time.Time
}

func userOf(r *ent.User) User {
	role, _ := ParseRole(r.Role)
	return User{
		ID:              r.ID,
		Email:           r.Email,
		Name:            r.Name,
		Role:            role,
		Disabled:        r.Disabled,
		HasPassword:     r.PasswordHash != "",
		HasVerifySecret: r.VerifyHash != "",
		CreatedAt:       r.CreatedAt,
	}
}

// CanonicalEmail is the one form an email is kept and compared in:
// trimmed and lower-cased, and a plain address (local@domain, no display
// name, no angle brackets, no spaces), at most 254 bytes.
func CanonicalEmail(s string) (string, error) {
	e := strings.ToLower(strings.TrimSpace(s))
	if e == "" || len(e) > 254 || strings.ContainsAny(e, " \t\r\n<>\"(),;:\\") {
		return "", fmt.Errorf("email %q: %w", s, ErrBadEmail)
	}
	local, domain, ok := strings.Cut(e, "@")
	if !ok || local == "" || domain == "" || strings.Contains(domain, "@") || len(local) > 64 ||
		strings.HasPrefix(domain, ".") || strings.HasSuffix(domain, ".") || strings.Contains(domain, "..") {
		return "", fmt.Errorf("email %q: %w", s, ErrBadEmail)
	}
	if a, err := mail.ParseAddress(e); err != nil || a.Address != e || a.Name != "" {
		return "", fmt.Errorf("email %q: %w", s, ErrBadEmail)
	}
	return e, nil
}

// validUserName: a person's display name, short and printable.
func validUserName(s string) error {
	if len(s) > 200 || strings.ContainsFunc(s, func(r rune) bool { return r < 0x20 || r == 0x7f }) {
		return ErrBadName
	}
	return nil
}

// AddUser says who to add.
type AddUser struct {
	// Email: required; kept in canonical form.
	Email string
	Name  string
	// Role: required.
	Role Role
	// Actor: who adds, for the audit log; empty means the caller in ctx.
	Actor string
}

// Add adds a person with no password, and returns a one-time setup link
// through which they set their own. There is no default password.
func (u *Users) Add(ctx context.Context, a AddUser) (User, SetupLink, error) {
	email, err := CanonicalEmail(a.Email)
	if err != nil {
		return User{}, SetupLink{}, err
	}
	if a.Role == RoleNone {
		return User{}, SetupLink{}, ErrNoRole
	}
	name := strings.TrimSpace(a.Name)
	if err := validUserName(name); err != nil {
		return User{}, SetupLink{}, err
	}
	id, err := newUserID()
	if err != nil {
		return User{}, SetupLink{}, err
	}
	now := u.now()
	link, hash, err := newSetupLink(now)
	if err != nil {
		return User{}, SetupLink{}, err
	}
	var row *ent.User
	err = store.InTx(ctx, u.db, func(tx *ent.Tx) error {
		if n, err := tx.User.Query().Where(user.Email(email)).Count(ctx); err != nil {
			return err
		} else if n > 0 {
			return fmt.Errorf("%s: %w", email, ErrUserExists)
		}
		row, err = tx.User.Create().
			SetID(id).
			SetEmail(email).
			SetName(name).
			SetRole(a.Role.String()).
			SetSetupHash(hash).
			SetSetupExpiresAt(link.ExpiresAt).
			SetCreatedAt(now).
			SetUpdatedAt(now).
			Save(ctx)
		if ent.IsConstraintError(err) {
			return fmt.Errorf("%s: %w", email, ErrUserExists)
		}
		if err != nil {
			return err
		}
		err = u.audit.Append(ctx, tx, audit.Record{
			Actor: ActorOf(ctx, a.Actor), Action: "user.add", Subject: id,
			Detail: map[string]any{"email": email, "name": name, "role": a.Role.String()},
		})
		return err
	})
	if err != nil {
		return User{}, SetupLink{}, err
	}
	return userOf(row), link, nil
}

// List returns everyone, by email.
func (u *Users) List(ctx context.Context) ([]User, error) {
	return u.ListAfter(ctx, "", math.MaxInt32)
}

// ListAfter returns at most n people, by email, from the first whose email
// comes after after ("" for the first of all).
func (u *Users) ListAfter(ctx context.Context, after string, n int) ([]User, error) {
	rows, err := u.db.User.Query().Where(user.EmailGT(after)).Order(ent.Asc(user.FieldEmail)).Limit(n).All(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]User, len(rows))
	for i, r := range rows {
		out[i] = userOf(r)
	}
	return out, nil
}

// ByID returns the person with the id, or ErrNoUser.
func (u *Users) ByID(ctx context.Context, id string) (User, error) {
	r, err := u.db.User.Get(ctx, id)
	if ent.IsNotFound(err) {
		return User{}, ErrNoUser
	}
	if err != nil {
		return User{}, err
	}
	return userOf(r), nil
}

// ByEmail finds a person by email, in any form CanonicalEmail accepts.
func (u *Users) ByEmail(ctx context.Context, email string) (User, error) {
	r, err := u.byEmail(ctx, u.db, email)
	if err != nil {
		return User{}, err
	}
	return userOf(r), nil
}

func (u *Users) byEmail(ctx context.Context, db *ent.Client, email string) (*ent.User, error) {
	e, err := CanonicalEmail(email)
	if err != nil {
		return nil, err
	}
	r, err := db.User.Query().Where(user.Email(e)).Only(ctx)
	if ent.IsNotFound(err) {
		return nil, fmt.Errorf("%s: %w", e, ErrNoUser)
	}
	return r, err
}

// SetRole changes the role of the person with the email; it applies to
// their live sessions at once, since a session's role is read from the
// user on every request.
func (u *Users) SetRole(ctx context.Context, email string, role Role, actor string) (User, error) {
	return u.setRole(ctx, func(tx *ent.Tx) (*ent.User, error) { return u.byEmail(ctx, tx.Client(), email) }, role, actor)
}

// SetRoleByID is SetRole for the person with the id.
func (u *Users) SetRoleByID(ctx context.Context, id string, role Role, actor string) (User, error) {
	return u.setRole(ctx, func(tx *ent.Tx) (*ent.User, error) { return byID(ctx, tx, id) }, role, actor)
}

func (u *Users) setRole(ctx context.Context, find func(*ent.Tx) (*ent.User, error), role Role, actor string) (User, error) {
	if role == RoleNone {
		return User{}, ErrNoRole
	}
	var out *ent.User
	err := store.InTx(ctx, u.db, func(tx *ent.Tx) error {
		r, err := find(tx)
		if err != nil {
			return err
		}
		if r.Role == role.String() {
			out = r
			return nil
		}
		if r.Role == RoleAdmin.String() && !r.Disabled {
			if err := lastAdminCheck(ctx, tx, r.ID); err != nil {
				return err
			}
		}
		out, err = r.Update().SetRole(role.String()).SetUpdatedAt(u.now()).Save(ctx)
		if err != nil {
			return err
		}
		err = u.audit.Append(ctx, tx, audit.Record{
			Actor: ActorOf(ctx, actor), Action: "user.role", Subject: r.ID,
			Detail: map[string]any{"email": r.Email, "from": r.Role, "to": role.String()},
		})
		return err
	})
	if err != nil {
		return User{}, err
	}
	return userOf(out), nil
}

// byID reads the person with the id inside tx, or ErrNoUser.
func byID(ctx context.Context, tx *ent.Tx, id string) (*ent.User, error) {
	r, err := tx.User.Get(ctx, id)
	if ent.IsNotFound(err) {
		return nil, fmt.Errorf("%q: %w", id, ErrNoUser)
	}
	return r, err
}

// lastAdminCheck refuses a change that takes away the last enabled admin
// other than the person id.
func lastAdminCheck(ctx context.Context, tx *ent.Tx, id string) error {
	n, err := tx.User.Query().Where(user.Role(RoleAdmin.String()), user.Disabled(false), user.IDNEQ(id)).Count(ctx)
	if err != nil {
		return err
	}
	if n == 0 {
		return ErrLastAdmin
	}
	return nil
}

// SetDisabled disables the person with the email, ending every session of
// theirs in the same transaction, or enables them again. It returns how
// many sessions it ended.
func (u *Users) SetDisabled(ctx context.Context, email string, disabled bool, actor string) (User, int, error) {
	return u.setDisabled(ctx, func(tx *ent.Tx) (*ent.User, error) { return u.byEmail(ctx, tx.Client(), email) }, disabled, actor)
}

// SetDisabledByID is SetDisabled for the person with the id.
func (u *Users) SetDisabledByID(ctx context.Context, id string, disabled bool, actor string) (User, int, error) {
	return u.setDisabled(ctx, func(tx *ent.Tx) (*ent.User, error) { return byID(ctx, tx, id) }, disabled, actor)
}

func (u *Users) setDisabled(ctx context.Context, find func(*ent.Tx) (*ent.User, error), disabled bool, actor string) (User, int, error) {
	var (
		out   *ent.User
		ended int
	)
	err := store.InTx(ctx, u.db, func(tx *ent.Tx) error {
		r, err := find(tx)
		if err != nil {
			return err
		}
		now := u.now()
		if disabled {
			if r.Role == RoleAdmin.String() && !r.Disabled {
				if err := lastAdminCheck(ctx, tx, r.ID); err != nil {
					return err
				}
			}
			ended, err = tx.Session.Update().
				Where(entsession.UserID(r.ID), entsession.EndedAtIsNil()).
				SetEndedAt(now).
				Save(ctx)
			if err != nil {
				return err
			}
		}
		out = r
		if r.Disabled == disabled && ended == 0 {
			return nil
		}
		out, err = r.Update().SetDisabled(disabled).SetUpdatedAt(now).Save(ctx)
		if err != nil {
			return err
		}
		action := "user.enable"
		if disabled {
			action = "user.disable"
		}
		err = u.audit.Append(ctx, tx, audit.Record{
			Actor: ActorOf(ctx, actor), Action: action, Subject: r.ID,
			Detail: map[string]any{"email": r.Email, "sessions_ended": ended},
		})
		return err
	})
	if err != nil {
		return User{}, 0, err
	}
	return userOf(out), ended, nil
}

// SetVerifySecret sets a person's verify secret (argon2id, like a
// password, and never the password), or removes it when secret is "".
func (u *Users) SetVerifySecret(ctx context.Context, userID, secret, actor string) error {
	hash := ""
	if secret != "" {
		if err := checkPassword(secret); err != nil {
			return fmt.Errorf("secret: %w", err)
		}
		var err error
		if hash, err = HashPassword(secret); err != nil {
			return err
		}
	}
	return store.InTx(ctx, u.db, func(tx *ent.Tx) error {
		r, err := tx.User.Get(ctx, userID)
		if ent.IsNotFound(err) {
			return ErrNoUser
		}
		if err != nil {
			return err
		}
		if err := r.Update().SetVerifyHash(hash).SetUpdatedAt(u.now()).Exec(ctx); err != nil {
			return err
		}
		err = u.audit.Append(ctx, tx, audit.Record{
			Actor: ActorOf(ctx, actor), Action: "user.verify_secret", Subject: r.ID,
			Detail: map[string]any{"email": r.Email, "set": secret != ""},
		})
		return err
	})
}

func newUserID() (string, error) {
	b := make([]byte, 12)
	if _, err := rand.Read(b); err != nil {
		return "", fmt.Errorf("user id: %w", err)
	}
	return "usr-" + hex.EncodeToString(b), nil
}
