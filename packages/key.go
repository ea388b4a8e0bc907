package packages

import (
	"crypto/ed25519"
	"crypto/rand"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/hex"
	"encoding/pem"
	"fmt"
	"io"
	"os"
	"strings"
)

// publicPrefix starts a public key's text form.
const publicPrefix = "ed25519:"

// maxKeyFile bounds a key file read.
const maxKeyFile = 16 << 10

// NewKey makes an Ed25519 key pair for signing packages.
func NewKey() (ed25519.PublicKey, ed25519.PrivateKey, error) {
	return ed25519.GenerateKey(rand.Reader)
}

// KeyID names a public key: "sha256:" and the lowercase hex SHA-256 of
// its 32 raw bytes, in full, so two keys never share an id.
func KeyID(pub ed25519.PublicKey) string {
	sum := sha256.Sum256(pub)
	return "sha256:" + hex.EncodeToString(sum[:])
}

// FormatPublicKey is a public key as text: "ed25519:" and the standard
// base64 of its raw bytes.
func FormatPublicKey(pub ed25519.PublicKey) string {
	return publicPrefix + base64.StdEncoding.EncodeToString(pub)
}

// ParsePublicKey reads FormatPublicKey's text, surrounding space ignored.
func ParsePublicKey(s string) (ed25519.PublicKey, error) {
	s = strings.TrimSpace(s)
	raw, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(s, publicPrefix))
	if !strings.HasPrefix(s, publicPrefix) || err != nil || len(raw) != ed25519.PublicKeySize {
		return nil, fmt.Errorf("packages: public key: want %s and the base64 of 32 bytes", publicPrefix)
	}
	return ed25519.PublicKey(raw), nil
}

// WritePrivateKey writes key to a new file at path, PEM-encoded PKCS #8,
// readable by its owner only (0600). It refuses to replace a file.
func WritePrivateKey(path string, key ed25519.PrivateKey) error {
	der, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		return err
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return fmt.Errorf("%w: %w", ErrKeyFile, err)
	}
	if err := pem.Encode(f, &pem.Block{Type: "PRIVATE KEY", Bytes: der}); err != nil {
		f.Close()
		os.Remove(path)
		return err
	}
	return f.Close()
}

// ReadPrivateKey reads a key WritePrivateKey wrote. It refuses a file
// that anyone but its owner may read or write (a key others could read is
// no longer only yours: make a new one, or chmod 600 if you are sure).
func ReadPrivateKey(path string) (ed25519.PrivateKey, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrKeyFile, err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrKeyFile, err)
	}
	if !st.Mode().IsRegular() {
		return nil, fmt.Errorf("%w: %s is not a regular file", ErrKeyFile, path)
	}
	if st.Mode().Perm()&0o077 != 0 {
		return nil, fmt.Errorf("%w: %s is readable or writable by others (mode %04o): chmod 600 it", ErrKeyFile, path, st.Mode().Perm())
	}
	data, err := io.ReadAll(io.LimitReader(f, maxKeyFile))
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrKeyFile, err)
	}
	block, _ := pem.Decode(data)
	if block == nil || block.Type != "PRIVATE KEY" {
		return nil, fmt.Errorf("%w: %s: not a PEM PRIVATE KEY", ErrKeyFile, path)
	}
	k, err := x509.ParsePKCS8PrivateKey(block.Bytes)
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %w", ErrKeyFile, path, err)
	}
	key, ok := k.(ed25519.PrivateKey)
	if !ok {
		return nil, fmt.Errorf("%w: %s: not an Ed25519 key", ErrKeyFile, path)
	}
	return key, nil
}
