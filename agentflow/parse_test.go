package agentflow

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

// corpus is every clean program in testdata.
func corpus(t testing.TB) map[string][]byte {
	t.Helper()
	names, err := filepath.Glob("testdata/*.af")
	if err != nil || len(names) == 0 {
		t.Fatalf("no corpus in testdata: %v", err)
	}
	m := map[string][]byte{}
	for _, n := range names {
		b, err := os.ReadFile(n)
		if err != nil {
			t.Fatal(err)
		}
		m[strings.TrimSuffix(filepath.Base(n), ".af")] = b
	}
	return m
}

// golden compares got with testdata/name, or writes it with -update.
func golden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to write it)", err)
	}
	if d := cmp.Diff(string(want), got); d != "" {
		t.Errorf("%s differs (-want +got):\n%s", path, d)
	}
}

// TestCorpus: every program of the corpus parses without a diagnostic to
// the tree its .ast golden holds, positions included.
func TestCorpus(t *testing.T) {
	for name, src := range corpus(t) {
		t.Run(name, func(t *testing.T) {
			f, diags := Parse(src)
			if len(diags) > 0 {
				t.Fatalf("Parse(%s.af) = %v, want no diagnostics", name, diags)
			}
			checkSpans(t, src, f)
			golden(t, name+".ast", dump(f, true))
		})
	}
}

// checkSpans: every node lies inside its parent and after its previous
// sibling, inside the file, and its text starts and ends where a token
// does.
func checkSpans(t testing.TB, src []byte, f *File) {
	t.Helper()
	var walk func(n Node, lo, hi int)
	walk = func(n Node, lo, hi int) {
		from, to := n.Pos().Offset, n.End().Offset
		if from < lo || to > hi || from > to {
			t.Fatalf("%T at [%d,%d) is outside [%d,%d)", n, from, to, lo, hi)
		}
		if lc := lineCol(src, from); lc != n.Pos() {
			t.Fatalf("%T starts at %+v, but offset %d is %+v", n, n.Pos(), from, lc)
		}
		if lc := lineCol(src, to); lc != n.End() {
			t.Fatalf("%T ends at %+v, but offset %d is %+v", n, n.End(), to, lc)
		}
		prev := from
		for _, c := range children(n) {
			walk(c, prev, to)
			prev = c.End().Offset
		}
	}
	walk(f, 0, len(src))
}

// lineCol is where offset is in src, counted afresh.
func lineCol(src []byte, offset int) Position {
	p := Position{Offset: offset, Line: 1, Column: 1}
	for _, c := range src[:offset] {
		if c == '\n' {
			p.Line++
			p.Column = 1
		} else {
			p.Column++
		}
	}
	return p
}

func TestPositions(t *testing.T) {
	t.Parallel()
	src := "workflow w(input: T) -> T {\n  pipeline {\n    let answer = agent(a) { task \"x\" expect T }\n    return answer.text ?? \"\"\n  }\n}\n"
	f, diags := Parse([]byte(src))
	if len(diags) > 0 {
		t.Fatal(diags)
	}
	pl := f.Workflows[0].Members[0].(*Pipeline)
	let := pl.Body[0].(*Let)
	ret := pl.Body[1].(*Return)
	co := ret.Value.(*BinaryExpr)
	for _, c := range []struct {
		what     string
		n        Node
		from, to string
	}{
		{"the file", f, "1:1", "7:1"},
		{"the workflow", f.Workflows[0], "1:1", "6:2"},
		{"the pipeline", pl, "2:3", "5:4"},
		{"let", let, "3:5", "3:48"},
		{"let's name", let.Name, "3:9", "3:15"},
		{"the agent call", let.Value, "3:18", "3:48"},
		{"task", let.Value.(*AgentExpr).Options[0], "3:29", "3:37"},
		{"return", ret, "4:5", "4:29"},
		{"??", co, "4:12", "4:29"},
		{"answer.text", co.X, "4:12", "4:23"},
		{".text's name", co.X.(*MemberExpr).Name, "4:19", "4:23"},
	} {
		if got := c.n.Pos().String() + "-" + c.n.End().String(); got != c.from+"-"+c.to {
			t.Errorf("%s spans %s, want %s-%s", c.what, got, c.from, c.to)
		}
	}
	if co.OpPos.String() != "4:24" || co.OpPos.Offset != strings.Index(src, "??") {
		t.Errorf("?? is at %+v, want 4:24 at offset %d", co.OpPos, strings.Index(src, "??"))
	}
}

