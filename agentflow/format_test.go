package agentflow

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestFormatCorpus: every program of the corpus formats to its .golden;
// the golden is a fixed point, parses to the same tree (positions aside)
// and keeps every comment.
func TestFormatCorpus(t *testing.T) {
	for name, src := range corpus(t) {
		t.Run(name, func(t *testing.T) {
			out, diags := Format(src)
			if len(diags) > 0 {
				t.Fatalf("Format(%s.af) = %v", name, diags)
			}
			golden(t, name+".golden", string(out))
			sameProgram(t, src, out)
		})
	}
}

// sameProgram: out is formatted (Format leaves it as it is) and is src's
// program, with src's comments.
func sameProgram(t testing.TB, src, out []byte) {
	t.Helper()
	again, diags := Format(out)
	if len(diags) > 0 {
		t.Fatalf("Format of the formatted program: %v\n%s", diags, out)
	}
	if d := cmp.Diff(string(out), string(again)); d != "" {
		t.Fatalf("Format is not idempotent (-once +twice):\n%s", d)
	}
	f1, _ := Parse(src)
	f2, _ := Parse(out)
	if d := cmp.Diff(dump(f1.Workflows, false), dump(f2.Workflows, false)); d != "" {
		t.Fatalf("the formatted program's tree differs (-source +formatted):\n%s", d)
	}
	var c1, c2 []string
	for _, c := range f1.Comments {
		c1 = append(c1, strings.TrimRight(c.Text, " \t"))
	}
	for _, c := range f2.Comments {
		c2 = append(c2, c.Text)
	}
	if d := cmp.Diff(c1, c2); d != "" {
		t.Fatalf("the formatted program's comments differ (-source +formatted):\n%s", d)
	}
}

// TestFormatGoldenIsFormatted: a golden file formats to itself.
func TestFormatGoldenIsFormatted(t *testing.T) {
	t.Parallel()
	names, _ := filepath.Glob("testdata/*.golden")
	for _, n := range names {
		src, err := os.ReadFile(n)
		if err != nil {
			t.Fatal(err)
		}
		out, diags := Format(src)
		if len(diags) > 0 || string(out) != string(src) {
			t.Errorf("Format(%s) changes it (%v):\n%s", n, diags, out)
		}
	}
}

// TestFormatLayout: the layout rules, one at a time.
func TestFormatLayout(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ name, src, want string }{
		{"one line becomes canonical",
			"workflow w(input:T)->T{pipeline{let x={a:1,b:[1,2],}return x}}",
			"workflow w(input: T) -> T {\n  pipeline {\n    let x = { a: 1, b: [1, 2] }\n    return x\n  }\n}\n"},
		{"a list broken after its bracket is one item a line, with a trailing comma where allowed",
			"workflow w(input: T) -> T {\n  pipeline {\n    let x = {\n  a: 1, b: [\n1, 2] }\n    return x\n  }\n}\n",
			"workflow w(input: T) -> T {\n  pipeline {\n    let x = {\n      a: 1,\n      b: [\n        1,\n        2\n      ],\n    }\n    return x\n  }\n}\n"},
		{"blank lines: at most one kept between items, none after { or before }",
			"workflow w(input: T) -> T {\n\n\n  use agent \"a\" as a\n\n\n\n  use agent \"b\" as b\n\n}\n",
			"workflow w(input: T) -> T {\n  use agent \"a\" as a\n\n  use agent \"b\" as b\n}\n"},
		{"one blank line between workflows",
			"workflow a(input: T) -> T {} workflow b(input: T) -> T {}",
			"workflow a(input: T) -> T {}\n\nworkflow b(input: T) -> T {}\n"},
		{"agent options one a line",
			"workflow w(input: T) -> T { pipeline { return agent(a) { task \"t\" expect T } } }",
			"workflow w(input: T) -> T {\n  pipeline {\n    return agent(a) {\n      task \"t\"\n      expect T\n    }\n  }\n}\n"},
		{"tokens as written",
			"workflow w(input: T) -> T { pipeline { return [007, 1.50, 60s, \"\\q\", \"\"\"  x  \"\"\"] } }",
			"workflow w(input: T) -> T {\n  pipeline {\n    return [007, 1.50, 60s, \"\\q\", \"\"\"  x  \"\"\"]\n  }\n}\n"},
		{"comments keep their lines",
			"// head\nworkflow w(input: T) -> T { // brace\n  pipeline { let a = 1 /* after */ let b = 2\n  // own\n  return a } }   \n// tail   ",
			"// head\nworkflow w(input: T) -> T { // brace\n  pipeline {\n    let a = 1 /* after */\n    let b = 2\n    // own\n    return a\n  }\n}\n// tail\n"},
		{"a block comment before a token on its line, the next token on a later one",
			"workflow w(input: T) -> T { pipeline { return agent(y) { expect /* c */T\ntimeout 5s } } }",
			"workflow w(input: T) -> T {\n  pipeline {\n    return agent(y) {\n      expect /* c */ T\n      timeout 5s\n    }\n  }\n}\n"},
		{"a comment inside an empty block",
			"workflow w(input: T) -> T { pipeline { /* later */ } }",
			"workflow w(input: T) -> T {\n  pipeline { /* later */\n  }\n}\n"},
		{"a comment on its own line inside an empty block",
			"workflow w(input: T) -> T { pipeline {\n// later\n} }",
			"workflow w(input: T) -> T {\n  pipeline {\n    // later\n  }\n}\n"},
	} {
		t.Run(c.name, func(t *testing.T) {
			out, diags := Format([]byte(c.src))
			if len(diags) > 0 {
				t.Fatal(diags)
			}
			if d := cmp.Diff(c.want, string(out)); d != "" {
				t.Errorf("Format(%q) differs (-want +got):\n%s", c.src, d)
			}
			sameProgram(t, []byte(c.src), out)
		})
	}
}

// TestFormatRefusesErrors: a file with a syntax or lex error is not
// formatted; its diagnostics are returned.
func TestFormatRefusesErrors(t *testing.T) {
	t.Parallel()
	for _, src := range []string{"", "workflow w(input: T) -> T { pipeline { let = 1 } }", "workflow w(input: T) -> T { } #"} {
		out, diags := Format([]byte(src))
		if out != nil || !HasErrors(diags) {
			t.Errorf("Format(%q) = %q, %v; want no output and the errors", src, out, diags)
		}
	}
}
