package flow

import (
	"fmt"
	"maps"
	"slices"
	"time"
)

// Reducer combines a channel's value with one write to it, and returns the
// new value: how two writes in one step combine, and how a write combines
// with what the channel held. It must not change old or new. A flow names
// it in a channel's "reducer"; the names "append" and "merge" are the
// engine's own, and any other is looked up in Registry.Reducers.
type Reducer func(old, new any) (any, error)

// appendReducer is "append": a list written is added item by item, any
// other value as one item, and nothing (nil) adds nothing. A channel
// holding nothing counts as an empty list.
func appendReducer(old, new any) (any, error) {
	var list []any
	switch o := old.(type) {
	case nil:
	case []any:
		list = o
	default:
		return nil, fmt.Errorf("an append channel holds a list, and it holds %s", KindOf(old))
	}
	switch n := new.(type) {
	case nil:
		if list == nil {
			return []any{}, nil
		}
		return list, nil
	case []any:
		return append(list[:len(list):len(list)], n...), nil
	default:
		return append(list[:len(list):len(list)], n), nil
	}
}

// mergeReducer is "merge": a shallow merge of objects, the written keys
// winning. A channel holding nothing counts as an empty object, and
// nothing written changes nothing.
func mergeReducer(old, new any) (any, error) {
	var obj map[string]any
	switch o := old.(type) {
	case nil:
	case map[string]any:
		obj = o
	default:
		return nil, fmt.Errorf("a merge channel holds an object, and it holds %s", KindOf(old))
	}
	switch n := new.(type) {
	case nil:
		if obj == nil {
			return map[string]any{}, nil
		}
		return obj, nil
	case map[string]any:
		out := make(map[string]any, len(obj)+len(n))
		maps.Copy(out, obj)
		maps.Copy(out, n)
		return out, nil
	default:
		return nil, fmt.Errorf("a merge channel takes an object, and it was given %s", KindOf(new))
	}
}

// KeptTurns is how many turns a conversation's history channel holds: the
// newest ones.
const KeptTurns = 20

// addTurns adds turns to a history: a turn it already holds (the same
// "at") is dropped, the turns are kept in the order of their "at", and
// only the newest KeptTurns are kept.
func addTurns(old, new any) (any, error) {
	held, _ := old.([]any)
	var add []any
	switch n := new.(type) {
	case nil:
	case []any:
		add = n
	default:
		return nil, fmt.Errorf("history holds a list of turns, and it was given %s", KindOf(new))
	}
	out := slices.Clone(held)
	for _, t := range add {
		if !slices.ContainsFunc(out, func(h any) bool { return sameTurn(h, t) }) {
			out = append(out, t)
		}
	}
	slices.SortStableFunc(out, func(a, b any) int { return turnAt(a).Compare(turnAt(b)) })
	if len(out) > KeptTurns {
		out = out[len(out)-KeptTurns:]
	}
	if out == nil {
		out = []any{}
	}
	return out, nil
}

// turnAt reads when a turn was written; a turn that does not say sorts
// first.
func turnAt(t any) time.Time {
	m, _ := t.(map[string]any)
	s, _ := m["at"].(string)
	at, _ := time.Parse(time.RFC3339Nano, s)
	return at
}

func sameTurn(a, b any) bool {
	ma, _ := a.(map[string]any)
	mb, _ := b.(map[string]any)
	sa, _ := ma["at"].(string)
	sb, _ := mb["at"].(string)
	if sa == "" || sb == "" {
		return false
	}
	if sa == sb {
		return true
	}
	ta, ea := time.Parse(time.RFC3339Nano, sa)
	tb, eb := time.Parse(time.RFC3339Nano, sb)
	return ea == nil && eb == nil && ta.Equal(tb)
}

// Fits reports whether the JSON value v is of channel type typ; a type not
// said takes anything. A file channel takes an object: whether it is a
// file object {id, name, mediaType, url, bytes} is FileOf's to say, and
// every write to a file channel is checked by it.
func Fits(typ string, v any) bool {
	var ok bool
	switch typ {
	case ChannelString:
		_, ok = v.(string)
	case ChannelNumber:
		_, ok = v.(float64)
	case ChannelBoolean:
		_, ok = v.(bool)
	case ChannelList:
		_, ok = v.([]any)
	case ChannelObject:
		_, ok = v.(map[string]any)
	case ChannelFile:
		// A file is an object; FileOf checks that it is a file object.
		_, ok = v.(map[string]any)
	default:
		ok = true
	}
	return ok
}

// KindOf names a JSON value's type with its article, for messages ("a number").
func KindOf(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case string:
		return "a string"
	case float64:
		return "a number"
	case bool:
		return "a boolean"
	case []any:
		return "a list"
	case map[string]any:
		return "an object"
	}
	return fmt.Sprintf("a %T", v)
}
