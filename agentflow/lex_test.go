package agentflow

import (
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// tokens is Lex's tokens as kind:text=value, comments included, EOF left
// out.
func tokens(toks []Token) []string {
	var out []string
	for _, t := range toks[:len(toks)-1] {
		s := fmt.Sprintf("%s:%s", t.Kind, t.Text)
		switch t.Kind {
		case KindString, KindMLString:
			s += fmt.Sprintf("=%q", t.Value)
		case KindNumber:
			s += fmt.Sprintf("=%v", t.Number)
		case KindDuration:
			s += fmt.Sprintf("=%dms", t.Millis)
		}
		out = append(out, s)
	}
	return out
}

// TestLex: every token form of the reference, one case each.
func TestLex(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name, src string
		want      []string
		diag      string // the one diagnostic, "line:col: message", if any
	}{
		{"identifiers", "a _b c$1 A_9$", []string{"identifier:a", "identifier:_b", "identifier:c$1", "identifier:A_9$"}, ""},
		{"no $ first", "$a", []string{"illegal character:$", "identifier:a"}, `1:1: unexpected character '$'`},
		{"keywords and contextual words", "workflow input agent_runs after null while", []string{"keyword:workflow", "keyword:input", "keyword:agent_runs", "keyword:after", "keyword:null", "identifier:while"}, ""},
		{"a keyword's prefix is an identifier", "inputs agents lets", []string{"identifier:inputs", "identifier:agents", "identifier:lets"}, ""},
		{"a string", `"plain"`, []string{`string:"plain"="plain"`}, ""},
		{`escape \"`, `"a\"b"`, []string{`string:"a\"b"="a\"b"`}, ""},
		{`escape \\`, `"a\\b"`, []string{`string:"a\\b"="a\\b"`}, ""},
		{`escape \n`, `"a\nb"`, []string{`string:"a\nb"="a\nb"`}, ""},
		{`escape \t`, `"a\tb"`, []string{`string:"a\tb"="a\tb"`}, ""},
		{`escape \r`, `"a\rb"`, []string{`string:"a\rb"="a\rb"`}, ""},
		{`any other \x reads as x`, `"\q\$\u\é\0"`, []string{`string:"\q\$\u\é\0"="q$ué0"`}, ""},
		{"an empty string", `""`, []string{`string:""=""`}, ""},
		{"a string ends on its line", "\"open\nx", []string{`string:"open="open"`, "identifier:x"}, "1:1: unterminated string: a \"...\" string ends with \" on its own line"},
		{"a backslash does not continue a line", "\"a\\\nb", []string{`string:"a\="a"`, "identifier:b"}, "1:1: unterminated string: a \"...\" string ends with \" on its own line"},
		{"no escape of U+2028", "\"a\\\u2028b", []string{"string:\"a\\=\"a\"", "identifier:b"}, "1:1: unterminated string: a \"...\" string ends with \" on its own line"},
		{"a string at the end of the file", `"abc`, []string{`string:"abc="abc"`}, "1:1: unterminated string: a \"...\" string ends with \" on its own line"},
		{"a multiline string", "\"\"\"\n  one\n  two\n\"\"\"", []string{"multiline string:\"\"\"\n  one\n  two\n\"\"\"=\"  one\\n  two\""}, ""},
		{"multiline: only newlines trimmed", "\"\"\"\r\n\n  x \\n \"y\"\n  \"\"\"", []string{"multiline string:\"\"\"\r\n\n  x \\n \"y\"\n  \"\"\"=\"  x \\\\n \\\"y\\\"\\n  \""}, ""},
		{"multiline: on one line", `"""a"""`, []string{`multiline string:"""a"""="a"`}, ""},
		{"multiline: the first closing quotes end it", `"""a""""`, []string{`multiline string:"""a"""="a"`, `string:"=""`}, "1:8: unterminated string: a \"...\" string ends with \" on its own line"},
		{"multiline: unterminated", "\"\"\"a\nb", []string{"multiline string:\"\"\"a\nb=\"a\\nb\""}, `1:1: unterminated multiline string: """ without a closing """`},
		{"numbers", "0 12 007 1.5 10.25", []string{"number:0=0", "number:12=12", "number:007=7", "number:1.5=1.5", "number:10.25=10.25"}, ""},
		{"no negative literal", "-1", []string{"illegal character:-", "number:1=1"}, `1:1: unexpected character '-'`},
		{"a dot needs a digit after it", "1. 1.x", []string{"number:1=1", "punctuation:.", "number:1=1", "punctuation:.", "identifier:x"}, ""},
		{"a range of numbers", "1..5", []string{"number:1=1", "punctuation:..", "number:5=5"}, ""},
		{"durations", "500ms 5s 10m 2h 0s", []string{"duration:500ms=500ms", "duration:5s=5000ms", "duration:10m=600000ms", "duration:2h=7200000ms", "duration:0s=0ms"}, ""},
		{"5sx is a number and an identifier", "5sx", []string{"number:5=5", "identifier:sx"}, ""},
		{"5s_ and 5s1 are too", "5s_ 5s1", []string{"number:5=5", "identifier:s_", "number:5=5", "identifier:s1"}, ""},
		{"5msx and 5m5", "5msx 5m5", []string{"number:5=5", "identifier:msx", "number:5=5", "identifier:m5"}, ""},
		{"a duration before punctuation", "5s) 5m.x 1h,", []string{"duration:5s=5000ms", "punctuation:)", "duration:5m=300000ms", "punctuation:.", "identifier:x", "duration:1h=3600000ms", "punctuation:,"}, ""},
		{"a duration before $", "5s$", []string{"duration:5s=5000ms", "illegal character:$"}, `1:3: unexpected character '$'`},
		{"no fractional duration", "1.5s", []string{"number:1.5=1.5", "identifier:s"}, ""},
		{"a duration too large", "9999999999999999h", []string{"duration:9999999999999999h=0ms"}, "1:1: duration 9999999999999999h is out of range (at most 9223372036854775807 ms)"},
		{"a number too large", strings.Repeat("9", 400), []string{"number:" + strings.Repeat("9", 400) + "=+Inf"}, "1:1: number " + strings.Repeat("9", 400) + " is out of range"},
		{"operators", "== != <= >= < > ?? ? -> = . .. [*] [ ] { } ( ) , :", []string{"punctuation:==", "punctuation:!=", "punctuation:<=", "punctuation:>=", "punctuation:<", "punctuation:>", "punctuation:??", "punctuation:?", "punctuation:->", "punctuation:=", "punctuation:.", "punctuation:..", "punctuation:[*]", "punctuation:[", "punctuation:]", "punctuation:{", "punctuation:}", "punctuation:(", "punctuation:)", "punctuation:,", "punctuation::"}, ""},
		{"a spaced projection is no projection", "[ * ]", []string{"punctuation:[", "illegal character:*", "punctuation:]"}, `1:3: unexpected character '*'`},
		{"line comments", "a // one\r\nb //", []string{"identifier:a", "comment:// one", "identifier:b", "comment://"}, ""},
		{"block comments do not nest", "/* a /* b */ c", []string{"comment:/* a /* b */", "identifier:c"}, ""},
		{"a block comment over lines", "/*\n*/x", []string{"comment:/*\n*/", "identifier:x"}, ""},
		{"an unterminated block comment", "x /* y", []string{"identifier:x", "comment:/* y"}, `1:3: unterminated comment: /* without */`},
		{"whitespace of every kind", "a\t\v\f\r\n\u00a0\u2028\ufeff\u3000b", []string{"identifier:a", "identifier:b"}, ""},
		{"a stray non-ASCII letter", "é", []string{"illegal character:é"}, `1:1: unexpected character 'é'`},
		{"invalid UTF-8", "\xff", []string{"illegal character:\xff"}, `1:1: invalid UTF-8 byte 0xff`},
	} {
		t.Run(c.name, func(t *testing.T) {
			toks, diags := Lex([]byte(c.src))
			got := tokens(toks)
			if d := cmp.Diff(c.want, got); d != "" {
				t.Errorf("Lex(%q) tokens differ (-want +got):\n%s", c.src, d)
			}
			var ds []string
			for _, d := range diags {
				ds = append(ds, d.Pos.String()+": "+d.Message)
				if d.Code != CodeLex {
					t.Errorf("%v: code %s, want lex", d, d.Code)
				}
			}
			if c.diag == "" && len(ds) > 0 {
				t.Errorf("Lex(%q) diagnostics %q, want none", c.src, ds)
			}
			if c.diag != "" && (len(ds) != 1 || ds[0] != c.diag) {
				t.Errorf("Lex(%q) diagnostics %q, want [%q]", c.src, ds, c.diag)
			}
		})
	}
}

