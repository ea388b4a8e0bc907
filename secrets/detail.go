package secrets

import (
	"regexp"
	"strings"
	"unicode/utf8"
)

// MaxDetail is the most bytes SafeDetail returns. A longer detail is cut
// on a character boundary and ends with Cut.
const MaxDetail = 1024

// Cut ends a detail SafeDetail cut to MaxDetail.
const Cut = "…"

// SafeDetail returns detail — an error's text, a status — made fit to send
// to another machine, with env the process's environment (os.Environ()'s
// shape, "NAME=VALUE"). It is NewSet(In(env)).SafeDetail(detail): for many
// details, build the Set once.
func SafeDetail(detail string, env []string) string {
	return NewSet(In(env)).SafeDetail(detail)
}

// SafeDetail returns detail with, in this order:
//
//  1. the set's values replaced with Redacted (Without);
//  2. bytes that are not UTF-8 replaced with U+FFFD;
//  3. PEM blocks ("-----BEGIN …-----" to "-----END …-----", or to the end
//     of the text when it was cut before its end) replaced with Redacted;
//  4. URLs ("scheme://…") cut to their scheme and host: the user and
//     password dropped, and a path, query or fragment replaced with "/…",
//     so "https://user:pw@host:8443/a?k=v" becomes "https://host:8443/…".
//     Punctuation at a URL's end is left to the sentence; a host that is
//     not shaped like one (letters, digits, ".", "-", "_", "[v6]", then
//     ":port") is replaced with "…";
//  5. what is shaped like a credential (below) replaced with Redacted;
//  6. what is left cut to MaxDetail bytes on a character boundary, ending
//     with Cut.
//
// The shapes of a credential:
//
//   - a JWT: "eyJ" and two more base64url segments;
//   - the token after "Bearer" (in any case) or "Basic";
//   - what follows "Authorization:" or "Authorization=" and its scheme;
//   - an API key: "sk", "rk", "ghp", "gho", "ghu", "ghs", "ghr",
//     "github_pat", "glpat" or "xoxa", "xoxb", "xoxe", "xoxp", "xoxr",
//     "xoxs", then "-" or "_" and 16 or more letters, digits, "-" and "_"
//     ("sk-proj-…", "sk_live_…");
//   - an AWS access key id: "AKIA" or "ASIA" and 16 capitals and digits;
//   - a user and password outside a URL: "user:pw@tcp(db)" becomes
//     "REDACTED@tcp(db)";
//   - a value assigned to a name that ends in password, passwd,
//     passphrase, pwd, secret, token, api_key (apikey, api-key),
//     access_key, private_key or credential(s), in any case: "=" or ":"
//     after the name, then the value, quoted or up to white space, ",",
//     ";", "&" or a closing bracket ("password=REDACTED", "X-Api-Key:
//     REDACTED", `"client_secret": "REDACTED"`);
//   - a run of 32 or more hexadecimal digits;
//   - a run of 32 or more base64 characters (letters, digits, "+", "/",
//     "_", "-", then any "=") holding a capital, a small letter and a
//     digit, and not starting with "/", which is a path.
//
// Whatever detail holds, the result is valid UTF-8 of at most MaxDetail
// bytes, and the work is linear in the length of detail.
func (s *Set) SafeDetail(detail string) string {
	d := s.Without(detail)
	d = strings.ToValidUTF8(d, "\uFFFD")
	d = pemBlock.ReplaceAllLiteralString(d, Redacted)
	d = urlPattern.ReplaceAllStringFunc(d, shortURL)
	for _, p := range credentials {
		d = p.ReplaceAllString(d, "${pre}"+Redacted+"${post}")
	}
	d = secretKey.ReplaceAllString(d, "${key}${q}"+Redacted+"${q}")
	d = longRun.ReplaceAllStringFunc(d, func(run string) string {
		if isHex(run) || isBase64ish(run) {
			return Redacted
		}
		return run
	})
	return cut(d, MaxDetail)
}

