package identity

import (
	"context"
	"crypto/ed25519"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"github.com/symphonix/symphonix/audit"
	"github.com/symphonix/symphonix/ent"
	"github.com/symphonix/symphonix/ent/signingkey"
	"github.com/symphonix/symphonix/ent/token"
	"github.com/symphonix/symphonix/store"
)

// Kind is what a token is for. A token of one kind is never accepted as the
// other: the kind is in the signed header's typ and in the store's row.
type Kind string

const (
	// KindOperator is a person or a script working the board.
	KindOperator Kind = "operator"
	// KindAgent is a running agent dialling its link.
	KindAgent Kind = "agent"
	// KindSession is a person signed in on the web (a session cookie). It
	// is accepted wherever an operator is, with the person's role.
	KindSession Kind = "session"
)

// typ is the JWT header "typ" each kind carries (RFC 8725 explicit typing).
func (k Kind) typ() string { return string(k) + "+jwt" }

// Role is what an operator may do. Higher roles include the lower ones.
type Role int

const (
	// RoleNone is no role: an agent, or a token without one.
	RoleNone Role = iota
	// RoleViewer may read.
	RoleViewer
	// RoleApprover may also decide approvals.
	RoleApprover
	// RoleAdmin may do anything.
	RoleAdmin
)

// ParseRole reads "viewer", "approver" or "admin".
func ParseRole(s string) (Role, error) {
	switch s {
	case "viewer":
		return RoleViewer, nil
	case "approver":
		return RoleApprover, nil
	case "admin":
		return RoleAdmin, nil
	}
	return RoleNone, fmt.Errorf("role %q: want admin, approver or viewer", s)
}

func (r Role) String() string {
	switch r {
	case RoleViewer:
		return "viewer"
	case RoleApprover:
		return "approver"
	case RoleAdmin:
		return "admin"
	}
	return "none"
}

const (
	// Issuer is the iss every board token carries.
	Issuer = "symphonix"
	// Audience is the aud every board token carries.
	Audience = "symphonix-board"
)

// Errors a caller may branch on. Every one of them but ErrStore means
// "unauthenticated" to a client; the distinction is for logs and tests.
var (
	// ErrStore: the credential could not be checked because the store
	// could not be read. It says nothing about the credential, so it is
	// never a refusal: the caller may try again.
	ErrStore        = errors.New("store unavailable")
	ErrNoToken      = errors.New("no token")
	ErrBadToken     = errors.New("token not valid")
	ErrRevoked      = errors.New("token revoked")
	ErrWrongKind    = errors.New("token of another kind")
	ErrUnknownToken = errors.New("token not issued by this board")
	// ErrExpired: a token or session that was good, checked again after
	// it expired (Recheck).
	ErrExpired = fmt.Errorf("%w: expired", ErrBadToken)
)

// Minted is a freshly signed token and the row that allows it.
type Minted struct {
	ID        string
	Token     string
	ExpiresAt time.Time
}

type claims struct {
	jwt.RegisteredClaims
	Role string `json:"role,omitempty"`
}

// Tokens mints and verifies the board's tokens. The signing key lives in the
// store; the token table is the allow-list, so a token is good only while its
// row exists and is not revoked.
type Tokens struct {
	db    *ent.Client
	kid   string
	key   ed25519.PrivateKey
	audit *audit.Log
}

// OpenTokens loads the store's signing key, creating it on first use.
func OpenTokens(ctx context.Context, db *ent.Client) (*Tokens, error) {
	k, err := db.SigningKey.Query().Order(ent.Asc(signingkey.FieldCreatedAt)).First(ctx)
	if ent.IsNotFound(err) {
		_, priv, gerr := ed25519.GenerateKey(rand.Reader)
		if gerr != nil {
			return nil, fmt.Errorf("generate signing key: %w", gerr)
		}
		id := make([]byte, 8)
		if _, gerr := rand.Read(id); gerr != nil {
			return nil, fmt.Errorf("generate key id: %w", gerr)
		}
		_, err = db.SigningKey.Create().
			SetID(hex.EncodeToString(id)).
			SetPrivateKey(priv.Seed()).
			SetCreatedAt(time.Now()).
			Save(ctx)
		if err != nil {
			return nil, fmt.Errorf("save signing key: %w", err)
		}
		// Another board on the same database may have created one at the
		// same moment: whichever is oldest is the key.
		k, err = db.SigningKey.Query().Order(ent.Asc(signingkey.FieldCreatedAt), ent.Asc(signingkey.FieldID)).First(ctx)
	}
	if err != nil {
		return nil, fmt.Errorf("load signing key: %w", err)
	}
	if len(k.PrivateKey) != ed25519.SeedSize {
		return nil, fmt.Errorf("signing key %s: bad length %d", k.ID, len(k.PrivateKey))
	}
	return &Tokens{db: db, kid: k.ID, key: ed25519.NewKeyFromSeed(k.PrivateKey), audit: audit.New(db)}, nil
}

