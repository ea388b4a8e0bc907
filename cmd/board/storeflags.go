package main

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/spf13/pflag"

	"github.com/symphonix/symphonix/ent"
	"github.com/symphonix/symphonix/internal/cli"
	"github.com/symphonix/symphonix/store"
)

// storeOptions are the flags that say where the store is.
type storeOptions struct {
	data     string
	database string
	create   bool
}

// storeFlags registers --data and --database on fs, and --create for a
// command that works on an existing store (withCreate).
func storeFlags(fs *pflag.FlagSet, withCreate bool) *storeOptions {
	o := &storeOptions{}
	fs.StringVar(&o.data, "data", ".symphonix", "folder of the embedded store (board.db)")
	fs.StringVar(&o.database, "database", "", "store DSN: postgres://…, or an SQLite file: URL or path; overrides --data")
	cli.DSN(fs, "database")
	if withCreate {
		fs.BoolVar(&o.create, "create", false, "start a new, empty store if there is none where --data or --database points")
	}
	return o
}

func (o *storeOptions) dsn() string {
	if o.database != "" {
		return o.database
	}
	return store.SQLiteDSN(o.data)
}

// describe names the store without any credentials in it.
func (o *storeOptions) describe() string {
	if o.database != "" {
		if strings.HasPrefix(o.database, "postgres") {
			return "postgres"
		}
		return "sqlite (--database)"
	}
	return "sqlite " + filepath.Join(o.data, "board.db")
}

// open opens the store; one that does not exist is made only when create
// (board serve) or --create says so.
func (o *storeOptions) open(ctx context.Context, create bool) (*ent.Client, error) {
	openStore := store.OpenExisting
	if create || o.create {
		openStore = store.Open
	}
	db, err := openStore(ctx, o.dsn())
	if err != nil {
		return nil, o.flagErr(err)
	}
	return db, nil
}

// flagErr names --database in an error about the DSN it gave, and says
// what to do about a store that is not there.
func (o *storeOptions) flagErr(err error) error {
	var missing *store.NotFoundError
	switch {
	case errors.As(err, &missing) && o.database == "":
		return fmt.Errorf("%w: point --data at the board's folder (the one it printed when it started), or pass --create to start a new one", err)
	case errors.As(err, &missing):
		return fmt.Errorf("--database: %w: point --database at the board's store, or pass --create to start a new one", err)
	case o.database != "" && errors.Is(err, store.ErrDSN):
		return cli.Usagef("--database: %w", err)
	}
	return err
}
