package jcs

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"math"
	"os"
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"
)

// vectorsFile holds vectors made by an independent RFC 8785 implementation:
// the contract with other implementations. It is only ever appended to; a
// vector that fails is a protocol change, never a file to regenerate.
const vectorsFile = "testdata/digest-vectors.json"

type vector struct {
	Name      string `json:"name"`
	Input     string `json:"input"`
	Canonical string `json:"canonical"`
	Digest    string `json:"digest"`
	// Error, if set, says the input must be rejected; Canonical and
	// Digest are then empty.
	Error string `json:"error"`
}

func readVectors(t *testing.T, path string) ([]byte, []vector) {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("read vectors: %v", err)
	}
	var file struct {
		About   string   `json:"about"`
		Vectors []vector `json:"vectors"`
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields() // a new kind of vector must not pass unchecked
	if err := dec.Decode(&file); err != nil {
		t.Fatalf("decode %s: %v", path, err)
	}
	if len(file.Vectors) == 0 {
		t.Fatalf("%s has no vectors", path)
	}
	return raw, file.Vectors
}

func TestVectors(t *testing.T) {
	t.Parallel()
	_, vectors := readVectors(t, vectorsFile)
	names := make(map[string]bool)
	for _, v := range vectors {
		if names[v.Name] {
			t.Errorf("duplicate vector name %q", v.Name)
		}
		names[v.Name] = true
		t.Run(v.Name, func(t *testing.T) {
			t.Parallel()
			checkVector(t, v)
		})
	}
}

func checkVector(t *testing.T, v vector) {
	if v.Error != "" {
		if got, err := Canonical([]byte(v.Input)); err == nil {
			t.Errorf("Canonical(%s) = %s, want error (%s)", v.Input, got, v.Error)
		}
		return
	}
	sum := sha256.Sum256([]byte(v.Canonical))
	if want := "sha256:" + hex.EncodeToString(sum[:]); v.Digest != want {
		t.Fatalf("vector is inconsistent: digest %s, sha256 of canonical %s", v.Digest, want)
	}
	got, err := Canonical([]byte(v.Input))
	if err != nil {
		t.Fatalf("Canonical(%s): %v", v.Input, err)
	}
	if string(got) != v.Canonical {
		t.Errorf("Canonical(%s) = %s, want %s", v.Input, got, v.Canonical)
	}
	d, err := Digest([]byte(v.Input))
	if err != nil {
		t.Fatalf("Digest(%s): %v", v.Input, err)
	}
	if d != v.Digest {
		t.Errorf("Digest(%s) = %s, want %s", v.Input, d, v.Digest)
	}
}

func TestCanonical(t *testing.T) {
	t.Parallel()
	tests := []struct{ name, in, want string }{
		{"rfc 8785 example",
			`{"numbers": [333333333.33333329, 1E30, 4.50, 2e-3, 0.000000000000000000000000001],
			  "string": "\u20ac$\u000F\u000aA'\u0042\u0022\u005c\\\"\/",
			  "literals": [null, true, false]}`,
			`{"literals":[null,true,false],"numbers":[333333333.3333333,1e+30,4.5,0.002,1e-27],"string":"€$\u000f\nA'B\"\\\\\"/"}`},
		{"keys by utf-16 code units",
			`{"\u20ac":0,"\r":0,"\ufb33":0,"1":0,"\ud83d\ude00":0,"\u0080":0,"\u00f6":0}`,
			"{\"\\r\":0,\"1\":0,\"\u0080\":0,\"ö\":0,\"€\":0,\"😀\":0,\"\ufb33\":0}"},
		{"line separators stay raw", `"\u2028\u2029"`, "\"\u2028\u2029\""},
		{"delete stays raw", `"\u007f"`, "\"\x7f\""},
		{"nul escaped", `"\u0000"`, `"\u0000"`},
		{"short escapes", `"\u0008\u0009\u000a\u000c\u000d\u001f"`, `"\b\t\n\f\r\u001f"`},
		{"raw replacement char allowed", "\"\uFFFD\"", "\"\uFFFD\""},
		{"nested empties", `[{},[],[{}]]`, `[{},[],[{}]]`},
		{"large integer rounds to double", `9007199254740993`, `9007199254740992`},
		{"underflow is zero", `1e-400`, `0`},
		{"capital exponent", `1E+2`, `100`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := Canonical([]byte(tt.in))
			if err != nil {
				t.Fatalf("Canonical(%s): %v", tt.in, err)
			}
			if string(got) != tt.want {
				t.Errorf("Canonical(%s) = %s, want %s", tt.in, got, tt.want)
			}
		})
	}
}

