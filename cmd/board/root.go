package main

import (
	"context"
	"io"
	"log/slog"

	"github.com/spf13/cobra"

	"github.com/symphonix/symphonix/internal/cli"
)

// run is the whole command, so tests can run it in-process.
func run(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	return newRoot(getenv, stdout, stderr).Run(ctx, args)
}

// app is what every subcommand is built with.
type app struct {
	root   *cli.Root
	getenv func(string) string
	stdout io.Writer
	stderr io.Writer
}

// logger is the command's logger, as --log-format and --log-level say.
func (a *app) logger() *slog.Logger { return a.root.Log.Logger(a.stderr, slog.LevelInfo) }

// newRoot is the board command: plain board serves, as board serve does.
// A subcommand is one AddCommand line here.
func newRoot(getenv func(string) string, stdout, stderr io.Writer) *cli.Root {
	root := cli.NewRoot("board", "The Symphonix board: serve it, and manage its tokens, people and audit log", getenv, stdout, stderr)
	a := &app{root: root, getenv: getenv, stdout: stdout, stderr: stderr}
	s := serveFlags(root.Flags())
	root.Annotations = map[string]string{cli.ConfigTable: "serve"}
	root.RunE = func(cmd *cobra.Command, args []string) error { return s.serve(cmd.Context(), a) }

	root.AddCommand(newServeCmd(a))
	root.AddCommand(newConfigCmd(a))
	root.AddCommand(newTokenCmd(a))
	root.AddCommand(newReceiptCmd(a))
	root.AddCommand(newUserCmd(a))
	root.AddCommand(newMigrateCmd(a))
	root.AddCommand(withAPI(a, newAuditCmd(a)))
	root.AddCommand(newAgentsCmd(a))
	root.AddCommand(newApprovalsCmd(a))
	root.AddCommand(newRulesCmd(a))
	root.AddCommand(newToolsCmd(a))
	root.AddCommand(newTriggersCmd(a))
	root.AddCommand(newEvalsCmd(a))
	root.AddCommand(newRunsCmd(a), newDelegationsCmd(a), newAlertsCmd(a))
	root.AddCommand(newKeyCmd(a), newPackageCmd(a), newScopeCmd(a))
	return root
}
