package main

import (
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/symphonix/symphonix/identity"
	"github.com/symphonix/symphonix/internal/cli"
)

// newUserCmd adds, lists, disables and enables the people who sign in on
// the web. add prints the one-time setup link through which the person
// sets their own password: there is no default password.
func newUserCmd(a *app) *cobra.Command {
	c := cli.Group("user", "Add, list, disable and enable the people who sign in on the web")
	c.Aliases = []string{"users"} // as agents, approvals, rules and tools
	c.AddCommand(newUserAddCmd(a), newUserListCmd(a), newUserSetDisabledCmd(a, true), newUserSetDisabledCmd(a, false))
	return c
}

// addedJSON is user add's -o json.
type addedJSON struct {
	Email          string    `json:"email"`
	Role           string    `json:"role"`
	SetupURL       string    `json:"setup_url"`
	SetupExpiresAt time.Time `json:"setup_expires_at"`
}

func newUserAddCmd(a *app) *cobra.Command {
	c := &cobra.Command{
		Use:   "add --email EMAIL --role admin|approver|viewer",
		Short: "Add a person; prints the one-time link that sets their password",
		Args:  cli.NoArgs,
	}
	fs := c.Flags()
	where := storeFlags(fs, true)
	var out cli.Output
	out.AddFlag(fs)
	email := fs.String("email", "", "the person's email (their sign-in name)")
	name := fs.String("name", "", "the person's name")
	role := fs.String("role", "", "admin, approver or viewer")
	// Its environment variable is the one board serve's --public-url has.
	url := fs.String("url", "", "the board's public URL, for the setup link (default: the URL the board recorded when it last started)")
	cli.Env(fs, "url", "SYMPHONIX_PUBLIC_URL")
	c.RunE = func(cmd *cobra.Command, args []string) error {
		ctx := cmd.Context()
		if *email == "" {
			return cli.Usagef("--email: required")
		}
		r, err := identity.ParseRole(*role)
		if err != nil {
			return cli.Usagef("--role: %w", err)
		}
		base := *url
		if base != "" {
			if base, err = checkPublicURL(base); err != nil {
				return cli.Usagef("--url: %w", err)
			}
		}
		db, err := where.open(ctx, false)
		if err != nil {
			return err
		}
		defer db.Close()
		if base == "" {
			if base, err = recordedPublicURL(ctx, db); err != nil {
				return err
			}
		}
		u, link, err := identity.NewUsers(db, nil).Add(ctx, identity.AddUser{Email: *email, Name: *name, Role: r, Actor: "cli"})
		if err != nil {
			return err
		}
		if out.JSON() {
			return cli.PrintJSON(a.stdout, addedJSON{Email: u.Email, Role: u.Role.String(), SetupURL: link.URL(base), SetupExpiresAt: link.ExpiresAt.UTC()})
		}
		fmt.Fprintln(a.stdout, link.URL(base))
		fmt.Fprintf(a.stderr, "user %s (%s) added; the link above sets their password, once, until %s\n", u.Email, u.Role, link.ExpiresAt.UTC().Format(time.RFC3339))
		return nil
	}
	return c
}

// userJSON is a person in user list -o json.
type userJSON struct {
	Email       string    `json:"email"`
	Name        string    `json:"name"`
	Role        string    `json:"role"`
	PasswordSet bool      `json:"password_set"`
	Disabled    bool      `json:"disabled"`
	CreatedAt   time.Time `json:"created_at"`
}

func newUserListCmd(a *app) *cobra.Command {
	c := &cobra.Command{
		Use:   "list",
		Short: "List the people who sign in on the web",
		Args:  cli.NoArgs,
	}
	where := storeFlags(c.Flags(), false)
	var out cli.Output
	out.AddFlag(c.Flags())
	c.RunE = func(cmd *cobra.Command, args []string) error {
		ctx := cmd.Context()
		db, err := where.open(ctx, false)
		if err != nil {
			return err
		}
		defer db.Close()
		us, err := identity.NewUsers(db, nil).List(ctx)
		if err != nil {
			return err
		}
		t := cli.Table{Header: []string{"EMAIL", "NAME", "ROLE", "PASSWORD", "DISABLED"}}
		list := make([]userJSON, 0, len(us))
		for _, u := range us {
			t.Append(u.Email, u.Name, u.Role.String(), yesNo(u.HasPassword, "set", "not set"), yesNo(u.Disabled, "disabled", "-"))
			list = append(list, userJSON{Email: u.Email, Name: u.Name, Role: u.Role.String(), PasswordSet: u.HasPassword, Disabled: u.Disabled, CreatedAt: u.CreatedAt.UTC()})
		}
		return out.Print(a.stdout, t, list)
	}
	return c
}

func newUserSetDisabledCmd(a *app, disable bool) *cobra.Command {
	verb, short := "enable", "Let a disabled person sign in again"
	if disable {
		verb, short = "disable", "Stop a person signing in, and end their sessions"
	}
	c := &cobra.Command{
		Use:   verb + " --email EMAIL | " + verb + " EMAIL",
		Short: short,
		Args:  cli.MaxArgs("EMAIL"),
	}
	where := storeFlags(c.Flags(), false)
	email := c.Flags().String("email", "", "the person's email")
	c.RunE = func(cmd *cobra.Command, args []string) error {
		ctx := cmd.Context()
		if len(args) == 1 {
			if *email != "" && *email != args[0] {
				return cli.Usagef("--email %s and %s: give the email once", *email, args[0])
			}
			*email = args[0]
		}
		if *email == "" {
			return cli.Usagef("--email: required")
		}
		db, err := where.open(ctx, false)
		if err != nil {
			return err
		}
		defer db.Close()
		u, n, err := identity.NewUsers(db, nil).SetDisabled(ctx, *email, disable, "cli")
		if err != nil {
			return err
		}
		fmt.Fprintf(a.stderr, "user %s %sd; %d sessions ended\n", u.Email, verb, n)
		return nil
	}
	return c
}

func yesNo(b bool, yes, no string) string {
	if b {
		return yes
	}
	return no
}
