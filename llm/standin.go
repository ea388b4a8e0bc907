package llm

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strings"

	"github.com/symphonix/symphonix/flow"
)

var _ flow.Model = StandIn{}

// StandIn is the model an agent asks when it has no provider key: a flow
// runs end to end, and every llm node gets an answer of the right shape, at
// no cost and without a network.
//
// Its reply depends on nothing but the request — no clock, no randomness,
// no state — so the same request always gets the same reply:
//
//   - Without a schema, the reply is "stand-in reply to: " and the prompt's
//     first 60 characters, with its runs of white space made one space and
//     "…" added when it was cut; then, when the prompt read files, which it
//     received: " (received cat.png, image/png, 84213 bytes)".
//   - With a schema, the reply is JSON that fits it, depending only on the
//     schema: an object has every property (required or not); a list has
//     one item; an enum gives its first value; a string is "stand-in" and the
//     property's name, padded with "." to minLength and cut to maxLength; a
//     number is 0 moved into [minimum, maximum] (the middle when both are
//     set); a boolean is false.
//   - With a JSON Schema (ModelRequest.JSONSchema) the same, read from it:
//     an object has its required properties only, a list minItems items
//     (at least one), an anyOf its first choice, an integer or number 0
//     moved up to minimum, null null, and a schema without a type null.
//
// Usage is always nil: a stand-in spends nothing, and a journal that shows
// tokens for it would be counting tokens nobody paid for.
type StandIn struct{}

// ErrStandInSchema is returned (wrapped) for a schema the stand-in cannot
// answer: one Validate would have refused.
var ErrStandInSchema = errors.New("llm: stand-in cannot answer this schema")

// standInPromptChars is how much of the prompt a text reply repeats.
const standInPromptChars = 60

// Complete answers req as described on StandIn.
func (StandIn) Complete(ctx context.Context, req flow.ModelRequest) (flow.ModelReply, error) {
	if err := ctx.Err(); err != nil {
		return flow.ModelReply{}, err
	}
	if req.Schema == nil && req.JSONSchema != nil {
		v, err := standInJSON(req.JSONSchema, "", 0)
		if err != nil {
			return flow.ModelReply{}, err
		}
		text, err := json.Marshal(v)
		if err != nil {
			return flow.ModelReply{}, fmt.Errorf("%w: %v", ErrStandInSchema, err)
		}
		return flow.ModelReply{Text: string(text)}, nil
	}
	if req.Schema == nil {
		return flow.ModelReply{Text: "stand-in reply to: " + opening(req.Prompt, standInPromptChars) + received(req.Files)}, nil
	}
	v, err := standInValue(req.Schema, "", 0)
	if err != nil {
		return flow.ModelReply{}, err
	}
	text, err := json.Marshal(v)
	if err != nil {
		return flow.ModelReply{}, fmt.Errorf("%w: %v", ErrStandInSchema, err)
	}
	return flow.ModelReply{Text: string(text)}, nil
}

// received says which files a request handed the stand-in: "" for none,
// else " (received cat.png, image/png, 84213 bytes; …)".
func received(files []flow.ModelFile) string {
	if len(files) == 0 {
		return ""
	}
	said := make([]string, len(files))
	for i, f := range files {
		said[i] = fmt.Sprintf("%s, %s, %d bytes", opening(f.Name, standInPromptChars), f.MediaType, len(f.Data))
	}
	return " (received " + strings.Join(said, "; ") + ")"
}

// opening returns the first n characters of s, white space collapsed, with
// "…" when it was cut.
func opening(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n]) + "…"
}

// maxDepth bounds the schemas the stand-in walks; a schema built in Go may
// refer to itself.
const maxDepth = 64

