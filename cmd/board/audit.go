package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"time"

	"github.com/symphonix/symphonix/audit"
)

var (
	errAuditUsage  = errors.New("usage: board audit verify|list [flags]")
	errAuditBroken = errors.New("audit chain broken")
)

// runAudit verifies and lists the audit log. A broken chain is an error,
// so the command exits 1 and names the first bad entry.
func runAudit(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		return errAuditUsage
	}
	verb := args[0]
	fs := flag.NewFlagSet("board audit "+verb, flag.ContinueOnError)
	fs.SetOutput(stderr)
	where := storeFlags(fs, getenv)
	var after *int64
	var limit *int
	switch verb {
	case "verify":
	case "list":
		after = fs.Int64("after", 0, "list the entries after this seq")
		limit = fs.Int("limit", 100, "list at most this many entries (at most 1000)")
	default:
		return errAuditUsage
	}
	if err := fs.Parse(args[1:]); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	db, err := where.open(ctx)
	if err != nil {
		return err
	}
	defer db.Close()
	trail := audit.New(db)
	if verb == "verify" {
		r, err := trail.Verify(ctx)
		if err != nil {
			return err
		}
		if !r.OK() {
			fmt.Fprintf(stdout, "audit: entry %d: %v\n", r.Bad, r.Why)
			return errAuditBroken
		}
		fmt.Fprintf(stdout, "audit: %d entries, chain intact\n", r.Entries)
		if r.Entries > 0 {
			fmt.Fprintf(stdout, "audit: head %d %s\n", r.Entries, r.Head)
		}
		return nil
	}
	entries, err := trail.List(ctx, *after, *limit)
	if err != nil {
		return err
	}
	for _, e := range entries {
		subject := e.Subject
		if subject == "" {
			subject = "-"
		}
		fmt.Fprintf(stdout, "%d\t%s\t%s\t%s\t%s\t%s\t%s\n", e.Seq, e.At.Format(time.RFC3339Nano), e.Actor, e.Action, subject, e.Detail, e.Hash)
	}
	return nil
}
