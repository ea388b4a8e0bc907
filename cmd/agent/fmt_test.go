package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const (
	afMessy = "workflow w(input:T)->T{pipeline{return input}}"
	afTidy  = "workflow w(input: T) -> T {\n  pipeline {\n    return input\n  }\n}\n"
	afClean = "workflow w(input: text) -> text {\n  pipeline {\n    return input\n  }\n}\n"
	afWrong = "workflow w(input: In) -> text {\n  pipeline {\n    let a = nope\n    return 1\n  }\n}\n"
	afBad   = "workflow w(input: T) -> T {\n  pipeline {\n    let = 1\n    return [1,]\n  }\n}\n"
)

// afFiles writes name → content into a new folder and returns its paths.
func afFiles(t *testing.T, files map[string]string) map[string]string {
	t.Helper()
	dir := t.TempDir()
	paths := map[string]string{}
	for name, content := range files {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), 0o640); err != nil {
			t.Fatal(err)
		}
		paths[name] = p
	}
	return paths
}

func readString(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestAgentFmt: agent fmt prints the formatted file; -l names the files
// that differ; -w rewrites only those, keeping their mode; a file with
// syntax errors is printed as a compiler does, left alone, and exits 1;
// no file, or not a .af file, is a usage error (2).
func TestAgentFmt(t *testing.T) {
	t.Parallel()
	p := afFiles(t, map[string]string{"messy.af": afMessy, "tidy.af": afTidy, "bad.af": afBad})

	r := runAgent(t, nil, "", "fmt", p["messy.af"])
	if r.code != 0 || r.stdout != afTidy || r.stderr != "" {
		t.Errorf("agent fmt messy.af: exit %d, stdout %q, stderr %q; want 0 and %q", r.code, r.stdout, r.stderr, afTidy)
	}
	if got := readString(t, p["messy.af"]); got != afMessy {
		t.Errorf("agent fmt without -w changed the file: %q", got)
	}

	// The environment never makes fmt write or list.
	r = runAgent(t, map[string]string{"SYMPHONIX_WRITE": "true", "SYMPHONIX_LIST": "true"}, "", "fmt", p["messy.af"])
	if got := readString(t, p["messy.af"]); r.code != 0 || got != afMessy || r.stdout != afTidy {
		t.Errorf("agent fmt with SYMPHONIX_WRITE and SYMPHONIX_LIST set: exit %d, stdout %q, file %q; want the file untouched and printed formatted", r.code, r.stdout, got)
	}

	r = runAgent(t, nil, "", "fmt", "-l", p["messy.af"], p["tidy.af"])
	if r.code != 0 || r.stdout != p["messy.af"]+"\n" {
		t.Errorf("agent fmt -l: exit %d, stdout %q; want 0 and messy.af alone", r.code, r.stdout)
	}

	tidyInfo, err := os.Stat(p["tidy.af"])
	if err != nil {
		t.Fatal(err)
	}
	r = runAgent(t, nil, "", "fmt", "-w", p["messy.af"], p["tidy.af"])
	if r.code != 0 || r.stdout != "" {
		t.Errorf("agent fmt -w: exit %d, stdout %q; want 0 and nothing", r.code, r.stdout)
	}
	if got := readString(t, p["messy.af"]); got != afTidy {
		t.Errorf("agent fmt -w left messy.af as %q, want %q", got, afTidy)
	}
	info, err := os.Stat(p["messy.af"])
	if err != nil {
		t.Fatal(err)
	}
	if info.Mode().Perm() != 0o640 {
		t.Errorf("agent fmt -w: mode %v, want 0640 as it was", info.Mode().Perm())
	}
	after, err := os.Stat(p["tidy.af"])
	if err != nil {
		t.Fatal(err)
	}
	if !os.SameFile(tidyInfo, after) || !after.ModTime().Equal(tidyInfo.ModTime()) {
		t.Errorf("agent fmt -w rewrote tidy.af, which was formatted already")
	}
	if entries, _ := os.ReadDir(filepath.Dir(p["tidy.af"])); len(entries) != 3 {
		t.Errorf("agent fmt -w left %d files in the folder, want the 3 it had", len(entries))
	}

	r = runAgent(t, nil, "", "fmt", "-w", p["bad.af"], p["messy.af"])
	want := p["bad.af"] + ":3:9: error: syntax: expected a name, found \"=\"\n" +
		p["bad.af"] + ":4:15: error: syntax: expected an expression, found \"]\"\n"
	if r.code != 1 || r.stderr != want {
		t.Errorf("agent fmt -w bad.af: exit %d, stderr %q; want 1 and %q", r.code, r.stderr, want)
	}
	if got := readString(t, p["bad.af"]); got != afBad {
		t.Errorf("agent fmt -w changed a file with errors: %q", got)
	}

	for _, args := range [][]string{{"fmt"}, {"fmt", "notes.txt"}, {"fmt", "--nope", p["tidy.af"]}} {
		if r := runAgent(t, nil, "", args...); r.code != 2 {
			t.Errorf("agent %s: exit %d, want 2 (%v)", strings.Join(args, " "), r.code, r.err)
		}
	}
	if r := runAgent(t, nil, "", "fmt", filepath.Join(t.TempDir(), "none.af")); r.code != 1 || !strings.Contains(r.stderr, "none.af") {
		t.Errorf("agent fmt of a missing file: exit %d, stderr %q; want 1 naming it", r.code, r.stderr)
	}
}

// TestAgentCheckAF: agent check FILE.af prints the parse diagnostics as a
// compiler does, exits 1 on errors and says nothing for a clean file (an
// info alone exits 0); -o json has them with their positions. agent check
// DIR is unchanged (TestCheck… of the flow folder).
func TestAgentCheckAF(t *testing.T) {
	t.Parallel()
	p := afFiles(t, map[string]string{"tidy.af": afTidy, "bad.af": afBad, "clean.af": afClean})

	r := runAgent(t, nil, "", "check", p["clean.af"])
	if r.code != 0 || r.stdout != "" || r.stderr != "" {
		t.Errorf("agent check clean.af: exit %d, stdout %q, stderr %q; want 0 and nothing", r.code, r.stdout, r.stderr)
	}
	r = runAgent(t, nil, "", "check", p["tidy.af"])
	info := p["tidy.af"] + ":1:19: info: external-type: T is not declared in the workflow: an external type, taken as any\n"
	if r.code != 0 || r.stdout != info || r.stderr != "" {
		t.Errorf("agent check tidy.af: exit %d, stdout %q, stderr %q; want 0 and %q", r.code, r.stdout, r.stderr, info)
	}
	r = runAgent(t, nil, "", "check", p["bad.af"])
	want := p["bad.af"] + ":3:9: error: syntax: expected a name, found \"=\"\n" +
		p["bad.af"] + ":4:15: error: syntax: expected an expression, found \"]\"\n"
	if r.code != 1 || r.stdout != want || r.stderr != "" {
		t.Errorf("agent check bad.af: exit %d, stdout %q, stderr %q; want 1 and %q", r.code, r.stdout, r.stderr, want)
	}
	r = runAgent(t, nil, "", "check", "-o", "json", p["bad.af"])
	var v checkAFJSON
	if err := json.Unmarshal([]byte(r.stdout), &v); err != nil {
		t.Fatalf("agent check -o json bad.af: %v\n%s", err, r.stdout)
	}
	if r.code != 1 || v.OK || len(v.Diagnostics) != 2 || v.Diagnostics[0] != (diagnosticJSON{Line: 3, Column: 9, EndLine: 3, EndColumn: 10, Severity: "error", Code: "syntax", Message: `expected a name, found "="`}) {
		t.Errorf("agent check -o json bad.af: exit %d, %+v", r.code, v)
	}
	if r := runAgent(t, nil, "", "check", filepath.Join(t.TempDir(), "none.af")); r.code != 1 || r.err == nil || !strings.Contains(r.err.Error(), "none.af") {
		t.Errorf("agent check of a missing file: exit %d, %v; want 1 naming it", r.code, r.err)
	}
}

// TestAgentCheckAFChecker: agent check FILE.af reports what the checker
// finds in a file that parses, in source order, and exits 1 for its
// errors.
func TestAgentCheckAFChecker(t *testing.T) {
	t.Parallel()
	p := afFiles(t, map[string]string{"wrong.af": afWrong})
	r := runAgent(t, nil, "", "check", p["wrong.af"])
	want := p["wrong.af"] + ":1:19: info: external-type: In is not declared in the workflow: an external type, taken as any\n" +
		p["wrong.af"] + ":3:13: error: unknown-variable: unknown variable nope\n" +
		p["wrong.af"] + ":4:12: error: workflow-return-mismatch: the workflow returns text; this is number\n"
	if r.code != 1 || r.stdout != want || r.stderr != "" {
		t.Errorf("agent check wrong.af: exit %d, stdout %q, stderr %q; want 1 and %q", r.code, r.stdout, r.stderr, want)
	}
	r = runAgent(t, nil, "", "check", "-o", "json", p["wrong.af"])
	var v checkAFJSON
	if err := json.Unmarshal([]byte(r.stdout), &v); err != nil {
		t.Fatalf("agent check -o json wrong.af: %v\n%s", err, r.stdout)
	}
	if r.code != 1 || v.OK || len(v.Diagnostics) != 3 || v.Diagnostics[1] != (diagnosticJSON{Line: 3, Column: 13, EndLine: 3, EndColumn: 17, Severity: "error", Code: "unknown-variable", Message: "unknown variable nope"}) {
		t.Errorf("agent check -o json wrong.af: exit %d, %+v", r.code, v)
	}
}

// TestAgentCheckDirStill: agent check DIR still checks the flow folder.
func TestAgentCheckDirStill(t *testing.T) {
	t.Parallel()
	r := runAgent(t, nil, "", "check", desk(t))
	if r.code != 0 || !strings.Contains(r.stdout, "flow.json: ready\n") {
		t.Errorf("agent check DIR: exit %d, stdout %q; want 0 and ready", r.code, r.stdout)
	}
}
