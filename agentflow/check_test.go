package agentflow

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// in wraps statements in a workflow whose pipeline returns its input.
func in(body string) string {
	return "workflow w(input: text) -> text {\n  pipeline {\n    " + body + "\n    return input\n  }\n}\n"
}

// uses is in with an agent alias x and a team alias squad.
func uses(body string) string {
	return "workflow w(input: text) -> text {\n  use agent \"acme/x\" as x\n  use team \"acme/squad\" as squad\n  pipeline {\n    " + body + "\n    return input\n  }\n}\n"
}

// codeCases: for each code of the catalogue a minimal program that gives
// that code alone, where ⟨ and ⟩ mark the span it is reported over.
var codeCases = []struct {
	code string
	src  string
}{
	{CodeSyntax, in("let ⟨=⟩ 1")},
	{CodeLex, in("let a = ⟨#⟩")},
	{CodeDuplicateWorkflow, "workflow w(input: text) -> text { pipeline { return input } }\nworkflow ⟨w⟩(input: text) -> text { pipeline { return input } }"},
	{CodeDuplicateAlias, "workflow w(input: text) -> text { use agent \"a\" as x use team \"b\" as ⟨x⟩ pipeline { return input } }"},
	{CodeDuplicateLimits, "workflow w(input: text) -> text { limits { concurrency: 1 } ⟨limits { agent_runs: 2 }⟩ pipeline { return input } }"},
	{CodeDuplicatePipeline, "workflow w(input: text) -> text { pipeline { return input } ⟨pipeline { return input }⟩ }"},
	{CodeDuplicateType, "workflow w(input: text) -> text { type T { a: text } type ⟨T⟩ { b: text } pipeline { return input } }"},
	{CodeDuplicateTypeField, "workflow w(input: text) -> text { type T { a: text, ⟨a⟩: number } pipeline { return input } }"},
	{CodeRecursiveType, "workflow w(input: text) -> text { type T { a: ⟨U⟩ } type U { b: text, t?: T[] } pipeline { return input } }"},
	{CodeUnknownTeam, "workflow w(input: text) -> text { use agent \"a\" as x type T { m: member<⟨x⟩> } pipeline { return input } }"},
	{CodeInvalidBounds, "workflow w(input: text) -> text { type T { a: text⟨[5..2]⟩ } pipeline { return input } }"},
	{CodeExternalType, "workflow w(input: ⟨In⟩) -> text { pipeline { return \"x\" } }"},
	{CodeUnknownType, "workflow w(input: text) -> text { type T { a: ⟨Nope⟩ } pipeline { return input } }"},
	{CodeDuplicateStage, in("stage s -> text { return input }\n    stage ⟨s⟩ -> text { return input }")},
	{CodeUnknownStage, in("stage s after ⟨nope⟩ -> text { return input }")},
	{CodeDuplicateDependency, in("stage a -> text { return input }\n    stage b after a, ⟨a⟩ -> text { return a }")},
	{CodeForwardDependency, in("stage a after ⟨b⟩ -> text { return input }\n    stage b -> text { return input }")},
	{CodeUndeclaredDependency, in("stage a -> text { return input }\n    stage b -> text { return ⟨a⟩ }")},
	{CodeMissingPipeline, "workflow ⟨w⟩(input: text) -> text { }"},
	{CodeMissingInput, ""}, // no parse gives it: TestCodesOfTrees
	{CodeWorkflowParamName, "workflow w(⟨req⟩: text) -> text { pipeline { return req } }"},
	{CodeMissingReturn, "workflow w(input: text) -> text { ⟨pipeline { let a = 1 }⟩ }"},
	{CodePipelineReturnPosition, in("⟨return input⟩\n    let a = 1")},
	{CodeStageMissingReturn, in("⟨stage s -> text { let a = 1 }⟩")},
	{CodeStageReturnPosition, in("stage s -> text {\n      ⟨return input⟩\n      let a = 1\n      return input\n    }")},
	{CodeStageReturnMismatch, in("stage s -> number { return ⟨input⟩ }")},
	{CodeWorkflowReturnMismatch, "workflow w(input: text) -> text { pipeline { return ⟨1⟩ } }"},
	{CodeDuplicateVariable, in("let a = 1\n    let ⟨a⟩ = 2")},
	{CodeUnknownVariable, in("let a = ⟨b⟩")},
	{CodeHeterogeneousArray, in("let a = [1, 2, ⟨\"x\"⟩]")},
	{CodeRequireNotBool, in("require ⟨1⟩ else fail \"x\"")},
	{CodeIfNotBool, in("if ⟨input⟩ { let a = 1 }")},
	{CodeVerifyPredicateNotBool, in("let v = verify { check a = 1 pass when ⟨a⟩ }")},
	{CodeDangerousMemberAccess, in("let a = input.⟨constructor⟩")},
	{CodeInvalidMemberAccess, in("let a = input.⟨size⟩")},
	{CodeOptionalMemberAccess, "workflow w(input: T) -> text { type T { a?: text[] } pipeline { let n = ⟨input.a.count⟩ return \"x\" } }"},
	{CodeInvalidProjection, in("let a = ⟨input[*]⟩.x")},
	{CodeUnknownBuiltin, in("let a = ⟨foo⟩(1)")},
	{CodeInvalidBuiltinCall, in("let a = unique(⟨1⟩)")},
	{CodeInvalidAgentTarget, uses("let a = agent(⟨input⟩) { task \"t\" expect text }")},
	{CodeInvalidMemberArgument, uses("let a = agent(squad.member(⟨input⟩)) { task \"t\" expect text }")},
	{CodeAgentMissingTask, uses("let a = ⟨agent(x) { expect text }⟩")},
	{CodeAgentMissingExpect, uses("let a = ⟨agent(x) { task \"t\" }⟩")},
	{CodeDuplicateAgentOption, uses("let a = agent(x) { task \"t\" ⟨task \"u\"⟩ expect text }")},
	{CodeDuplicateTool, uses("let a = agent(x) { task \"t\" tools [a, b, ⟨a⟩] expect text }")},
	{CodeExpectInvalidType, uses("let a = agent(x) { task \"t\" expect ⟨Verification⟩ }")},
	{CodeWriteNotPathArray, uses("let a = agent(x) { task \"t\" expect text write ⟨[1]⟩ }")},
	{CodeInvalidTimeout, uses("let a = agent(x) { task \"t\" expect text timeout ⟨0s⟩ }")},
	{CodeInvalidRetry, uses("let a = agent(x) { task \"t\" expect text retry { attempts: ⟨1.5⟩ } }")},
	{CodeInvalidLimit, in("let a = parallel map [1] as i limit ⟨0⟩ { i }")},
	{CodeInvalidLimits, "workflow w(input: text) -> text { limits { concurrency: ⟨0⟩ } pipeline { return input } }"},
	{CodeInvalidEmit, ""}, // no parse gives it: TestCodesOfTrees
	{CodeDuplicateBranch, in("let p = parallel { a = 1, ⟨a⟩ = 2 }")},
	{CodeDuplicateCheck, in("let v = verify { check a = true check ⟨a⟩ = true pass when a }")},
	{CodeDuplicateObjectField, in("let o = { a: 1, ⟨a⟩: 2 }")},
	{CodeOperatorType, in("let a = not ⟨1⟩")},
	{CodeParallelMapSourceArray, in("let a = parallel map ⟨input⟩ as i { i }")},
}

