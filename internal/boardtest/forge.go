package boardtest

import (
	"crypto/ed25519"

	"github.com/golang-jwt/jwt/v5"

	"github.com/symphonix/symphonix/ent/signingkey"
)

// signingKey is the board's signing key as the store keeps it: what
// someone who read the database would have.
func (b *Board) signingKey() (kid string, key ed25519.PrivateKey) {
	b.t.Helper()
	k, err := b.Store.SigningKey.Query().Order(signingkey.ByCreatedAt(), signingkey.ByID()).First(b.t.Context())
	if err != nil {
		b.t.Fatalf("read the signing key: %v", err)
	}
	return k.ID, ed25519.NewKeyFromSeed(k.PrivateKey)
}

// KeyID is the id of the board's signing key, the kid its tokens carry.
func (b *Board) KeyID() string {
	kid, _ := b.signingKey()
	return kid
}

// PublicKey is the board's raw public key, as anyone has it from the JWKS.
func (b *Board) PublicKey() []byte {
	_, key := b.signingKey()
	return key.Public().(ed25519.PublicKey)
}

// Forge signs claims with the header fields given, using key, or the
// board's own key when key is nil, so a test can make tokens the board must
// refuse: a wrong algorithm, typ, audience or expiry, a foreign key.
func (b *Board) Forge(method jwt.SigningMethod, key any, header map[string]any, claims jwt.MapClaims) string {
	b.t.Helper()
	tok := jwt.NewWithClaims(method, claims)
	for k, v := range header {
		tok.Header[k] = v
	}
	if key == nil {
		_, key = b.signingKey()
	}
	s, err := tok.SignedString(key)
	if err != nil {
		b.t.Fatalf("forge a token: %v", err)
	}
	return s
}