// TestNumbers uses the IEEE-754 samples of RFC 8785 Appendix B.
func TestNumbers(t *testing.T) {
	t.Parallel()
	tests := []struct {
		bits uint64
		want string
	}{
		{0x0000000000000000, "0"},
		{0x8000000000000000, "0"},
		{0x0000000000000001, "5e-324"},
		{0x8000000000000001, "-5e-324"},
		{0x7fefffffffffffff, "1.7976931348623157e+308"},
		{0xffefffffffffffff, "-1.7976931348623157e+308"},
		{0x4340000000000000, "9007199254740992"},
		{0xc340000000000000, "-9007199254740992"},
		{0x4430000000000000, "295147905179352830000"},
		{0x44b52d02c7e14af5, "9.999999999999997e+22"},
		{0x44b52d02c7e14af6, "1e+23"},
		{0x44b52d02c7e14af7, "1.0000000000000001e+23"},
		{0x444b1ae4d6e2ef4e, "999999999999999700000"},
		{0x444b1ae4d6e2ef4f, "999999999999999900000"},
		{0x444b1ae4d6e2ef50, "1e+21"},
		{0x3eb0c6f7a0b5ed8c, "9.999999999999997e-7"},
		{0x3eb0c6f7a0b5ed8d, "0.000001"},
		{0x41b3de4355555553, "333333333.3333332"},
		{0x41b3de4355555554, "333333333.33333325"},
		{0x41b3de4355555555, "333333333.3333333"},
		{0x41b3de4355555556, "333333333.3333334"},
		{0x41b3de4355555557, "333333333.33333343"},
		{0xbecbf647612f3696, "-0.0000033333333333333333"},
		{0x43143ff3c1cb0959, "1424953923781206.2"},
	}
	for _, tt := range tests {
		f := math.Float64frombits(tt.bits)
		if got := string(appendNumber(nil, f)); got != tt.want {
			t.Errorf("appendNumber(%#016x) = %s, want %s", tt.bits, got, tt.want)
		}
		// The canonical form must also survive a trip through Canonical.
		if got, err := Canonical([]byte(tt.want)); err != nil || string(got) != tt.want {
			t.Errorf("Canonical(%s) = %s, %v, want %s", tt.want, got, err, tt.want)
		}
	}
}

func TestCanonicalRejects(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, in string
		want     error
	}{
		{"empty", ``, ErrInvalidJSON},
		{"only space", ` `, ErrInvalidJSON},
		{"bare word", `nul`, ErrInvalidJSON},
		{"trailing data", `{} {}`, ErrInvalidJSON},
		{"trailing comma array", `[1,]`, ErrInvalidJSON},
		{"trailing comma object", `{"a":1,}`, ErrInvalidJSON},
		{"unquoted key", `{a:1}`, ErrInvalidJSON},
		{"missing colon", `{"a" 1}`, ErrInvalidJSON},
		{"unclosed array", `[1`, ErrInvalidJSON},
		{"unclosed string", `"abc`, ErrInvalidJSON},
		{"raw control char", "\"a\tb\"", ErrInvalidJSON},
		{"bad escape", `"\x41"`, ErrInvalidJSON},
		{"bad unicode escape", `"\u12g4"`, ErrInvalidJSON},
		{"leading zero", `01`, ErrInvalidJSON},
		{"plus sign", `+1`, ErrInvalidJSON},
		{"bare fraction", `.5`, ErrInvalidJSON},
		{"empty fraction", `1.`, ErrInvalidJSON},
		{"empty exponent", `1e`, ErrInvalidJSON},
		{"nan", `NaN`, ErrInvalidJSON},
		{"byte order mark", "\ufeff{}", ErrInvalidJSON},
		{"duplicate key", `{"a":1,"a":2}`, ErrDuplicateKey},
		{"duplicate key after unescape", `{"a":1,"\u0061":2}`, ErrDuplicateKey},
		{"nested duplicate key", `[{"x":{"k":1,"k":1}}]`, ErrDuplicateKey},
		{"lone high surrogate", `"\ud800"`, ErrInvalidUnicode},
		{"high surrogate then char", `"\ud800x"`, ErrInvalidUnicode},
		{"high surrogate pair of highs", `"\ud800\ud800"`, ErrInvalidUnicode},
		{"lone low surrogate", `"\udc00"`, ErrInvalidUnicode},
		{"invalid utf-8", "\"\xff\"", ErrInvalidUnicode},
		{"utf-8 encoded surrogate", "\"\xed\xa0\x80\"", ErrInvalidUnicode},
		{"overflow", `1e400`, ErrNumberRange},
		{"negative overflow", `[-1.8e308]`, ErrNumberRange},
		{"too deep arrays", strings.Repeat("[", MaxDepth+1) + strings.Repeat("]", MaxDepth+1), ErrTooDeep},
		{"too deep objects", strings.Repeat(`{"a":`, MaxDepth+1) + "1" + strings.Repeat("}", MaxDepth+1), ErrTooDeep},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := Canonical([]byte(tt.in))
			if !errors.Is(err, tt.want) {
				t.Fatalf("Canonical(%q) = %q, %v, want error %v", tt.in, got, err, tt.want)
			}
			if _, err := Digest([]byte(tt.in)); !errors.Is(err, tt.want) {
				t.Errorf("Digest(%q) error = %v, want %v", tt.in, err, tt.want)
			}
		})
	}
}

