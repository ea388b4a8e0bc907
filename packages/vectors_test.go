package packages

import (
	"crypto/ed25519"
	"encoding/base64"
	"encoding/json"
	"os"
	"testing"
)

// vectors are pinned: a failing vector is a change of the package
// format, the digest or the signature, never a test to regenerate.
type vectors struct {
	Manifest struct {
		Value     Manifest `json:"value"`
		Canonical string   `json:"canonical"`
		Digest    string   `json:"digest"`
	} `json:"manifest"`
	Signature struct {
		Seed    string `json:"seed_base64"`
		Digest  string `json:"digest"`
		KeyID   string `json:"keyid"`
		Payload string `json:"payload"`
		PAE     string `json:"pae"`
		Sig     string `json:"sig_base64"`
	} `json:"signature"`
}

func TestVectors(t *testing.T) {
	t.Parallel()
	data, err := os.ReadFile("testdata/vectors.json")
	if err != nil {
		t.Fatal(err)
	}
	var v vectors
	if err := json.Unmarshal(data, &v); err != nil {
		t.Fatal(err)
	}
	canon, err := v.Manifest.Value.Canonical()
	if err != nil || string(canon) != v.Manifest.Canonical {
		t.Errorf("canonical manifest = %s, %v\nwant %s", canon, err, v.Manifest.Canonical)
	}
	if d, _ := v.Manifest.Value.Digest(); d != v.Manifest.Digest || sum256(canon) != d {
		t.Errorf("Digest = %s, want %s", d, v.Manifest.Digest)
	}

	seed, _ := base64.StdEncoding.DecodeString(v.Signature.Seed)
	key := ed25519.NewKeyFromSeed(seed)
	pub := key.Public().(ed25519.PublicKey)
	if id := KeyID(pub); id != v.Signature.KeyID {
		t.Errorf("KeyID = %s, want %s", id, v.Signature.KeyID)
	}
	env, err := Sign(v.Signature.Digest, key, KeyID(pub))
	if err != nil {
		t.Fatal(err)
	}
	if string(env.Payload) != v.Signature.Payload {
		t.Errorf("payload = %s, want %s", env.Payload, v.Signature.Payload)
	}
	if pae := string(PAE(env.PayloadType, env.Payload)); pae != v.Signature.PAE {
		t.Errorf("PAE = %q, want %q", pae, v.Signature.PAE)
	}
	if sig := base64.StdEncoding.EncodeToString(env.Signatures[0].Sig); sig != v.Signature.Sig {
		t.Errorf("sig = %s, want %s", sig, v.Signature.Sig)
	}
}
