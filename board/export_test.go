package board

import (
	"crypto/ed25519"
	"errors"

	"github.com/golang-jwt/jwt/v5"
)

// SignForTest signs arbitrary claims and header fields, with the board's own
// key when key is nil, so tests can forge tokens the board must refuse.
func (t *Tokens) SignForTest(method jwt.SigningMethod, key any, header map[string]any, claims jwt.MapClaims) string {
	tok := jwt.NewWithClaims(method, claims)
	for k, v := range header {
		tok.Header[k] = v
	}
	if key == nil {
		key = t.key
	}
	s, err := tok.SignedString(key)
	if err != nil {
		panic(err)
	}
	return s
}

// KeyIDForTest is the id of the board's signing key.
func (t *Tokens) KeyIDForTest() string { return t.kid }

// PublicKeyForTest is the raw public key, as anyone has it from the JWKS.
func (t *Tokens) PublicKeyForTest() []byte { return t.key.Public().(ed25519.PublicKey) }

// DropLinksForTest ends every live link as a network failure would: no
// goodbye, so presence holds each agent for the grace.
func (b *Board) DropLinksForTest() {
	b.presence.mu.Lock()
	defer b.presence.mu.Unlock()
	for _, s := range b.presence.sessions {
		s.cancel(errDroppedForTest)
	}
}

var errDroppedForTest = errors.New("dropped by a test")
