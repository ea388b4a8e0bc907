package identity

import (
	"fmt"
	"unicode"
	"unicode/utf8"
)

// MaxNameLen is the longest agent or operator name, in bytes.
const MaxNameLen = 128

// ValidName reports whether s may name an agent or an operator: 1 to
// MaxNameLen bytes of UTF-8 with no control characters and no surrounding
// space.
func ValidName(s string) error {
	switch {
	case s == "":
		return fmt.Errorf("name: required")
	case len(s) > MaxNameLen:
		return fmt.Errorf("name: %d bytes, at most %d", len(s), MaxNameLen)
	case !utf8.ValidString(s):
		return fmt.Errorf("name: not UTF-8")
	case unicode.IsSpace(rune(s[0])) || unicode.IsSpace(rune(s[len(s)-1])):
		return fmt.Errorf("name: leading or trailing space")
	}
	for _, r := range s {
		if unicode.IsControl(r) {
			return fmt.Errorf("name: control character %U", r)
		}
	}
	return nil
}