// TestLexPositions: lines and columns (bytes, from 1) across newlines,
// comments and multiline strings.
func TestLexPositions(t *testing.T) {
	t.Parallel()
	src := "a\n  \"\"\"x\ny\"\"\" b /* c\nd */ é e"
	toks, _ := Lex([]byte(src))
	var got []string
	for _, tk := range toks {
		got = append(got, fmt.Sprintf("%s-%s[%d,%d)", tk.Pos, tk.End, tk.Pos.Offset, tk.End.Offset))
	}
	want := []string{"1:1-1:2[0,1)", "2:3-3:5[4,13)", "3:6-3:7[14,15)", "3:8-4:5[16,25)", "4:6-4:8[26,28)", "4:9-4:10[29,30)", "4:10-4:10[30,30)"}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("Lex(%q) positions differ (-want +got):\n%s", src, d)
	}
}

// TestReserved: the reference's reserved words, after and null are
// reserved; input, context, duration and member are not; nothing else is
// a keyword.
func TestReserved(t *testing.T) {
	t.Parallel()
	for _, w := range strings.Fields(`agent agent_runs and as attempts check concurrency else emit expect
		fail false if in let limit limits map none not on or parallel pass pipeline progress rate_limit
		require return retry stage task team timeout tools transient true type use verify when write workflow after null`) {
		if !Reserved(w) {
			t.Errorf("Reserved(%q) = false, want true", w)
		}
	}
	for _, w := range []string{"input", "context", "duration", "member", "while", "for", "function", "class", "text"} {
		if Reserved(w) {
			t.Errorf("Reserved(%q) = true, want false", w)
		}
	}
	if len(keywords) != 49 {
		t.Errorf("%d keywords, want 49", len(keywords))
	}
}
