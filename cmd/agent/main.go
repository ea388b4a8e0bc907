// Command agent serves a flow folder and links it to a board.
//
//	agent [serve] [--listen ADDR] [--public] [--journal-detail metadata|full]
//	      [--journal-max-bytes N] [--monitor URL] [--token TOKEN] [--health-interval D] DIR
//	agent validate DIR
//	agent check DIR
//	agent run [--input NAME=VALUE]... [--json] [--thread T] [--monitor URL] [--token TOKEN]
//	      [--journal-detail metadata|full] [--journal-max-bytes N] DIR
//	agent cancel [--thread T] [--reason TEXT] DIR
//	agent pause --reason TEXT DIR
//	agent resume [--reason TEXT] DIR
//
// The monitor URL and token also come from MONITOR_URL and MONITOR_TOKEN.
// Without a monitor URL the agent runs without a board and says so.
// Linked, the agent reports its runs without their input and output;
// MONITOR_DETAIL=full sends those too, less the named secrets, and any
// other value than full or empty is refused at start (docs/runs.md).
//
// `agent serve DIR` serves the flow on loopback — a chat page and a JSON API
// (docs/serve.md) — with its journal and lock in DIR/.symphonix, and prints
// "serving DIR on http://HOST:PORT". Plain `agent DIR` does the same, and
// when this binary cannot run the flow (its handlers live in a generated
// program) says it is not served and only links it to the board.
//
// A served agent runs its health checks every --health-interval (60 s;
// 0 turns them off): its MCP servers, its model, its waiting store and
// the folder's health.json (docs/health.md), reported to the board.
//
// `agent cancel --thread T DIR` ends the run waiting on the thread without
// an answer, even one whose approval is the board's; the board is told the
// next time the agent is linked to it.
//
// `agent pause --reason TEXT DIR` stops the agent taking new work, whether
// or not it is running (a served agent takes it up within a second and
// tells its board); `agent resume DIR` ends the pause. A paused agent stays
// up, linked and healthy, and finishes what it has in flight. `agent run`
// of a paused agent exits 75 (EX_TEMPFAIL) without starting a run.
//
// Exit status: 0 done; 1 failed; 75 a new run refused because the agent
// is paused.
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

	"github.com/symphonix/symphonix/node"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, os.Args[1:], os.Getenv, os.Stdin, os.Stdout, os.Stderr)
	stop()
	if err != nil {
		if !errors.Is(err, errReported) {
			fmt.Fprintln(os.Stderr, "agent:", err)
		}
		os.Exit(exitCode(err))
	}
}

// exitPaused is the exit status of a run refused because the agent is
// paused: EX_TEMPFAIL (sysexits.h), a failure that may pass if tried
// again later.
const exitPaused = 75

// exitCode is the exit status for err: exitPaused for a paused agent, 1
// for anything else.
func exitCode(err error) int {
	if errors.Is(err, node.ErrPaused) {
		return exitPaused
	}
	return 1
}
