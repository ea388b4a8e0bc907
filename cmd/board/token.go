package main

import (
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/symphonix/symphonix/ent"
	"github.com/symphonix/symphonix/identity"
	"github.com/symphonix/symphonix/internal/cli"
)

// newTokenCmd mints, revokes and lists tokens. A minted token is the only
// thing printed on stdout (unless -o json); its id goes to stderr.
func newTokenCmd(a *app) *cobra.Command {
	c := cli.Group("token", "Mint, revoke and list the board's tokens")
	c.Aliases = []string{"tokens"} // as agents, approvals, rules and tools
	c.AddCommand(newMintCmd(a, identity.Kind("operator")), newMintCmd(a, identity.Kind("agent")), newRevokeCmd(a), newTokenListCmd(a))
	return c
}

// mintedJSON is a minted token, for -o json.
type mintedJSON struct {
	ID        string    `json:"id"`
	Token     string    `json:"token"`
	Kind      string    `json:"kind"`
	Name      string    `json:"name"`
	Role      string    `json:"role,omitempty"`
	ExpiresAt time.Time `json:"expires_at"`
}

func newMintCmd(a *app, kind identity.Kind) *cobra.Command {
	c := &cobra.Command{
		Use:   string(kind) + " --name NAME",
		Short: "Mint a token for an agent (its flow's name)",
		Args:  cli.NoArgs,
	}
	if kind == "operator" {
		c.Use += " --role admin|approver|viewer"
		c.Short = "Mint a token for an operator (a person or a script)"
	}
	fs := c.Flags()
	where := storeFlags(fs, true)
	var out cli.Output
	out.AddFlag(fs)
	name := fs.String("name", "", "who the token is for (an agent: its flow's name)")
	ttl := fs.Duration("ttl", 365*24*time.Hour, "how long the token is good for")
	var role *string
	if kind == "operator" {
		role = fs.String("role", "", "admin, approver or viewer")
	}
	c.RunE = func(cmd *cobra.Command, args []string) error {
		ctx := cmd.Context()
		o := identity.MintOptions{Kind: kind, Name: *name, TTL: *ttl, Actor: "cli"}
		if role != nil {
			r, err := identity.ParseRole(*role)
			if err != nil {
				return cli.Usagef("--role: %w", err)
			}
			o.Role = r
		}
		if *name == "" {
			return cli.Usagef("--name: required")
		}
		db, err := where.open(ctx, false)
		if err != nil {
			return err
		}
		defer db.Close()
		tokens, err := identity.OpenTokens(ctx, db)
		if err != nil {
			return err
		}
		m, err := tokens.Mint(ctx, o)
		if err != nil {
			return err
		}
		if out.JSON() {
			return cli.PrintJSON(a.stdout, mintedJSON{ID: m.ID, Token: m.Token, Kind: string(kind), Name: *name, Role: roleName(o.Role), ExpiresAt: m.ExpiresAt.UTC()})
		}
		fmt.Fprintln(a.stdout, m.Token)
		fmt.Fprintf(a.stderr, "token id %s, good until %s (revoke: board token revoke %s)\n", m.ID, m.ExpiresAt.UTC().Format(time.RFC3339), m.ID)
		return nil
	}
	return c
}

func newRevokeCmd(a *app) *cobra.Command {
	c := &cobra.Command{
		Use:   "revoke ID",
		Short: "Revoke a token: its links close and its calls are refused",
		Args:  cli.Args("ID"),
	}
	where := storeFlags(c.Flags(), false)
	c.RunE = func(cmd *cobra.Command, args []string) error {
		ctx := cmd.Context()
		db, err := where.open(ctx, false)
		if err != nil {
			return err
		}
		defer db.Close()
		tokens, err := identity.OpenTokens(ctx, db)
		if err != nil {
			return err
		}
		if err := tokens.RevokeBy(ctx, args[0], "cli", time.Now()); err != nil {
			return err
		}
		fmt.Fprintf(a.stderr, "token %s revoked\n", args[0])
		return nil
	}
	return c
}

// tokenJSON is a token in token list -o json; never the token itself.
type tokenJSON struct {
	ID        string     `json:"id"`
	Kind      string     `json:"kind"`
	Name      string     `json:"name"`
	Role      string     `json:"role"`
	IssuedAt  time.Time  `json:"issued_at"`
	ExpiresAt time.Time  `json:"expires_at"`
	RevokedAt *time.Time `json:"revoked_at"`
}

func newTokenListCmd(a *app) *cobra.Command {
	c := &cobra.Command{
		Use:   "list",
		Short: "List the tokens minted (never the tokens themselves)",
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
		rows, err := db.Token.Query().Order(ent.Asc("issued_at")).All(ctx)
		if err != nil {
			return err
		}
		t := cli.Table{Header: []string{"ID", "KIND", "NAME", "ROLE", "EXPIRES", "REVOKED"}}
		list := make([]tokenJSON, 0, len(rows))
		for _, r := range rows {
			revoked := ""
			j := tokenJSON{ID: r.ID, Kind: string(r.Kind), Name: r.Name, Role: r.Role, IssuedAt: r.IssuedAt.UTC(), ExpiresAt: r.ExpiresAt.UTC()}
			if r.RevokedAt != nil {
				at := r.RevokedAt.UTC()
				j.RevokedAt = &at
				revoked = at.Format(time.RFC3339)
			}
			t.Append(r.ID, string(r.Kind), r.Name, r.Role, r.ExpiresAt.UTC().Format(time.RFC3339), revoked)
			list = append(list, j)
		}
		return out.Print(a.stdout, t, list)
	}
	return c
}

// roleName is an operator's role; "" for an agent's token.
func roleName(r identity.Role) string {
	if r == identity.RoleNone {
		return ""
	}
	return r.String()
}