// wrap puts statements into a pipeline of a workflow, from line 3.
func wrap(stmts string) string {
	return "workflow w(input: T) -> T {\n  pipeline {\n" + stmts + "\n  }\n}\n"
}

// TestSyntax: what the grammar accepts and refuses, one form at a time,
// with the error's message and position (line:col in the wrapped file).
func TestSyntax(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name, stmts string
		want        string // "" accepts; else "line:col: message"
	}{
		{"not binds over a comparison", "let a = not x == y", ""},
		{"comparisons do not chain", "let a = x == y == z", `3:16: expected "stage", "let", "require", "emit", "return", "if" or "}", found "=="`},
		{"not is not a comparison operand", "let a = x == not y", `3:14: expected an expression, found "not"`},
		{"a range outside in", "let a = 1..2", `3:10: expected "stage", "let", "require", "emit", "return", "if" or "}", found ".."`},
		{"in needs a range", "let a = x in y", `4:3: expected "..", found "}"`},
		{"no negative literal", "let a = -1", `3:9: unexpected character '-'`},
		{"no index", "let a = xs[0]", `3:11: expected "stage", "let", "require", "emit", "return", "if" or "}", found "["`},
		{"array: commas required", "let a = [1 2]", `3:12: expected "]" or ",", found number 2`},
		{"array: no trailing comma", "let a = [1, 2,]", `3:15: expected an expression, found "]"`},
		{"call: no trailing comma", "let a = f(1,)", `3:13: expected an expression, found ")"`},
		{"object: trailing comma", "let a = { a: 1, }", ""},
		{"object: commas required", "let a = { a: 1 b: 2 }", `3:16: expected "}" or ",", found identifier "b"`},
		{"object: keyword field names", "let a = { type: 1, let: 2, null: 3, after }", ""},
		{"member: keyword names", "let a = x.type.after.null", ""},
		{"bare projection parses", "let a = xs[*]", ""},
		{"reserved let name", "let task = 1", `3:5: expected a name, found "task": a keyword of the language`},
		{"after is reserved", "let after = 1", `3:5: expected a name, found "after": a keyword of the language`},
		{"contextual let names", "let input = 1\nlet context = 2\nlet duration = 3\nlet member = 4", ""},
		{"while is no statement", "while x {}", `3:1: expected "stage", "let", "require", "emit", "return", "if" or "}", found identifier "while"`},
		{"stage dependencies: no trailing comma", "stage s after a, -> T {}", `3:18: expected a name, found "->"`},
		{"stage name is an ID", "stage input -> T {}", `3:7: expected a name, found "input": a keyword of the language`},
		{"stage inside if", "if x { stage s -> T {} }", `3:8: expected "let", "require", "emit", "return", "if" or "}", found "stage"`},
		{"if needs a statement", "if x { }", `3:8: expected a statement, found "}"`},
		{"else needs a statement", "if x { return 1 } else {}", `3:25: expected a statement, found "}"`},
		{"no else if", "if x { return 1 } else if y { return 2 }", `3:24: expected "{", found "if"`},
		{"require's message is a string", `require x else fail """m"""`, `3:21: expected a string ("..."), found multiline string`},
		{"emit needs progress", "emit { a: 1 }", `3:6: expected "progress", found "{"`},
		{"emit needs an object", "emit progress [1]", `3:15: expected "{", found "["`},
		{"tools: commas required", `let a = agent(x) { tools [a b] }`, `3:29: expected "]" or ",", found identifier "b"`},
		{"tools: trailing comma", `let a = agent(x) { tools [a, b,] }`, ""},
		{"tools: at least one", `let a = agent(x) { tools [] }`, `3:27: expected a name, found "]"`},
		{"tools: names are IDs", `let a = agent(x) { tools [input] }`, `3:27: expected a name, found "input": a keyword of the language`},
		{"agent options: no commas", `let a = agent(x) { task "t", expect T }`, `3:28: expected "task", "input", "tools", "write", "expect", "timeout", "retry" or "}", found ","`},
		{"timeout wants a duration", `let a = agent(x) { timeout 5 }`, `3:28: expected a duration (500ms, 5s, 10m, 2h), found number 5`},
		{"retry: on after a comma", `let a = agent(x) { retry { attempts: 1 on: [timeout] } }`, `3:40: expected "}" or ",", found "on"`},
		{"retry: codes", `let a = agent(x) { retry { attempts: 1, on: [timeout, rate_limit, transient,], } }`, ""},
		{"retry: unknown code", `let a = agent(x) { retry { attempts: 1, on: [later] } }`, `3:46: expected "timeout", "rate_limit" or "transient", found identifier "later"`},
		{"parallel: commas required", "let a = parallel { x = 1 y = 2 }", `3:26: expected "}" or ",", found identifier "y"`},
		{"parallel: at least one branch", "let a = parallel { }", `3:20: expected a name, found "}"`},
		{"verify: checks without commas", "let a = verify { check x = 1, check y = 2 pass when x }", `3:29: expected "check", "parallel" or "pass", found ","`},
		{"verify: at least one check", "let a = verify { pass when true }", `3:18: expected "check" or "parallel", found "pass"`},
		{"verify: a group without commas", "let a = verify { parallel { check x = 1, check y = 2 } pass when x }", `3:40: expected "check", found ","`},
		{"parallel map limit is a number", "let a = parallel map xs as x limit n { x }", `3:36: expected a number, found identifier "n"`},
		{"parallel map body is one expression", "let a = parallel map xs as x { x, y }", `3:33: expected "}", found ","`},
		{"a string ends on its line", "let a = \"one\ntwo\"", "3:9: unterminated string: a \"...\" string ends with \" on its own line"},
		{"a stray character", "let a = 1 # note", `3:11: unexpected character '#'`},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, diags := Parse([]byte(wrap(c.stmts)))
			var got []string
			for _, d := range diags {
				got = append(got, d.Pos.String()+": "+d.Message)
			}
			switch {
			case c.want == "" && len(got) > 0:
				t.Errorf("Parse(%q) = %q, want no diagnostics", c.stmts, got)
			case c.want != "" && (len(got) == 0 || got[0] != c.want):
				t.Errorf("Parse(%q) = %q, want first %q", c.stmts, got, c.want)
			}
		})
	}
}

