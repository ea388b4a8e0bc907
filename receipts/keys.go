package receipts

import (
	"crypto/ed25519"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"time"
)

// MaxKeys is the most keys a KeySet holds: ParseKeySet refuses more.
const MaxKeys = 64

// Key is one of the board's receipt keys, public half, with when it was
// valid: it signed receipts from NotBefore until NotAfter (zero: it is the
// key signing now).
type Key struct {
	ID        string
	Public    ed25519.PublicKey
	NotBefore time.Time
	NotAfter  time.Time
}

func (k Key) validAt(t time.Time) bool {
	// A second's grace either side: iat is kept to the second.
	return !t.Before(k.NotBefore.Truncate(time.Second)) && (k.NotAfter.IsZero() || !t.After(k.NotAfter.Add(time.Second)))
}

func (k Key) validity() string {
	to := "on"
	if !k.NotAfter.IsZero() {
		to = k.NotAfter.UTC().Format(time.RFC3339)
	}
	return k.NotBefore.UTC().Format(time.RFC3339) + " to " + to
}

// KeySet is the keys a board has signed receipts with, as its
// /.well-known/receipt-keys.json publishes them: a JSON Web Key Set whose
// keys are Ed25519 (kty OKP, crv Ed25519, alg EdDSA, use sig), each with
// nbf and, once retired, exp: the Unix times it was valid between.
type KeySet []Key

func (ks KeySet) find(kid string) (Key, bool) {
	for _, k := range ks {
		if k.ID == kid {
			return k, true
		}
	}
	return Key{}, false
}

type jwk struct {
	Kty string `json:"kty"`
	Crv string `json:"crv"`
	Alg string `json:"alg"`
	Use string `json:"use"`
	Kid string `json:"kid"`
	X   string `json:"x"`
	Nbf int64  `json:"nbf"`
	Exp int64  `json:"exp,omitempty"`
}

// MarshalJSON is the set as a JSON Web Key Set.
func (ks KeySet) MarshalJSON() ([]byte, error) {
	out := struct {
		Keys []jwk `json:"keys"`
	}{Keys: []jwk{}}
	for _, k := range ks {
		j := jwk{Kty: "OKP", Crv: "Ed25519", Alg: "EdDSA", Use: "sig", Kid: k.ID,
			X: base64.RawURLEncoding.EncodeToString(k.Public), Nbf: k.NotBefore.Unix()}
		if !k.NotAfter.IsZero() {
			j.Exp = k.NotAfter.Unix()
		}
		out.Keys = append(out.Keys, j)
	}
	return json.Marshal(out)
}

// ParseKeySet reads a key set as MarshalJSON writes it, refusing a key
// that is not an Ed25519 signing key, a key id given twice, and more than
// MaxKeys keys, naming the key at fault.
func ParseKeySet(data []byte) (KeySet, error) {
	var in struct {
		Keys []jwk `json:"keys"`
	}
	if err := json.Unmarshal(data, &in); err != nil {
		return nil, fmt.Errorf("receipts: key set: %w", err)
	}
	if len(in.Keys) == 0 {
		return nil, errors.New("receipts: key set: keys: none")
	}
	if len(in.Keys) > MaxKeys {
		return nil, fmt.Errorf("receipts: key set: keys: %d, at most %d", len(in.Keys), MaxKeys)
	}
	ks := make(KeySet, 0, len(in.Keys))
	for i, j := range in.Keys {
		if j.Kty != "OKP" || j.Crv != "Ed25519" || (j.Alg != "" && j.Alg != "EdDSA") || (j.Use != "" && j.Use != "sig") {
			return nil, fmt.Errorf("receipts: key set: keys[%d]: want an Ed25519 signing key (kty OKP, crv Ed25519)", i)
		}
		x, err := base64.RawURLEncoding.DecodeString(j.X)
		if err != nil || len(x) != ed25519.PublicKeySize {
			return nil, fmt.Errorf("receipts: key set: keys[%d].x: want %d bytes, base64url", i, ed25519.PublicKeySize)
		}
		if j.Kid == "" {
			return nil, fmt.Errorf("receipts: key set: keys[%d].kid: required", i)
		}
		if _, dup := ks.find(j.Kid); dup {
			return nil, fmt.Errorf("receipts: key set: keys[%d].kid: %q given twice", i, j.Kid)
		}
		k := Key{ID: j.Kid, Public: ed25519.PublicKey(x), NotBefore: time.Unix(j.Nbf, 0).UTC()}
		if j.Exp != 0 {
			k.NotAfter = time.Unix(j.Exp, 0).UTC()
		}
		ks = append(ks, k)
	}
	return ks, nil
}