var (
	// pemBlock is a PEM block, or one cut before its end.
	pemBlock = regexp.MustCompile(`(?s)-----BEGIN[ A-Z0-9]*-----.*?(?:-----END[ A-Z0-9]*-----|\z)`)
	// urlPattern is a URL: its scheme, then what follows "://" to white
	// space, a quote or an angle bracket.
	urlPattern = regexp.MustCompile(`[A-Za-z][A-Za-z0-9+.\-]*://[^\s"'<>` + "`" + `]*`)
	// credentials are the shapes of a credential. What a pattern's "pre"
	// and "post" groups matched is kept before and after Redacted.
	credentials = []*regexp.Regexp{
		regexp.MustCompile(`\beyJ[A-Za-z0-9_\-]*\.[A-Za-z0-9_\-]+\.[A-Za-z0-9_\-]*`),
		regexp.MustCompile(`(?P<pre>\b(?i:bearer)\s+)[A-Za-z0-9\-._~+/]+=*`),
		// What follows an Authorization header's scheme ("Token …").
		regexp.MustCompile(`(?P<pre>\b(?i:authorization)["']?\s*[:=]\s*["']?(?:[A-Za-z]+\s+)?)[^\s"',;]+`),
		regexp.MustCompile(`(?P<pre>\bBasic\s+)[A-Za-z0-9+/]{8,}=*`),
		regexp.MustCompile(`\b(?:sk|rk|ghp|gho|ghu|ghs|ghr|github_pat|glpat|xox[abprse])[-_][A-Za-z0-9_\-]{16,}`),
		regexp.MustCompile(`\b(?:AKIA|ASIA)[A-Z0-9]{16}\b`),
		// A user and password outside a URL: "user:pw@tcp(db:3306)".
		regexp.MustCompile(`[A-Za-z0-9._%+\-]+:[^\s@/"']+(?P<post>@)`),
	}
	// secretKey is a value assigned to a name that says it is secret: the
	// end of the name (so "aws_secret_access_key" and "X-Api-Key" are
	// found), an optional closing quote, ":" or "=", and the value: quoted
	// (to its closing quote), or to white space, a comma, a semicolon, "&"
	// or a closing bracket.
	secretKey = regexp.MustCompile(`(?i)(?P<key>(?:password|passwd|passphrase|pwd|secret|token|api[_\-]?key|access[_\-]?key|private[_\-]?key|credentials?)["']?\s*[:=]\s*)` +
		`(?:(?P<q>["'])[^"'\n]*["']|[^\s"',;&)\]}]+)`)
	// longRun is a run of hexadecimal or base64 characters 32 long or more.
	longRun = regexp.MustCompile(`[A-Za-z0-9+/_\-]{32,}=*`)
)

// shortURL is u with its scheme and host only (see Set.SafeDetail).
func shortURL(u string) string {
	// Punctuation at its end is the sentence's.
	trimmed := strings.TrimRight(u, ".,;:!?)]}")
	u, trail := trimmed, u[len(trimmed):]
	scheme, rest, _ := strings.Cut(u, "://")
	authority, after := rest, ""
	if i := strings.IndexAny(rest, "/?#"); i >= 0 {
		authority, after = rest[:i], rest[i:]
	}
	if i := strings.LastIndexByte(authority, '@'); i >= 0 {
		authority = authority[i+1:]
	}
	if !isHost(authority) {
		authority = "…"
	}
	if after != "" && after != "/" {
		after = "/…"
	}
	return scheme + "://" + authority + after + trail
}

// isHost reports whether s is shaped like a URL's host and port: a name or
// an IPv4 address (letters, digits, ".", "-", "_"), or an IPv6 address in
// brackets, with an optional ":port" of digits. "" is a host: "file:///".
func isHost(s string) bool {
	host, port := s, ""
	if strings.HasPrefix(s, "[") {
		i := strings.IndexByte(s, ']')
		if i < 0 {
			return false
		}
		host, port = s[1:i], s[i+1:]
		if strings.Trim(host, "0123456789abcdefABCDEF:.") != "" {
			return false
		}
	} else if i := strings.IndexByte(s, ':'); i >= 0 {
		host, port = s[:i], s[i:]
		if strings.Trim(host, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789.-_") != "" {
			return false
		}
	} else if strings.Trim(host, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789.-_") != "" {
		return false
	}
	if port == "" {
		return true
	}
	return port[0] == ':' && strings.Trim(port[1:], "0123456789") == ""
}

// isHex reports whether s is all hexadecimal digits.
func isHex(s string) bool {
	return strings.Trim(s, "0123456789abcdefABCDEF") == ""
}

// isBase64ish reports whether a run of base64 characters looks like
// encoded bytes rather than a word or a path: it holds a capital, a small
// letter and a digit, and does not start with "/".
func isBase64ish(s string) bool {
	if strings.HasPrefix(s, "/") {
		return false
	}
	var upper, lower, digit bool
	for _, c := range []byte(s) {
		switch {
		case c >= 'A' && c <= 'Z':
			upper = true
		case c >= 'a' && c <= 'z':
			lower = true
		case c >= '0' && c <= '9':
			digit = true
		}
	}
	return upper && lower && digit
}

// cut returns s when it is at most max bytes, and otherwise its opening
// cut on a character boundary and Cut, max bytes at most together.
func cut(s string, max int) string {
	if len(s) <= max {
		return s
	}
	i := max - len(Cut)
	for i > 0 && !utf8.RuneStart(s[i]) {
		i--
	}
	return s[:i] + Cut
}