// marked is src without its markers, and the offsets of ⟨ and ⟩.
func marked(t *testing.T, src string) ([]byte, int, int) {
	t.Helper()
	from := strings.Index(src, "⟨")
	src = strings.Replace(src, "⟨", "", 1)
	to := strings.Index(src, "⟩")
	src = strings.Replace(src, "⟩", "", 1)
	if from < 0 || to < from {
		t.Fatalf("no ⟨span⟩ in %q", src)
	}
	return []byte(src), from, to
}

// diagnose is Parse's diagnostics, and CheckFile's when it parses.
func diagnose(src []byte) []Diagnostic {
	f, diags := Parse(src)
	if HasErrors(diags) {
		return diags
	}
	return append(diags, CheckFile(f)...)
}

// TestCodes: each program gives its code alone, over the marked span,
// with the catalogue's severity.
func TestCodes(t *testing.T) {
	t.Parallel()
	for _, tc := range codeCases {
		if tc.src == "" {
			continue
		}
		t.Run(tc.code, func(t *testing.T) {
			t.Parallel()
			src, from, to := marked(t, tc.src)
			diags := diagnose(src)
			if len(diags) != 1 || diags[0].Code != tc.code {
				t.Fatalf("diagnostics of\n%s\n= %v, want %s alone", src, diags, tc.code)
			}
			d := diags[0]
			if d.Pos.Offset != from || d.End.Offset != to {
				t.Errorf("%s over [%d,%d) %q, want [%d,%d) %q", d, d.Pos.Offset, d.End.Offset, src[d.Pos.Offset:d.End.Offset], from, to, src[from:to])
			}
			if d.Pos != lineCol(src, from) {
				t.Errorf("%s at %v, want %v", d, d.Pos, lineCol(src, from))
			}
			if want := SeverityOf(tc.code); d.Severity != want {
				t.Errorf("%s: severity %s, want %s", d, d.Severity, want)
			}
		})
	}
}

