package health

import (
	"strings"
	"unicode/utf8"
)

// MaxDetailBytes is the most a line's detail holds; a longer one is cut on
// a character boundary and ends in "…".
const MaxDetailBytes = 512

// ellipsis ends a detail that was cut.
const ellipsis = "…"

// bound makes s a detail that may leave the process: surrounding space
// trimmed, invalid UTF-8 replaced, at most MaxDetailBytes.
func bound(s string) string {
	s = strings.TrimSpace(strings.ToValidUTF8(s, "\uFFFD"))
	if len(s) <= MaxDetailBytes {
		return s
	}
	return cut(s, MaxDetailBytes-len(ellipsis)) + ellipsis
}

// cut returns the longest prefix of s, valid UTF-8, of at most n bytes.
func cut(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}