func TestDuplicateKeyNamed(t *testing.T) {
	t.Parallel()
	_, err := Canonical([]byte(`{"amount":1,"amount":2}`))
	if !errors.Is(err, ErrDuplicateKey) || !strings.Contains(err.Error(), `"amount"`) {
		t.Errorf("Canonical error = %v, want %v naming \"amount\"", err, ErrDuplicateKey)
	}
}

func TestMaxDepthAccepted(t *testing.T) {
	t.Parallel()
	in := strings.Repeat("[", MaxDepth) + strings.Repeat("]", MaxDepth)
	got, err := Canonical([]byte(in))
	if err != nil || string(got) != in {
		t.Errorf("Canonical(%d nested arrays) = %.20s..., %v, want input back", MaxDepth, got, err)
	}
}

func TestDigestOf(t *testing.T) {
	t.Parallel()
	type show struct {
		Order    string `json:"order"`
		Currency string `json:"currency"`
		Amount   int    `json:"amount"`
	}
	v := struct {
		Show    show   `json:"show"`
		Account string `json:"account"`
	}{show{"A-1042", "EUR", 5000}, "Customer was charged twice for order A-1042."}
	const want = "sha256:9d687cb98a9307183f17fa87ba0950a19aaa10bc3e29e6d1facb6417afbd5d60"
	if got, err := DigestOf(v); err != nil || got != want {
		t.Errorf("DigestOf(%+v) = %s, %v, want %s", v, got, err, want)
	}
	// json.Marshal escapes HTML; the canonical form does not.
	html, err := DigestOf(map[string]string{"note": "<b>5 & 6</b>"})
	const wantHTML = "sha256:4a40d543c6058aa1e26d5b2368d7d76adff1008fa1d4f2532c0499f5cd85f42b"
	if err != nil || html != wantHTML {
		t.Errorf("DigestOf(html) = %s, %v, want %s", html, err, wantHTML)
	}
	if _, err := DigestOf(math.NaN()); err == nil {
		t.Error("DigestOf(NaN) succeeded, want error")
	}
}

func FuzzCanonical(f *testing.F) {
	raw, err := os.ReadFile(vectorsFile)
	if err != nil {
		f.Fatalf("read vectors: %v", err)
	}
	var file struct{ Vectors []vector }
	if err := json.Unmarshal(raw, &file); err != nil {
		f.Fatalf("decode %s: %v", vectorsFile, err)
	}
	for _, v := range file.Vectors {
		f.Add([]byte(v.Input))
	}
	for _, s := range []string{`{"a":1,"a":2}`, `"\ud83d\ude00"`, `"\ud800"`, `[1e400]`, `-0.0`, `1E-7`, `[[[[]]]]`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		out, err := Canonical(in)
		if err != nil {
			// encoding/json is the reference for syntax: anything it
			// accepts may only be refused for a reason beyond syntax.
			if json.Valid(in) && errors.Is(err, ErrInvalidJSON) {
				t.Fatalf("Canonical(%q) = %v, but json.Valid accepts it", in, err)
			}
			return
		}
		if !json.Valid(out) || !utf8.Valid(out) {
			t.Fatalf("Canonical(%q) = %q, not valid JSON", in, out)
		}
		again, err := Canonical(out)
		if err != nil || !bytes.Equal(again, out) {
			t.Fatalf("Canonical(%q) = %q, but Canonical of that = %q, %v", in, out, again, err)
		}
		// The canonical form must mean the same as the input.
		var a, b any
		if err := json.Unmarshal(in, &a); err != nil {
			t.Fatalf("Canonical accepted %q, json.Unmarshal: %v", in, err)
		}
		if err := json.Unmarshal(out, &b); err != nil || !reflect.DeepEqual(a, b) {
			t.Fatalf("Canonical(%q) = %q, which decodes to %v, want %v", in, out, b, a)
		}
	})
}
