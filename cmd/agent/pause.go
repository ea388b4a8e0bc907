package main

import (
	"github.com/spf13/cobra"

	"github.com/symphonix/symphonix/internal/cli"
	"github.com/symphonix/symphonix/node"
)

// newPauseCmd is `agent pause --reason R DIR` and `agent resume [--reason
// R] DIR` (node.Pause, node.Resume): the agent stops, or goes back to,
// taking new work, decided on this machine, whether or not it is running.
func newPauseCmd(a *app, paused bool) *cobra.Command {
	c := &cobra.Command{
		Use:   "resume DIR",
		Short: "Let a paused agent take new work again",
		Args:  cli.Args("DIR"),
	}
	what := "why the agent is resumed (optional)"
	if paused {
		c.Use, c.Short = "pause DIR --reason TEXT", "Stop the agent taking new work; what is in flight finishes"
		what = "why the agent is paused (required; at most 512 bytes)"
	}
	reason := c.Flags().String("reason", "", what)
	c.RunE = func(cmd *cobra.Command, args []string) error {
		cfg := node.Config{Dir: args[0], Reason: *reason, Stdout: a.stdout, Stderr: a.stderr}
		if paused {
			return node.Pause(cfg)
		}
		return node.Resume(cfg)
	}
	return c
}
