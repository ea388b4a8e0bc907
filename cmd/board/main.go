// Command board runs the Symphonix board, and mints and revokes its tokens.
//
//	board [--listen ADDR] [--public-url URL] [--data DIR] [--database DSN]
//	board token operator --name NAME --role admin|approver|viewer [--ttl D] [--data DIR]
//	board token agent --name NAME [--ttl D] [--data DIR]
//	board token revoke [--data DIR] ID
//	board token list [--data DIR]
//	board audit verify [--data DIR]
//	board audit list [--data DIR] [--after N] [--limit N]
//	board user add --email EMAIL --name NAME --role admin|approver|viewer [--url URL] [--data DIR]
//	board user list [--data DIR]
//	board user disable|enable --email EMAIL [--data DIR]
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, os.Args[1:], os.Getenv, os.Stdout, os.Stderr)
	stop()
	if err != nil {
		fmt.Fprintln(os.Stderr, "board:", err)
		os.Exit(1)
	}
}
