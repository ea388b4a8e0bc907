package receipts_test

import (
	"crypto/ed25519"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/symphonix/symphonix/receipts"
)

func newKey(t *testing.T, id string, from, to time.Time) (ed25519.PrivateKey, receipts.Key) {
	t.Helper()
	pub, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	return priv, receipts.Key{ID: id, Public: pub, NotBefore: from, NotAfter: to}
}

var decided = receipts.Receipt{
	Approval: "apr-1", Agent: "desk", Run: "run-1", Node: "pay", Thread: "t1",
	Digest: "sha256:abc", Say: "yes", Who: []string{"ann"},
	Votes:     []receipts.Vote{{Who: "ann", At: time.Date(2026, 12, 3, 9, 0, 0, 0, time.UTC)}},
	DecidedAt: time.Date(2026, 12, 3, 9, 0, 0, 0, time.UTC), Rule: "rule-1", RuleVersion: "2026-12-01T10:00:00Z",
	Audit: "c0ffee",
}

// TestReceipt: a receipt verifies with its key and says what was signed;
// one with any byte of its payload changed, signed by another key (under
// the same key id or another), signed outside its key's validity, or of
// another type, does not; Binds names the field of another decision.
func TestReceipt(t *testing.T) {
	now := time.Now()
	priv, key := newKey(t, "k1", now.Add(-time.Hour), time.Time{})
	other, _ := newKey(t, "k1", now.Add(-time.Hour), time.Time{})
	keys := receipts.KeySet{key}
	raw, err := receipts.Sign(priv, "k1", decided, now)
	if err != nil {
		t.Fatal(err)
	}
	got, err := receipts.Verify(raw, keys)
	if err != nil {
		t.Fatal(err)
	}
	if got.Approval != "apr-1" || got.Digest != "sha256:abc" || got.Say != "yes" || got.Audit != "c0ffee" || len(got.Votes) != 1 || got.Votes[0].Who != "ann" {
		t.Fatalf("verified %+v, want what was signed", got)
	}
	if err := got.Binds("apr-1", "run-1", "pay", "sha256:abc", "yes"); err != nil {
		t.Errorf("Binds its own decision: %v", err)
	}
	if err := got.Binds("apr-1", "run-2", "pay", "sha256:abc", "yes"); !errors.Is(err, receipts.ErrMismatch) || !strings.Contains(err.Error(), "its run is") {
		t.Errorf("Binds another run: %v, want a mismatch naming the run", err)
	}

	// Every field of the payload changed in turn.
	parts := strings.Split(raw, ".")
	payload, _ := base64.RawURLEncoding.DecodeString(parts[1])
	var m map[string]any
	if err := json.Unmarshal(payload, &m); err != nil {
		t.Fatal(err)
	}
	for field := range m {
		changed := map[string]any{}
		for k, v := range m {
			changed[k] = v
		}
		changed[field] = "changed"
		b, _ := json.Marshal(changed)
		forged := parts[0] + "." + base64.RawURLEncoding.EncodeToString(b) + "." + parts[2]
		if _, err := receipts.Verify(forged, keys); !errors.Is(err, receipts.ErrBad) {
			t.Errorf("%s changed: %v, want refused", field, err)
		}
	}
	bySameID, _ := receipts.Sign(other, "k1", decided, now)
	if _, err := receipts.Verify(bySameID, keys); !errors.Is(err, receipts.ErrBad) {
		t.Errorf("signed by another key under the same id: %v, want refused", err)
	}
	byUnknown, _ := receipts.Sign(other, "k9", decided, now)
	if _, err := receipts.Verify(byUnknown, keys); !errors.Is(err, receipts.ErrUnknownKey) {
		t.Errorf("signed by an unknown key: %v, want ErrUnknownKey", err)
	}
	retiredPriv, retired := newKey(t, "k0", now.Add(-48*time.Hour), now.Add(-24*time.Hour))
	keys = append(keys, retired)
	old, _ := receipts.Sign(retiredPriv, "k0", decided, now.Add(-30*time.Hour))
	if _, err := receipts.Verify(old, keys); err != nil {
		t.Errorf("a receipt signed while its key was valid, the key since retired: %v", err)
	}
	late, _ := receipts.Sign(retiredPriv, "k0", decided, now.Add(-time.Hour))
	if _, err := receipts.Verify(late, keys); !errors.Is(err, receipts.ErrBad) {
		t.Errorf("signed after its key was retired: %v, want refused", err)
	}
	header, _ := json.Marshal(map[string]string{"alg": "EdDSA", "typ": "JWT", "kid": "k1"})
	h := base64.RawURLEncoding.EncodeToString(header)
	sig := ed25519.Sign(priv, []byte(h+"."+parts[1]))
	if _, err := receipts.Verify(h+"."+parts[1]+"."+base64.RawURLEncoding.EncodeToString(sig), keys); !errors.Is(err, receipts.ErrBad) {
		t.Errorf("typ JWT: %v, want refused", err)
	}
}

// TestKeySet: a key set survives its JSON, and a set with a key that is
// not Ed25519, a key id twice, or no keys is refused naming the key.
func TestKeySet(t *testing.T) {
	now := time.Now().Truncate(time.Second)
	_, a := newKey(t, "a", now.Add(-time.Hour), now)
	_, b := newKey(t, "b", now, time.Time{})
	raw, err := json.Marshal(receipts.KeySet{a, b})
	if err != nil {
		t.Fatal(err)
	}
	ks, err := receipts.ParseKeySet(raw)
	if err != nil {
		t.Fatal(err)
	}
	if len(ks) != 2 || ks[0].ID != "a" || !ks[0].NotAfter.Equal(now) || !ks[1].NotAfter.IsZero() || !ks[1].Public.Equal(b.Public) {
		t.Fatalf("parsed %+v", ks)
	}
	for name, tc := range map[string]struct{ json, says string }{
		"none":     {`{"keys":[]}`, "keys: none"},
		"rsa":      {`{"keys":[{"kty":"RSA","kid":"a","x":""}]}`, "keys[0]: want an Ed25519"},
		"short x":  {`{"keys":[{"kty":"OKP","crv":"Ed25519","kid":"a","x":"AAAA"}]}`, "keys[0].x"},
		"twice id": {strings.Replace(string(raw), `"kid":"b"`, `"kid":"a"`, 1), `keys[1].kid: "a" given twice`},
	} {
		if _, err := receipts.ParseKeySet([]byte(tc.json)); err == nil || !strings.Contains(err.Error(), tc.says) {
			t.Errorf("%s: %v, want an error saying %q", name, err, tc.says)
		}
	}
}