// TestDeclarations: the grammar of the workflow and its members.
func TestDeclarations(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ name, src, want string }{
		{"empty file", "", `1:1: expected "workflow", found end of file`},
		{"comments only", "// nothing\n/* here */\n", `3:1: expected "workflow", found end of file`},
		{"workflow name is an ID", "workflow input(input: T) -> T {}", `1:10: expected a name, found "input": a keyword of the language`},
		{"any parameter name", "workflow w(request: T) -> T {}", ""},
		{"the second parameter is context", "workflow w(input: T, ctx: T) -> T {}", `1:22: expected "context", found identifier "ctx"`},
		{"no trailing comma in parameters", "workflow w(input: T,) -> T {}", `1:21: expected "context", found ")"`},
		{"output type", "workflow w(input: T) {}", `1:22: expected "->", found "{"`},
		{"use wants agent or team", `workflow w(input: T) -> T { use tool "x" as y }`, `1:33: expected "agent" or "team", found identifier "tool"`},
		{"use wants a one-line string", `workflow w(input: T) -> T { use agent """x""" as y }`, `1:39: expected a string ("..."), found multiline string`},
		{"limits: one field at least", "workflow w(input: T) -> T { limits {} }", `1:37: expected "concurrency", "agent_runs" or "duration", found "}"`},
		{"limits: known fields", "workflow w(input: T) -> T { limits { retries: 1 } }", `1:38: expected "concurrency", "agent_runs" or "duration", found identifier "retries"`},
		{"limits: a number or a duration", `workflow w(input: T) -> T { limits { duration: "1h" } }`, `1:48: expected a number or a duration, found string "1h"`},
		{"type: empty", "workflow w(input: T) -> T { type T {} }", ""},
		{"type: field named by a keyword", "workflow w(input: T) -> T { type T { type: text, retry?: bool, null: x } }", ""},
		{"type: bounds are numbers", "workflow w(input: T) -> T { type T { a: x[1..n] } }", `1:46: expected a number, found identifier "n"`},
		{"member type", "workflow w(input: member<squad>[]) -> member[] {}", ""},
		{"nothing else in a workflow", "workflow w(input: T) -> T { let x = 1 }", `1:29: expected "use", "limits", "type", "pipeline" or "}", found "let"`},
		{"two workflows", "workflow a(input: T) -> T {}\nworkflow b(input: T) -> T {}", ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, diags := Parse([]byte(c.src))
			var got []string
			for _, d := range diags {
				got = append(got, d.Pos.String()+": "+d.Message)
			}
			switch {
			case c.want == "" && len(got) > 0:
				t.Errorf("Parse(%q) = %q, want no diagnostics", c.src, got)
			case c.want != "" && (len(got) == 0 || got[0] != c.want):
				t.Errorf("Parse(%q) = %q, want first %q", c.src, got, c.want)
			}
		})
	}
}

