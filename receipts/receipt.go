package receipts

import (
	"crypto/ed25519"
	"errors"
	"fmt"
	"time"

	"github.com/golang-jwt/jwt/v5"
)

// Type is a receipt's JWS typ header: no other JWS of the board's has it,
// and a receipt has no other.
const Type = "symphonix-receipt+jwt"

// Issuer is a receipt's iss.
const Issuer = "symphonix-board"

// MaxBytes is the longest receipt Verify reads.
const MaxBytes = 64 << 10

// Receipt is what a board signs when an approval is decided.
type Receipt struct {
	// Approval, Agent, Run, Node, Thread: the approval as the agent raised
	// it.
	Approval string `json:"approval"`
	Agent    string `json:"agent"`
	Run      string `json:"run"`
	Node     string `json:"node"`
	Thread   string `json:"thread,omitempty"`
	// Digest: the digest of the exact operation decided.
	Digest string `json:"digest"`
	// Say: "yes", "no", "cancelled" or "expired".
	Say string `json:"say"`
	// Who: the people whose votes made the quorum, or who said no or
	// cancelled; none for an expiry. Votes: each yes counted, with when.
	Who   []string `json:"who,omitempty"`
	Votes []Vote   `json:"votes,omitempty"`
	// DecidedAt: when the decision was made.
	DecidedAt time.Time `json:"decided_at"`
	// Rule and RuleVersion: the rule that governed the approval and its
	// version (when it was last put, RFC 3339); "" for none.
	Rule        string `json:"rule,omitempty"`
	RuleVersion string `json:"rule_version,omitempty"`
	// Audit: the content hash of the audit log entry that recorded the
	// decision (audit.Entry.Content), to find it in the chain.
	Audit string `json:"audit"`
	// Consent: the standing consent that approved it, when one did (Who
	// is then the consent's maker).
	Consent string `json:"consent,omitempty"`
}

// Vote is one yes counted toward a quorum.
type Vote struct {
	Who string    `json:"who"`
	At  time.Time `json:"at"`
}

type claims struct {
	jwt.RegisteredClaims
	Receipt
}

// Errors Verify and Binds wrap.
var (
	// ErrBad: not a receipt, or not one of these keys': malformed, the
	// wrong typ or algorithm, a signature that does not verify, a key
	// unknown or not valid when it was signed.
	ErrBad = errors.New("receipts: not a valid receipt")
	// ErrUnknownKey: signed with a key the set does not hold (fetch the
	// board's keys again: it may have rotated them).
	ErrUnknownKey = errors.New("receipts: signed with a key not in the set")
	// ErrMismatch: a valid receipt of another decision.
	ErrMismatch = errors.New("receipts: the receipt is of another decision")
)

// Sign signs r with key, named kid, issued at now.
func Sign(key ed25519.PrivateKey, kid string, r Receipt, now time.Time) (string, error) {
	if r.Approval == "" || r.Digest == "" || r.Say == "" || r.Audit == "" {
		return "", errors.New("receipts: approval, digest, say and audit are required")
	}
	tok := jwt.NewWithClaims(jwt.SigningMethodEdDSA, claims{
		RegisteredClaims: jwt.RegisteredClaims{Issuer: Issuer, Subject: r.Approval, IssuedAt: jwt.NewNumericDate(now)},
		Receipt:          r,
	})
	tok.Header["typ"] = Type
	tok.Header["kid"] = kid
	return tok.SignedString(key)
}

// Verify checks raw's signature with the key of keys it names, valid when
// it was signed, and returns what it says.
func Verify(raw string, keys KeySet) (Receipt, error) {
	if len(raw) > MaxBytes {
		return Receipt{}, fmt.Errorf("%w: %d bytes, at most %d", ErrBad, len(raw), MaxBytes)
	}
	parser := jwt.NewParser(
		jwt.WithValidMethods([]string{jwt.SigningMethodEdDSA.Alg()}),
		jwt.WithIssuer(Issuer),
		jwt.WithIssuedAt(),
	)
	var c claims
	var signer Key
	tok, err := parser.ParseWithClaims(raw, &c, func(tok *jwt.Token) (any, error) {
		kid, _ := tok.Header["kid"].(string)
		k, ok := keys.find(kid)
		if !ok {
			return nil, fmt.Errorf("%w: %q", ErrUnknownKey, kid)
		}
		signer = k
		return k.Public, nil
	})
	if errors.Is(err, ErrUnknownKey) {
		return Receipt{}, err
	}
	if err != nil {
		return Receipt{}, fmt.Errorf("%w: %w", ErrBad, err)
	}
	if _, ok := tok.Header["crit"]; ok {
		return Receipt{}, fmt.Errorf("%w: crit header", ErrBad)
	}
	if typ, _ := tok.Header["typ"].(string); typ != Type {
		return Receipt{}, fmt.Errorf("%w: typ %q, want %q", ErrBad, typ, Type)
	}
	if c.IssuedAt == nil || c.Subject != c.Approval {
		return Receipt{}, fmt.Errorf("%w: iat is required and sub must be the approval", ErrBad)
	}
	if !signer.validAt(c.IssuedAt.Time) {
		return Receipt{}, fmt.Errorf("%w: signed at %s with key %s, valid %s", ErrBad, c.IssuedAt.UTC().Format(time.RFC3339), signer.ID, signer.validity())
	}
	return c.Receipt, nil
}

// Binds checks that r is the receipt of the decision an agent holds: the
// same approval, run, node and digest, and what was said. It names the
// first that differs.
func (r Receipt) Binds(approval, run, node, digest, say string) error {
	for _, f := range []struct{ name, got, want string }{
		{"approval", r.Approval, approval}, {"run", r.Run, run}, {"node", r.Node, node},
		{"digest", r.Digest, digest}, {"say", r.Say, say},
	} {
		if f.got != f.want {
			return fmt.Errorf("%w: its %s is %q, the decision's %q", ErrMismatch, f.name, f.got, f.want)
		}
	}
	return nil
}
