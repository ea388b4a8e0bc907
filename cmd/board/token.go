package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"text/tabwriter"
	"time"

	"github.com/symphonix/symphonix/ent"
	"github.com/symphonix/symphonix/identity"
)

// runToken mints, revokes and lists tokens. A minted token is the only
// thing printed on stdout; its id goes to stderr.
func runToken(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		return errUsage
	}
	verb := args[0]
	fs := flag.NewFlagSet("board token "+verb, flag.ContinueOnError)
	fs.SetOutput(stderr)
	where := storeFlags(fs, getenv)
	var name, role *string
	var ttl *time.Duration
	switch verb {
	case "operator", "agent":
		name = fs.String("name", "", "who the token is for (an agent: its flow's name)")
		ttl = fs.Duration("ttl", 365*24*time.Hour, "how long the token is good for")
		if verb == "operator" {
			role = fs.String("role", "", "admin, approver or viewer")
		}
	case "revoke", "list":
	default:
		return errUsage
	}
	if err := fs.Parse(args[1:]); err != nil {
		return err
	}
	db, err := where.open(ctx)
	if err != nil {
		return err
	}
	defer db.Close()
	tokens, err := identity.OpenTokens(ctx, db)
	if err != nil {
		return err
	}
	switch verb {
	case "operator", "agent":
		if fs.NArg() > 0 {
			return fmt.Errorf("unexpected argument %q", fs.Arg(0))
		}
		o := identity.MintOptions{Kind: identity.Kind(verb), Name: *name, TTL: *ttl, Actor: "cli"}
		if role != nil {
			r, err := identity.ParseRole(*role)
			if err != nil {
				return fmt.Errorf("--role: %w", err)
			}
			o.Role = r
		}
		if *name == "" {
			return fmt.Errorf("--name: required")
		}
		m, err := tokens.Mint(ctx, o)
		if err != nil {
			return err
		}
		fmt.Fprintln(stdout, m.Token)
		fmt.Fprintf(stderr, "token id %s, good until %s (revoke: board token revoke %s)\n", m.ID, m.ExpiresAt.UTC().Format(time.RFC3339), m.ID)
		return nil
	case "revoke":
		if fs.NArg() != 1 {
			return fmt.Errorf("usage: board token revoke [--data DIR] ID")
		}
		if err := tokens.RevokeBy(ctx, fs.Arg(0), "cli", time.Now()); err != nil {
			return err
		}
		fmt.Fprintf(stderr, "token %s revoked\n", fs.Arg(0))
		return nil
	default: // list
		return listTokens(ctx, db, stdout)
	}
}

func listTokens(ctx context.Context, db *ent.Client, stdout io.Writer) error {
	rows, err := db.Token.Query().Order(ent.Asc("issued_at")).All(ctx)
	if err != nil {
		return err
	}
	w := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(w, "ID\tKIND\tNAME\tROLE\tEXPIRES\tREVOKED")
	for _, t := range rows {
		revoked := "-"
		if t.RevokedAt != nil {
			revoked = t.RevokedAt.UTC().Format(time.RFC3339)
		}
		role := t.Role
		if role == "" {
			role = "-"
		}
		fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\t%s\n", t.ID, t.Kind, t.Name, role, t.ExpiresAt.UTC().Format(time.RFC3339), revoked)
	}
	return w.Flush()
}
