// Command agent serves a flow folder and links it to a board.
//
//	agent [--monitor URL] [--token TOKEN] [--capability NAME]... DIR
//	agent validate DIR
//	agent check DIR
//	agent run [--input NAME=VALUE]... [--json] [--thread T] DIR
//
// The monitor URL and token also come from MONITOR_URL and MONITOR_TOKEN.
// Without a monitor URL the agent runs without a board and says so.
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
