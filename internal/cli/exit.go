package cli

import (
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// Exit codes, the same for both commands (an agent adds its own 75 for a
// run refused because it is paused).
const (
	ExitOK      = 0 // done
	ExitFailure = 1 // the command ran and failed
	ExitUsage   = 2 // the command line or configuration was wrong: nothing was done
)

// UsageError is a command line the command cannot act on: an unknown
// command or flag, a flag's bad value, the wrong number of arguments, a
// bad environment variable or config file. Such a command exits 2.
type UsageError struct{ Err error }

func (e *UsageError) Error() string { return e.Err.Error() }
func (e *UsageError) Unwrap() error { return e.Err }

// Usagef is a *UsageError with the message format gives.
func Usagef(format string, args ...any) error {
	return &UsageError{Err: fmt.Errorf(format, args...)}
}

// ErrReported is a failure the command has already printed in full: the
// command exits 1 and prints nothing more.
var ErrReported = errors.New("reported")

// ExitCode is the exit status for err: 0 for nil, 2 for a *UsageError, 1
// for anything else.
func ExitCode(err error) int {
	var u *UsageError
	switch {
	case err == nil:
		return ExitOK
	case errors.As(err, &u):
		return ExitUsage
	}
	return ExitFailure
}

// Report prints err on one line, prefixed with the command's name, unless
// it is nil or ErrReported.
func Report(w io.Writer, name string, err error) {
	if err == nil || errors.Is(err, ErrReported) {
		return
	}
	msg := strings.ReplaceAll(err.Error(), "\n", " ")
	fmt.Fprintf(w, "%s: %s\n", name, msg)
}

// flagError turns what pflag says of a bad flag into a *UsageError that
// names the flag and says what it wants.
func flagError(cmd *cobra.Command, err error) error {
	var (
		invalid  *pflag.InvalidValueError
		required *pflag.ValueRequiredError
		unknown  *pflag.NotExistError
	)
	switch {
	case errors.As(err, &invalid):
		f := invalid.GetFlag()
		if want, ok := typeWords[f.Value.Type()]; ok {
			return Usagef("--%s: %q is not %s", f.Name, invalid.GetValue(), want)
		}
		return Usagef("--%s: %v", f.Name, errors.Unwrap(invalid))
	case errors.As(err, &required):
		return Usagef("--%s: needs a value", required.GetFlag().Name)
	case errors.As(err, &unknown):
		name := "--" + unknown.GetSpecifiedName()
		if s := unknown.GetSpecifiedShortnames(); s != "" {
			name = "-" + s
		}
		return Usagef("%s: unknown flag (see %s --help)", name, cmd.CommandPath())
	}
	return &UsageError{Err: err}
}

// typeWords says what a value of pflag's built-in types looks like.
var typeWords = map[string]string{
	"duration": "a duration such as 90s, 15m or 720h",
	"int":      "a whole number",
	"int64":    "a whole number",
	"uint":     "a whole number of 0 or more",
	"float64":  "a number",
	"bool":     "true or false",
}
