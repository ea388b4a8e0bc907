package packages

import (
	"bytes"
	"crypto/ed25519"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"

	"github.com/symphonix/symphonix/jcs"
)

// PayloadType is the DSSE payload type of a package signature.
const PayloadType = "application/vnd.symphonix.package+json"

// MaxSignatures bounds the signatures VerifySignature reads.
const MaxSignatures = 32

// MaxEnvelopeBytes bounds the envelope ReadEnvelope reads: room for
// MaxSignatures signatures and more.
const MaxEnvelopeBytes = 256 << 10

// ReadEnvelope reads an Envelope as JSON: at most MaxEnvelopeBytes, no
// unknown field, nothing after it, and byte for byte as this package's
// encoder writes the envelope it holds — compact or indented by two
// spaces, with or without a final newline. JSON read loosely would take a
// changed byte as the same envelope (a key's letter case, a padding bit of
// base64, spacing); no byte of a signature file may change unnoticed.
func ReadEnvelope(r io.Reader) (Envelope, error) {
	var env Envelope
	data, err := readStrict(r, MaxEnvelopeBytes, &env)
	if err != nil {
		return Envelope{}, fmt.Errorf("packages: not a signature envelope: %w", err)
	}
	if !asEncoded(env, data) {
		return Envelope{}, errors.New("packages: not a signature envelope: not as its signer wrote it: a byte was changed (a key's case, base64, spacing)")
	}
	return env, nil
}

// asEncoded reports whether data is env as json.Marshal or
// json.MarshalIndent with two spaces writes it, with or without a final
// newline.
func asEncoded(env Envelope, data []byte) bool {
	data = bytes.TrimSuffix(data, []byte("\n"))
	compact, err := json.Marshal(env)
	if err != nil {
		return false
	}
	if bytes.Equal(data, compact) {
		return true
	}
	indented, err := json.MarshalIndent(env, "", "  ")
	return err == nil && bytes.Equal(data, indented)
}

// readStrict decodes one JSON value from r into v: at most max bytes, no
// unknown field, nothing after it. It returns the bytes read.
func readStrict(r io.Reader, max int, v any) ([]byte, error) {
	data, err := io.ReadAll(io.LimitReader(r, int64(max)+1))
	if err != nil {
		return nil, err
	}
	if len(data) > max {
		return nil, fmt.Errorf("over %d bytes", max)
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return nil, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errors.New("more after the JSON value")
	}
	return data, nil
}

// Envelope is a DSSE envelope (github.com/secure-systems-lab/dsse): the
// payload, its type, and signatures over PAE(payloadType, payload). Byte
// fields are base64 in JSON.
type Envelope struct {
	Payload     []byte      `json:"payload"`
	PayloadType string      `json:"payloadType"`
	Signatures  []Signature `json:"signatures"`
}

// Signature is one key's signature in an Envelope.
type Signature struct {
	KeyID string `json:"keyid"`
	Sig   []byte `json:"sig"`
}

// Statement is the payload a package signature signs: the package
// digest, in canonical JSON. The digest names the manifest, which names
// every file by SHA-256, so the statement covers every byte that is
// installed; it is small whatever the package's size, and the same for
// every signer, so envelopes of one package merge by appending their
// signatures.
type Statement struct {
	Digest string `json:"digest"`
}

// PAE is DSSE's pre-authentication encoding, what is signed:
// "DSSEv1" SP LEN(type) SP type SP LEN(body) SP body, each LEN the byte
// length in ASCII decimal.
func PAE(payloadType string, payload []byte) []byte {
	var b bytes.Buffer
	b.WriteString("DSSEv1 ")
	b.WriteString(strconv.Itoa(len(payloadType)))
	b.WriteByte(' ')
	b.WriteString(payloadType)
	b.WriteByte(' ')
	b.WriteString(strconv.Itoa(len(payload)))
	b.WriteByte(' ')
	b.Write(payload)
	return b.Bytes()
}

// statement is the payload for digest.
func statement(digest string) ([]byte, error) {
	if !digestRE.MatchString(digest) {
		return nil, fmt.Errorf("packages: digest %q: want sha256: and 64 lowercase hex digits", clip(digest))
	}
	data, err := json.Marshal(Statement{Digest: digest})
	if err != nil {
		return nil, err
	}
	return jcs.Canonical(data)
}

// Sign signs the package digest with key as keyID (KeyID of its public
// key) and returns a DSSE envelope with that one signature. To add a
// second signer, append the Signatures of its envelope for the same
// digest: the payload is the same bytes.
func Sign(digest string, key ed25519.PrivateKey, keyID string) (Envelope, error) {
	if len(key) != ed25519.PrivateKeySize {
		return Envelope{}, fmt.Errorf("packages: not an Ed25519 private key")
	}
	payload, err := statement(digest)
	if err != nil {
		return Envelope{}, err
	}
	sig := ed25519.Sign(key, PAE(PayloadType, payload))
	return Envelope{Payload: payload, PayloadType: PayloadType, Signatures: []Signature{{KeyID: keyID, Sig: sig}}}, nil
}

// VerifySignature checks that env signs digest with at least threshold
// distinct keys of trusted. A signature is matched to a key by its keyid
// alone: a signature by a key not trusted, a bad signature, or a second
// by one key does not count. The error wraps ErrSignature and says what
// was found.
func VerifySignature(env Envelope, digest string, trusted []ed25519.PublicKey, threshold int) error {
	if threshold < 1 {
		return fmt.Errorf("%w: threshold %d: at least 1", ErrSignature, threshold)
	}
	if env.PayloadType != PayloadType {
		return fmt.Errorf("%w: payload type %q, want %s", ErrSignature, clip(env.PayloadType), PayloadType)
	}
	if len(env.Signatures) > MaxSignatures {
		return fmt.Errorf("%w: %d signatures: at most %d", ErrSignature, len(env.Signatures), MaxSignatures)
	}
	want, err := statement(digest)
	if err != nil {
		return err
	}
	if !bytes.Equal(env.Payload, want) {
		return fmt.Errorf("%w: the envelope signs another package (or not in canonical form), not %s", ErrSignature, digest)
	}
	keys := make(map[string]ed25519.PublicKey, len(trusted))
	for _, k := range trusted {
		keys[KeyID(k)] = k
	}
	msg := PAE(env.PayloadType, env.Payload)
	var good, unknown, bad []string
	for _, s := range env.Signatures {
		k, ok := keys[s.KeyID]
		switch {
		case !ok:
			unknown = append(unknown, clip(s.KeyID))
		case slices.Contains(good, s.KeyID):
		case !ed25519.Verify(k, msg, s.Sig):
			bad = append(bad, s.KeyID)
		default:
			good = append(good, s.KeyID)
		}
	}
	if len(good) >= threshold {
		return nil
	}
	var why []string
	if len(unknown) > 0 {
		why = append(why, "by keys not trusted: "+strings.Join(unknown, ", "))
	}
	if len(bad) > 0 {
		why = append(why, "invalid for "+strings.Join(bad, ", "))
	}
	msgText := fmt.Sprintf("%d of %d trusted signatures", len(good), threshold)
	if len(why) > 0 {
		msgText += " (" + strings.Join(why, "; ") + ")"
	}
	return fmt.Errorf("%w: %s", ErrSignature, msgText)
}
