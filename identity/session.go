package identity

import (
	"context"
	"crypto/rand"
	"crypto/subtle"
	"encoding/hex"
	"errors"
	"fmt"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"github.com/symphonix/symphonix/audit"
	"github.com/symphonix/symphonix/ent"
	entsession "github.com/symphonix/symphonix/ent/session"
	"github.com/symphonix/symphonix/store"
)

// DefaultSessionTTL is how long a sign-in lasts unless the board says
// otherwise.
const DefaultSessionTTL = 12 * time.Hour

// Why a session is refused, beyond the token errors.
var (
	ErrSessionEnded = errors.New("session ended")
	ErrUserDisabled = errors.New("user disabled")
)

// Session is a sign-in just begun: what goes into the person's cookies.
type Session struct {
	ID string
	// Token is the session JWT (typ session+jwt, jti the session's row,
	// sub the person's id), for the HttpOnly cookie.
	Token string
	// CSRF is the token every request the cookie authenticates must echo;
	// the store keeps only its hash.
	CSRF    string
	Expires time.Time
}

// Sessions keeps web sign-ins: a row per session, signed with the board's
// key, checked on every request so that signing out or disabling a person
// ends the session at once. The HTTP half (cookies and the CSRF header) is
// the board's.
type Sessions struct {
	db     *ent.Client
	tokens *Tokens
	audit  *audit.Log
	ttl    time.Duration
	now    func() time.Time
}

// SessionsConfig is what Sessions are kept and signed with.
type SessionsConfig struct {
	// Store: required. Where sessions are kept, and the audit log.
	Store *ent.Client
	// Tokens: required. Signs and checks the session JWTs.
	Tokens *Tokens
	// TTL: how long a sign-in lasts. Zero means DefaultSessionTTL.
	TTL time.Duration
	// Now: the clock. Nil means time.Now.
	Now func() time.Time
}

// NewSessions returns the sessions cfg describes.
func NewSessions(cfg SessionsConfig) (*Sessions, error) {
	if cfg.Store == nil || cfg.Tokens == nil {
		return nil, errors.New("identity: sessions need a Store and Tokens")
	}
	if cfg.TTL < 0 {
		return nil, fmt.Errorf("identity: session TTL %s: must not be negative", cfg.TTL)
	}
	if cfg.TTL == 0 {
		cfg.TTL = DefaultSessionTTL
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	return &Sessions{db: cfg.Store, tokens: cfg.Tokens, audit: audit.New(cfg.Store), ttl: cfg.TTL, now: cfg.Now}, nil
}

// Start records a session for the person with userID and email, signed in
// from source, and audits the sign-in in the same transaction.
func (ss *Sessions) Start(ctx context.Context, userID, email, source string) (Session, error) {
	now := ss.now().Truncate(time.Second)
	s := Session{Expires: now.Add(ss.ttl)}
	var err error
	if s.ID, err = randomHex(16); err != nil {
		return Session{}, err
	}
	if s.CSRF, err = randomHex(32); err != nil {
		return Session{}, err
	}
	if s.Token, err = ss.tokens.signSession(s.ID, userID, now, s.Expires); err != nil {
		return Session{}, err
	}
	err = store.InTx(ctx, ss.db, func(tx *ent.Tx) error {
		err := tx.Session.Create().
			SetID(s.ID).
			SetUserID(userID).
			SetCsrfHash(hashSecret(s.CSRF)).
			SetSource(source).
			SetCreatedAt(now).
			SetExpiresAt(s.Expires).
			Exec(ctx)
		if err != nil {
			return fmt.Errorf("record session: %w", err)
		}
		err = ss.audit.Append(ctx, tx, audit.Record{
			Actor: email, Action: "signin", Subject: s.ID,
			Detail: map[string]any{"email": email, "source": source, "expires": s.Expires.UTC().Format(time.RFC3339)},
		})
		return err
	})
	if err != nil {
		return Session{}, err
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

// Verify checks a session token: the JWT (signature, typ, claims), its
// row (there, not ended, not expired, the same person), and the person
// (there, not disabled). It returns the caller and the hash of the
// session's CSRF token, for CSRFMatches. A store that cannot be read is
// ErrStore, never a refusal.
func (ss *Sessions) Verify(ctx context.Context, raw string) (Caller, string, error) {
	now := ss.now()
	c, err := ss.tokens.parse(raw, KindSession, now)
	if err != nil {
		return Caller{}, "", err
	}
	row, err := ss.db.Session.Get(ctx, c.ID)
	if ent.IsNotFound(err) {
		return Caller{}, "", ErrUnknownToken
	}
	if err != nil {
		return Caller{}, "", fmt.Errorf("%w: look up session: %w", ErrStore, err)
	}
	switch {
	case row.EndedAt != nil:
		return Caller{}, "", ErrSessionEnded
	case !now.Before(row.ExpiresAt):
		return Caller{}, "", fmt.Errorf("%w: session expired", ErrBadToken)
	case row.UserID != c.Subject:
		return Caller{}, "", fmt.Errorf("%w: session row does not match its claims", ErrWrongKind)
	}
	u, err := ss.db.User.Get(ctx, row.UserID)
	if ent.IsNotFound(err) {
		return Caller{}, "", ErrUnknownToken
	}
	if err != nil {
		return Caller{}, "", fmt.Errorf("%w: look up user: %w", ErrStore, err)
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

// CSRFMatches compares a request's CSRF header with the session's hash, in
// constant time. An empty header never matches.
func CSRFMatches(header, hash string) bool {
	if header == "" {
		return false
	}
	return subtle.ConstantTimeCompare([]byte(hashSecret(header)), []byte(hash)) == 1
}

// End ends the session c signed in with (signing out). Ending an ended
// session changes nothing and writes no entry.
func (ss *Sessions) End(ctx context.Context, c Caller) error {
	return store.InTx(ctx, ss.db, func(tx *ent.Tx) error {
		n, err := tx.Session.Update().
			Where(entsession.ID(c.TokenID), entsession.EndedAtIsNil()).
			SetEndedAt(ss.now()).
			Save(ctx)
		if err != nil || n == 0 {
			return err
		}
		err = ss.audit.Append(ctx, tx, audit.Record{
			Actor: c.Name, Action: "signout", Subject: c.TokenID,
			Detail: map[string]any{"email": c.Name},
		})
		return err
	})
}

func randomHex(n int) (string, error) {
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		return "", err
	}
	return hex.EncodeToString(b), nil
}
