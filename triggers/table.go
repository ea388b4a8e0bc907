package triggers

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/symphonix/symphonix/flow"
)

// Bounds of AsTable's text.
const (
	// MaxTableRunes bounds AsTable's text: under Discord's 2,000 characters
	// a message, the smallest of the chat apps it is laid out for.
	MaxTableRunes = 1900
	// MaxTableRows bounds the rows of one table.
	MaxTableRows = 50
	// MaxCellRunes bounds one cell of a table.
	MaxCellRunes = 40
)

const fence = "```"

// AsTable lays a result out as Slack, Teams and Discord render it (their
// markdown, never HTML, which they would show as literal characters):
//
//   - a list of objects: a code block with a column per key (sorted), a
//     row per object, numbers aligned right; at most MaxTableRows rows and
//     MaxCellRunes a cell, the rest cut saying so;
//   - an object: a "key: value" line per key, sorted, a list of objects
//     under its key as a table;
//   - a list of anything else: a "- item" line per item;
//   - text as it is; a number or true/false as written; null as nothing.
//
// The whole is at most MaxTableRunes characters, cut at a line saying how
// much was left out (a code block cut open is closed).
func AsTable(v any) string {
	return bound(layout(v))
}

func layout(v any) string {
	switch v := v.(type) {
	case nil:
		return ""
	case string:
		return v
	case []any:
		if rows, ok := records(v); ok {
			return table(rows)
		}
		var b strings.Builder
		for i, e := range v {
			if i > 0 {
				b.WriteByte('\n')
			}
			b.WriteString("- " + oneLine(flow.Text(e)))
		}
		return b.String()
	case map[string]any:
		var lines []string
		for _, k := range slices.Sorted(maps.Keys(v)) {
			e := v[k]
			if l, ok := e.([]any); ok {
				if rows, ok := records(l); ok {
					lines = append(lines, k+":\n"+table(rows))
					continue
				}
			}
			lines = append(lines, k+": "+flow.Text(e))
		}
		return strings.Join(lines, "\n")
	}
	return flow.Text(v)
}

// records is a list whose every element is an object.
func records(l []any) ([]map[string]any, bool) {
	if len(l) == 0 {
		return nil, false
	}
	rows := make([]map[string]any, len(l))
	for i, e := range l {
		m, ok := e.(map[string]any)
		if !ok {
			return nil, false
		}
		rows[i] = m
	}
	return rows, true
}

// table is a code block of rows in aligned columns.
func table(rows []map[string]any) string {
	seen := map[string]bool{}
	for _, r := range rows {
		for k := range r {
			seen[k] = true
		}
	}
	cols := slices.Sorted(maps.Keys(seen))
	shown := rows
	if len(shown) > MaxTableRows {
		shown = shown[:MaxTableRows]
	}
	cells := make([][]string, len(shown)+1)
	cells[0] = make([]string, len(cols))
	width := make([]int, len(cols))
	right := make([]bool, len(cols))
	for j, c := range cols {
		cells[0][j] = cell(c)
		right[j] = true
	}
	for i, r := range shown {
		cells[i+1] = make([]string, len(cols))
		for j, c := range cols {
			v, ok := r[c]
			if _, num := v.(float64); ok && !num {
				right[j] = false
			}
			cells[i+1][j] = cell(flow.Text(v))
		}
	}
	for _, row := range cells {
		for j, s := range row {
			width[j] = max(width[j], utf8.RuneCountInString(s))
		}
	}
	var b strings.Builder
	b.WriteString(fence + "\n")
	line := func(row []string, header bool) {
		var l strings.Builder
		for j, s := range row {
			if j > 0 {
				l.WriteString("  ")
			}
			pad := strings.Repeat(" ", width[j]-utf8.RuneCountInString(s))
			if right[j] && !header {
				l.WriteString(pad + s)
			} else {
				l.WriteString(s + pad)
			}
		}
		b.WriteString(strings.TrimRight(l.String(), " ") + "\n")
	}
	line(cells[0], true)
	rule := make([]string, len(cols))
	for j := range cols {
		rule[j] = strings.Repeat("-", width[j])
	}
	line(rule, true)
	for _, row := range cells[1:] {
		line(row, false)
	}
	b.WriteString(fence)
	if n := len(rows) - len(shown); n > 0 {
		fmt.Fprintf(&b, "\n… and %d more row(s)", n)
	}
	return b.String()
}

// cell is a value in a table: one line, no backquote (which would end the
// block), at most MaxCellRunes.
func cell(s string) string {
	s = strings.ReplaceAll(oneLine(s), "`", "'")
	if utf8.RuneCountInString(s) > MaxCellRunes {
		r := []rune(s)
		s = string(r[:MaxCellRunes-1]) + "…"
	}
	return s
}

func oneLine(s string) string {
	return strings.Join(strings.Fields(s), " ")
}

// bound cuts text past MaxTableRunes at a line, saying how much is left
// out, and closes a code block the cut left open.
func bound(s string) string {
	total := utf8.RuneCountInString(s)
	if total <= MaxTableRunes {
		return s
	}
	const room = 60 // for the note and a closing fence
	r := []rune(s)
	kept := string(r[:MaxTableRunes-room])
	if i := strings.LastIndexByte(kept, '\n'); i > len(kept)/2 {
		kept = kept[:i]
	}
	left := total - utf8.RuneCountInString(kept)
	if strings.Count(kept, fence)%2 == 1 {
		kept += "\n" + fence
	}
	return kept + fmt.Sprintf("\n… (cut: %d more characters)", left)
}
