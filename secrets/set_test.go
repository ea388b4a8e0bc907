package secrets_test

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/symphonix/symphonix/secrets"
)

// TestNamed: the values of the names given, each once, in order; short
// values and empty names left out; a value with white space around it
// trimmed too.
func TestNamed(t *testing.T) {
	t.Parallel()
	env := map[string]string{
		"OPENAI_API_KEY": "sk-test-0123456789abcdef",
		"ORDERS_TOKEN":   "orders-token-1",
		"SAME_TOKEN":     "orders-token-1",
		"PADDED":         "  padded-secret\n",
		"PORT":           "8080",
		"SEVEN":          "1234567",
		"EIGHT":          "12345678",
	}
	got := secrets.Named([]string{"OPENAI_API_KEY", "ORDERS_TOKEN", "SAME_TOKEN", "PADDED", "PORT", "SEVEN", "EIGHT", "UNSET", ""},
		func(name string) string { return env[name] })
	want := []string{"sk-test-0123456789abcdef", "orders-token-1", "  padded-secret\n", "padded-secret", "12345678"}
	if !slices.Equal(got, want) {
		t.Errorf("Named = %q, want %q", got, want)
	}
}

// TestIn: every value of the environment Enough long, the names not;
// entries with no "=" skipped.
func TestIn(t *testing.T) {
	t.Parallel()
	got := secrets.In([]string{
		"PATH=/usr/local/bin:/usr/bin",
		"HOME=/root",
		"HOSTNAME=build-runner-07",
		"SHLVL=1",
		"EQUALS=a=b=c=d=e",
		"COPY=build-runner-07",
		"no equals sign at all",
		"LONG_NAME_BUT_SHORT_VALUE=x",
	})
	want := []string{"/usr/local/bin:/usr/bin", "build-runner-07", "a=b=c=d=e"}
	if !slices.Equal(got, want) {
		t.Errorf("In = %q, want %q", got, want)
	}
}

// TestWithout: each value replaced wherever it occurs, the longest first
// where two start at one place, a value holding another removed whole,
// short values ignored, the same result whatever the order of the list.
func TestWithout(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, text string
		list       []string
		want       string
	}{
		{"none", "hello world", nil, "hello world"},
		{"twice", "abcdefgh then abcdefgh", []string{"abcdefgh"}, "REDACTED then REDACTED"},
		{"adjacent", "abcdefghabcdefgh", []string{"abcdefgh"}, "REDACTEDREDACTED"},
		{"one holds another", "key: outer-inner-secret-value", []string{"inner-secret", "outer-inner-secret-value"}, "key: REDACTED"},
		{"one holds another, listed first", "key: outer-inner-secret-value", []string{"outer-inner-secret-value", "inner-secret"}, "key: REDACTED"},
		{"same start", "token-12345678-extra", []string{"token-12345678", "token-12345678-extra"}, "REDACTED"},
		{"overlapping", "xx0123456789abyy", []string{"0123456789", "456789ab"}, "xxREDACTEDabyy"},
		{"short values", "a 1234567 b", []string{"1234567", "a", ""}, "a 1234567 b"},
		{"unicode", "pass: 密码是秘密的 ok", []string{"密码是秘密的"}, "pass: REDACTED ok"},
		{"the mark itself", "REDACTED", []string{"REDACTED"}, "REDACTED"},
		{"no match", "nothing here", []string{"something-else"}, "nothing here"},
	}
	for _, tt := range tests {
		if got := secrets.Without(tt.text, tt.list); got != tt.want {
			t.Errorf("%s: Without(%q, %q) = %q, want %q", tt.name, tt.text, tt.list, got, tt.want)
		}
		reversed := slices.Clone(tt.list)
		slices.Reverse(reversed)
		if got := secrets.NewSet(reversed).Without(tt.text); got != tt.want {
			t.Errorf("%s: with the list reversed = %q, want %q", tt.name, got, tt.want)
		}
	}
	var none *secrets.Set
	if got := none.Without("abcdefgh"); got != "abcdefgh" || none.Len() != 0 {
		t.Errorf("a nil Set: Without = %q, Len = %d; want nothing removed", got, none.Len())
	}
	if n := secrets.NewSet([]string{"abcdefgh", "abcdefgh", "short"}).Len(); n != 1 {
		t.Errorf("NewSet of a value twice and a short one: Len = %d, want 1", n)
	}
}

