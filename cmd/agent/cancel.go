package main

import (
	"log/slog"

	"github.com/spf13/cobra"

	"github.com/symphonix/symphonix/internal/cli"
	"github.com/symphonix/symphonix/node"
)

// newCancelCmd is `agent cancel --thread T DIR` (node.Cancel): it ends
// the run waiting on the thread, here, without an answer. When the board
// held its approval, the board is told, and cancels it, the next time the
// agent is linked to it.
func newCancelCmd(a *app) *cobra.Command {
	c := &cobra.Command{
		Use:   "cancel DIR",
		Short: "End the run waiting on a thread, without an answer",
		Args:  cli.Args("DIR"),
	}
	thread := c.Flags().String("thread", "terminal", "the thread whose waiting run to end")
	reason := c.Flags().String("reason", "", "why, for the board (at most 4096 bytes)")
	c.RunE = func(cmd *cobra.Command, args []string) error {
		return reported(a.stderr, node.Cancel(cmd.Context(), node.Config{
			Dir:    args[0],
			Getenv: a.getenv,
			Logger: a.logger(slog.LevelWarn),
			Stdout: a.stdout,
			Stderr: a.stderr,
			Thread: *thread,
			Reason: *reason,
		}))
	}
	return c
}