// TestCodesOfTrees: the codes a tree built by hand gives, not a parsed
// one: a workflow without its input parameter, emit without its payload.
func TestCodesOfTrees(t *testing.T) {
	t.Parallel()
	f, diags := Parse([]byte(in("emit progress { a: 1 }")))
	if len(diags) > 0 {
		t.Fatal(diags)
	}
	w := f.Workflows[0]
	emit := w.Members[0].(*Pipeline).Body[0].(*Emit)
	emit.Payload = nil
	w.Param = nil
	got := CheckFile(f)
	want := []Diagnostic{
		{Pos: w.Pos(), End: w.End(), Severity: SeverityError, Code: CodeMissingInput},
		{Pos: emit.Pos(), End: emit.End(), Severity: SeverityError, Code: CodeInvalidEmit},
	}
	if len(got) != 2 {
		t.Fatalf("CheckFile = %v, want %s then %s", got, CodeMissingInput, CodeInvalidEmit)
	}
	// The return of input reads a name no parameter declares now: the
	// missing parameter's one error is all.
	for i := range want {
		got[i].Message = ""
		if got[i] != want[i] {
			t.Errorf("CheckFile[%d] = %+v, want %+v", i, got[i], want[i])
		}
	}
}

// TestEveryCodeTested: every code of the catalogue has its case, and
// every case names a code of the catalogue.
func TestEveryCodeTested(t *testing.T) {
	t.Parallel()
	tested := map[string]bool{}
	for _, tc := range codeCases {
		if !slices.Contains(Codes, tc.code) {
			t.Errorf("case for %s, not a code of the catalogue", tc.code)
		}
		tested[tc.code] = true
	}
	for _, code := range Codes {
		if !tested[code] {
			t.Errorf("code %s has no test", code)
		}
	}
	if len(Codes) != 57 {
		t.Errorf("the catalogue has %d codes, want 57", len(Codes))
	}
}

// TestCheckedClean: the programs of testdata/checked, the benchmark's
// program, and the Example's parse and check without a diagnostic but the
// external types they name.
func TestCheckedClean(t *testing.T) {
	t.Parallel()
	names, err := filepath.Glob("testdata/checked/*.af")
	if err != nil || len(names) < 3 {
		t.Fatalf("testdata/checked: %v, %v", names, err)
	}
	progs := map[string][]byte{"program(2000)": program(2000)}
	for _, n := range names {
		b, err := os.ReadFile(n)
		if err != nil {
			t.Fatal(err)
		}
		progs[n] = b
	}
	for name, src := range progs {
		for _, d := range diagnose(src) {
			if d.Code != CodeExternalType {
				t.Errorf("%s:%s", name, d)
			}
		}
	}
}

