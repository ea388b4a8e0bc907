package secrets_test

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/symphonix/symphonix/secrets"
)

// TestSafeDetail: each shape SafeDetail removes, the environment's values
// among them, and what it leaves alone.
func TestSafeDetail(t *testing.T) {
	t.Parallel()
	env := []string{
		"HOSTNAME=build-runner-07",
		"DB_PASSWORD=correct horse battery",
		"SHORT=abc1234", // 7 bytes: never a secret
		"LANG=C.UTF-8",
		"CITY=Zürich-Altstadt", // not ASCII
		"OUTER=key-0123-inner-secret-9876",
		"INNER=inner-secret",
		"EMPTY=",
	}
	const jwt = "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U"
	tests := []struct {
		name, in, want string
	}{
		{"nothing to remove", "dial tcp 127.0.0.1:7443: connect: connection refused",
			"dial tcp 127.0.0.1:7443: connect: connection refused"},
		{"an OpenAI key", "401 Unauthorized: Incorrect API key provided: sk-proj-AbCdEf0123456789xyzXYZ.",
			"401 Unauthorized: Incorrect API key provided: REDACTED."},
		{"a Stripe key", "stripe: sk_live_51HxAbCdEfGhIjKlMnOp rejected", "stripe: REDACTED rejected"},
		{"a GitHub token", "clone failed with ghp_aBcDeFgHiJkLmNoPqRsTuVwXyZ012345", "clone failed with REDACTED"},
		{"a bearer token", "sent Authorization: Bearer abc.DEF-123_xyz~+/== and got 403",
			"sent Authorization: Bearer REDACTED and got 403"},
		{"a bearer token, small letters", "bearer tok3n-value", "bearer REDACTED"},
		{"basic credentials", "Authorization: Basic dXNlcjpwYXNzd29yZA==", "Authorization: Basic REDACTED"},
		{"the word basic", "a basic check failed", "a basic check failed"},
		{"a JWT", "token " + jwt + " expired", "token REDACTED expired"},
		{"a PEM block", "bad key -----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEA\nabc\n-----END RSA PRIVATE KEY----- in config",
			"bad key REDACTED in config"},
		{"a PEM block cut short", "bad key -----BEGIN PRIVATE KEY-----\nMIIEvQIBADANBgkqhkiG9w0BAQEFAASC",
			"bad key REDACTED"},
		{"an AWS access key id", "InvalidClientTokenId: AKIAIOSFODNN7EXAMPLE is not valid; ASIAY34FZKBOKMUTVV7A too",
			"InvalidClientTokenId: REDACTED is not valid; REDACTED too"},
		{"a URL with a user and password", `Get "https://ada:s3cr3t@api.example.com:8443/v1/orders?key=abc#top": EOF`,
			`Get "https://api.example.com:8443/…": EOF`},
		{"a URL with a path only", "POST http://127.0.0.1:7443/symphonix.board.v1.AgentLinkService/Link: 503",
			"POST http://127.0.0.1:7443/…: 503"},
		{"a URL that is only a host", "board at https://board.example.com is down", "board at https://board.example.com is down"},
		{"a URL whose password holds a slash", "https://ada:pa/ss@host/x", "https://…/…"},
		{"a DSN", "postgres://symphonix:hunter2hunter2@db.internal:5432/board?sslmode=disable: refused",
			"postgres://db.internal:5432/…: refused"},
		{"a user and password outside a URL", "dial admin:pa55word@tcp(db:3306)/app", "dial REDACTED@tcp(db:3306)/app"},
		{"an e-mail address", "no such person: ada@example.com", "no such person: ada@example.com"},
		{"password=", "login failed: password=hunter2 user=ada", "login failed: password=REDACTED user=ada"},
		{"token:", "refresh with token: abc123; retry", "refresh with token: REDACTED; retry"},
		{"secret= in a longer name", "AWS_SECRET_ACCESS_KEY=wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
			"AWS_SECRET_ACCESS_KEY=REDACTED"},
		{"api_key in a query", "api_key=12345&limit=10", "api_key=REDACTED&limit=10"},
		{"a quoted JSON secret", `{"client_secret": "abc def", "id": 7}`, `{"client_secret": "REDACTED", "id": 7}`},
		{"a header", "X-Api-Key: k-123", "X-Api-Key: REDACTED"},
		{"a token that is not assigned", "unauthenticated: token revoked", "unauthenticated: token revoked"},
		{"a long hex run", "digest sha256:9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08 differs",
			"digest sha256:REDACTED differs"},
		{"a long base64 run", "cookie sid=Zm9vYmFyYmF6cXV4MTIzNDU2Nzg5MEFCQ0RFRkdI; path",
			"cookie sid=REDACTED; path"},
		{"a long path", "open /home/runner/work/symphonix/symphonix/node/testdata/Flow1.json: no such file",
			"open /home/runner/work/symphonix/symphonix/node/testdata/Flow1.json: no such file"},
		{"a UUID", "request 123e4567-e89b-12d3-a456-426614174000 failed", "request 123e4567-e89b-12d3-a456-426614174000 failed"},
		{"an environment value", "dial build-runner-07:443: timeout", "dial REDACTED:443: timeout"},
		{"a value with spaces", "auth as correct horse battery failed", "auth as REDACTED failed"},
		{"a value occurring twice", "build-runner-07 asked build-runner-07", "REDACTED asked REDACTED"},
		{"values shorter than Enough", "code abc1234 (C.UTF-8)", "code abc1234 (C.UTF-8)"},
		{"a value holding another", "got key-0123-inner-secret-9876 and inner-secret", "got REDACTED and REDACTED"},
		{"unicode", "near Zürich-Altstadt — café ☕ closed", "near REDACTED — café ☕ closed"},
		{"not UTF-8", "bad \xff\xfe byte", "bad \uFFFD byte"},
	}
	set := secrets.NewSet(secrets.In(env))
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if got := secrets.SafeDetail(tt.in, env); got != tt.want {
				t.Errorf("SafeDetail(%q)\n got %q\nwant %q", tt.in, got, tt.want)
			}
			if got := set.SafeDetail(tt.in); got != tt.want {
				t.Errorf("Set.SafeDetail(%q) = %q, want %q as SafeDetail", tt.in, got, tt.want)
			}
		})
	}
}