// TestRecovery: each mistake is reported once, where it is, and the
// parser goes on to find the next.
func TestRecovery(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name string
		src  string
		want []string
	}{
		{"three errors in three statements", wrap(
			"    let a = { x: 1 y: 2 }\n" +
				"    let b = 1\n" +
				"    require b else \"no fail\"\n" +
				"    let c = agent(x) { task \"t\" expect T timeout 5 }\n" +
				"    return a"), []string{
			`3:20: expected "}" or ",", found identifier "y"`,
			`5:20: expected "fail", found string "no fail"`,
			`6:50: expected a duration (500ms, 5s, 10m, 2h), found number 5`,
		}},
		{"an object left open before a statement", wrap(
			"    emit progress { a: 1\n" +
				"    let x = 2\n" +
				"    let y = ]\n" +
				"    return x"), []string{
			`4:5: expected "}" or ",", found "let"`,
			`5:13: expected an expression, found "]"`,
		}},
		{"a stage left open", "workflow w(input: T) -> T {\n  pipeline {\n    stage a -> T {\n      let x = 1\n    stage b -> T { return = }\n    return b\n  }\n}\n", []string{
			`5:5: expected "let", "require", "emit", "return", "if" or "}", found "stage"`,
			`5:27: expected an expression, found "="`,
		}},
		{"errors in two workflows", "workflow a(input: T) -> T { type { } }\nworkflow b(input T) -> T {}\nworkflow c(input: T) -> T { pipeline { return 1 } }\n", []string{
			`1:34: expected a name, found "{"`,
			`2:18: expected ":", found identifier "T"`,
		}},
		{"a stray character is one error", wrap("    let a = 1 @ 2\n    let b = c d\n    return b"), []string{
			`3:15: unexpected character '@'`,
			`4:15: expected "stage", "let", "require", "emit", "return", "if" or "}", found identifier "d"`,
		}},
		{"an unterminated comment says nothing more", wrap("    let a = 1\n    /* open"), []string{
			`4:5: unterminated comment: /* without */`,
		}},
		{"an unterminated multiline string", wrap("    let a = \"\"\"open\n    return a"), []string{
			`3:13: unterminated multiline string: """ without a closing """`,
		}},
		{"a statement inside an agent block, braces balanced", wrap(
			"    let a = agent(x) { task \"t\" let b = 1 }\n" +
				"    let c = [1,]\n" +
				"    return c"), []string{
			`3:33: expected "task", "input", "tools", "write", "expect", "timeout", "retry" or "}", found "let"`,
			`4:16: expected an expression, found "]"`,
		}},
		{"a stage inside a stage, braces balanced", wrap(
			"    stage a -> T {\n" +
				"      stage b -> T { return 1 }\n" +
				"      return = 2\n" +
				"    }\n" +
				"    return a"), []string{
			`4:7: expected "let", "require", "emit", "return", "if" or "}", found "stage"`,
			`5:14: expected an expression, found "="`,
		}},
		{"a keyword as a field name does not end recovery", wrap("    let a = { x: 1 y: 2, type: 3, let: 4 }\n    let b = ("), []string{
			`3:20: expected "}" or ",", found identifier "y"`,
			`5:3: expected an expression, found "}"`,
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, diags := Parse([]byte(c.src))
			var got []string
			for _, d := range diags {
				got = append(got, d.Pos.String()+": "+d.Message)
				if d.Severity != SeverityError || (d.Code != CodeSyntax && d.Code != CodeLex) {
					t.Errorf("%v: severity %s, code %s; want error, syntax or lex", d, d.Severity, d.Code)
				}
			}
			if d := cmp.Diff(c.want, got); d != "" {
				t.Errorf("Parse:\n%s\ndiagnostics differ (-want +got):\n%s", c.src, d)
			}
		})
	}
}

