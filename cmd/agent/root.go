package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"

	"github.com/spf13/cobra"

	"github.com/symphonix/symphonix/flow"
	"github.com/symphonix/symphonix/internal/cli"
)

// run is the whole command, so tests can run it in-process.
func run(ctx context.Context, args []string, getenv func(string) string, stdin io.Reader, stdout, stderr io.Writer) error {
	return newRoot(getenv, stdin, stdout, stderr).Run(ctx, args)
}

// app is what every subcommand is built with.
type app struct {
	root   *cli.Root
	getenv func(string) string
	stdin  io.Reader
	stdout io.Writer
	stderr io.Writer
}

// logger is the command's logger, as --log-format and --log-level say;
// def is the level when --log-level is not given.
func (a *app) logger(def slog.Level) *slog.Logger { return a.root.Log.Logger(a.stderr, def) }

// newRoot is the agent command: plain agent DIR serves, as agent serve
// DIR does, and links what it cannot serve. A subcommand is one
// AddCommand line here.
func newRoot(getenv func(string) string, stdin io.Reader, stdout, stderr io.Writer) *cli.Root {
	root := cli.NewRoot("agent DIR", "A Symphonix agent: serve a flow folder, run it once, and link it to a board", getenv, stdout, stderr)
	a := &app{root: root, getenv: getenv, stdin: stdin, stdout: stdout, stderr: stderr}
	s := serveFlags(root.Flags())
	root.Args = rootArgs
	root.Annotations = map[string]string{cli.ConfigTable: "serve"}
	root.RunE = func(cmd *cobra.Command, args []string) error { return s.serve(cmd.Context(), a, args[0], true) }

	root.AddCommand(newServeCmd(a))
	root.AddCommand(newValidateCmd(a))
	root.AddCommand(newCheckCmd(a))
	root.AddCommand(newFmtCmd(a))
	root.AddCommand(newRunCmd(a))
	root.AddCommand(newTestCmd(a))
	root.AddCommand(newEvalCmd(a))
	root.AddCommand(newCancelCmd(a))
	root.AddCommand(newPauseCmd(a, true))
	root.AddCommand(newPauseCmd(a, false))
	root.AddCommand(newInstallCmd(a))
	root.AddCommand(newInstantiateCmd(a))
	return root
}

// rootArgs: plain agent takes the folder it serves.
func rootArgs(cmd *cobra.Command, args []string) error {
	if len(args) == 0 {
		return cli.Usagef("want a flow folder, DIR, or a command (see agent --help)")
	}
	return cli.Args("DIR")(cmd, args)
}

// errNoToken: a monitor URL without an agent token.
var errNoToken = cli.Usagef("--token, --token-file or MONITOR_TOKEN: required with a monitor URL")

// reported prints an invalid flow's problems in full, each with its code
// and path, and returns cli.ErrReported for it; any other err is returned
// as it is.
func reported(stderr io.Writer, err error) error {
	var ve *flow.ValidationError
	if errors.As(err, &ve) {
		fmt.Fprint(stderr, ve.Format())
		return cli.ErrReported
	}
	return err
}