// TestSafeDetailBounded: a long detail is cut on a character boundary,
// with the mark, to MaxDetail bytes; a secret at its end is removed
// before the cut, not cut in half.
func TestSafeDetailBounded(t *testing.T) {
	t.Parallel()
	const secret = "s3cr3t-value-at-the-end"
	env := []string{"TOKEN_VALUE=" + secret}
	for _, pad := range []int{secrets.MaxDetail - len(secret) - 2, secrets.MaxDetail - 3, secrets.MaxDetail - 1, 3 * secrets.MaxDetail} {
		in := strings.Repeat("é", pad/2) + "x" + secret
		got := secrets.SafeDetail(in, env)
		if len(got) > secrets.MaxDetail || !utf8.ValidString(got) {
			t.Errorf("pad %d: %d bytes, valid UTF-8 %v; want at most %d bytes of UTF-8", pad, len(got), utf8.ValidString(got), secrets.MaxDetail)
		}
		if strings.Contains(got, "s3cr3t") {
			t.Errorf("pad %d: the secret's opening is in %q", pad, got[len(got)-40:])
		}
		if len(in) > secrets.MaxDetail && !strings.HasSuffix(got, secrets.Cut) {
			t.Errorf("pad %d: a detail of %d bytes kept as %q…, without the mark", pad, len(in), got[len(got)-20:])
		}
	}
	if got := secrets.SafeDetail("short", nil); got != "short" {
		t.Errorf("SafeDetail(short) = %q", got)
	}
}

// FuzzSafeDetail: whatever the detail and the environment's value, the
// result is valid UTF-8 of at most MaxDetail bytes, and holds no value of
// the environment Enough long. (A value made of the characters SafeDetail
// writes itself — the marks, a URL's "://" — may be made anew by what it
// writes beside them, and is not checked.)
func FuzzSafeDetail(f *testing.F) {
	f.Add("dial build-runner-07:443", "build-runner-07")
	f.Add("https://u:p@host/x?y", "u:p@host")
	f.Add("Bearer abcdefghijkl and abcdefghijkl", "abcdefghijkl")
	f.Add("-----BEGIN KEY-----\nsecret material\n-----END KEY-----", "secret material")
	f.Add(strings.Repeat("ü", 600)+"0123456789", "0123456789")
	f.Add("a\xffb\xfe 12345678 12345678", "\xff12345678")
	f.Fuzz(func(t *testing.T, detail, value string) {
		got := secrets.SafeDetail(detail, []string{"K=" + value, "PATH=/usr/bin:/bin"})
		if !utf8.ValidString(got) {
			t.Fatalf("SafeDetail(%q) = %q: not UTF-8", detail, got)
		}
		if len(got) > secrets.MaxDetail {
			t.Fatalf("SafeDetail(%q) is %d bytes, more than %d", detail, len(got), secrets.MaxDetail)
		}
		for _, v := range []string{value, strings.TrimSpace(value)} {
			if len(v) >= secrets.Enough && !strings.ContainsAny(v, written) && strings.Contains(got, v) {
				t.Fatalf("SafeDetail(%q) = %q: it holds %q", detail, got, v)
			}
		}
	})
}

// written is every character SafeDetail writes of its own.
const written = secrets.Redacted + secrets.Cut + "\uFFFD" + ":/"
