package files

import (
	"errors"
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// File is the object a file channel holds, and what an upload answers:
// the file's id, the name it was given, its media type as sniffed, where
// the served agent serves it, and its size. Never the bytes.
type File struct {
	// ID is the lowercase hex SHA-256 of the bytes, a dot and the
	// extension of the sniffed type: "8f2…e1.png".
	ID string `json:"id"`
	// Name is the name the file was given, for people; it decides nothing.
	Name string `json:"name"`
	// MediaType is the type the bytes were sniffed as.
	MediaType string `json:"mediaType"`
	// URL is where the served agent serves it: "/files/" + ID.
	URL string `json:"url"`
	// Bytes is its size.
	Bytes int64 `json:"bytes"`
}

// MaxNameBytes is the longest name a file may be given.
const MaxNameBytes = 255

// URLOf is where the served agent serves the file id.
func URLOf(id string) string { return "/files/" + id }

// Errors callers branch on.
var (
	// ErrBadID: an id that is not of the shape the store makes. It is
	// refused before anything touches the file system.
	ErrBadID = errors.New("files: not a file id")
	// ErrNotFound: no file with that id.
	ErrNotFound = errors.New("files: no such file")
	// ErrTooBig: a file over the per-file limit.
	ErrTooBig = errors.New("files: file too big")
	// ErrStoreFull: a file that would take the store past its total.
	ErrStoreFull = errors.New("files: the store is full")
	// ErrNotAccepted: a file whose sniffed type the channel does not take.
	ErrNotAccepted = errors.New("files: media type not accepted")
	// ErrBadName: a name that is empty, too long, not UTF-8, or holds a
	// control character or a path separator.
	ErrBadName = errors.New("files: bad file name")
	// ErrTooManyThreads: a file already in MaxThreads threads.
	ErrTooManyThreads = errors.New("files: file in too many threads")
	// ErrEmpty: a file of no bytes.
	ErrEmpty = errors.New("files: empty file")
)

// ValidID checks that id has the shape the store gives: 64 lowercase hex
// digits, a dot, and one of the extensions of Types. Nothing else is ever
// a file id, so nothing else reaches the file system.
func ValidID(id string) error {
	hexPart, ext, ok := strings.Cut(id, ".")
	if !ok || len(hexPart) != 64 {
		return fmt.Errorf("%w: %q: want 64 hex digits, a dot and an extension", ErrBadID, clip(id))
	}
	for i := 0; i < len(hexPart); i++ {
		if c := hexPart[i]; !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return fmt.Errorf("%w: %q: want 64 lowercase hex digits", ErrBadID, clip(id))
		}
	}
	if !knownExtension(ext) {
		return fmt.Errorf("%w: %q: unknown extension", ErrBadID, clip(id))
	}
	return nil
}

// ValidName checks a file's name: 1 to MaxNameBytes bytes of UTF-8, with
// no control character and no / or \ (a name is for people, never a path).
func ValidName(name string) error {
	switch {
	case strings.TrimSpace(name) == "":
		return fmt.Errorf("%w: empty", ErrBadName)
	case len(name) > MaxNameBytes:
		return fmt.Errorf("%w: %d bytes, at most %d", ErrBadName, len(name), MaxNameBytes)
	case !utf8.ValidString(name):
		return fmt.Errorf("%w: not UTF-8", ErrBadName)
	case strings.ContainsAny(name, `/\`):
		return fmt.Errorf("%w: %q holds a path separator", ErrBadName, clip(name))
	}
	for _, r := range name {
		if unicode.IsControl(r) {
			return fmt.Errorf("%w: %q holds a control character", ErrBadName, clip(name))
		}
	}
	return nil
}

// clip is s cut for a message: at most 80 bytes, on a character's edge.
func clip(s string) string {
	const n = 80
	if len(s) <= n {
		return s
	}
	cut := n
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}
