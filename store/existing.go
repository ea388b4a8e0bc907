package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"os"

	"github.com/symphonix/symphonix/ent"
)

// ErrNoStore: OpenExisting found no store where the DSN points.
var ErrNoStore = errors.New("store: no store there")

// NotFoundError is a DSN that names no existing store: an SQLite file
// that does not exist (Path), or a PostgreSQL database without the board's
// tables (Path empty). It is ErrNoStore.
type NotFoundError struct {
	Path string
}

func (e *NotFoundError) Error() string {
	if e.Path == "" {
		return "no store in the PostgreSQL database: it has none of the board's tables"
	}
	return "no store at " + e.Path
}

func (e *NotFoundError) Is(target error) bool { return target == ErrNoStore }

// storeTable is a table every store has, made by the first migration.
const storeTable = "tokens"

// OpenExisting opens the store a DSN names, as Open does, but only one
// that exists: an SQLite file already there (its folder is not created),
// or a PostgreSQL database with the board's tables. Anything else fails
// with a *NotFoundError, and nothing is created. Commands that work on a
// board's store use it, so that one pointed at the wrong place says so
// instead of making a fresh, empty store.
func OpenExisting(ctx context.Context, dsn string) (*ent.Client, error) {
	src, err := parseDSN(dsn)
	if err != nil {
		return nil, err
	}
	if src.postgres {
		if err := postgresHasStore(ctx, dsn); err != nil {
			return nil, err
		}
		return Open(ctx, dsn)
	}
	if _, err := os.Stat(src.path); errors.Is(err, fs.ErrNotExist) {
		return nil, &NotFoundError{Path: src.path}
	} else if err != nil {
		return nil, fmt.Errorf("store: %w", err)
	}
	return Open(ctx, dsn)
}

// postgresHasStore checks that the database dsn names has the board's
// tables in its current schema.
func postgresHasStore(ctx context.Context, dsn string) error {
	db, err := sql.Open("pgx", dsn)
	if err != nil {
		return fmt.Errorf("open postgres: %w", err)
	}
	defer db.Close()
	var n int
	err = db.QueryRowContext(ctx, `SELECT count(*) FROM information_schema.tables WHERE table_schema = current_schema() AND table_name = $1`, storeTable).Scan(&n)
	if err != nil {
		return fmt.Errorf("reach store: %w", err)
	}
	if n == 0 {
		return &NotFoundError{}
	}
	return nil
}
