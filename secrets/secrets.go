// Package secrets knows which values of a deployment are secrets, and
// removes them from text exactly.
//
// There are two lists, for two uses:
//
//   - Named: the values of a finite set of named variables — the ones an
//     agent folder's .env.example asks for and its .env gives (NamesIn,
//     ValuesIn), the flow's requires.env, the model's key. They are removed
//     from what keeps what a person said (a journal at full detail), where
//     removing anything else would change what was said.
//   - In: every value of the process's environment. It is removed from
//     short details that go to another machine (SafeDetail), together with
//     anything shaped like a credential, where eating a word costs nothing.
//
// A value shorter than Enough is never a secret; a secret is replaced
// with Redacted wherever it occurs (Set.Without). The design is
// docs/secrets.md.
package secrets

import (
	"strings"
)

// Enough is the length, in bytes, below which a value is never treated as
// a secret. Every list in this package leaves shorter values out, and Set
// ignores them.
//
// A secret is replaced wherever it occurs in a text, so a short value
// would eat the words it happens to spell: a variable set to "1", "true",
// "info" or "en_US" would take every occurrence of those with it. Eight
// bytes is where that stops: it is longer than the flags, levels, locales
// and small numbers environments are full of, and a credential is never
// that short (random keys and tokens are 16 bytes and more, and password
// rules start at 8). A secret shorter than this is a weak secret, and
// removing it from text would not make it a strong one.
const Enough = 8

// Redacted is what a secret is replaced with.
const Redacted = "REDACTED"

// Named returns the values env gives the variables names, each once, in
// the order of names: the list that is removed from what keeps what a
// person said. A value shorter than Enough is left out, and so is an empty
// name. A value with white space around it is listed as it is and, when
// that is Enough long too, trimmed (the model client trims its key, and a
// reply would show it trimmed).
func Named(names []string, env func(string) string) []string {
	var l list
	for _, name := range names {
		if name != "" {
			l.add(env(name))
		}
	}
	return l.values
}

// In returns every value of env, an environment as os.Environ gives it
// ("NAME=VALUE"), that is at least Enough long, each once, in the order of
// env, with trimmed values as Named has them. The names are not secrets.
//
// The rule is exact, on purpose: every value Enough or longer is a secret
// whatever it holds — a PATH, a HOME, a host name, a locale long enough.
// The list is for short details going to another machine (SafeDetail),
// where eating a path or a host name costs nothing and guessing which
// values matter could cost a key.
func In(env []string) []string {
	var l list
	for _, kv := range env {
		if _, v, ok := strings.Cut(kv, "="); ok {
			l.add(v)
		}
	}
	return l.values
}

// list is values Enough long, each once, in the order they were added.
type list struct {
	values []string
	seen   map[string]bool
}

// add adds v, and v trimmed of white space when that differs, leaving out
// what is shorter than Enough or there already.
func (l *list) add(v string) {
	for _, s := range []string{v, strings.TrimSpace(v)} {
		if len(s) < Enough || l.seen[s] {
			continue
		}
		if l.seen == nil {
			l.seen = make(map[string]bool)
		}
		l.seen[s] = true
		l.values = append(l.values, s)
	}
}
