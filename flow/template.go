package flow

import (
	"maps"
	"regexp"
	"slices"
	"strings"
)

// render fills every {{channel}} of a prompt or a question from state: a
// string as it stands, anything else as JSON, and a channel holding
// nothing as a gap — never as the word "undefined".
func render(tmpl string, s State) string {
	if !strings.Contains(tmpl, "{{") {
		return tmpl
	}
	return placeholder.ReplaceAllStringFunc(tmpl, func(m string) string {
		v, _ := lookup(s, strings.TrimSpace(m[2:len(m)-2]))
		return Text(v)
	})
}

// lonePlaceholder is a string that is only a placeholder.
var lonePlaceholder = regexp.MustCompile(`^\{\{([^{}]*)\}\}$`)

// renderArgs fills a tool node's arguments from state, at any depth, like a
// prompt — except that a string that is only a placeholder passes the
// channel's value rather than its text, so a tool wanting a number gets 5
// rather than "5".
func renderArgs(a any, s State) any {
	switch a := a.(type) {
	case string:
		if m := lonePlaceholder.FindStringSubmatch(a); m != nil {
			v, _ := lookup(s, strings.TrimSpace(m[1]))
			return clone(v)
		}
		return render(a, s)
	case []any:
		out := make([]any, len(a))
		for i, e := range a {
			out[i] = renderArgs(e, s)
		}
		return out
	case map[string]any:
		out := make(map[string]any, len(a))
		for _, k := range slices.Sorted(maps.Keys(a)) {
			out[k] = renderArgs(a[k], s)
		}
		return out
	}
	return a
}

// Fill is v with every {{path}} in its strings filled from values, at any
// depth, by the rules a tool node's arguments are filled by: a string that
// is only a placeholder passes the value itself (a number stays a
// number), any other string has each placeholder written in as text. It
// is the one template language for whatever else fills values from a
// flow's world (a trigger's input, a delivery's body).
func Fill(v any, values map[string]any) any { return renderArgs(v, State(values)) }