// MintOptions says what to mint.
type MintOptions struct {
	Kind Kind
	Name string
	// Role: required for operators, must be RoleNone for agents.
	Role Role
	// TTL: how long the token is good for; zero means a year.
	TTL time.Duration
	// Now: the time of issue; zero means time.Now.
	Now time.Time
	// Actor: who mints, for the audit log; empty means the caller in ctx,
	// or else "board".
	Actor string
}

// Mint signs a token and records it in the allow-list.
func (t *Tokens) Mint(ctx context.Context, o MintOptions) (Minted, error) {
	switch o.Kind {
	case KindOperator:
		if o.Role == RoleNone {
			return Minted{}, errors.New("operator token: role is required")
		}
	case KindAgent:
		if o.Role != RoleNone {
			return Minted{}, errors.New("agent token: no role")
		}
	default:
		return Minted{}, fmt.Errorf("kind %q: want operator or agent", o.Kind)
	}
	if err := ValidName(o.Name); err != nil {
		return Minted{}, err
	}
	if o.Kind == KindOperator && strings.Contains(o.Name, "@") {
		// A signed-in person is named by their address; a token must
		// never be able to pass for one (a rule naming who decides).
		return Minted{}, fmt.Errorf("name %q: an operator token's name is not an address: people sign in", o.Name)
	}
	now := o.Now
	if now.IsZero() {
		now = time.Now()
	}
	now = now.Truncate(time.Second)
	ttl := o.TTL
	if ttl == 0 {
		ttl = 365 * 24 * time.Hour
	}
	if ttl < 0 {
		return Minted{}, errors.New("ttl: must be positive")
	}
	idb := make([]byte, 16)
	if _, err := rand.Read(idb); err != nil {
		return Minted{}, fmt.Errorf("token id: %w", err)
	}
	id := hex.EncodeToString(idb)
	exp := now.Add(ttl)
	c := claims{
		RegisteredClaims: jwt.RegisteredClaims{
			Issuer:    Issuer,
			Subject:   o.Name,
			Audience:  jwt.ClaimStrings{Audience},
			ExpiresAt: jwt.NewNumericDate(exp),
			NotBefore: jwt.NewNumericDate(now),
			IssuedAt:  jwt.NewNumericDate(now),
			ID:        id,
		},
	}
	if o.Kind == KindOperator {
		c.Role = o.Role.String()
	}
	tok := jwt.NewWithClaims(jwt.SigningMethodEdDSA, c)
	tok.Header["typ"] = o.Kind.typ()
	tok.Header["kid"] = t.kid
	signed, err := tok.SignedString(t.key)
	if err != nil {
		return Minted{}, fmt.Errorf("sign token: %w", err)
	}
	// The row and its audit entry commit together: a token the log does
	// not show is never allowed.
	err = store.InTx(ctx, t.db, func(tx *ent.Tx) error {
		create := tx.Token.Create().
			SetID(id).
			SetKind(token.Kind(o.Kind)).
			SetName(o.Name).
			SetIssuedAt(now).
			SetExpiresAt(exp)
		if o.Kind == KindOperator {
			create.SetRole(o.Role.String())
		}
		if err := create.Exec(ctx); err != nil {
			return fmt.Errorf("record token: %w", err)
		}
		err := t.audit.Append(ctx, tx, audit.Record{
			Actor:   ActorOf(ctx, o.Actor),
			Action:  "token.mint",
			Subject: id,
			Detail:  tokenDetail(o.Kind, o.Name, o.Role.String(), exp),
		})
		return err
	})
	if err != nil {
		return Minted{}, err
	}
	return Minted{ID: id, Token: signed, ExpiresAt: exp}, nil
}

