package flow

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"
)

// SchemaError is an llm node's answer that does not fit its schema, or its
// output channel: every place it does not, with a path a person can act on
// (classification.category, tasks[2].priority). Nothing of such an answer
// is written.
type SchemaError struct {
	Problems []string
}

func (e *SchemaError) Error() string {
	return strings.Join(e.Problems, "; ")
}

// checkSchema checks v against s, recursively, and returns every place it
// does not fit, path first. The paths start at name, the output channel.
func checkSchema(s *Schema, v any, name string) error {
	var ps []string
	schemaWalk(s, v, name, &ps)
	if len(ps) > 0 {
		return &SchemaError{Problems: ps}
	}
	return nil
}

func schemaWalk(s *Schema, v any, path string, ps *[]string) {
	if s == nil {
		return
	}
	if !isType(v, s.Type) {
		*ps = append(*ps, fmt.Sprintf("%s must be %s, and it is %s", path, typePhrase(s.Type), describe(v)))
		return
	}
	if s.Enum != nil && !slices.ContainsFunc(s.Enum, func(e any) bool { return sameScalar(e, v) }) {
		allowed := make([]string, len(s.Enum))
		for i, e := range s.Enum {
			allowed[i] = Text(e)
		}
		*ps = append(*ps, fmt.Sprintf("%s must be one of: %s", path, strings.Join(allowed, ", ")))
	}
	switch v := v.(type) {
	case float64:
		if s.Minimum != nil && v < *s.Minimum {
			*ps = append(*ps, fmt.Sprintf("%s must be at least %s, and it is %s", path, number(*s.Minimum), number(v)))
		}
		if s.Maximum != nil && v > *s.Maximum {
			*ps = append(*ps, fmt.Sprintf("%s must be at most %s, and it is %s", path, number(*s.Maximum), number(v)))
		}
	case string:
		n := utf8.RuneCountInString(v)
		if s.MinLength != nil && n < *s.MinLength {
			*ps = append(*ps, fmt.Sprintf("%s must be at least %s long, and it is %d", path, characters(*s.MinLength), n))
		}
		if s.MaxLength != nil && n > *s.MaxLength {
			*ps = append(*ps, fmt.Sprintf("%s must be at most %s long, and it is %d", path, characters(*s.MaxLength), n))
		}
	case []any:
		for i, e := range v {
			schemaWalk(s.Items, e, index(path, i), ps)
		}
	case map[string]any:
		for _, r := range s.Required {
			// false, 0, "", [] and {} are answers: only an absent or null
			// property is missing.
			if v[r] == nil {
				*ps = append(*ps, fmt.Sprintf("%s is missing", join(path, r)))
			}
		}
		for _, name := range slices.Sorted(maps.Keys(s.Properties)) {
			if e, ok := v[name]; ok && e != nil {
				schemaWalk(s.Properties[name], e, join(path, name), ps)
			}
		}
	}
}

func isType(v any, t string) bool {
	switch v.(type) {
	case string:
		return t == ChannelString
	case float64:
		return t == ChannelNumber
	case bool:
		return t == ChannelBoolean
	case []any:
		return t == ChannelList
	case map[string]any:
		return t == ChannelObject
	}
	return false
}

func typePhrase(t string) string {
	if t == ChannelObject {
		return "an object"
	}
	return "a " + t
}

// describe says what a value is, with the value itself when it is short
// enough to read in a sentence: a number, 3; a string, "12 EUR".
func describe(v any) string {
	switch v := v.(type) {
	case string:
		return "a string, " + strconv.Quote(shorten(v, 80))
	case float64:
		return "a number, " + number(v)
	case bool:
		return "a boolean, " + strconv.FormatBool(v)
	}
	return KindOf(v)
}

func shorten(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return string(r[:n]) + "…"
}

func number(f float64) string {
	return strconv.FormatFloat(f, 'f', -1, 64)
}

func characters(n int) string {
	if n == 1 {
		return "1 character"
	}
	return strconv.Itoa(n) + " characters"
}

func sameScalar(a, b any) bool {
	switch a := a.(type) {
	case int:
		f, ok := b.(float64)
		return ok && float64(a) == f
	case string, float64, bool:
		return a == b
	}
	return false
}

