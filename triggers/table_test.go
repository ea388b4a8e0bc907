package triggers

import (
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestAsTable(t *testing.T) {
	for _, c := range []struct {
		name string
		v    any
		want string
	}{
		{"text as is", "Hello *world*", "Hello *world*"},
		{"nothing", nil, ""},
		{"number", 3.5, "3.5"},
		{"bool", true, "true"},
		{"list of objects", []any{
			map[string]any{"name": "db", "latency": 12.0, "ok": true},
			map[string]any{"name": "cache-eu-west", "latency": 3.0, "ok": false},
			map[string]any{"name": "queue", "latency": 140.0},
		}, "```\n" +
			"latency  name           ok\n" +
			"-------  -------------  -----\n" +
			"     12  db             true\n" +
			"      3  cache-eu-west  false\n" +
			"    140  queue\n" +
			"```"},
		{"object", map[string]any{"b": 2.0, "a": "x", "c": map[string]any{"d": 1.0}}, "a: x\nb: 2\nc: {\"d\":1}"},
		{"object holding a table", map[string]any{"summary": "2 down", "down": []any{map[string]any{"host": "a"}, map[string]any{"host": "b"}}},
			"down:\n```\nhost\n----\na\nb\n```\nsummary: 2 down"},
		{"list of scalars", []any{"one", 2.0, map[string]any{"x": "y\nz"}}, "- one\n- 2\n- {\"x\":\"y\\nz\"}"},
		{"cells on one line, no backquote", []any{map[string]any{"note": "a\nb ```c```"}}, "```\nnote\n-----------\na b '''c'''\n```"},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := AsTable(c.v); got != c.want {
				t.Fatalf("AsTable =\n%s\nwant\n%s", got, c.want)
			}
		})
	}
}

func TestAsTableBounds(t *testing.T) {
	long := strings.Repeat("é", MaxCellRunes+10)
	got := AsTable([]any{map[string]any{"v": long}})
	if !strings.Contains(got, strings.Repeat("é", MaxCellRunes-1)+"…") || strings.Contains(got, strings.Repeat("é", MaxCellRunes)) {
		t.Errorf("a long cell is not cut at %d: %q", MaxCellRunes, got)
	}

	rows := make([]any, MaxTableRows+7)
	for i := range rows {
		rows[i] = map[string]any{"i": float64(i)}
	}
	got = AsTable(rows)
	if !strings.HasSuffix(got, "```\n… and 7 more row(s)") || strings.Contains(got, fmt.Sprintf(" %d\n", MaxTableRows)) {
		t.Errorf("rows past %d are not cut saying so: %q", MaxTableRows, got[len(got)-60:])
	}

	wide := make([]any, MaxTableRows)
	for i := range wide {
		wide[i] = map[string]any{"a": strings.Repeat("x", 30), "b": strings.Repeat("y", 30), "n": float64(i)}
	}
	got = AsTable(wide)
	if n := utf8.RuneCountInString(got); n > MaxTableRunes {
		t.Errorf("AsTable is %d characters, over %d", n, MaxTableRunes)
	}
	if !strings.Contains(got, "… (cut: ") || strings.Count(got, "```")%2 != 0 {
		t.Errorf("a cut table does not say so or leaves its block open: %q", got[len(got)-120:])
	}

	text := strings.Repeat("word ", 1000)
	got = AsTable(text)
	if n := utf8.RuneCountInString(got); n > MaxTableRunes || !strings.HasSuffix(got, "more characters)") {
		t.Errorf("long text: %d characters, ends %q", n, got[len(got)-40:])
	}
}
