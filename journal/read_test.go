package journal_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/symphonix/symphonix/flow"
	"github.com/symphonix/symphonix/journal"
)

// TestRunIDs: every line of a model or tool call names the run the engine
// made it in, the id the run's Result carries.
func TestRunIDs(t *testing.T) {
	t.Parallel()
	f, err := flow.Load([]byte(`{"version": "0.17", "name": "runs",
		"state": {"q": {"type": "string"}, "found": {"type": "object"}, "a": {"type": "string"}},
		"inputs": ["q"], "outputs": ["a"], "start": "look",
		"nodes": [
			{"id": "look", "type": "tool", "tool": "db.find", "args": {"q": "{{q}}"}, "output": "found"},
			{"id": "say", "type": "llm", "prompt": "{{q}} {{found}}", "output": "a"}],
		"edges": [{"from": "look", "to": "say"}, {"from": "say", "to": "END"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "journal.jsonl")
	j, err := journal.Open(journal.Config{Path: path})
	if err != nil {
		t.Fatal(err)
	}
	g, err := flow.Build(f, flow.BuildOptions{
		Model: j.WrapModel(fakeModel{reply: flow.ModelReply{Text: "hi"}}),
		Tools: j.WrapTools(func(context.Context, string, map[string]any) (any, error) { return map[string]any{"n": 1}, nil }),
	})
	if err != nil {
		t.Fatal(err)
	}
	var runs []string
	for range 2 {
		res, err := g.Invoke(t.Context(), "", map[string]any{"q": "x"})
		if err != nil {
			t.Fatal(err)
		}
		runs = append(runs, res.Run)
	}
	j.Close()
	got := readEntries(t, path)
	if len(got) != 4 {
		t.Fatalf("%d entries, want 4", len(got))
	}
	for i, e := range got {
		if want := runs[i/2]; e.Run != want || want == "" {
			t.Errorf("entry %d (%s %s) names run %q, want %q", i, e.Kind, e.Name, e.Run, want)
		}
	}
}

// TestRead: newest first, by kind, bounded, on into the rotated file; a
// line written with the old kind "model" is read as llm.
func TestRead(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path := filepath.Join(dir, "journal.jsonl")
	// What an older agent wrote, rotated since.
	old := `{"at":"2026-11-30T08:00:00Z","thread":"t0","node":"decide","kind":"model","name":"decide","duration_ms":3,"ok":true,"withheld":["prompt","reply"]}` + "\n" +
		"not a line of the journal\n" +
		`{"at":"2026-11-30T08:00:01Z","thread":"t0","kind":"tool","name":"old.tool","duration_ms":1,"ok":true}` + "\n"
	if err := os.WriteFile(path+".1", []byte(old), 0o600); err != nil {
		t.Fatal(err)
	}
	j, err := journal.Open(journal.Config{Path: path})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 30 {
		kind := journal.KindTool
		if i%3 == 0 {
			kind = journal.KindLLM
		}
		j.Record(t.Context(), journal.Entry{Kind: kind, Name: fmt.Sprintf("n%02d", i), Thread: fmt.Sprintf("t%d", i%2+1), OK: true})
	}
	j.Close()

	names := func(es []journal.Entry) string {
		var s []string
		for _, e := range es {
			s = append(s, e.Kind+":"+e.Name)
		}
		return strings.Join(s, " ")
	}
	tests := []struct {
		limit int
		kind  string
		want  string
	}{
		{3, "", "tool:n29 tool:n28 llm:n27"},
		{2, journal.KindLLM, "llm:n27 llm:n24"},
		{12, journal.KindLLM, "llm:n27 llm:n24 llm:n21 llm:n18 llm:n15 llm:n12 llm:n09 llm:n06 llm:n03 llm:n00 llm:decide"},
		{0, journal.KindTool, "tool:n29 tool:n28 tool:n26 tool:n25 tool:n23 tool:n22 tool:n20 tool:n19 tool:n17 tool:n16 tool:n14 tool:n13 tool:n11 tool:n10 tool:n08 tool:n07 tool:n05 tool:n04 tool:n02 tool:n01 tool:old.tool"},
	}
	for _, tt := range tests {
		got, err := journal.Read(path, tt.limit, tt.kind)
		if err != nil {
			t.Fatal(err)
		}
		if names(got) != tt.want {
			t.Errorf("Read(%d, %q) = %s\nwant %s", tt.limit, tt.kind, names(got), tt.want)
		}
	}
	all, err := journal.Read(path, 0, "")
	if err != nil {
		t.Fatal(err)
	}
	if len(all) != 32 {
		t.Errorf("Read(0, \"\") read %d entries, want all 32 (fewer than the default 50)", len(all))
	}

	// What a caller may see counts toward the limit.
	mine, err := journal.ReadWhere(path, 2, "", func(e journal.Entry) bool { return e.Thread == "t1" })
	if err != nil {
		t.Fatal(err)
	}
	if names(mine) != "tool:n28 tool:n26" {
		t.Errorf("ReadWhere(thread t1, 2) = %s", names(mine))
	}

	for _, bad := range []struct {
		limit int
		kind  string
		param string
	}{{-1, "", "limit"}, {journal.MaxReadLimit + 1, "", "limit"}, {5, "model", "kind"}, {5, "LLM", "kind"}} {
		_, err := journal.Read(path, bad.limit, bad.kind)
		var qe *journal.QueryError
		if !errors.As(err, &qe) || qe.Param != bad.param {
			t.Errorf("Read(%d, %q) = %v, want a QueryError naming %s", bad.limit, bad.kind, err, bad.param)
		}
	}

	none, err := journal.Read(filepath.Join(dir, "nobody.jsonl"), 0, "")
	if err != nil || len(none) != 0 {
		t.Errorf("a journal nobody wrote to reads as %v, %v; want no entries", none, err)
	}
}

// TestReadLongLines: lines across chunk boundaries are read whole, and a
// line past MaxLineBytes is skipped without losing its neighbours.
func TestReadLongLines(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "journal.jsonl")
	var b strings.Builder
	line := func(name, pad string) {
		fmt.Fprintf(&b, `{"at":"2026-11-30T08:00:00Z","kind":"tool","name":%q,"duration_ms":1,"ok":true,"error":%q}`+"\n", name, pad)
	}
	line("first", "")
	line("big", strings.Repeat("x", 200<<10)) // several chunks, within MaxLineBytes
	line("huge", strings.Repeat("y", journal.MaxLineBytes+10))
	line("last", "")
	if err := os.WriteFile(path, []byte(b.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	got, err := journal.Read(path, 10, "")
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range got {
		names = append(names, e.Name)
	}
	if strings.Join(names, " ") != "last big first" {
		t.Errorf("read %q, want last, big and first (huge skipped)", names)
	}
}