// TestNoCascade: a mistake is reported once, not again by each
// expression its unknown type reaches.
func TestNoCascade(t *testing.T) {
	t.Parallel()
	for _, body := range []string{
		"let a = nope.b.c[*].d ?? 1\n    let b = not a\n    require a and b else fail \"x\"\n    let c = [a, 1, \"x\"]",
		"let a = agent(nope) { task \"t\" expect Nope }\n    let b = a.field.deeper\n    let c = parallel map a as i { i.x }",
		"let a = input.size\n    let b = a in 1..2\n    if a { let c = a == 1 }",
		"let v = verify { check a = nope pass when a }\n    let b = v.checks.a.x",
	} {
		src := []byte(in(body))
		if diags := diagnose(src); len(diags) != 1 && !(len(diags) == 2 && diags[1].Code == CodeUnknownType) {
			t.Errorf("diagnostics of\n%s\n= %v, want one", src, diags)
		}
	}
}

// TestRules: what the type rules accept and refuse, each program with
// the codes it gives (in order).
func TestRules(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name  string
		src   string
		codes []string
	}{
		{"a record fits a declared type", "workflow w(input: text) -> Out { type Out { a: text, b?: number } pipeline { return { a: input } } }", nil},
		{"a missing required field", "workflow w(input: text) -> Out { type Out { a: text, b: number } pipeline { return { a: input } } }", []string{CodeWorkflowReturnMismatch}},
		{"an extra field", "workflow w(input: text) -> Out { type Out { a: text } pipeline { return { a: input, z: 1 } } }", []string{CodeWorkflowReturnMismatch}},
		{"declared types are nominal", "workflow w(input: A) -> B { type A { a: text } type B { a: text } pipeline { return input } }", []string{CodeWorkflowReturnMismatch}},
		{"null fills an optional field", "workflow w(input: text) -> Out { type Out { b?: number } pipeline { return { b: null } } }", nil},
		{"null does not fill a required one", "workflow w(input: text) -> Out { type Out { b: number } pipeline { return { b: null } } }", []string{CodeWorkflowReturnMismatch}},
		{"an optional read needs ??", "workflow w(input: In) -> bool { type In { a?: bool } pipeline { return input.a } }", []string{CodeWorkflowReturnMismatch}},
		{"?? resolves it", "workflow w(input: In) -> bool { type In { a?: bool } pipeline { return input.a ?? false } }", nil},
		{"?? with an incompatible fallback", "workflow w(input: In) -> bool { type In { a?: bool } pipeline { return input.a ?? 1 } }", []string{CodeOperatorType}},
		{"projection", "workflow w(input: In) -> text[] { type In { xs: X[] } type X { name: text } pipeline { return input.xs[*].name } }", nil},
		{"array members", "workflow w(input: text[]) -> bool { pipeline { return input.count > 0 and not input.empty and input.any } }", nil},
		{"in over durations", "workflow w(input: text) -> bool { pipeline { return 5s in 1s..10m } }", nil},
		{"in mixing kinds", "workflow w(input: text) -> bool { pipeline { return 5 in 1s..10m } }", []string{CodeOperatorType}},
		{"comparing kinds", "workflow w(input: text) -> bool { pipeline { return input == 1 } }", []string{CodeOperatorType}},
		{"context is any", "workflow w(input: text, context: any) -> text { pipeline { return context.a.b.c } }", nil},
		{"no context", "workflow w(input: text) -> text { pipeline { return context } }", []string{CodeUnknownVariable}},
		{"union's type", "workflow w(input: text) -> text[] { pipeline { return union([[input], []]) } }", nil},
		{"disjoint wants arrays of arrays", "workflow w(input: text) -> bool { pipeline { return disjoint([input]) } }", []string{CodeInvalidBuiltinCall}},
		{"a stage reads no pipeline let", "workflow w(input: text) -> text { pipeline { let a = 1 stage s -> number { return a } return input } }", []string{CodeUnknownVariable}},
		{"a stage reads its dependency", "workflow w(input: text) -> number { pipeline { stage a -> number { return 1 } stage b after a -> number { return a } return b } }", nil},
		{"a later stage is not yet a result", "workflow w(input: text) -> number { pipeline { let x = s stage s -> number { return 1 } return s } }", []string{CodeUnknownVariable}},
		{"team.member outside agent()", "workflow w(input: member<t>) -> text { use team \"t\" as t pipeline { let a = t.member(input) return \"x\" } }", []string{CodeInvalidAgentTarget}},
		{"team.member of another team's id", "workflow w(input: member<t>) -> text { use team \"t\" as t use team \"u\" as u pipeline { let a = agent(u.member(input)) { task \"x\" expect text } return a } }", []string{CodeInvalidMemberArgument}},
		{"an agent alias has no members", "workflow w(input: text) -> text { use agent \"a\" as a pipeline { return a.main } }", []string{CodeInvalidMemberAccess}},
		{"expect an external type", "workflow w(input: In) -> text { use agent \"a\" as a pipeline { let x = agent(a) { task \"t\" expect In } return \"x\" } }", []string{CodeExternalType, CodeExpectInvalidType}},
		{"expect a type holding a Verification", "workflow w(input: text) -> text { use agent \"a\" as a type T { v: Verification } pipeline { let x = agent(a) { task \"t\" expect T[] } return \"x\" } }", []string{CodeExpectInvalidType}},
		{"a stage type unknown inside", "workflow w(input: text) -> text { pipeline { stage s -> Nope { return 1 } return input } }", []string{CodeUnknownType}},
		{"dangerous even on any", "workflow w(input: text, context: any) -> text { pipeline { return context.__proto__ } }", []string{CodeDangerousMemberAccess}},
		{"dangerous in a projection", "workflow w(input: text[]) -> text { pipeline { let a = input[*].toString return \"x\" } }", []string{CodeDangerousMemberAccess}},
		{"a bare projection", "workflow w(input: text[]) -> text { pipeline { let a = input[*] return \"x\" } }", []string{CodeInvalidProjection}},
		{"a return in an if block", "workflow w(input: bool) -> number { pipeline { if input { return 1 } return 2 } }", nil},
		{"a return mid if block", "workflow w(input: bool) -> number { pipeline { if input { return 1 let a = 2 } return 2 } }", []string{CodePipelineReturnPosition}},
		{"an if ends no pipeline", "workflow w(input: bool) -> number { pipeline { if input { return 1 } else { return 2 } } }", []string{CodeMissingReturn}},
		{"if blocks scope their lets", "workflow w(input: bool) -> number { pipeline { if input { let a = 1 } else { let a = 2 } let a = 3 return a } }", nil},
		{"a map's item shadows", "workflow w(input: number[]) -> number[] { pipeline { let i = 1 return parallel map input as i { i } } }", nil},
		{"a map over text[] gives number[]", "workflow w(input: text[]) -> text[] { pipeline { return parallel map input as i { 1 } } }", []string{CodeWorkflowReturnMismatch}},
		{"pass when sees checks", "workflow w(input: text) -> bool { pipeline { let v = verify { check a = true parallel { check b = false } pass when a and not b } return v.passed and v.checks.b } }", nil},
		{"checks do not see each other", "workflow w(input: text) -> bool { pipeline { let v = verify { check a = true check b = a pass when b } return v.failed } }", []string{CodeUnknownVariable}},
		{"retry codes once", "workflow w(input: text) -> text { use agent \"a\" as a pipeline { return agent(a) { task \"t\" expect text retry { attempts: 1, on: [timeout, timeout] } } } }", []string{CodeInvalidRetry}},
		{"limits kinds", "workflow w(input: text) -> text { limits { concurrency: 1s, duration: 5, agent_runs: 1.5 } pipeline { return input } }", []string{CodeInvalidLimits, CodeInvalidLimits, CodeInvalidLimits}},
		{"a limit set twice", "workflow w(input: text) -> text { limits { concurrency: 1, concurrency: 2 } pipeline { return input } }", []string{CodeInvalidLimits}},
		{"bounds that are not whole", "workflow w(input: text[1.5..2]) -> text { pipeline { return \"x\" } }", []string{CodeInvalidBounds}},
		{"a stage after itself", "workflow w(input: text) -> text { pipeline { stage s after s -> text { return input } return s } }", []string{CodeForwardDependency}},
		{"a stage named as a let", "workflow w(input: text) -> text { pipeline { let s = 1 stage s -> text { return input } return input } }", []string{CodeDuplicateVariable}},
		{"an external type once", "workflow w(input: In, context: In) -> In { pipeline { return input } }", []string{CodeExternalType}},
		{"a self-recursive type", "workflow w(input: text) -> text { type T { t?: T } pipeline { return input } }", []string{CodeRecursiveType}},
		{"shorthand of an unknown name", "workflow w(input: text) -> text { pipeline { emit progress { input, nope } return input } }", []string{CodeUnknownVariable}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var got []string
			for _, d := range diagnose([]byte(tc.src)) {
				got = append(got, d.Code)
			}
			if !slices.Equal(got, tc.codes) {
				t.Errorf("codes of %s = %v, want %v", tc.src, got, tc.codes)
			}
		})
	}
}

