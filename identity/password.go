package identity

import (
	"crypto/rand"
	"crypto/subtle"
	"encoding/base64"
	"errors"
	"fmt"
	"strings"
	"sync"
	"unicode/utf8"

	"golang.org/x/crypto/argon2"
)

// Passwords and verify secrets are kept as argon2id hashes in the PHC
// string format:
//
//	$argon2id$v=19$m=19456,t=2,p=1$<salt>$<hash>
//
// salt and hash in unpadded standard base64. The parameters are those
// OWASP recommends for argon2id (19 MiB of memory, 2 passes, one lane),
// with a 16-byte salt and a 32-byte hash. A stored hash carries its own
// parameters, so raising them later leaves older hashes working.
const (
	argonMemoryKiB = 19 * 1024
	argonTime      = 2
	argonThreads   = 1
	argonSaltLen   = 16
	argonKeyLen    = 32

	// argonMaxMemoryKiB bounds what a stored hash may ask for, so a row
	// written by somebody else cannot make the board allocate gigabytes.
	argonMaxMemoryKiB = 1 << 20
	argonMaxTime      = 16
)

// Password length limits, in characters (runes) and bytes.
const (
	MinPasswordLen   = 12
	MaxPasswordBytes = 1024
)

// ErrWeakPassword: a password or verify secret shorter than MinPasswordLen,
// or too long to hash.
var ErrWeakPassword = fmt.Errorf("must be %d characters or more (and at most %d bytes)", MinPasswordLen, MaxPasswordBytes)

// checkPassword says whether p is long enough, and short enough to hash.
func checkPassword(p string) error {
	if utf8.RuneCountInString(p) < MinPasswordLen || len(p) > MaxPasswordBytes {
		return ErrWeakPassword
	}
	return nil
}

// HashPassword hashes p with argon2id and a fresh salt.
func HashPassword(p string) (string, error) {
	salt := make([]byte, argonSaltLen)
	if _, err := rand.Read(salt); err != nil {
		return "", fmt.Errorf("salt: %w", err)
	}
	key := argon2.IDKey([]byte(p), salt, argonTime, argonMemoryKiB, argonThreads, argonKeyLen)
	b64 := base64.RawStdEncoding
	return fmt.Sprintf("$argon2id$v=%d$m=%d,t=%d,p=%d$%s$%s",
		argon2.Version, argonMemoryKiB, argonTime, argonThreads, b64.EncodeToString(salt), b64.EncodeToString(key)), nil
}

var errBadHash = errors.New("not an argon2id PHC string")

// PasswordMatches reports whether p hashes to phc, comparing in constant
// time. An empty or malformed phc matches nothing, after the same work as
// a real comparison, so that the time taken does not tell them apart.
func PasswordMatches(phc, p string) bool {
	memory, time, threads, salt, want, err := parsePHC(phc)
	if err != nil {
		phc = dummyHash()
		memory, time, threads, salt, want, _ = parsePHC(phc)
		argon2.IDKey([]byte(p), salt, time, memory, threads, uint32(len(want)))
		return false
	}
	got := argon2.IDKey([]byte(p), salt, time, memory, threads, uint32(len(want)))
	return subtle.ConstantTimeCompare(got, want) == 1
}

func parsePHC(phc string) (memory, time uint32, threads uint8, salt, key []byte, err error) {
	parts := strings.Split(phc, "$")
	if len(parts) != 6 || parts[0] != "" || parts[1] != "argon2id" {
		return 0, 0, 0, nil, nil, errBadHash
	}
	var version int
	if _, err := fmt.Sscanf(parts[2], "v=%d", &version); err != nil || version != argon2.Version {
		return 0, 0, 0, nil, nil, errBadHash
	}
	if _, err := fmt.Sscanf(parts[3], "m=%d,t=%d,p=%d", &memory, &time, &threads); err != nil {
		return 0, 0, 0, nil, nil, errBadHash
	}
	if memory == 0 || memory > argonMaxMemoryKiB || time == 0 || time > argonMaxTime || threads == 0 {
		return 0, 0, 0, nil, nil, errBadHash
	}
	b64 := base64.RawStdEncoding
	if salt, err = b64.DecodeString(parts[4]); err != nil || len(salt) < 8 {
		return 0, 0, 0, nil, nil, errBadHash
	}
	if key, err = b64.DecodeString(parts[5]); err != nil || len(key) < 16 || len(key) > 64 {
		return 0, 0, 0, nil, nil, errBadHash
	}
	return memory, time, threads, salt, key, nil
}

// dummyHash is a hash of nothing anyone knows, checked against when there
// is no real hash (an unknown email, a person with no password yet), so an
// answer takes as long as a wrong password's.
var dummyHash = sync.OnceValue(func() string {
	h, err := HashPassword(rand.Text())
	if err != nil {
		panic(err)
	}
	return h
})
