// Command agent serves a flow folder and links it to a board.
//
//	agent [serve] [--listen ADDR] [--public] [--journal-detail metadata|full]
//	      [--journal-max-bytes N] [--monitor URL] [--token TOKEN | --token-file PATH]
//	      [--health-interval D] DIR
//	agent validate DIR [-o table|json]
//	agent check DIR [-o table|json]
//	agent run DIR [--input NAME=VALUE]... [--json] [--thread T] [--monitor URL]
//	      [--token TOKEN | --token-file PATH] [--journal-detail metadata|full] [--journal-max-bytes N]
//	agent run FILE.af [--input JSON] [--workflow NAME]
//	agent cancel DIR [--thread T] [--reason TEXT]
//	agent pause DIR --reason TEXT
//	agent resume DIR [--reason TEXT]
//	agent install NAME[@VERSION] DIR --board URL [--digest sha256:…]
//	      [--token-file PATH] [--ca-file PEM] [-o table|json]
//	agent instantiate NAME[@VERSION] DIR --board URL [--param NAME=VALUE]...
//	      [--digest sha256:…] [--token-file PATH] [--ca-file PEM] [-o table|json]
//	agent version [-o table|json]
//	agent completion bash|zsh|fish|powershell
//
// Flags go before or after the folder. Every flag also comes from the
// environment (SYMPHONIX_ and its name: --journal-detail is
// SYMPHONIX_JOURNAL_DETAIL) and from a TOML config file (--config FILE or
// SYMPHONIX_CONFIG); a flag on the command line wins over the
// environment, which wins over the file (docs/cli.md). The monitor URL
// and token keep their names, MONITOR_URL and MONITOR_TOKEN; --token-file
// (SYMPHONIX_TOKEN_FILE) reads the token from a file only its owner may
// read, so that it never shows in ps.
//
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
// `agent install NAME[@VERSION] DIR` downloads an agent package from the
// board's library, checks it on this machine as the board did (a safe
// archive, the digest of the board's record and of --digest, the signatures
// of the scope's trusted keys, the name and version asked for) and only
// then writes it into the new folder DIR; `agent instantiate` does the same
// for a template, filling its parameters from --param. Nothing is run; the
// token comes from --token-file or SYMPHONIX_TOKEN (docs/packages.md).
//
// Exit status: 0 done; 1 failed; 2 the command line or configuration was
// wrong, and nothing was done; 75 a new run refused because the agent is
// paused.
//
// The command is its flags: serving, running and cancelling are package
// node (node.Serve, node.Run, node.Cancel); installing is package library
// (library.Install, library.Instantiate).
package main

import (
	"context"
	"errors"
	"os"
	"os/signal"
	"syscall"

	"github.com/symphonix/symphonix/internal/cli"
	"github.com/symphonix/symphonix/node"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, os.Args[1:], os.Getenv, os.Stdin, os.Stdout, os.Stderr)
	stop()
	cli.Report(os.Stderr, "agent", err)
	os.Exit(exitCode(err))
}

// exitPaused is the exit status of a run refused because the agent is
// paused: EX_TEMPFAIL (sysexits.h), a failure that may pass if tried
// again later.
const exitPaused = 75

// exitCode is the exit status for err: exitPaused for a paused agent,
// else as cli.ExitCode says (2 for a usage error, 1 for a failure).
func exitCode(err error) int {
	if errors.Is(err, node.ErrPaused) {
		return exitPaused
	}
	return cli.ExitCode(err)
}
