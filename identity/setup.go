package identity

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/symphonix/symphonix/audit"
	"github.com/symphonix/symphonix/ent"
	"github.com/symphonix/symphonix/ent/setting"
	"github.com/symphonix/symphonix/ent/user"
	"github.com/symphonix/symphonix/store"
)

// SetupTTL is how long a one-time setup link works.
const SetupTTL = 24 * time.Hour

// firstRunKey is the setting that holds the first-run link's hash while the
// board has nobody.
const firstRunKey = "setup.first_admin"

// ErrSetupLink: a setup token that is unknown, used or expired. Which one
// is not said, to the person or to anyone guessing.
var ErrSetupLink = errors.New("setup link not valid: it was used, it expired, or it was never issued")

// SetupLink is a one-time link through which a person sets their own
// password. The token is 32 random bytes; the store keeps only its SHA-256.
type SetupLink struct {
	Token     string
	ExpiresAt time.Time
}

// Path is the link's path on the board. The token is in the fragment, so a
// browser never sends it in a request line, a Referer or a proxy's log; the
// setup page reads it and posts it to /auth/setup.
func (l SetupLink) Path() string { return "/setup#token=" + l.Token }

// URL is the link on the board whose public URL is base.
func (l SetupLink) URL(base string) string { return strings.TrimSuffix(base, "/") + l.Path() }

func newSetupLink(now time.Time) (SetupLink, string, error) {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		return SetupLink{}, "", fmt.Errorf("setup token: %w", err)
	}
	tok := base64.RawURLEncoding.EncodeToString(b)
	return SetupLink{Token: tok, ExpiresAt: now.Add(SetupTTL).Truncate(time.Second)}, hashSecret(tok), nil
}

// hashSecret is the SHA-256 of a random token, for lookup: the tokens are
// 256-bit random, so a fast hash is enough.
func hashSecret(tok string) string {
	h := sha256.Sum256([]byte(tok))
	return hex.EncodeToString(h[:])
}

type firstRun struct {
	Hash    string    `json:"hash"`
	Expires time.Time `json:"expires"`
}

// FirstRun returns a fresh one-time link that creates the first admin when
// the board has nobody, replacing any earlier first-run link; ok is false
// once anybody exists.
func (u *Users) FirstRun(ctx context.Context) (link SetupLink, ok bool, err error) {
	n, err := u.db.User.Query().Count(ctx)
	if err != nil || n > 0 {
		return SetupLink{}, false, err
	}
	now := u.now()
	link, hash, err := newSetupLink(now)
	if err != nil {
		return SetupLink{}, false, err
	}
	v, err := json.Marshal(firstRun{Hash: hash, Expires: link.ExpiresAt.UTC()})
	if err != nil {
		return SetupLink{}, false, err
	}
	err = u.db.Setting.Create().
		SetID(firstRunKey).
		SetValue(string(v)).
		SetUpdatedAt(now).
		SetUpdatedBy("board").
		OnConflictColumns(setting.FieldID).
		UpdateNewValues().
		Exec(ctx)
	if err != nil {
		return SetupLink{}, false, fmt.Errorf("save first-run link: %w", err)
	}
	return link, true, nil
}

// Setup says what a person sends with a setup link.
type Setup struct {
	Token string
	// Email: required for the first-run link (it creates the person);
	// ignored otherwise (the admin who added them chose it).
	Email string
	// Name: kept when not empty.
	Name     string
	Password string
}

// CheckSetup says whether Setup would take s, without hashing its
// password: everything cheap to check comes first, so a request that
// would fail costs the board a lookup and not an argon2id hash. It checks
// the password's length, the name, and the link: the right size, known,
// unused, unexpired, its person not disabled; for the first-run link, a
// board with nobody yet and a well-formed email. Setup checks all of it
// before hashing, and the link again when it commits.
func (u *Users) CheckSetup(ctx context.Context, s Setup) error {
	if err := checkPassword(s.Password); err != nil {
		return fmt.Errorf("password: %w", err)
	}
	if err := validUserName(strings.TrimSpace(s.Name)); err != nil {
		return err
	}
	if len(s.Token) != setupTokenLen {
		return ErrSetupLink
	}
	hash := hashSecret(s.Token)
	now := u.now()
	r, err := u.db.User.Query().Where(user.SetupHash(hash)).Only(ctx)
	switch {
	case err == nil:
		if r.SetupExpiresAt == nil || !now.Before(*r.SetupExpiresAt) || r.Disabled {
			return ErrSetupLink
		}
		return nil
	case !ent.IsNotFound(err):
		return err
	}
	st, err := u.db.Setting.Get(ctx, firstRunKey)
	if ent.IsNotFound(err) {
		return ErrSetupLink
	}
	if err != nil {
		return err
	}
	if !firstRunMatches(st, hash, now) {
		return ErrSetupLink
	}
	if n, err := u.db.User.Query().Count(ctx); err != nil {
		return err
	} else if n > 0 {
		return ErrSetupLink
	}
	_, err = CanonicalEmail(s.Email)
	return err
}

