package health

import (
	"errors"
	"fmt"
	"strconv"
	"unicode"
	"unicode/utf8"
)

// MaxNameBytes is the longest name of a check.
const MaxNameBytes = 64

// checkName says what is wrong with a check's name, or nil: 1 to
// MaxNameBytes bytes of printable UTF-8, not starting or ending with a
// space.
func checkName(name string) error {
	switch {
	case name == "":
		return errors.New("required")
	case len(name) > MaxNameBytes:
		return fmt.Errorf("%d bytes, must be at most %d", len(name), MaxNameBytes)
	case !utf8.ValidString(name):
		return errors.New("must be UTF-8")
	}
	for _, r := range name {
		if !unicode.IsPrint(r) {
			return fmt.Errorf("must be printable: holds %U", r)
		}
	}
	if name[0] == ' ' || name[len(name)-1] == ' ' {
		return errors.New("must not start or end with a space")
	}
	return nil
}

// quote is s quoted for an error message, cut to MaxNameBytes first: a
// value too long is not repeated whole.
func quote(s string) string {
	if len(s) > MaxNameBytes {
		return strconv.Quote(cut(s, MaxNameBytes)) + "…"
	}
	return strconv.Quote(s)
}
