package main

import (
	"flag"
	"fmt"
	"io"

	"github.com/symphonix/symphonix/node"
)

// runPause is `agent pause --reason R DIR` and `agent resume [--reason R]
// DIR` (node.Pause, node.Resume): the agent stops, or goes back to,
// taking new work, decided on this machine, whether or not it is running.
func runPause(args []string, stdout, stderr io.Writer, paused bool) error {
	name, usage := "agent resume", "usage: agent resume [--reason TEXT] DIR"
	what := "why the agent is resumed (optional)"
	if paused {
		name, usage = "agent pause", "usage: agent pause --reason TEXT DIR"
		what = "why the agent is paused (required; at most 512 bytes)"
	}
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	reason := fs.String("reason", "", what)
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		return fmt.Errorf("%s", usage)
	}
	cfg := node.Config{Dir: fs.Arg(0), Reason: *reason, Stdout: stdout, Stderr: stderr}
	if paused {
		return node.Pause(cfg)
	}
	return node.Resume(cfg)
}
