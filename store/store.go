package store

import (
	"context"
	"database/sql"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"

	entsql "entgo.io/ent/dialect/sql"

	"entgo.io/ent/dialect"
	_ "github.com/jackc/pgx/v5/stdlib" // registers the "pgx" driver
	_ "modernc.org/sqlite"             // registers the "sqlite" driver

	"github.com/symphonix/symphonix/ent"
)

// SQLiteDSN is the DSN of the embedded store in dir (its file is board.db): WAL, foreign keys,
// a busy timeout instead of "database is locked" (for another process
// writing to the same file: within the board, writers queue in Go), and
// synchronous=FULL so that what an operator was told is saved survives a
// power cut.
func SQLiteDSN(dir string) string {
	u := url.URL{Scheme: "file", Opaque: filepath.ToSlash(filepath.Join(dir, "board.db"))}
	q := url.Values{}
	for _, p := range []string{"foreign_keys(1)", "journal_mode(WAL)", "busy_timeout(10000)", "synchronous(FULL)"} {
		q.Add("_pragma", p)
	}
	q.Set("_txlock", "immediate")
	u.RawQuery = q.Encode()
	return u.String()
}

var migrateMu sync.Mutex

// Open opens the store a DSN names and brings its schema up to date:
// PostgreSQL for postgres:// and postgresql:// URLs, embedded SQLite for
// everything else (a file: URL or a path). For a path, its folder is created.
//
// SQLite's writers queue in Go and commit in groups (see sqliteDriver);
// PostgreSQL takes concurrent writers as they come.
func Open(ctx context.Context, dsn string) (*ent.Client, error) {
	if strings.HasPrefix(dsn, "postgres://") || strings.HasPrefix(dsn, "postgresql://") {
		db, err := sql.Open("pgx", dsn)
		if err != nil {
			return nil, fmt.Errorf("open postgres: %w", err)
		}
		drv := entsql.OpenDB(dialect.Postgres, db)
		if err := prepareStore(ctx, drv); err != nil {
			return nil, err
		}
		return ent.NewClient(ent.Driver(drv)), nil
	}
	drv, err := openSQLite(ctx, dsn)
	if err != nil {
		return nil, err
	}
	return ent.NewClient(ent.Driver(drv)), nil
}

// openSQLite opens, migrates and wraps the SQLite store dsn names.
func openSQLite(ctx context.Context, dsn string) (*sqliteDriver, error) {
	if !strings.HasPrefix(dsn, "file:") {
		if err := os.MkdirAll(filepath.Dir(dsn), 0o700); err != nil {
			return nil, fmt.Errorf("create store folder: %w", err)
		}
	} else if path, _, _ := strings.Cut(strings.TrimPrefix(dsn, "file:"), "?"); path != "" && !strings.HasPrefix(path, ":memory:") {
		if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
			return nil, fmt.Errorf("create store folder: %w", err)
		}
	}
	db, err := sql.Open("sqlite", dsn)
	if err != nil {
		return nil, fmt.Errorf("open sqlite: %w", err)
	}
	drv := entsql.OpenDB(dialect.SQLite, db)
	if err := prepareStore(ctx, drv); err != nil {
		return nil, err
	}
	return newSQLiteDriver(drv), nil
}

// prepareStore checks that the store answers and brings its schema up to
// date, on the plain driver; it closes drv when it fails.
func prepareStore(ctx context.Context, drv *entsql.Driver) error {
	if err := drv.DB().PingContext(ctx); err != nil {
		drv.Close()
		return fmt.Errorf("reach store: %w", err)
	}
	// ent's migration writes to its package-level table descriptions, so two
	// stores migrating at once in one process would race.
	migrateMu.Lock()
	err := ent.NewClient(ent.Driver(drv)).Schema.Create(ctx)
	migrateMu.Unlock()
	if err != nil {
		drv.Close()
		return fmt.Errorf("migrate store: %w", err)
	}
	return nil
}