// Revoke revokes a token by its id. Revoking twice is not an error.
func (t *Tokens) Revoke(ctx context.Context, id string, now time.Time) error {
	return t.RevokeBy(ctx, id, "", now)
}

// RevokeBy is Revoke recording actor as who revoked the token in the
// audit log; an empty actor means the caller in ctx, or else "board".
// Revoking a revoked token changes nothing and writes no entry.
func (t *Tokens) RevokeBy(ctx context.Context, id, actor string, now time.Time) error {
	return store.InTx(ctx, t.db, func(tx *ent.Tx) error {
		n, err := tx.Token.Update().
			Where(token.ID(id), token.RevokedAtIsNil()).
			SetRevokedAt(now).
			Save(ctx)
		if err != nil {
			return fmt.Errorf("revoke token: %w", err)
		}
		row, err := tx.Token.Get(ctx, id)
		if ent.IsNotFound(err) {
			return fmt.Errorf("token %s: %w", id, ErrUnknownToken)
		}
		if err != nil {
			return fmt.Errorf("revoke token: %w", err)
		}
		if n == 0 {
			return nil // revoked already
		}
		err = t.audit.Append(ctx, tx, audit.Record{
			Actor:   ActorOf(ctx, actor),
			Action:  "token.revoke",
			Subject: id,
			Detail:  tokenDetail(Kind(row.Kind), row.Name, row.Role, row.ExpiresAt),
		})
		return err
	})
}

// ActorOf is who does something, for the audit log: given, else the
// caller in ctx, else the board itself.
func ActorOf(ctx context.Context, given string) string {
	if given != "" {
		return given
	}
	if c, ok := FromContext(ctx); ok && c.Name != "" {
		return c.Name
	}
	return "board"
}

// tokenDetail is what the audit log keeps about a token: never the token.
// The role is kept for operator tokens only.
func tokenDetail(k Kind, name, role string, expires time.Time) map[string]any {
	d := map[string]any{
		"kind":    string(k),
		"name":    name,
		"expires": expires.UTC().Format(time.RFC3339),
	}
	if k == KindOperator {
		d["role"] = role
	}
	return d
}

// Verify checks a token's signature, header, claims and its row in the
// allow-list, and that it is of the kind wanted. Every failure wraps one of
// the sentinel errors above: ErrStore when the row could not be read. It
// is Claim and then CheckRows of the one claim.
func (t *Tokens) Verify(ctx context.Context, raw string, want Kind, now time.Time) (Caller, error) {
	c, err := t.Claim(raw, want, now)
	if err != nil {
		return Caller{}, err
	}
	callers, errs := t.CheckRows(ctx, []Claim{c})
	return callers[0], errs[0]
}

// Claim is a token whose signature, header and claims hold, of the kind
// wanted: what it claims, its row not yet checked (CheckRows).
type Claim struct {
	c    claims
	want Kind
}

// Claim checks a token's signature, header and claims, and that it is of
// the kind wanted, without reading the store. A token is good only once
// CheckRows has found its row too.
func (t *Tokens) Claim(raw string, want Kind, now time.Time) (Claim, error) {
	c, err := t.parse(raw, want, now)
	if err != nil {
		return Claim{}, err
	}
	return Claim{c: c, want: want}, nil
}

// MaxCheckRows is the most claims one CheckRows reads the rows of.
const MaxCheckRows = 500

// CheckRows checks each claim against its row in the allow-list, reading
// the rows of them all at once (at most MaxCheckRows): callers[i] and
// errs[i] are claims[i]'s, each error wrapping one of the sentinel errors
// above. When the rows could not be read, every claim fails with ErrStore.
func (t *Tokens) CheckRows(ctx context.Context, claims []Claim) (callers []Caller, errs []error) {
	callers, errs = make([]Caller, len(claims)), make([]error, len(claims))
	if len(claims) > MaxCheckRows {
		for i := range errs {
			errs[i] = fmt.Errorf("%w: %d tokens to check at once, at most %d", ErrStore, len(claims), MaxCheckRows)
		}
		return callers, errs
	}
	ids := make([]string, len(claims))
	for i, c := range claims {
		ids[i] = c.c.ID
	}
	rows, err := t.db.Token.Query().Where(token.IDIn(ids...)).All(ctx)
	if err != nil {
		for i := range errs {
			errs[i] = fmt.Errorf("%w: look up token: %w", ErrStore, err)
		}
		return callers, errs
	}
	byID := make(map[string]*ent.Token, len(rows))
	for _, r := range rows {
		byID[r.ID] = r
	}
	for i, c := range claims {
		callers[i], errs[i] = c.against(byID[c.c.ID])
	}
	return callers, errs
}

