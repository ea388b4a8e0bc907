// Command agent serves a flow folder and links it to a board.
//
//	agent [serve] [--listen ADDR] [--public] [--journal-detail metadata|full]
//	      [--journal-max-bytes N] [--monitor URL] [--token TOKEN] [--capability NAME]... DIR
//	agent validate DIR
//	agent check DIR
//	agent run [--input NAME=VALUE]... [--json] [--thread T] [--monitor URL] [--token TOKEN] DIR
//	agent cancel [--thread T] [--reason TEXT] DIR
//
// The monitor URL and token also come from MONITOR_URL and MONITOR_TOKEN.
// Without a monitor URL the agent runs without a board and says so.
//
// `agent serve DIR` serves the flow on loopback — a chat page and a JSON API
// (docs/serve.md) — with its journal and lock in DIR/.symphonix, and prints
// "serving DIR on http://HOST:PORT". Plain `agent DIR` does the same, and
// when this binary cannot run the flow (its handlers live in a generated
// program) says it is not served and only links it to the board.
//
// `agent cancel --thread T DIR` ends the run waiting on the thread without
// an answer, even one whose approval is the board's; the board is told the
// next time the agent is linked to it.
//
// The command is its flags: serving, running and cancelling are package
// node (node.Serve, node.Run, node.Cancel).
package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, os.Args[1:], os.Getenv, os.Stdin, os.Stdout, os.Stderr)
	stop()
	if err != nil {
		if !errors.Is(err, errReported) {
			fmt.Fprintln(os.Stderr, "agent:", err)
		}
		os.Exit(1)
	}
}