// standInValue returns the value for s. name is the property the value is
// for ("" at the top and for list items).
func standInValue(s *flow.Schema, name string, depth int) (any, error) {
	if s == nil {
		return nil, fmt.Errorf("%w: a list without items or a property without a schema", ErrStandInSchema)
	}
	if depth > maxDepth {
		return nil, fmt.Errorf("%w: nested deeper than %d", ErrStandInSchema, maxDepth)
	}
	if len(s.Enum) > 0 && (s.Type == flow.ChannelString || s.Type == flow.ChannelNumber || s.Type == flow.ChannelBoolean) {
		return s.Enum[0], nil
	}
	switch s.Type {
	case flow.ChannelString:
		return standInString(s, name), nil
	case flow.ChannelNumber:
		return standInNumber(s), nil
	case flow.ChannelBoolean:
		return false, nil
	case flow.ChannelList:
		item, err := standInValue(s.Items, "", depth+1)
		if err != nil {
			return nil, err
		}
		return []any{item}, nil
	case flow.ChannelObject:
		obj := make(map[string]any, len(s.Properties)) // encoding/json writes the keys sorted
		for prop, ps := range s.Properties {
			v, err := standInValue(ps, prop, depth+1)
			if err != nil {
				return nil, err
			}
			obj[prop] = v
		}
		return obj, nil
	default:
		return nil, fmt.Errorf("%w: type %q", ErrStandInSchema, s.Type)
	}
}

// standInString is "stand-in <name>" in ASCII (so that characters, runes and
// bytes count alike), fitted to minLength and maxLength.
func standInString(s *flow.Schema, name string) string {
	text := "stand-in"
	if name = asciiWord(name); name != "" {
		text += " " + name
	}
	if s.MinLength != nil && len(text) < *s.MinLength {
		text += strings.Repeat(".", *s.MinLength-len(text))
	}
	if s.MaxLength != nil && len(text) > *s.MaxLength {
		text = text[:max(*s.MaxLength, 0)]
	}
	return text
}

// asciiWord keeps the printable ASCII of s.
func asciiWord(s string) string {
	return strings.Map(func(r rune) rune {
		if r < ' ' || r > '~' {
			return -1
		}
		return r
	}, s)
}

// standInNumber is 0 moved into [minimum, maximum], or their middle when
// both are set.
func standInNumber(s *flow.Schema) float64 {
	switch {
	case s.Minimum != nil && s.Maximum != nil:
		mid := *s.Minimum/2 + *s.Maximum/2
		return math.Min(math.Max(mid, *s.Minimum), *s.Maximum)
	case s.Minimum != nil:
		return math.Max(0, *s.Minimum)
	case s.Maximum != nil:
		return math.Min(0, *s.Maximum)
	}
	return 0
}

// standInJSON is standInValue for a JSON Schema given as it is.
func standInJSON(s map[string]any, name string, depth int) (any, error) {
	if depth > maxDepth {
		return nil, fmt.Errorf("%w: nested deeper than %d", ErrStandInSchema, maxDepth)
	}
	if alts, ok := s["anyOf"].([]any); ok && len(alts) > 0 {
		first, _ := alts[0].(map[string]any)
		return standInJSON(first, name, depth+1)
	}
	if enum, ok := s["enum"].([]any); ok && len(enum) > 0 {
		return enum[0], nil
	}
	num := func(k string) (float64, bool) {
		switch v := s[k].(type) {
		case float64:
			return v, true
		case int:
			return float64(v), true
		}
		return 0, false
	}
	switch s["type"] {
	case "string":
		fs := &flow.Schema{}
		if n, ok := num("minLength"); ok {
			fs.MinLength = new(int(n))
		}
		if n, ok := num("maxLength"); ok {
			fs.MaxLength = new(int(n))
		}
		return standInString(fs, name), nil
	case "number", "integer":
		n, _ := num("minimum")
		return math.Max(0, n), nil
	case "boolean":
		return false, nil
	case "array":
		items, _ := s["items"].(map[string]any)
		n, _ := num("minItems")
		out := make([]any, max(int(n), 1))
		for i := range out {
			v, err := standInJSON(items, "", depth+1)
			if err != nil {
				return nil, err
			}
			out[i] = v
		}
		return out, nil
	case "object":
		props, _ := s["properties"].(map[string]any)
		obj := map[string]any{}
		var required []string
		switch r := s["required"].(type) {
		case []string:
			required = r
		case []any:
			for _, x := range r {
				if n, ok := x.(string); ok {
					required = append(required, n)
				}
			}
		}
		for _, prop := range required {
			ps, _ := props[prop].(map[string]any)
			v, err := standInJSON(ps, prop, depth+1)
			if err != nil {
				return nil, err
			}
			obj[prop] = v
		}
		return obj, nil
	}
	return nil, nil
}