// against checks c against its row, nil when there is none.
func (c Claim) against(row *ent.Token) (Caller, error) {
	if row == nil {
		return Caller{}, ErrUnknownToken
	}
	if row.RevokedAt != nil {
		return Caller{}, ErrRevoked
	}
	if Kind(row.Kind) != c.want || row.Name != c.c.Subject {
		return Caller{}, fmt.Errorf("%w: token row does not match its claims", ErrWrongKind)
	}
	caller := Caller{Kind: c.want, Name: c.c.Subject, TokenID: c.c.ID, ExpiresAt: c.c.ExpiresAt.Time}
	if c.want == KindOperator {
		r, err := ParseRole(row.Role)
		if err != nil || row.Role != c.c.Role {
			return Caller{}, fmt.Errorf("%w: role", ErrBadToken)
		}
		caller.Role = r
	}
	return caller, nil
}

// parse checks a token's signature, header and registered claims, and that
// its typ is want's; the caller checks its row. Every failure wraps one of
// the sentinel errors above.
func (t *Tokens) parse(raw string, want Kind, now time.Time) (claims, error) {
	if raw == "" {
		return claims{}, ErrNoToken
	}
	parser := jwt.NewParser(
		jwt.WithValidMethods([]string{jwt.SigningMethodEdDSA.Alg()}),
		jwt.WithIssuer(Issuer),
		jwt.WithAudience(Audience),
		jwt.WithExpirationRequired(),
		jwt.WithIssuedAt(),
		jwt.WithTimeFunc(func() time.Time { return now }),
	)
	var c claims
	tok, err := parser.ParseWithClaims(raw, &c, func(tok *jwt.Token) (any, error) {
		if kid, _ := tok.Header["kid"].(string); kid != t.kid {
			return nil, errors.New("unknown key id")
		}
		return t.key.Public(), nil
	})
	if err != nil {
		return claims{}, fmt.Errorf("%w: %w", ErrBadToken, err)
	}
	if _, ok := tok.Header["crit"]; ok {
		// RFC 7515 §4.1.11: a recipient must refuse a token whose crit
		// names an extension it does not understand, and we understand
		// none.
		return claims{}, fmt.Errorf("%w: crit header", ErrBadToken)
	}
	typ, _ := tok.Header["typ"].(string)
	if typ != want.typ() {
		return claims{}, fmt.Errorf("%w: typ %q, want %q", ErrWrongKind, typ, want.typ())
	}
	if c.ID == "" || c.Subject == "" || c.NotBefore == nil {
		return claims{}, fmt.Errorf("%w: jti, sub and nbf are required", ErrBadToken)
	}
	return c, nil
}

// DerivedKey is a 32-byte secret for purpose, derived from the store's
// signing key: every board on one store derives the same one, and a board
// on another store another. It never leaves the board.
func (t *Tokens) DerivedKey(purpose string) []byte {
	m := hmac.New(sha256.New, t.key.Seed())
	m.Write([]byte("symphonix derived key\x00" + purpose))
	return m.Sum(nil)
}

// JWKS is the public half of the signing key as a JSON Web Key Set.
func (t *Tokens) JWKS() map[string]any {
	pub := t.key.Public().(ed25519.PublicKey)
	return map[string]any{"keys": []map[string]any{{
		"kty": "OKP",
		"crv": "Ed25519",
		"alg": "EdDSA",
		"use": "sig",
		"kid": t.kid,
		"x":   base64.RawURLEncoding.EncodeToString(pub),
	}}}
}

// RevokedSince returns the ids of tokens revoked after since.
func (t *Tokens) RevokedSince(ctx context.Context, since time.Time) ([]string, error) {
	return t.db.Token.Query().Where(token.RevokedAtGT(since)).IDs(ctx)
}