// readJSON reads the answer out of a model's reply for a value of type
// want: the reply as it stands when it is JSON; the JSON inside a code
// fence; the first object or list after a sentence in front of it; and
// each of those again with a Hebrew quote (צה"ל) left loose inside a string
// escaped. A reply with no JSON in it is returned as the text itself, so
// the check says what it is ("must be an object, and it is a string,
// "I think billing"") rather than failing to read it. For a string, text
// that is not a JSON string is the answer.
func readJSON(reply, want string) any {
	reply = strings.TrimSpace(reply)
	for _, candidate := range []string{reply, unfence(reply)} {
		if candidate == "" {
			continue
		}
		if v, ok := decodeFirst(candidate, want, false); ok {
			return v
		}
		if v, ok := decodeFirst(looseQuotes(candidate), want, false); ok {
			return v
		}
		if want != ChannelObject && want != ChannelList {
			continue
		}
		open := "{"
		if want == ChannelList {
			open = "["
		}
		if i := strings.Index(candidate, open); i > 0 {
			if v, ok := decodeFirst(candidate[i:], want, true); ok {
				return v
			}
			if v, ok := decodeFirst(looseQuotes(candidate[i:]), want, true); ok {
				return v
			}
		}
	}
	return reply
}

// decodeFirst decodes candidate as one JSON value, or, with trailing set,
// the first JSON value in it with anything after it ignored. A value of
// another type than want does not count, except that want "" takes any.
func decodeFirst(candidate, want string, trailing bool) (any, bool) {
	dec := json.NewDecoder(strings.NewReader(candidate))
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, false
	}
	if !trailing && strings.TrimSpace(candidate[dec.InputOffset():]) != "" {
		return nil, false // something after the value
	}
	if want != "" && !isType(v, want) {
		return nil, false
	}
	return v, true
}

// unfence returns what is inside the first ``` code fence, or "".
func unfence(s string) string {
	i := strings.Index(s, "```")
	if i < 0 {
		return ""
	}
	rest := s[i+3:]
	if nl := strings.IndexByte(rest, '\n'); nl >= 0 {
		rest = rest[nl+1:] // the fence's language, if any
	}
	if j := strings.Index(rest, "```"); j >= 0 {
		rest = rest[:j]
	}
	return strings.TrimSpace(rest)
}

// looseQuotes escapes a double quote standing between two Hebrew letters,
// as in צה"ל: inside a JSON string it would end the string.
func looseQuotes(s string) string {
	if !strings.Contains(s, `"`) {
		return s
	}
	r := []rune(s)
	var b strings.Builder
	for i, c := range r {
		if c == '"' && i > 0 && i+1 < len(r) && hebrew(r[i-1]) && hebrew(r[i+1]) {
			b.WriteString(`\"`)
			continue
		}
		b.WriteRune(c)
	}
	return b.String()
}

func hebrew(c rune) bool {
	return c >= 0x05D0 && c <= 0x05EA
}

// schemaWords is what the engine adds to an llm node's prompt when it has a
// schema: the schema itself, in the DSL's words. The prompt is written as
// if a person were going to answer it; the engine puts the schema to the
// model.
func schemaWords(s *Schema) string {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(schemaDoc(s)) // built of maps, strings and numbers: always encodes
	return "\n\nAnswer with JSON of this shape, and nothing else:\n" + strings.TrimSpace(b.String())
}

func schemaDoc(s *Schema) map[string]any {
	d := map[string]any{"type": s.Type}
	if s.Description != "" {
		d["description"] = s.Description
	}
	if s.Properties != nil {
		props := make(map[string]any, len(s.Properties))
		for k, p := range s.Properties {
			if p != nil {
				props[k] = schemaDoc(p)
			}
		}
		d["properties"] = props
	}
	if s.Required != nil {
		d["required"] = s.Required
	}
	if s.Items != nil {
		d["items"] = schemaDoc(s.Items)
	}
	if s.Enum != nil {
		d["enum"] = s.Enum
	}
	if s.Minimum != nil {
		d["minimum"] = *s.Minimum
	}
	if s.Maximum != nil {
		d["maximum"] = *s.Maximum
	}
	if s.MinLength != nil {
		d["minLength"] = *s.MinLength
	}
	if s.MaxLength != nil {
		d["maxLength"] = *s.MaxLength
	}
	return d
}
