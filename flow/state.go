package flow

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"strconv"
	"strings"
)

// State is a run's channels by name, as a node or a router sees them. Every
// value is a JSON value as encoding/json decodes one into an any: nil,
// bool, float64, string, []any or map[string]any — whatever a handler
// wrote is turned into that form when it is written, so a run reads the
// same values before and after it waits in a checkpointer.
//
// The State a handler is given is its own copy of the map, but the lists
// and objects inside it are shared with the other nodes of the step:
// change nothing in it, and write an Update instead.
type State map[string]any

// Update is what a node writes: a value for each channel it writes. Each
// value goes through the channel's reducer when the step ends.
type Update map[string]any

// jsonValue returns v as a fresh JSON value (see State), deep-copied, so
// that nothing a handler keeps can change the run's state afterwards.
// Values of other Go types go through encoding/json.
func jsonValue(v any) (any, error) {
	switch v := v.(type) {
	case nil, bool, string:
		return v, nil
	case float64:
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return nil, fmt.Errorf("%v is not a JSON number", v)
		}
		return v, nil
	case int:
		return float64(v), nil
	case int64:
		return float64(v), nil
	case int32:
		return float64(v), nil
	case float32:
		return jsonValue(float64(v))
	case []any:
		out := make([]any, len(v))
		for i, e := range v {
			c, err := jsonValue(e)
			if err != nil {
				return nil, err
			}
			out[i] = c
		}
		return out, nil
	case map[string]any:
		return jsonObject(v)
	case State:
		return jsonObject(v)
	case Update:
		return jsonObject(v)
	case []string:
		out := make([]any, len(v))
		for i, e := range v {
			out[i] = e
		}
		return out, nil
	}
	data, err := json.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("not a JSON value: %w", err)
	}
	var out any
	if err := json.Unmarshal(data, &out); err != nil {
		return nil, fmt.Errorf("not a JSON value: %w", err)
	}
	return out, nil
}

func jsonObject(m map[string]any) (map[string]any, error) {
	if m == nil {
		return nil, nil
	}
	out := make(map[string]any, len(m))
	for k, e := range m {
		c, err := jsonValue(e)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", k, err)
		}
		out[k] = c
	}
	return out, nil
}

// clone deep-copies a JSON value.
func clone(v any) any {
	switch v := v.(type) {
	case []any:
		out := make([]any, len(v))
		for i, e := range v {
			out[i] = clone(e)
		}
		return out
	case map[string]any:
		out := make(map[string]any, len(v))
		for k, e := range v {
			out[k] = clone(e)
		}
		return out
	}
	return v
}

// Text renders a value for a prompt or a person: a string as it stands, nothing as a
// gap, anything else as compact JSON.
func Text(v any) string {
	switch v := v.(type) {
	case nil:
		return ""
	case string:
		return v
	}
	return jsonText(v)
}

// jsonText is compact JSON without HTML escaping: what a model or a person
// reads.
func jsonText(v any) string {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return fmt.Sprint(v)
	}
	return strings.TrimSuffix(b.String(), "\n")
}

// lookup reads a placeholder's path out of a state: "order",
// "order.total", "items[2].name". A path that leads nowhere reads nothing.
func lookup(s State, path string) (any, bool) {
	name, rest := path, ""
	if i := strings.IndexAny(path, ".["); i >= 0 {
		name, rest = path[:i], path[i:]
	}
	v, ok := s[name]
	for ok && rest != "" {
		switch rest[0] {
		case '.':
			rest = rest[1:]
			end := strings.IndexAny(rest, ".[")
			if end < 0 {
				end = len(rest)
			}
			var m map[string]any
			if m, ok = v.(map[string]any); ok {
				v, ok = m[rest[:end]]
			}
			rest = rest[end:]
		case '[':
			end := strings.IndexByte(rest, ']')
			if end < 0 {
				return nil, false
			}
			i, err := strconv.Atoi(strings.TrimSpace(rest[1:end]))
			var l []any
			l, ok = v.([]any)
			if err != nil || !ok || i < 0 || i >= len(l) {
				return nil, false
			}
			v, rest = l[i], rest[end+1:]
		default:
			return nil, false
		}
	}
	return v, ok
}

// view is the state one node sees: its own shallow copy.
func view(s State) State {
	return maps.Clone(s)
}