// TestWithoutValue: strings, keys and numbers in a JSON-shaped value, and
// a value of another type read as its JSON; the value given unchanged.
func TestWithoutValue(t *testing.T) {
	t.Parallel()
	s := secrets.NewSet([]string{"hunter2hunter2", "12345678901"})
	args := map[string]any{
		"query":   "login with hunter2hunter2",
		"account": float64(12345678901),
		"amount":  49.9,
		"count":   json.Number("12345678901"),
		"tags":    []any{"ok", "hunter2hunter2", true, nil},
		"nested":  map[string]any{"hunter2hunter2": "as a key"},
	}
	got := s.WithoutValue(args)
	want := map[string]any{
		"query":   "login with REDACTED",
		"account": "REDACTED",
		"amount":  49.9,
		"count":   "REDACTED",
		"tags":    []any{"ok", "REDACTED", true, nil},
		"nested":  map[string]any{"REDACTED": "as a key"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("WithoutValue (-want +got):\n%s", diff)
	}
	if args["query"] != "login with hunter2hunter2" {
		t.Errorf("WithoutValue changed its argument: %v", args["query"])
	}

	type result struct {
		Customer string `json:"customer"`
		Amount   int    `json:"amount"`
	}
	if got, want := s.WithoutValue(result{"hunter2hunter2", 5}), map[string]any{"customer": "REDACTED", "amount": json.Number("5")}; !cmp.Equal(got, want) {
		t.Errorf("WithoutValue(a struct) = %#v, want %#v", got, want)
	}
	if ch := make(chan int); s.WithoutValue(ch) != any(ch) {
		t.Error("WithoutValue of a value that is not JSON: not returned as it is")
	}
	if got := secrets.NewSet(nil).WithoutValue(args); !cmp.Equal(got, any(args)) {
		t.Errorf("an empty Set changed the value: %v", got)
	}
}

// BenchmarkWithout: 1 MiB of text and 200 values of 8 to 64 bytes, a few
// of which occur in it, the Set built once.
func BenchmarkWithout(b *testing.B) {
	r := rand.New(rand.NewPCG(1, 2))
	const alphabet = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_ "
	word := func(n int) string {
		buf := make([]byte, n)
		for i := range buf {
			buf[i] = alphabet[r.IntN(len(alphabet))]
		}
		return string(buf)
	}
	list := make([]string, 200)
	for i := range list {
		list[i] = word(8 + r.IntN(57))
	}
	var text strings.Builder
	for text.Len() < 1<<20 {
		if r.IntN(100) == 0 {
			text.WriteString(list[r.IntN(len(list))])
		} else {
			text.WriteString(word(80))
		}
		text.WriteByte('\n')
	}
	s := secrets.NewSet(list)
	in := text.String()
	b.SetBytes(int64(len(in)))
	b.ReportAllocs()
	for b.Loop() {
		if out := s.Without(in); !strings.Contains(out, secrets.Redacted) {
			b.Fatal("nothing removed")
		}
	}
}

// BenchmarkSafeDetail: a detail of a few hundred bytes against an
// environment of 60 values, the Set built once.
func BenchmarkSafeDetail(b *testing.B) {
	env := make([]string, 60)
	for i := range env {
		env[i] = fmt.Sprintf("VAR_%d=value-number-%d-of-the-environment", i, i)
	}
	s := secrets.NewSet(secrets.In(env))
	detail := `Post "https://ada:pw@api.example.com/v1/chat/completions": dial tcp value-number-7-of-the-environment:443: ` +
		"Authorization: Bearer sk-proj-AbCdEf0123456789xyzXYZ rejected; password=hunter2 " + strings.Repeat("context ", 30)
	b.ReportAllocs()
	for b.Loop() {
		s.SafeDetail(detail)
	}
}