// TestLimits: nesting past MaxNesting and errors past MaxErrors stop the
// parse with one diagnostic saying so, without exhausting the stack.
func TestLimits(t *testing.T) {
	t.Parallel()
	deep := func(open, close string, n int) string {
		return wrap("    let a = " + strings.Repeat(open, n) + "1" + strings.Repeat(close, n))
	}
	for _, c := range []struct {
		name string
		src  string
		ok   bool
	}{
		{"parentheses at the limit", deep("(", ")", MaxNesting-3), true},
		{"parentheses past it", deep("(", ")", 10_000), false},
		{"arrays past it", deep("[", "]", 10_000), false},
		{"not past it", deep("not ", "", 10_000), false},
		{"a postfix chain past it", wrap("    let a = x" + strings.Repeat(".y", 10_000)), false},
		{"an or chain past it", wrap("    let a = x" + strings.Repeat(" or y", 10_000)), false},
		{"a ?? chain past it", wrap("    let a = x" + strings.Repeat(" ?? y", 10_000)), false},
		{"ifs past it", wrap(strings.Repeat("if x { ", 10_000) + "return 1" + strings.Repeat(" }", 10_000)), false},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, diags := Parse([]byte(c.src))
			if c.ok {
				if len(diags) > 0 {
					t.Fatalf("Parse = %v, want no diagnostics", diags)
				}
				return
			}
			if len(diags) != 1 || !strings.Contains(diags[0].Message, "nested more than 200 levels deep") {
				t.Fatalf("Parse = %v, want one saying nested more than %d levels deep", diags, MaxNesting)
			}
		})
	}
	var many strings.Builder
	for range 100 {
		many.WriteString("    let = 1\n")
	}
	_, diags := Parse([]byte(wrap(many.String())))
	if len(diags) != MaxErrors+1 || !strings.Contains(diags[MaxErrors].Message, "too many errors") {
		t.Errorf("Parse of 100 errors: %d diagnostics, the last %v; want %d and too many errors", len(diags), diags[len(diags)-1], MaxErrors+1)
	}
	toks, diags := Lex([]byte(strings.Repeat("# ", 1000)))
	if len(toks) != 1001 || len(diags) != MaxErrors+1 || !strings.Contains(diags[MaxErrors].Message, "too many errors") {
		t.Errorf("Lex of 1,000 stray characters: %d tokens, %d diagnostics; want 1,001 and %d, the last saying too many errors", len(toks), len(diags), MaxErrors+1)
	}
	big := make([]byte, MaxSourceBytes+1)
	if _, diags := Parse(big); len(diags) != 1 || diags[0].Code != CodeLex || !strings.Contains(diags[0].Message, "larger than") {
		t.Errorf("Parse of %d bytes = %v, want one lex diagnostic saying it is too large", len(big), diags)
	}
}

