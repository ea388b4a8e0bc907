package board

import (
	"context"
	"crypto/rand"
	"crypto/subtle"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"github.com/symphonix/symphonix/audit"
	"github.com/symphonix/symphonix/ent"
	entsession "github.com/symphonix/symphonix/ent/session"
	"github.com/symphonix/symphonix/store"
)

// Web sign-ins (docs/people.md). A session is a JWT signed with the board's
// key (typ session+jwt, jti the session's row, sub the user's id) in an
// HttpOnly cookie, and a CSRF token that every request the cookie
// authenticates must echo in the X-CSRF-Token header.
const (
	// SessionCookie holds the session JWT: HttpOnly, SameSite=Strict,
	// Path=/, Secure when the board serves TLS.
	SessionCookie = "symphonix_session"
	// CSRFCookie holds the session's CSRF token where the page's script
	// can read it after a reload. The board never reads this cookie: it
	// checks the header against the session's row.
	CSRFCookie = "symphonix_csrf"
	// CSRFHeader carries the CSRF token on every request a session cookie
	// authenticates.
	CSRFHeader = "X-CSRF-Token"
	// DefaultSessionTTL is how long a sign-in lasts.
	DefaultSessionTTL = 12 * time.Hour
)

// Why a session cookie is refused, beyond the token errors.
var (
	ErrSessionEnded = errors.New("session ended")
	ErrUserDisabled = errors.New("user disabled")
)

// started is a session just begun.
type started struct {
	id      string
	token   string // the JWT, for the cookie
	csrf    string
	expires time.Time
}

// startSession records a session for the person r, signed in from source,
// and audits the sign-in in the same transaction.
func (b *Board) startSession(ctx context.Context, r *ent.User, source string) (started, error) {
	now := b.now().Truncate(time.Second)
	s := started{expires: now.Add(b.cfg.SessionTTL)}
	var err error
	if s.id, err = randomHex(16); err != nil {
		return started{}, err
	}
	if s.csrf, err = randomHex(32); err != nil {
		return started{}, err
	}
	if s.token, err = b.tokens.signSession(s.id, r.ID, now, s.expires); err != nil {
		return started{}, err
	}
	err = store.InTx(ctx, b.db, func(tx *ent.Tx) error {
		err := tx.Session.Create().
			SetID(s.id).
			SetUserID(r.ID).
			SetCsrfHash(hashSecret(s.csrf)).
			SetSource(source).
			SetCreatedAt(now).
			SetExpiresAt(s.expires).
			Exec(ctx)
		if err != nil {
			return fmt.Errorf("record session: %w", err)
		}
		_, err = b.audit.Append(ctx, tx, audit.Record{
			Actor: r.Email, Action: "signin", Subject: s.id,
			Detail: map[string]any{"email": r.Email, "source": source, "expires": s.expires.UTC().Format(time.RFC3339)},
		})
		return err
	})
	if err != nil {
		return started{}, err
	}
	return s, nil
}

// signSession signs a session JWT. No role is in it: the role is read
// from the person on every request, so a change applies at once.
func (t *Tokens) signSession(id, userID string, now, exp time.Time) (string, error) {
	tok := jwt.NewWithClaims(jwt.SigningMethodEdDSA, claims{RegisteredClaims: jwt.RegisteredClaims{
		Issuer:    Issuer,
		Subject:   userID,
		Audience:  jwt.ClaimStrings{Audience},
		ExpiresAt: jwt.NewNumericDate(exp),
		NotBefore: jwt.NewNumericDate(now),
		IssuedAt:  jwt.NewNumericDate(now),
		ID:        id,
	}})
	tok.Header["typ"] = KindSession.typ()
	tok.Header["kid"] = t.kid
	s, err := tok.SignedString(t.key)
	if err != nil {
		return "", fmt.Errorf("sign session: %w", err)
	}
	return s, nil
}

// verifySession checks a session cookie: the JWT (signature, typ, claims),
// its row (there, not ended, not expired, the same person), and the person
// (there, not disabled). It returns the caller and the hash of the
// session's CSRF token.
func (b *Board) verifySession(ctx context.Context, raw string) (Caller, string, error) {
	now := b.now()
	c, err := b.tokens.parse(raw, KindSession, now)
	if err != nil {
		return Caller{}, "", err
	}
	row, err := b.db.Session.Get(ctx, c.ID)
	if ent.IsNotFound(err) {
		return Caller{}, "", ErrUnknownToken
	}
	if err != nil {
		return Caller{}, "", fmt.Errorf("look up session: %w", err)
	}
	switch {
	case row.EndedAt != nil:
		return Caller{}, "", ErrSessionEnded
	case !now.Before(row.ExpiresAt):
		return Caller{}, "", fmt.Errorf("%w: session expired", ErrBadToken)
	case row.UserID != c.Subject:
		return Caller{}, "", fmt.Errorf("%w: session row does not match its claims", ErrWrongKind)
	}
	u, err := b.db.User.Get(ctx, row.UserID)
	if ent.IsNotFound(err) {
		return Caller{}, "", ErrUnknownToken
	}
	if err != nil {
		return Caller{}, "", fmt.Errorf("look up user: %w", err)
	}
	if u.Disabled {
		return Caller{}, "", ErrUserDisabled
	}
	role, err := ParseRole(u.Role)
	if err != nil {
		return Caller{}, "", fmt.Errorf("%w: role", ErrBadToken)
	}
	return Caller{
		Kind:      KindSession,
		Name:      u.Email,
		UserID:    u.ID,
		Role:      role,
		TokenID:   row.ID,
		ExpiresAt: row.ExpiresAt,
	}, row.CsrfHash, nil
}

// csrfMatches compares a request's CSRF header with the session's hash.
func csrfMatches(header, hash string) bool {
	if header == "" {
		return false
	}
	return subtle.ConstantTimeCompare([]byte(hashSecret(header)), []byte(hash)) == 1
}

// endSession ends a session (signing out). Ending an ended session
// changes nothing and writes no entry.
func (b *Board) endSession(ctx context.Context, c Caller) error {
	return store.InTx(ctx, b.db, func(tx *ent.Tx) error {
		n, err := tx.Session.Update().
			Where(entsession.ID(c.TokenID), entsession.EndedAtIsNil()).
			SetEndedAt(b.now()).
			Save(ctx)
		if err != nil || n == 0 {
			return err
		}
		_, err = b.audit.Append(ctx, tx, audit.Record{
			Actor: c.Name, Action: "signout", Subject: c.TokenID,
			Detail: map[string]any{"email": c.Name},
		})
		return err
	})
}

// sessionCookie returns the session cookie's value in h, or "".
func sessionCookie(h http.Header) string {
	r := http.Request{Header: h}
	c, err := r.Cookie(SessionCookie)
	if err != nil {
		return ""
	}
	return c.Value
}

func randomHex(n int) (string, error) {
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		return "", err
	}
	return hex.EncodeToString(b), nil
}
