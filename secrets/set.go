package secrets

import (
	"cmp"
	"encoding/json"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
)

// Set is a list of secrets made ready to remove: build it once (NewSet)
// and use it for every text. A nil or empty Set removes nothing. It is
// safe for concurrent use, and may grow (Add) while it is used: a served
// agent's named secrets follow its .env.
type Set struct {
	mu  sync.Mutex // serialises Add
	cur atomic.Pointer[setState]
}

// setState is what a Set removes at one time; it never changes once built.
type setState struct {
	values []string
	r      *strings.Replacer // nil when values is empty
}

// NewSet returns the Set of list: its values Enough long, each once. A
// value shorter than Enough is left out, as every list of this package
// leaves it out (see Enough).
func NewSet(list []string) *Set {
	s := &Set{}
	s.cur.Store(newSetState(list))
	return s
}

func newSetState(list []string) *setState {
	var values []string
	for _, v := range list {
		if len(v) >= Enough {
			values = append(values, v)
		}
	}
	// Longest first, so that where two values start at the same place the
	// longer is taken whole; then in byte order, so that the same list
	// always removes the same way.
	slices.SortFunc(values, func(a, b string) int {
		return cmp.Or(cmp.Compare(len(b), len(a)), strings.Compare(a, b))
	})
	values = slices.Compact(values)
	st := &setState{values: values}
	if len(values) > 0 {
		pairs := make([]string, 0, 2*len(values))
		for _, v := range values {
			pairs = append(pairs, v, Redacted)
		}
		st.r = strings.NewReplacer(pairs...)
	}
	return st
}

func (s *Set) state() *setState {
	if s == nil {
		return &setState{}
	}
	if st := s.cur.Load(); st != nil {
		return st
	}
	return &setState{}
}

// Add adds the values of list Enough long to the set, and reports how many
// it did not hold. A value is never taken out: what was once a secret is
// removed from every text after it, so a key replaced in .env is still
// removed where an old conversation repeats it. Texts being read while it
// adds are read with the set as it was.
func (s *Set) Add(list []string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	old := s.state()
	st := newSetState(append(slices.Clone(old.values), list...))
	s.cur.Store(st)
	return len(st.values) - len(old.values)
}

// Len is how many values the set removes.
func (s *Set) Len() int {
	return len(s.state().values)
}

// Without returns text with every occurrence of each of the set's values
// replaced with Redacted. The text is read once, from its start: at each
// place the longest value that starts there is replaced, and the reading
// goes on after it, so a value that holds another is removed whole, and
// a value that occurs twice is removed twice. The time it takes grows with
// the text's length, not with the number of values.
func (s *Set) Without(text string) string {
	st := s.state()
	if st.r == nil {
		return text
	}
	return st.r.Replace(text)
}

// Without returns text with each value of list at least Enough long
// replaced with Redacted, as Set.Without does. It builds the Set each
// time: for many texts, build it once with NewSet.
func Without(text string, list []string) string {
	return NewSet(list).Without(text)
}

// WithoutValue returns v, a value shaped as encoding/json decodes JSON
// into an any (maps, lists, strings, numbers, booleans, nil), with the
// set's values removed from every string and every key in it. A number
// whose text holds a value becomes the string Redacted. A value of any
// other type is read as its JSON first, and what that decodes to is
// returned; one that cannot be encoded is returned as it is. v itself is
// never changed.
func (s *Set) WithoutValue(v any) any {
	if s.Len() == 0 || v == nil {
		return v
	}
	switch v := v.(type) {
	case string:
		return s.Without(v)
	case bool:
		return v
	case float64:
		b, err := json.Marshal(v) // the number as the journal's JSON writes it
		if err != nil {
			return v
		}
		return s.number(v, string(b))
	case json.Number:
		return s.number(v, string(v))
	case map[string]any:
		out := make(map[string]any, len(v))
		for k, x := range v {
			out[s.Without(k)] = s.WithoutValue(x)
		}
		return out
	case []any:
		out := make([]any, len(v))
		for i, x := range v {
			out[i] = s.WithoutValue(x)
		}
		return out
	}
	b, err := json.Marshal(v)
	if err != nil {
		return v
	}
	var decoded any
	d := json.NewDecoder(strings.NewReader(string(b)))
	d.UseNumber()
	if err := d.Decode(&decoded); err != nil {
		return v
	}
	return s.WithoutValue(decoded)
}

// number is n, or Redacted when its text holds one of the set's values.
func (s *Set) number(n any, text string) any {
	if s.Without(text) != text {
		return Redacted
	}
	return n
}
