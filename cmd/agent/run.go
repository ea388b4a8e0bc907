package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/symphonix/symphonix/flow"
)

// run is the whole command, so tests can run it in-process.
func run(ctx context.Context, args []string, getenv func(string) string, stdin io.Reader, stdout, stderr io.Writer) error {
	if len(args) > 0 {
		switch args[0] {
		case "validate":
			return runValidate(args[1:], stdout)
		case "check":
			return runCheck(args[1:], stdout)
		case "run":
			return runFlow(ctx, args[1:], getenv, stdin, stdout, stderr)
		case "cancel":
			return runCancel(ctx, args[1:], getenv, stdout, stderr)
		case "pause":
			return runPause(args[1:], stdout, stderr, true)
		case "resume":
			return runPause(args[1:], stdout, stderr, false)
		case "serve":
			return runServe(ctx, args[1:], getenv, stdout, stderr, false)
		}
	}
	return runServe(ctx, args, getenv, stdout, stderr, true)
}

// errNoToken: a monitor URL without an agent token.
var errNoToken = errors.New("--token or MONITOR_TOKEN: required with a monitor URL")

// reported prints an invalid flow's problems in full, each with its code
// and path, and returns errReported for it; any other err is returned as
// it is.
func reported(stderr io.Writer, err error) error {
	var ve *flow.ValidationError
	if errors.As(err, &ve) {
		fmt.Fprint(stderr, ve.Format())
		return errReported
	}
	return err
}

// listFlag is a repeatable string flag.
type listFlag []string

func (l *listFlag) String() string { return strings.Join(*l, ",") }

func (l *listFlag) Set(s string) error {
	*l = append(*l, s)
	return nil
}
