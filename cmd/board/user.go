package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"text/tabwriter"
	"time"

	"github.com/symphonix/symphonix/identity"
)

var errUserUsage = errors.New("usage: board user add|list|disable|enable [flags]")

// runUser adds, lists, disables and enables the people who sign in on the
// web. add prints the one-time setup link through which the person sets
// their own password: there is no default password.
func runUser(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		return errUserUsage
	}
	verb := args[0]
	fs := flag.NewFlagSet("board user "+verb, flag.ContinueOnError)
	fs.SetOutput(stderr)
	where := storeFlags(fs, getenv)
	var email, name, role, url *string
	switch verb {
	case "add":
		email = fs.String("email", "", "the person's email (their sign-in name)")
		name = fs.String("name", "", "the person's name")
		role = fs.String("role", "", "admin, approver or viewer")
		url = fs.String("url", getenv("SYMPHONIX_PUBLIC_URL"), "the board's public URL, for the setup link (env SYMPHONIX_PUBLIC_URL; default: the URL the board recorded when it last started)")
	case "disable", "enable":
		email = fs.String("email", "", "the person's email")
	case "list":
	default:
		return errUserUsage
	}
	if err := fs.Parse(args[1:]); err != nil {
		return err
	}
	if email != nil && *email == "" && fs.NArg() == 1 && verb != "add" {
		*email = fs.Arg(0)
	} else if fs.NArg() > 0 {
		return fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	if email != nil && *email == "" {
		return errors.New("--email: required")
	}
	db, err := where.open(ctx)
	if err != nil {
		return err
	}
	defer db.Close()
	users := identity.NewUsers(db, nil)
	switch verb {
	case "add":
		r, err := identity.ParseRole(*role)
		if err != nil {
			return fmt.Errorf("--role: %w", err)
		}
		base := *url
		if base == "" {
			if base, err = recordedPublicURL(ctx, db); err != nil {
				return err
			}
		} else if base, err = checkPublicURL(base); err != nil {
			return fmt.Errorf("--url: %w", err)
		}
		u, link, err := users.Add(ctx, identity.AddUser{Email: *email, Name: *name, Role: r, Actor: "cli"})
		if err != nil {
			return err
		}
		fmt.Fprintln(stdout, link.URL(base))
		fmt.Fprintf(stderr, "user %s (%s) added; the link above sets their password, once, until %s\n", u.Email, u.Role, link.ExpiresAt.UTC().Format(time.RFC3339))
		return nil
	case "disable", "enable":
		u, n, err := users.SetDisabled(ctx, *email, verb == "disable", "cli")
		if err != nil {
			return err
		}
		fmt.Fprintf(stderr, "user %s %sd; %d sessions ended\n", u.Email, verb, n)
		return nil
	default: // list
		us, err := users.List(ctx)
		if err != nil {
			return err
		}
		w := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
		fmt.Fprintln(w, "EMAIL\tNAME\tROLE\tPASSWORD\tDISABLED")
		for _, u := range us {
			fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\n", u.Email, dash(u.Name), u.Role, yesNo(u.HasPassword, "set", "not set"), yesNo(u.Disabled, "disabled", "-"))
		}
		return w.Flush()
	}
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func yesNo(b bool, yes, no string) string {
	if b {
		return yes
	}
	return no
}
