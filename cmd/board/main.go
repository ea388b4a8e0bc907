// Command board runs the Symphonix board, and manages its tokens, people
// and audit log.
//
//	board [serve] [--listen ADDR] [--public-url URL] [--data DIR] [--database DSN] ...
//	board config [serve's flags] [-o table|json]
//	board token operator --name NAME --role admin|approver|viewer [--ttl D] [--data DIR] [--create]
//	board token agent --name NAME [--ttl D] [--data DIR] [--create]
//	board token revoke ID [--data DIR]
//	board token list [--data DIR] [-o table|json]
//	board audit verify [--data DIR] [-o table|json]
//	board audit list [--after N] [--limit N] [--data DIR] [-o table|json]
//	board user add --email EMAIL --name NAME --role admin|approver|viewer [--url URL] [--data DIR] [--create]
//	board user list [--data DIR] [-o table|json]
//	board user disable|enable --email EMAIL [--data DIR]
//	board agents list|get NAME|watch [--board URL] [-o table|json]
//	board approvals list|get ID|decide ID approve|reject [--yes]|cancel ID|watch [--board URL]
//	board rules list|put|delete ID [--board URL]
//	board tools list [AGENT]|get AGENT|set AGENT SERVER TOOL on|off|on|off … [--board URL]
//	board version [-o table|json]
//	board completion bash|zsh|fish|powershell
//
// Flags go before or after arguments. Every flag also comes from the
// environment (SYMPHONIX_ and its name, --run-days as SYMPHONIX_RUN_DAYS)
// and from a TOML config file (--config FILE or SYMPHONIX_CONFIG); a flag
// on the command line wins over the environment, which wins over the
// file (docs/cli.md).
//
// The store-side commands (token, user, audit) work on an existing store
// and refuse to create one unless given --create. The operator commands
// (agents, approvals, rules, tools; audit with --board) are clients of a
// running board's API: --board URL, and an operator token from
// SYMPHONIX_TOKEN or --token-file, never from argv.
//
// Exit status: 0 done; 1 failed; 2 the command line or configuration was
// wrong, and nothing was done.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/symphonix/symphonix/internal/cli"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, os.Args[1:], os.Getenv, os.Stdout, os.Stderr)
	stop()
	cli.Report(os.Stderr, "board", err)
	os.Exit(cli.ExitCode(err))
}