// children are n's child nodes in source order.
func children(n Node) []Node {
	var out []Node
	add := func(ns ...Node) {
		for _, c := range ns {
			if c != nil && !isNil(c) {
				out = append(out, c)
			}
		}
	}
	switch n := n.(type) {
	case *File:
		for _, w := range n.Workflows {
			add(w)
		}
	case *Workflow:
		add(n.Name, n.Param, n.Context, n.Output)
		for _, m := range n.Members {
			add(m)
		}
	case *Param:
		add(n.Name, n.Type)
	case *TypeRef:
		add(n.Name)
		for _, s := range n.Suffixes {
			add(s)
		}
	case *TypeSuffix:
		add(n.Min, n.Max)
	case *Use:
		add(n.Resource, n.Alias)
	case *Limits:
		for _, f := range n.Fields {
			add(f)
		}
	case *LimitField:
		add(n.Name, n.Value)
	case *TypeDecl:
		add(n.Name)
		for _, f := range n.Fields {
			add(f)
		}
	case *TypeField:
		add(n.Name, n.Type)
	case *Pipeline:
		add(n.Name)
		for _, s := range n.Body {
			add(s)
		}
	case *Stage:
		add(n.Name)
		for _, d := range n.After {
			add(d)
		}
		add(n.Result)
		for _, s := range n.Body {
			add(s)
		}
	case *Let:
		add(n.Name, n.Value)
	case *Require:
		add(n.Cond, n.Message)
	case *Emit:
		add(n.Payload)
	case *Return:
		add(n.Value)
	case *If:
		add(n.Cond)
		for _, s := range n.Then {
			add(s)
		}
		for _, s := range n.Else {
			add(s)
		}
	case *ArrayLit:
		for _, e := range n.Elems {
			add(e)
		}
	case *ObjectLit:
		for _, f := range n.Fields {
			add(f)
		}
	case *ObjectField:
		add(n.Name, n.Value)
	case *ParenExpr:
		add(n.X)
	case *UnaryExpr:
		add(n.X)
	case *BinaryExpr:
		add(n.X, n.Y)
	case *RangeExpr:
		add(n.Lo, n.Hi)
	case *MemberExpr:
		add(n.X, n.Name)
	case *ProjectionExpr:
		add(n.X)
	case *CallExpr:
		add(n.Fun)
		for _, a := range n.Args {
			add(a)
		}
	case *AgentExpr:
		add(n.Target)
		for _, o := range n.Options {
			add(o)
		}
	case *ParallelExpr:
		for _, b := range n.Branches {
			add(b)
		}
	case *Branch:
		add(n.Name, n.Value)
	case *ParallelMapExpr:
		add(n.Source, n.Item, n.Limit, n.Body)
	case *VerifyExpr:
		for _, c := range n.Checks {
			add(c)
		}
		add(n.Cond)
	case *Check:
		add(n.Name, n.Value)
	case *CheckGroup:
		for _, c := range n.Checks {
			add(c)
		}
	case *TaskOption:
		add(n.Task)
	case *InputOption:
		add(n.Payload)
	case *ToolsOption:
		for _, id := range n.Names {
			add(id)
		}
	case *WriteOption:
		add(n.Paths)
	case *ExpectOption:
		add(n.Type)
	case *TimeoutOption:
		add(n.Timeout)
	case *RetryOption:
		add(n.Attempts)
		for _, id := range n.On {
			add(id)
		}
	}
	return out
}

func isNil(n Node) bool {
	switch n := n.(type) {
	case *Ident:
		return n == nil
	case *Param:
		return n == nil
	case *NumberLit:
		return n == nil
	}
	return false
}
