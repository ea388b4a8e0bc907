package cli

import (
	"strings"

	"github.com/spf13/pflag"
)

// listValue is a repeatable flag whose every value is checked as it is
// set; from the environment it is comma-separated, in a config file a
// list.
type listValue struct {
	vals  *[]string
	check func(string) error
	set   bool
}

// List registers a repeatable flag on fs; check, when not nil, refuses a
// value with an error that says what it wants.
func List(fs *pflag.FlagSet, name, usage string, check func(string) error) *[]string {
	l := &listValue{vals: new([]string), check: check}
	fs.Var(l, name, usage)
	return l.vals
}

func (l *listValue) String() string { return strings.Join(*l.vals, ",") }
func (l *listValue) Type() string   { return "list" }

func (l *listValue) Set(s string) error {
	if !l.set {
		*l.vals = nil // the first value given replaces the default
		l.set = true
	}
	return l.Append(s)
}

func (l *listValue) Append(s string) error {
	if l.check != nil {
		if err := l.check(s); err != nil {
			return err
		}
	}
	*l.vals = append(*l.vals, s)
	return nil
}

func (l *listValue) Replace(vals []string) error {
	*l.vals = nil
	for _, v := range vals {
		if err := l.Append(v); err != nil {
			return err
		}
	}
	return nil
}

func (l *listValue) GetSlice() []string { return append([]string(nil), *l.vals...) }
