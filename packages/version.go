package packages

import (
	"cmp"
	"fmt"
	"strings"
)

// CheckScope reports whether scope is a lowercase DNS label, the part of a
// package name before "/"; publishers are named the same way.
func CheckScope(scope string) error {
	if !labelRE.MatchString(scope) {
		return fmt.Errorf("%q: want 1 to 63 of a-z, 0-9 and '-', not starting or ending with '-'", clip(scope))
	}
	return nil
}

// CheckDigest reports whether d is a package digest: "sha256:" and 64
// lowercase hex digits.
func CheckDigest(d string) error {
	if !digestRE.MatchString(d) {
		return fmt.Errorf("%q: want sha256: and 64 lowercase hex digits", clip(d))
	}
	return nil
}

// CompareVersions orders two semantic versions by precedence (semver.org
// 2.0.0, section 11): negative when a comes before b. Build metadata does
// not count, so two versions that differ only in it compare equal; a
// caller that needs a total order breaks the tie on the strings. Both
// must pass CheckVersion.
func CompareVersions(a, b string) int {
	ac, ap := versionCore(a)
	bc, bp := versionCore(b)
	for i := range 3 {
		if c := compareNumeric(ac[i], bc[i]); c != 0 {
			return c
		}
	}
	switch {
	case ap == "" && bp == "":
		return 0
	case ap == "":
		return 1 // a release comes after its pre-releases
	case bp == "":
		return -1
	}
	as, bs := strings.Split(ap, "."), strings.Split(bp, ".")
	for i := 0; i < len(as) && i < len(bs); i++ {
		if c := comparePrerelease(as[i], bs[i]); c != 0 {
			return c
		}
	}
	return cmp.Compare(len(as), len(bs))
}

// versionCore splits v into MAJOR, MINOR, PATCH and its pre-release,
// dropping build metadata.
func versionCore(v string) ([3]string, string) {
	v, _, _ = strings.Cut(v, "+")
	v, pre, _ := strings.Cut(v, "-")
	var core [3]string
	copy(core[:], strings.SplitN(v, ".", 3))
	return core, pre
}

// compareNumeric compares two decimal numbers without leading zeros, of
// any length.
func compareNumeric(a, b string) int {
	return cmp.Or(cmp.Compare(len(a), len(b)), strings.Compare(a, b))
}

// comparePrerelease compares two pre-release identifiers: numeric ones by
// value and below alphanumeric ones, which compare in ASCII order.
func comparePrerelease(a, b string) int {
	an, bn := allDigits(a), allDigits(b)
	switch {
	case an && bn:
		return compareNumeric(a, b)
	case an:
		return -1
	case bn:
		return 1
	}
	return strings.Compare(a, b)
}

func allDigits(s string) bool {
	return s != "" && strings.Trim(s, "0123456789") == ""
}
