package agentflow

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// seed adds the corpus and the golden files to f.
func seed(f *testing.F) {
	for _, pat := range []string{"testdata/*.af", "testdata/*.golden", "testdata/checked/*.af"} {
		names, _ := filepath.Glob(pat)
		for _, n := range names {
			b, err := os.ReadFile(n)
			if err != nil {
				f.Fatal(err)
			}
			f.Add(b)
		}
	}
	for _, s := range []string{"", "\"", `"""`, "/*", "workflow", "workflow w(input: T) -> T { pipeline { let a = ((((( } }", "5sx 1.5 1..2 [*] ?? -> é \xff"} {
		f.Add([]byte(s))
	}
	for _, tc := range codeCases {
		f.Add([]byte(strings.NewReplacer("⟨", "", "⟩", "").Replace(tc.src)))
	}
}

// inFile: every diagnostic lies inside src, with a message and a code of
// the front end.
func inFile(t *testing.T, src []byte, diags []Diagnostic) {
	t.Helper()
	within(t, src, diags)
	for _, d := range diags {
		if d.Code != CodeLex && d.Code != CodeSyntax {
			t.Fatalf("diagnostic %+v: want code lex or syntax", d)
		}
	}
}

// within: every diagnostic lies inside src, at its line and column, with
// a message, a code of the catalogue and its severity.
func within(t *testing.T, src []byte, diags []Diagnostic) {
	t.Helper()
	for _, d := range diags {
		if d.Pos.Offset < 0 || d.End.Offset > len(src) || d.Pos.Offset > d.End.Offset || d.Pos.Line < 1 || d.Pos.Column < 1 {
			t.Fatalf("diagnostic %v [%d,%d) outside the file of %d bytes", d, d.Pos.Offset, d.End.Offset, len(src))
		}
		if lc := lineCol(src, d.Pos.Offset); lc != d.Pos {
			t.Fatalf("diagnostic %v: offset %d is %v", d, d.Pos.Offset, lc)
		}
		if lc := lineCol(src, d.End.Offset); lc != d.End {
			t.Fatalf("diagnostic %v: end offset %d is %v, not %v", d, d.End.Offset, lc, d.End)
		}
		if d.Message == "" || !slices.Contains(Codes, d.Code) || d.Severity != SeverityOf(d.Code) {
			t.Fatalf("diagnostic %+v: want a message, a code of the catalogue and its severity", d)
		}
	}
}

// FuzzLex: the lexer ends, covers the file with its tokens in order, and
// positions every diagnostic inside it.
func FuzzLex(f *testing.F) {
	seed(f)
	f.Fuzz(func(t *testing.T, src []byte) {
		toks, diags := Lex(src)
		inFile(t, src, diags)
		if len(toks) == 0 || toks[len(toks)-1].Kind != KindEOF {
			t.Fatal("no EOF token at the end")
		}
		off := 0
		for _, tk := range toks {
			if tk.Pos.Offset < off || tk.End.Offset < tk.Pos.Offset || tk.End.Offset > len(src) {
				t.Fatalf("token %+v out of order (after offset %d)", tk, off)
			}
			if tk.Kind != KindEOF && (tk.End.Offset == tk.Pos.Offset || string(src[tk.Pos.Offset:tk.End.Offset]) != tk.Text) {
				t.Fatalf("token %+v is not the source's %q", tk, src[tk.Pos.Offset:tk.End.Offset])
			}
			off = tk.End.Offset
		}
	})
}

// FuzzParse: the parser ends quickly, without panicking, positions every
// diagnostic inside the file, and a clean parse has well-nested spans.
func FuzzParse(f *testing.F) {
	seed(f)
	f.Fuzz(func(t *testing.T, src []byte) {
		start := time.Now()
		file, diags := Parse(src)
		if d := time.Since(start); d > 5*time.Second {
			t.Fatalf("Parse took %s", d)
		}
		inFile(t, src, diags)
		if len(diags) == 0 {
			checkSpans(t, src, file)
		}
	})
}

// FuzzFormat: whatever parses formats, to a program that parses to the
// same tree, keeps its comments and formats to itself.
func FuzzFormat(f *testing.F) {
	seed(f)
	f.Fuzz(func(t *testing.T, src []byte) {
		out, diags := Format(src)
		inFile(t, src, diags)
		if _, pd := Parse(src); HasErrors(pd) {
			if out != nil {
				t.Fatal("Format formatted a file with errors")
			}
			return
		}
		if HasErrors(diags) {
			t.Fatalf("Format of a clean file: %v", diags)
		}
		sameProgram(t, src, out)
	})
}

// FuzzCheck: the checker ends quickly, without panicking, on whatever tree
// Parse gives (a partial one too), and positions every diagnostic inside
// the file, over its node.
func FuzzCheck(f *testing.F) {
	seed(f)
	f.Fuzz(func(t *testing.T, src []byte) {
		file, _ := Parse(src)
		start := time.Now()
		diags := CheckFile(file)
		if d := time.Since(start); d > 5*time.Second {
			t.Fatalf("CheckFile took %s", d)
		}
		within(t, src, diags)
		for i := 1; i < len(diags); i++ {
			if diags[i].Pos.Offset < diags[i-1].Pos.Offset {
				t.Fatalf("diagnostics out of order: %v before %v", diags[i-1], diags[i])
			}
		}
	})
}
