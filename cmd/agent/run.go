package main

import (
	"context"
	"io"
	"strings"
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
		case "serve":
			return runServe(ctx, args[1:], getenv, stdout, stderr, false)
		}
	}
	return runServe(ctx, args, getenv, stdout, stderr, true)
}

// listFlag is a repeatable string flag.
type listFlag []string

func (l *listFlag) String() string { return strings.Join(*l, ",") }

func (l *listFlag) Set(s string) error {
	*l = append(*l, s)
	return nil
}
