package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math/rand/v2"
	"time"

	entsql "entgo.io/ent/dialect/sql"

	"entgo.io/ent/dialect"
	_ "github.com/jackc/pgx/v5/stdlib" // registers the "pgx" driver
	_ "modernc.org/sqlite"             // registers the "sqlite" driver

	"github.com/symphonix/symphonix/ent"
)

// Open opens the store a DSN names and brings its schema up to date (see
// Migrate):
// PostgreSQL for postgres:// and postgresql:// URLs; embedded SQLite for a
// file: URL or a path, its folder created. Any other scheme fails with
// ErrDSN, naming the forms accepted.
//
// An SQLite store gets WAL, foreign keys, a busy timeout, synchronous=FULL
// and immediate transactions whatever form its DSN takes; a DSN that sets
// any of them itself is refused. Its file is created 0600 whatever the
// umask (SQLite gives the -wal and -shm files the same mode), and Open
// fails with a *PermissionError when the file, its -wal or -shm, or its
// folder can be read or written by other users.
//
// SQLite's writers queue in Go and commit in groups (see sqliteDriver);
// PostgreSQL takes concurrent writers as they come. Either way the store
// holds a bounded number of connections (MaxSQLiteReads and one writer;
// MaxPostgresConns), and queries past the bound wait in Go.
func Open(ctx context.Context, dsn string) (*ent.Client, error) {
	src, err := parseDSN(dsn)
	if err != nil {
		return nil, err
	}
	if src.postgres {
		db, err := sql.Open("pgx", dsn)
		if err != nil {
			return nil, fmt.Errorf("open postgres: %w", err)
		}
		boundPool(db, MaxPostgresConns)
		drv := entsql.OpenDB(dialect.Postgres, db)
		if err := prepareStore(ctx, drv, func() error {
			_, err := migratePostgres(ctx, db)
			return err
		}); err != nil {
			return nil, err
		}
		client := ent.NewClient(ent.Driver(drv))
		watch(client, new(observerSlot))
		rememberPool(client, db)
		return client, nil
	}
	drv, err := openSQLite(ctx, dsn)
	if err != nil {
		return nil, err
	}
	client := ent.NewClient(ent.Driver(drv))
	watch(client, drv.w.obs)
	return client, nil
}

// openSQLite opens, migrates and wraps the SQLite store dsn names, after
// checking that nobody else may read it, and checks again once SQLite has
// made its -wal and -shm files.
func openSQLite(ctx context.Context, dsn string) (*sqliteDriver, error) {
	src, err := parseDSN(dsn)
	if err != nil {
		return nil, err
	}
	if src.postgres {
		return nil, fmt.Errorf("%w: not an SQLite DSN", ErrDSN)
	}
	if err := prepareFolder(src.path); err != nil {
		return nil, err
	}
	if err := createOwnerOnly(src.path); err != nil {
		return nil, err
	}
	if err := checkFiles(src.path); err != nil {
		return nil, err
	}
	dsn = sqliteDSN(src.path, src.params)
	db, err := sql.Open("sqlite", dsn)
	if err != nil {
		return nil, fmt.Errorf("open sqlite: %w", err)
	}
	boundPool(db, MaxSQLiteReads)
	drv := entsql.OpenDB(dialect.SQLite, db)
	if err := prepareStore(ctx, drv, func() error {
		_, err := migrateSQLite(ctx, dsn)
		return err
	}); err != nil {
		return nil, err
	}
	if err := checkFiles(src.path); err != nil {
		drv.Close()
		return nil, err
	}
	wdb, err := sql.Open("sqlite", dsn)
	if err != nil {
		drv.Close()
		return nil, fmt.Errorf("open sqlite: %w", err)
	}
	boundPool(wdb, 1)
	return newSQLiteDriver(drv, wdb), nil
}

// prepareStore checks that the store answers, then brings its schema up
// to date with migrate; it closes drv when either fails.
func prepareStore(ctx context.Context, drv *entsql.Driver, migrate func() error) error {
	if err := ping(ctx, drv.DB()); err != nil {
		drv.Close()
		return fmt.Errorf("reach store: %w", err)
	}
	if err := migrate(); err != nil {
		drv.Close()
		return err
	}
	return nil
}

// sqliteBusy is SQLite's primary result code for a lock another
// connection holds.
const sqliteBusy = 5

// ping opens a first connection to db. A new SQLite file is switched to
// WAL as its first connection opens, and two boards doing so at once can
// find each other holding the lock the switch needs: SQLite then answers
// SQLITE_BUSY at once rather than wait out the busy timeout, since waiting
// could deadlock. ping tries again, after a short random pause, for as
// long as the busy timeout would have waited.
func ping(ctx context.Context, db *sql.DB) error {
	deadline := time.Now().Add(maxWriteWait)
	for {
		err := db.PingContext(ctx)
		var coded interface{ Code() int }
		if err == nil || !errors.As(err, &coded) || coded.Code()&0xff != sqliteBusy || time.Now().After(deadline) {
			return err
		}
		select {
		case <-ctx.Done():
			return err
		case <-time.After(time.Duration(10+rand.IntN(40)) * time.Millisecond):
		}
	}
}
