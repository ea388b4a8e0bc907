package triggers

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// write puts files (name → content) in a new folder and returns it.
func write(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, content := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

const minimalFlow = `{"version": "0.7", "start": "a", "inputs": ["topic"], "outputs": ["report"],
 "state": {"topic": {"type": "string"}, "report": {"type": "string"}},
 "nodes": [{"id": "a", "handler": "h"}], "edges": [{"from": "a", "to": "__end__"}]}`

func TestLoad(t *testing.T) {
	dir := write(t, map[string]string{"triggers.json": `{
	  "flow": "flow.json",
	  "triggers": [
	    {"id": "morning", "kind": "schedule", "schedule": "30 9 * * 1-5", "timeZone": "Europe/Paris", "catchUp": true,
	     "input": {"topic": "the day of {{time.date}}", "n": 3}},
	    {"id": "deploy", "kind": "webhook", "path": "/hooks/deploy", "secret": "DEPLOY_SECRET", "overlap": "queue", "queueLimit": 4,
	     "deliver": {"urlEnv": "SLACK_URL", "attempts": 3, "body": {"text": "{{table}}"}}}
	  ]}`})
	l, err := Load(filepath.Join(dir, "triggers.json"))
	if err != nil {
		t.Fatal(err)
	}
	if l.Dir != dir || l.Path != filepath.Join(dir, "triggers.json") || l.File.Flow != "flow.json" || len(l.File.Triggers) != 2 {
		t.Fatalf("Load = %+v", l)
	}
	m, d := l.File.Triggers[0], l.File.Triggers[1]
	if m.Schedule != "30 9 * * 1-5" || m.TimeZone != "Europe/Paris" || !m.CatchUp || m.Input["topic"] != "the day of {{time.date}}" || m.Input["n"] != 3.0 {
		t.Errorf("schedule trigger = %+v", m)
	}
	if d.Kind != KindWebhook || d.QueueLimit != 4 || d.Overlap != OverlapQueue || d.Deliver == nil || d.Deliver.URLEnv != "SLACK_URL" || d.Deliver.Attempts != 3 {
		t.Errorf("webhook trigger = %+v", d)
	}
}

func TestLoadRefuses(t *testing.T) {
	for _, c := range []struct {
		name, content, code, path, says string
	}{
		{"not JSON", `{"flow": `, CodeInvalidFile, "", "not JSON"},
		{"not an object", `["flow.json"]`, CodeInvalidFile, "", "a JSON object"},
		{"trailing data", `{"flow": "flow.json"} {}`, CodeInvalidFile, "", "data after"},
		{"duplicate key", `{"flow": "a.json", "flow": "b.json"}`, CodeInvalidFile, "flow", "given twice"},
		{"duplicate key in a trigger", `{"flow": "f.json", "triggers": [{"id": "a", "id": "b"}]}`, CodeInvalidFile, "triggers[0].id", "given twice"},
		{"unknown key", `{"flow": "f.json", "trigers": []}`, CodeInvalidFile, "trigers", "not a key of a trigger file"},
		{"unknown trigger key, misspelt", `{"flow": "f.json", "triggers": [{"id": "a", "timezone": "UTC"}]}`, CodeInvalidFile, "triggers[0].timezone", `did you mean "timeZone"`},
		{"unknown delivery key", `{"flow": "f.json", "triggers": [{"id": "a", "deliver": {"url": "https://x"}}]}`, CodeInvalidFile, "triggers[0].deliver.url", "not a key of a delivery"},
		{"wrong type", `{"flow": "f.json", "triggers": [{}, {"queueLimit": "10"}]}`, CodeInvalidFile, "triggers[1].queueLimit", "want a whole number, got a string"},
		{"fraction", `{"flow": "f.json", "triggers": [{"queueLimit": 1.5}]}`, CodeInvalidFile, "triggers[0].queueLimit", "want a whole number, got 1.5"},
		{"huge number", `{"flow": "f.json", "triggers": [{"deliver": {"attempts": 1e12}}]}`, CodeInvalidFile, "triggers[0].deliver.attempts", "whole number"},
		{"input not an object", `{"flow": "f.json", "triggers": [{"input": "x"}]}`, CodeInvalidFile, "triggers[0].input", "want an object, got a string"},
		{"triggers not a list", `{"flow": "f.json", "triggers": {}}`, CodeInvalidFile, "triggers", "want a list of triggers"},
		{"trigger not an object", `{"flow": "f.json", "triggers": [3]}`, CodeInvalidFile, "triggers[0]", "want a trigger"},
		{"flow not a string", `{"flow": 3}`, CodeInvalidFile, "flow", "want a string, got a number"},
		{"catchUp not a bool", `{"flow": "f", "triggers": [{"catchUp": "yes"}]}`, CodeInvalidFile, "triggers[0].catchUp", "want true or false"},
		{"too deep", `{"flow": "f", "triggers": [{"input": {"a": ` + strings.Repeat("[", 80) + strings.Repeat("]", 80) + `}}]}`, CodeInvalidFile, "", "nested deeper than 64"},
		{"too large", `{"flow": "` + strings.Repeat("x", MaxFileBytes) + `"}`, CodeFileUnreadable, "", "larger than"},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := write(t, map[string]string{"triggers.json": c.content})
			_, err := Load(filepath.Join(dir, "triggers.json"))
			var e *Error
			if !errors.As(err, &e) {
				t.Fatalf("Load = %v, want an *Error", err)
			}
			if e.Code != c.code || (c.path != "" && e.Path != c.path) || !strings.Contains(e.Error(), c.says) {
				t.Fatalf("Load = %q (code %s, path %q), want %s at %q saying %q", e, e.Code, e.Path, c.code, c.path, c.says)
			}
		})
	}
	_, err := Load(filepath.Join(t.TempDir(), "triggers.json"))
	var e *Error
	if !errors.As(err, &e) || e.Code != CodeFileUnreadable || !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("Load(missing) = %v, want %s wrapping fs.ErrNotExist", err, CodeFileUnreadable)
	}
}

