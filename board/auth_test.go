package board_test

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"errors"
	"io"
	"testing"
	"time"

	"connectrpc.com/connect/v2"
	"github.com/golang-jwt/jwt/v5"

	boardv1 "github.com/symphonix/symphonix/api/symphonix/board/v1"
	"github.com/symphonix/symphonix/api/symphonix/board/v1/boardv1connect"
	"github.com/symphonix/symphonix/board"
	"github.com/symphonix/symphonix/identity"
	"github.com/symphonix/symphonix/internal/boardtest"
)

// TestTokensRefused is the JWT attack table: every token here must be
// refused by an operator RPC with unauthenticated, over both protocols.
func TestTokensRefused(t *testing.T) {
	t.Parallel()
	bt := boardtest.Start(t, boardtest.Options{})
	tokens := bt.Board.Tokens()
	ctx := t.Context()

	// A real operator row, so forged tokens name a jti the store knows.
	good := bt.Mint(identity.MintOptions{Kind: identity.KindOperator, Name: "ops", Role: identity.RoleAdmin})
	now := time.Now()
	claims := func(edit func(jwt.MapClaims)) jwt.MapClaims {
		c := jwt.MapClaims{
			"iss":  identity.Issuer,
			"sub":  "ops",
			"aud":  []string{identity.Audience},
			"exp":  now.Add(time.Hour).Unix(),
			"nbf":  now.Add(-time.Minute).Unix(),
			"iat":  now.Add(-time.Minute).Unix(),
			"jti":  good.ID,
			"role": "admin",
		}
		if edit != nil {
			edit(c)
		}
		return c
	}
	header := func(edit func(map[string]any)) map[string]any {
		h := map[string]any{"typ": "operator+jwt", "kid": bt.KeyID()}
		if edit != nil {
			edit(h)
		}
		return h
	}
	_, otherKey, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	revoked := bt.Mint(identity.MintOptions{Kind: identity.KindOperator, Name: "gone", Role: identity.RoleAdmin})
	if err := tokens.Revoke(ctx, revoked.ID, time.Now()); err != nil {
		t.Fatal(err)
	}
	expired := bt.Mint(identity.MintOptions{Kind: identity.KindOperator, Name: "old", Role: identity.RoleAdmin, Now: now.Add(-2 * time.Hour), TTL: time.Hour})

	// The forged control: signed by the board's key with every claim right,
	// it must be accepted, or the table below proves nothing.
	control := bt.Forge(jwt.SigningMethodEdDSA, nil, header(nil), claims(nil))
	if _, err := bt.Agents(control).ListAgents(ctx, &boardv1.ListAgentsRequest{}); err != nil {
		t.Fatalf("control token refused: %v", err)
	}

	cases := map[string]string{
		"missing":                         "",
		"malformed":                       "not.a.jwt",
		"garbage":                         "eyJhbGciOiJFZERTQSJ9.e30",
		"alg none":                        mustNone(t, header(nil), claims(nil)),
		"hs256 with public key as secret": bt.Forge(jwt.SigningMethodHS256, bt.PublicKey(), header(nil), claims(nil)),
		"other key same kid":              bt.Forge(jwt.SigningMethodEdDSA, otherKey, header(nil), claims(nil)),
		"unknown kid":                     bt.Forge(jwt.SigningMethodEdDSA, nil, header(func(h map[string]any) { h["kid"] = "nope" }), claims(nil)),
		"wrong aud":                       bt.Forge(jwt.SigningMethodEdDSA, nil, header(nil), claims(func(c jwt.MapClaims) { c["aud"] = []string{"someone-else"} })),
		"no aud":                          bt.Forge(jwt.SigningMethodEdDSA, nil, header(nil), claims(func(c jwt.MapClaims) { delete(c, "aud") })),
		"wrong iss":                       bt.Forge(jwt.SigningMethodEdDSA, nil, header(nil), claims(func(c jwt.MapClaims) { c["iss"] = "evil" })),
		"crit header":                     bt.Forge(jwt.SigningMethodEdDSA, nil, header(func(h map[string]any) { h["crit"] = []string{"exp"} }), claims(nil)),
		"crit header, empty":              bt.Forge(jwt.SigningMethodEdDSA, nil, header(func(h map[string]any) { h["crit"] = []string{} }), claims(nil)),
		"wrong typ":                       bt.Forge(jwt.SigningMethodEdDSA, nil, header(func(h map[string]any) { h["typ"] = "JWT" }), claims(nil)),
		"agent typ":                       bt.Forge(jwt.SigningMethodEdDSA, nil, header(func(h map[string]any) { h["typ"] = "agent+jwt" }), claims(nil)),
		"expired (forged)":                bt.Forge(jwt.SigningMethodEdDSA, nil, header(nil), claims(func(c jwt.MapClaims) { c["exp"] = now.Add(-time.Minute).Unix() })),
		"expired (minted)":                expired.Token,
		"no exp":                          bt.Forge(jwt.SigningMethodEdDSA, nil, header(nil), claims(func(c jwt.MapClaims) { delete(c, "exp") })),
		"not yet valid":                   bt.Forge(jwt.SigningMethodEdDSA, nil, header(nil), claims(func(c jwt.MapClaims) { c["nbf"] = now.Add(time.Hour).Unix() })),
		"issued in the future":            bt.Forge(jwt.SigningMethodEdDSA, nil, header(nil), claims(func(c jwt.MapClaims) { c["iat"] = now.Add(time.Hour).Unix() })),
		"unknown jti":                     bt.Forge(jwt.SigningMethodEdDSA, nil, header(nil), claims(func(c jwt.MapClaims) { c["jti"] = "0123456789abcdef" })),
		"subject not the row's":           bt.Forge(jwt.SigningMethodEdDSA, nil, header(nil), claims(func(c jwt.MapClaims) { c["sub"] = "root" })),
		"role raised": bt.Forge(jwt.SigningMethodEdDSA, nil, header(nil), claims(func(c jwt.MapClaims) {
			c["jti"] = bt.Mint(identity.MintOptions{Kind: identity.KindOperator, Name: "ops", Role: identity.RoleViewer}).ID
		})),
		"revoked":          revoked.Token,
		"agent token":      bt.AgentToken("ops"),
		"tampered payload": control[:len(control)-3] + "AAA",
	}
	for name, tok := range cases {
		for proto, opts := range boardtest.Protocols {
			t.Run(name+"/"+proto, func(t *testing.T) {
				t.Parallel()
				_, err := bt.Agents(tok, opts...).ListAgents(ctx, &boardv1.ListAgentsRequest{})
				if got := connect.CodeOf(err); got != connect.CodeUnauthenticated {
					t.Fatalf("ListAgents with %s: code %v (%v), want unauthenticated", name, got, err)
				}
				var ce *connect.Error
				if errors.As(err, &ce) && ce.Message() != "unauthenticated" {
					t.Errorf("ListAgents with %s: message %q says more than unauthenticated", name, ce.Message())
				}
			})
		}
	}
}