// setupTokenLen is the length of every setup token: 32 bytes in unpadded
// base64url.
const setupTokenLen = 43

// firstRunMatches says whether the first-run setting st holds the link
// whose hash is hash, unexpired at now.
func firstRunMatches(st *ent.Setting, hash string, now time.Time) bool {
	var fr firstRun
	return json.Unmarshal([]byte(st.Value), &fr) == nil && fr.Hash == hash && now.Before(fr.Expires)
}

// Setup redeems a one-time setup link: it sets the person's password (and
// name), or, for the first-run link, creates the first admin. A link
// works once: the hash is cleared in the transaction that uses it. The
// password is hashed only once CheckSetup has passed.
func (u *Users) Setup(ctx context.Context, s Setup) (User, error) {
	if err := u.CheckSetup(ctx, s); err != nil {
		return User{}, err
	}
	name := strings.TrimSpace(s.Name)
	hash := hashSecret(s.Token)
	pw, err := HashPassword(s.Password)
	if err != nil {
		return User{}, err
	}
	now := u.now()
	var out *ent.User
	err = store.InTx(ctx, u.db, func(tx *ent.Tx) error {
		r, err := tx.User.Query().Where(user.SetupHash(hash)).Only(ctx)
		if ent.IsNotFound(err) {
			out, err = u.firstAdmin(ctx, tx, hash, s.Email, name, pw, now)
			return err
		}
		if err != nil {
			return err
		}
		if r.SetupExpiresAt == nil || !now.Before(*r.SetupExpiresAt) || r.Disabled {
			return ErrSetupLink
		}
		up := tx.User.Update().
			Where(user.ID(r.ID), user.SetupHash(hash)).
			SetPasswordHash(pw).
			SetSetupHash("").
			ClearSetupExpiresAt().
			SetUpdatedAt(now)
		if name != "" {
			up.SetName(name)
		}
		if n, err := up.Save(ctx); err != nil {
			return err
		} else if n != 1 {
			return ErrSetupLink
		}
		if out, err = tx.User.Get(ctx, r.ID); err != nil {
			return err
		}
		err = u.audit.Append(ctx, tx, audit.Record{
			Actor: out.Email, Action: "user.setup", Subject: out.ID,
			Detail: map[string]any{"email": out.Email},
		})
		return err
	})
	if err != nil {
		return User{}, err
	}
	return userOf(out), nil
}

// firstAdmin redeems the first-run link: it creates the first admin, and
// only while the board has nobody.
func (u *Users) firstAdmin(ctx context.Context, tx *ent.Tx, hash, email, name, pw string, now time.Time) (*ent.User, error) {
	st, err := tx.Setting.Get(ctx, firstRunKey)
	if ent.IsNotFound(err) {
		return nil, ErrSetupLink
	}
	if err != nil {
		return nil, err
	}
	if !firstRunMatches(st, hash, now) {
		return nil, ErrSetupLink
	}
	if n, err := tx.User.Query().Count(ctx); err != nil {
		return nil, err
	} else if n > 0 {
		return nil, ErrSetupLink
	}
	e, err := CanonicalEmail(email)
	if err != nil {
		return nil, err
	}
	if n, err := tx.Setting.Delete().Where(setting.ID(firstRunKey), setting.Value(st.Value)).Exec(ctx); err != nil {
		return nil, err
	} else if n != 1 {
		return nil, ErrSetupLink
	}
	id, err := newUserID()
	if err != nil {
		return nil, err
	}
	r, err := tx.User.Create().
		SetID(id).
		SetEmail(e).
		SetName(name).
		SetRole(RoleAdmin.String()).
		SetPasswordHash(pw).
		SetCreatedAt(now).
		SetUpdatedAt(now).
		Save(ctx)
	if err != nil {
		return nil, err
	}
	err = u.audit.Append(ctx, tx, audit.Record{
		Actor: e, Action: "user.first_admin", Subject: id,
		Detail: map[string]any{"email": e, "name": name, "role": RoleAdmin.String()},
	})
	return r, err
}
