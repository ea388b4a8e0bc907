package cli

import (
	"fmt"
	"slices"
	"strings"

	"github.com/spf13/pflag"
)

// choice is a flag value that is one of a few words.
type choice struct {
	value   string
	choices []string
}

func newChoice(def string, choices ...string) choice {
	return choice{value: def, choices: choices}
}

func (c *choice) String() string { return c.value }
func (c *choice) Type() string   { return "string" }

func (c *choice) Set(s string) error {
	if !slices.Contains(c.choices, s) {
		return fmt.Errorf("%q: want %s", s, orList(c.choices))
	}
	c.value = s
	return nil
}

// Choice registers a string flag on fs that takes one of choices, def
// first, and returns where its value is kept.
func Choice(fs *pflag.FlagSet, name, def, usage string, choices ...string) *string {
	c := newChoice(def, choices...)
	fs.Var(&c, name, usage)
	return &c.value
}

// orList is "a", "a or b", "a, b or c".
func orList(s []string) string {
	if len(s) < 2 {
		return strings.Join(s, "")
	}
	return strings.Join(s[:len(s)-1], ", ") + " or " + s[len(s)-1]
}