// mustNone makes an unsigned token; the "none" case is built by hand since
// the library refuses to sign with it unless told it is unsafe.
func mustNone(t *testing.T, header map[string]any, claims jwt.MapClaims) string {
	t.Helper()
	tok := jwt.NewWithClaims(jwt.SigningMethodNone, claims)
	for k, v := range header {
		tok.Header[k] = v
	}
	s, err := tok.SignedString(jwt.UnsafeAllowNoneSignatureType)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestOperatorTokenOnLink: an operator token never opens a link.
func TestOperatorTokenOnLink(t *testing.T) {
	t.Parallel()
	bt := boardtest.Start(t, boardtest.Options{})
	for proto, opts := range boardtest.Protocols {
		t.Run(proto, func(t *testing.T) {
			t.Parallel()
			link := boardv1connect.NewAgentLinkServiceClient(bt.Client(bt.OperatorToken("ops", identity.RoleAdmin), opts...))
			err := helloErr(t.Context(), link, &boardv1.Hello{Name: "ops", Protocol: board.Protocol})
			if got := connect.CodeOf(err); got != connect.CodeUnauthenticated {
				t.Fatalf("Link with an operator token: %v, want unauthenticated", err)
			}
		})
	}
}

// TestRoles: a viewer may read the fleet; a procedure with no policy is
// refused to everybody, including admins.
func TestRoles(t *testing.T) {
	t.Parallel()
	bt := boardtest.Start(t, boardtest.Options{})
	for _, r := range []identity.Role{identity.RoleViewer, identity.RoleApprover, identity.RoleAdmin} {
		if _, err := bt.Agents(bt.OperatorToken("ops", r)).ListAgents(t.Context(), &boardv1.ListAgentsRequest{}); err != nil {
			t.Errorf("ListAgents as %s: %v", r, err)
		}
	}
}

// helloErr opens a link, sends a hello and returns what ended it, or nil
// when a welcome came back.
func helloErr(ctx context.Context, link boardv1connect.AgentLinkServiceClient, h *boardv1.Hello) error {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	s, err := link.Link(ctx)
	if err != nil {
		return err
	}
	defer s.Close()
	if err := s.Send(&boardv1.LinkRequest{Kind: &boardv1.LinkRequest_Hello{Hello: h}}); err != nil && !errors.Is(err, io.EOF) {
		return err
	}
	msg, err := s.Receive()
	if err != nil {
		return err
	}
	if msg.GetWelcome() == nil {
		return errors.New("first message was not a welcome")
	}
	return nil
}