func TestLoadFlow(t *testing.T) {
	dir := write(t, map[string]string{
		"flows/main.json":  minimalFlow,
		"flows/bad.json":   `{"version": `,
		"outside.json":     minimalFlow,
		"flows/hooks.json": `{}`,
	})
	if err := os.Symlink(filepath.Join(dir, "outside.json"), filepath.Join(dir, "flows", "link.json")); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ flow, says string }{
		{"main.json", ""},
		{"./main.json", ""},
		{"", "names no flow"},
		{"../outside.json", "leaves the trigger file's folder"},
		{"sub/../../outside.json", "leaves the trigger file's folder"},
		{filepath.Join(dir, "outside.json"), "is absolute"},
		{"link.json", "escapes"}, // a link out of the folder
		{"missing.json", "no such file"},
		{"bad.json", "invalid json"},
	} {
		l := &Loaded{File: &File{Flow: c.flow}, Dir: filepath.Join(dir, "flows"), Path: filepath.Join(dir, "flows", "triggers.json")}
		fl, err := LoadFlow(l)
		if c.says == "" {
			if err != nil || fl == nil || fl.Start != "a" {
				t.Errorf("LoadFlow(%q) = %v, %v", c.flow, fl, err)
			}
			continue
		}
		var e *Error
		if !errors.As(err, &e) || e.Code != CodeFlowUnreadable || e.Path != "flow" || !strings.Contains(err.Error(), c.says) {
			t.Errorf("LoadFlow(%q) = %v, want %s saying %q", c.flow, err, CodeFlowUnreadable, c.says)
		}
	}
}

func TestFileFor(t *testing.T) {
	plainAbout := func(flow string) string { return `{"flow": "` + flow + `", "triggers": []}` }
	for _, c := range []struct {
		name  string
		files map[string]string
		flow  string
		want  string // "" none
	}{
		{"none", map[string]string{"flow.json": "{}"}, "flow.json", ""},
		{"by name", map[string]string{"flow.triggers.json": plainAbout("flow.json")}, "flow.json", "flow.triggers.json"},
		{"by name wins over plain", map[string]string{"flow.triggers.json": plainAbout("flow.json"), "triggers.json": plainAbout("flow.json")}, "flow.json", "flow.triggers.json"},
		{"plain naming this flow", map[string]string{"triggers.json": plainAbout("flow.json")}, "flow.json", "triggers.json"},
		{"plain naming it with ./", map[string]string{"triggers.json": plainAbout("./flow.json")}, "flow.json", "triggers.json"},
		{"plain naming another flow", map[string]string{"triggers.json": plainAbout("other.json")}, "flow.json", ""},
		{"plain naming another's by name is not ours", map[string]string{"other.triggers.json": plainAbout("other.json")}, "flow.json", ""},
		{"plain that cannot be read is returned to say why", map[string]string{"triggers.json": `{"flow": `}, "flow.json", "triggers.json"},
		{"plain naming no flow is returned to say why", map[string]string{"triggers.json": `{"triggers": []}`}, "flow.json", "triggers.json"},
		{"plain naming a flow outside is returned to say why", map[string]string{"triggers.json": plainAbout("../flow.json")}, "flow.json", "triggers.json"},
		{"a folder named like the file is no file", map[string]string{"flow.triggers.json/x": "", "triggers.json": plainAbout("flow.json")}, "flow.json", "triggers.json"},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := write(t, c.files)
			got := FileFor(filepath.Join(dir, c.flow))
			want := ""
			if c.want != "" {
				want = filepath.Join(dir, c.want)
			}
			if got != want {
				t.Fatalf("FileFor = %q, want %q", got, want)
			}
		})
	}
}

func TestFor(t *testing.T) {
	dir := write(t, map[string]string{"flow.json": minimalFlow, "flow.triggers.json": `{"flow": "other.json"}`})
	_, err := For(filepath.Join(dir, "flow.json"))
	var e *Error
	if !errors.As(err, &e) || e.Code != CodeInvalidFile || e.Path != "flow" || !strings.Contains(err.Error(), `names "other.json"`) {
		t.Fatalf("For(by name, naming another flow) = %v, want %s at flow", err, CodeInvalidFile)
	}

	dir = write(t, map[string]string{"flow.json": minimalFlow})
	if l, err := For(filepath.Join(dir, "flow.json")); l != nil || err != nil {
		t.Fatalf("For(no trigger file) = %v, %v, want nothing", l, err)
	}

	dir = write(t, map[string]string{"flow.json": minimalFlow, "triggers.json": `{"flow": "flow.json", "triggers": [{"id": "a"}]}`})
	l, err := For(filepath.Join(dir, "flow.json"))
	if err != nil || l == nil || l.Path != filepath.Join(dir, "triggers.json") {
		t.Fatalf("For = %+v, %v", l, err)
	}
	fl, err := LoadFlow(l)
	if err != nil || fl.Inputs[0] != "topic" {
		t.Fatalf("LoadFlow = %v, %v", fl, err)
	}
}
