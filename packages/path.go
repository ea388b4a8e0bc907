package packages

import (
	"strings"
	"unicode/utf8"
)

// checkPath holds a path in a package to the rules every reader can
// follow on every system: relative, slash-separated, UTF-8, no ".", ".."
// or empty element, no backslash, colon or control character (a drive
// letter, an alternate stream), bounded in length and depth, and not
// .symphonix/ or .env, which are the agent's own and never travel.
func checkPath(p string, lim Limits) error {
	if !utf8.ValidString(p) {
		return refuse(ReasonBadName, clip(p), "not UTF-8")
	}
	if len(p) > lim.MaxNameBytes {
		return refuse(ReasonNameTooLong, clip(p), "%d bytes: at most %d", len(p), lim.MaxNameBytes)
	}
	if p == "" || strings.HasPrefix(p, "/") {
		return refuse(ReasonUnsafePath, p, "absolute or empty")
	}
	if strings.ContainsAny(p, `\:`) {
		return refuse(ReasonUnsafePath, p, "a backslash or colon (a drive letter or another system's separator)")
	}
	for _, r := range p {
		if r < 0x20 || r == 0x7f {
			return refuse(ReasonUnsafePath, p, "a control character")
		}
	}
	elems := strings.Split(p, "/")
	if len(elems) > lim.MaxDepth {
		return refuse(ReasonTooDeep, p, "%d elements: at most %d", len(elems), lim.MaxDepth)
	}
	for _, e := range elems {
		if e == "" || e == "." || e == ".." {
			return refuse(ReasonUnsafePath, p, "an empty, . or .. element")
		}
	}
	if reserved(p) {
		return refuse(ReasonReservedPath, p, ".symphonix/ and .env are the agent's own and never in a package")
	}
	return nil
}

// reserved reports the paths a package never carries: the agent's
// runtime state and its secrets.
func reserved(p string) bool {
	first, _, _ := strings.Cut(p, "/")
	base := p[strings.LastIndexByte(p, '/')+1:]
	return strings.EqualFold(first, ".symphonix") || strings.EqualFold(base, ".env") || strings.HasPrefix(strings.ToLower(base), ".env.")
}