// TestSeverityOf: the catalogue's one info code, errors otherwise.
func TestSeverityOf(t *testing.T) {
	t.Parallel()
	for _, code := range Codes {
		want := SeverityError
		if code == CodeExternalType {
			want = SeverityInfo
		}
		if got := SeverityOf(code); got != want {
			t.Errorf("SeverityOf(%s) = %s, want %s", code, got, want)
		}
	}
}

// TestCheckPartialTrees: CheckFile reads trees with pieces missing, as a
// caller building one may leave them, without panicking, and reports what
// is wrong with what is there.
func TestCheckPartialTrees(t *testing.T) {
	t.Parallel()
	files := []*File{
		nil,
		{},
		{Workflows: []*Workflow{nil, {}}},
		{Workflows: []*Workflow{{Name: &Ident{Name: "w"}, Members: []Member{nil, &Pipeline{Body: []Stmt{
			nil,
			&Let{Name: &Ident{Name: "a"}},
			&Let{Name: &Ident{Name: "b"}, Value: &CallExpr{}},
			&Let{Name: &Ident{Name: "c"}, Value: &MemberExpr{Name: &Ident{Name: "x"}}},
			&Let{Name: &Ident{Name: "d"}, Value: &AgentExpr{Options: []AgentOption{nil, &ExpectOption{}, &WriteOption{}, &RetryOption{}}}},
			&Let{Name: &Ident{Name: "e"}, Value: &BinaryExpr{Op: "in"}},
			&Let{Name: &Ident{Name: "f"}, Value: &ParallelMapExpr{}},
			&Let{Name: &Ident{Name: "g"}, Value: &VerifyExpr{Checks: []VerifyCheck{nil, &Check{}, &CheckGroup{Checks: []*Check{nil}}}}},
			&Stage{Name: &Ident{Name: "s"}, After: []*Ident{nil}},
			&If{}, &Require{}, &Return{},
		}}}}}},
	}
	var got []string
	for _, f := range files {
		for _, d := range CheckFile(f) {
			got = append(got, d.Code)
		}
	}
	// What is there is checked; what is missing is not reported again
	// by what reads it.
	want := []string{CodeMissingInput, CodeMissingInput, CodeUnknownBuiltin, CodeAgentMissingTask, CodeStageMissingReturn}
	if !slices.Equal(got, want) {
		t.Errorf("codes of the partial trees = %v, want %v", got, want)
	}
}

// TestCheckGolden: the checker's diagnostics of each program of the parse
// corpus (written for the grammar, so most name what they never declare)
// are testdata/NAME.check, rewritten by -update.
func TestCheckGolden(t *testing.T) {
	t.Parallel()
	names, err := filepath.Glob("testdata/*.af")
	if err != nil || len(names) == 0 {
		t.Fatalf("testdata: %v, %v", names, err)
	}
	for _, n := range names {
		src, err := os.ReadFile(n)
		if err != nil {
			t.Fatal(err)
		}
		var b strings.Builder
		for _, d := range diagnose(src) {
			b.WriteString(d.String() + "\n")
		}
		golden := strings.TrimSuffix(n, ".af") + ".check"
		if *update {
			if err := os.WriteFile(golden, []byte(b.String()), 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		want, err := os.ReadFile(golden)
		if err != nil {
			t.Fatal(err)
		}
		if b.String() != string(want) {
			t.Errorf("CheckFile(%s) =\n%s\nwant (%s)\n%s", n, b.String(), golden, want)
		}
	}
}
