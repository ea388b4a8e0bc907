package main

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/symphonix/symphonix/internal/cli"
	"github.com/symphonix/symphonix/store"
)

// newMigrateCmd applies the store's pending migrations, or with --dry-run
// prints them; migrate status lists what is applied and what is pending.
func newMigrateCmd(a *app) *cobra.Command {
	c := &cobra.Command{
		Use:   "migrate",
		Short: "Bring the store's schema up to date, as a board does when it starts (docs/migrations.md)",
		Args:  cli.NoArgs,
	}
	fs := c.Flags()
	where := storeFlags(fs, true)
	dryRun := fs.Bool("dry-run", false, "print the migrations that would be applied, with their SQL, and change nothing")
	c.RunE = func(cmd *cobra.Command, args []string) error {
		ctx := cmd.Context()
		st, err := where.migrations(ctx)
		if err != nil {
			return err
		}
		if *dryRun {
			if len(st.Pending) == 0 {
				fmt.Fprintf(a.stdout, "nothing to apply: the store has all %d migrations\n", len(st.Applied))
			}
			for _, m := range st.Pending {
				fmt.Fprintf(a.stdout, "-- would apply %s_%s\n%s\n", m.Version, m.Description, strings.TrimRight(m.SQL, "\n"))
			}
			return nil
		}
		// One board per SQLite store: none may serve it while its schema
		// changes. A PostgreSQL store's migrations take its advisory lock.
		lock, err := store.TakeLock(where.dsn())
		if err != nil {
			return where.flagErr(err)
		}
		defer lock.Release()
		done, err := store.Migrate(ctx, where.dsn())
		for _, m := range done {
			fmt.Fprintf(a.stdout, "applied %s_%s\n", m.Version, m.Description)
		}
		if err != nil {
			return where.flagErr(err)
		}
		if len(done) == 0 {
			fmt.Fprintf(a.stdout, "nothing to apply: the store has all %d migrations\n", len(st.Applied))
		}
		return nil
	}
	c.AddCommand(newMigrateStatusCmd(a))
	return c
}

// migrationJSON is a migration in migrate status -o json.
type migrationJSON struct {
	Version     string     `json:"version"`
	Description string     `json:"description"`
	AppliedAt   *time.Time `json:"applied_at"`
	Adopted     bool       `json:"adopted,omitempty"`
}

func newMigrateStatusCmd(a *app) *cobra.Command {
	c := &cobra.Command{
		Use:   "status",
		Short: "List the store's migrations: applied, and pending",
		Args:  cli.NoArgs,
	}
	where := storeFlags(c.Flags(), false)
	var out cli.Output
	out.AddFlag(c.Flags())
	c.RunE = func(cmd *cobra.Command, args []string) error {
		st, err := where.migrations(cmd.Context())
		if err != nil {
			return err
		}
		t := cli.Table{Header: []string{"VERSION", "DESCRIPTION", "APPLIED"}}
		list := make([]migrationJSON, 0, len(st.Applied)+len(st.Pending))
		for _, m := range st.Applied {
			at := m.AppliedAt.UTC()
			applied := at.Format(time.RFC3339)
			if m.Adopted {
				applied = "before versioned migrations"
				if !m.AppliedAt.IsZero() {
					applied = "recorded " + applied + " (made before versioned migrations)"
				}
			}
			j := migrationJSON{Version: m.Version, Description: m.Description, Adopted: m.Adopted}
			if !m.AppliedAt.IsZero() {
				j.AppliedAt = &at
			}
			t.Append(m.Version, m.Description, applied)
			list = append(list, j)
		}
		for _, m := range st.Pending {
			t.Append(m.Version, m.Description, "pending")
			list = append(list, migrationJSON{Version: m.Version, Description: m.Description})
		}
		return out.Print(a.stdout, t, list)
	}
	return c
}

// migrations reads the store's migrations, changing nothing. A store with
// none of them applied is no store, unless --create says to make one.
func (o *storeOptions) migrations(ctx context.Context) (store.MigrationStatus, error) {
	st, err := store.Migrations(ctx, o.dsn())
	if err != nil {
		var missing *store.NotFoundError
		if o.create && errors.As(err, &missing) {
			all, err := store.Available(o.dsn())
			return store.MigrationStatus{Pending: all}, err
		}
		return st, o.flagErr(err)
	}
	if len(st.Applied) == 0 && !o.create {
		missing := &store.NotFoundError{}
		if !strings.HasPrefix(o.database, "postgres") {
			missing.Path = o.database
			if o.database == "" {
				missing.Path = filepath.Join(o.data, "board.db")
			}
		}
		return st, o.flagErr(missing)
	}
	return st, nil
}
