package board

import (
	"fmt"
	"strconv"
	"unicode/utf8"
)

// maxQuoted is the most of a refused value an error message repeats.
const maxQuoted = 64

// quoted is s quoted for an error message, cut to maxQuoted bytes (on a
// rune boundary) with its full length said, so that a refusal never
// carries back, or into the audit log, what it refused for being too long.
func quoted(s string) string {
	if len(s) <= maxQuoted {
		return strconv.Quote(s)
	}
	cut := maxQuoted
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return fmt.Sprintf("%s… (%d bytes)", strconv.Quote(s[:cut]), len(s))
}
