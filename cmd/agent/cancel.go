package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"

	"github.com/symphonix/symphonix/node"
)

// runCancel is `agent cancel --thread T DIR` (node.Cancel): it ends the
// run waiting on the thread, here, without an answer. When the board held
// its approval, the board is told, and cancels it, the next time the
// agent is linked to it.
func runCancel(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("agent cancel", flag.ContinueOnError)
	fs.SetOutput(stderr)
	thread := fs.String("thread", "terminal", "the thread whose waiting run to end")
	reason := fs.String("reason", "", "why, for the board (at most 4096 bytes)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		return fmt.Errorf("usage: agent cancel [--thread T] [--reason TEXT] DIR")
	}
	return reported(stderr, node.Cancel(ctx, node.Config{
		Dir:    fs.Arg(0),
		Getenv: getenv,
		Logger: slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelWarn})),
		Stdout: stdout,
		Stderr: stderr,
		Thread: *thread,
		Reason: *reason,
	}))
}
