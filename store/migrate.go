package store

import (
	"context"
	"database/sql"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"strings"
	"sync"
	"time"

	"ariga.io/atlas/sql/migrate"
)

// migrationFiles are the store's versioned migrations, one directory per
// dialect, written by `go generate ./ent` (docs/migrations.md).
//
//go:embed migrations/postgres migrations/sqlite
var migrationFiles embed.FS

// RevisionsTable is the table in which a store records the migrations
// applied to it, one row each, in the columns Atlas's own
// atlas_schema_revisions has.
const RevisionsTable = "atlas_schema_revisions"

// MigrationLockKey is the key of the PostgreSQL session advisory lock
// (pg_advisory_lock) a board holds while it migrates a store, so that of
// boards starting together on one database one applies each migration and
// the others wait, then find nothing left to apply. It is "symphoni" in
// ASCII.
const MigrationLockKey int64 = 0x73796d70686f6e69

// MigrationLockWait is how long a board waits for the migration lock of a
// PostgreSQL store while another board holds it (migrating), before its
// Open fails.
const MigrationLockWait = 10 * time.Minute

// operatorVersion is what the revisions table's operator_version says
// applied a migration.
const operatorVersion = "symphonix board"

// Migration is one of the store's versioned migrations.
type Migration struct {
	Version     string // its file's name up to the first _: when it was written, YYYYMMDDhhmmss
	Description string // the rest of the name: baseline, add_eval_scores
	SQL         string // the file's statements
	// AppliedAt is when the store applied it; zero while pending.
	AppliedAt time.Time
	// Adopted: the store was made before its migrations were versioned,
	// by the release whose schema this baseline is, so the baseline was
	// recorded as applied rather than run.
	Adopted bool
}

// MigrationStatus is what a store has applied of this board's migrations
// and what it has not.
type MigrationStatus struct {
	Applied []Migration
	Pending []Migration
}

// ErrSchemaNewer: the store has applied a migration this board does not
// know, made by a newer board.
var ErrSchemaNewer = errors.New("store: the store's schema is newer than this board")

// SchemaNewerError is a store that has applied a migration (Version) that
// is not among this board's. The board refuses it rather than run against
// a schema it was not built for. It is ErrSchemaNewer.
type SchemaNewerError struct {
	Version, Description string
}

func (e *SchemaNewerError) Error() string {
	return fmt.Sprintf("store: the store's schema is newer than this board: it has applied migration %s_%s, which this board does not know; run the board release that applied it, or a newer one", e.Version, e.Description)
}

func (e *SchemaNewerError) Is(target error) bool { return target == ErrSchemaNewer }

// ErrMigrationChanged: a migration the store has applied is not the one
// this board has under that version, or one this board has not applied is
// older than one it has.
var ErrMigrationChanged = errors.New("store: the board's migrations disagree with the store's")

// dialectName names the two migration directories.
type dialectName string

const (
	postgresDialect dialectName = "postgres"
	sqliteDialect   dialectName = "sqlite"
)

// migrationSet is one dialect's migrations, read once.
type migrationSet struct {
	files []migrate.File
	sums  migrate.HashFile
}

var loadMigrations = sync.OnceValues(func() (map[dialectName]*migrationSet, error) {
	sets := make(map[dialectName]*migrationSet)
	for _, d := range []dialectName{postgresDialect, sqliteDialect} {
		s, err := readMigrations(migrationFiles, path.Join("migrations", string(d)))
		if err != nil {
			return nil, fmt.Errorf("store: %s migrations: %w", d, err)
		}
		sets[d] = s
	}
	return sets, nil
})

// readMigrations reads a migration directory and checks its files against
// its atlas.sum.
func readMigrations(fsys fs.FS, dir string) (*migrationSet, error) {
	entries, err := fs.ReadDir(fsys, dir)
	if err != nil {
		return nil, err
	}
	s := &migrationSet{}
	for _, e := range entries {
		if e.IsDir() || !strings.HasSuffix(e.Name(), ".sql") {
			continue
		}
		b, err := fs.ReadFile(fsys, path.Join(dir, e.Name()))
		if err != nil {
			return nil, err
		}
		s.files = append(s.files, migrate.NewLocalFile(e.Name(), b))
	}
	if len(s.files) == 0 {
		return nil, errors.New("none")
	}
	b, err := fs.ReadFile(fsys, path.Join(dir, migrate.HashFileName))
	if err != nil {
		return nil, err
	}
	if err := s.sums.UnmarshalText(b); err != nil {
		return nil, fmt.Errorf("%s: %w", migrate.HashFileName, err)
	}
	want, err := migrate.NewHashFile(s.files)
	if err != nil {
		return nil, err
	}
	if want.Sum() != s.sums.Sum() {
		return nil, fmt.Errorf("%s does not match the files: %w", migrate.HashFileName, migrate.ErrChecksumMismatch)
	}
	return s, nil
}

// revision is a row of the revisions table.
type revision struct {
	version, description, hash string
	kind                       int64
	executedAt                 time.Time
}

// plan is what a store has applied and what it is to apply.
type plan struct {
	applied []Migration
	adopt   bool // record the baseline as applied
	pending []migrate.File
}

// planMigrations compares the revisions a store recorded with this board's
// migrations; hasStore says whether the store has the board's tables.
func planMigrations(set *migrationSet, revs []revision, hasStore bool) (plan, error) {
	var p plan
	byVersion := make(map[string]revision, len(revs))
	for _, r := range revs {
		byVersion[r.version] = r
	}
	known := make(map[string]bool, len(set.files))
	for _, f := range set.files {
		known[f.Version()] = true
	}
	for _, r := range revs {
		if !known[r.version] {
			return plan{}, &SchemaNewerError{Version: r.version, Description: r.description}
		}
	}
	if len(revs) == 0 && hasStore {
		// A store made by the release before versioned migrations, which
		// made its tables as the baseline has them.
		p.adopt = true
		byVersion[set.files[0].Version()] = revision{kind: int64(migrate.RevisionTypeBaseline)}
	}
	for _, f := range set.files {
		r, ok := byVersion[f.Version()]
		if !ok {
			p.pending = append(p.pending, f)
			continue
		}
		if len(p.pending) > 0 {
			return plan{}, fmt.Errorf("%w: migration %s has not been applied but %s, after it, has", ErrMigrationChanged, p.pending[0].Name(), f.Name())
		}
		sum, err := set.sums.SumByName(f.Name())
		if err != nil {
			return plan{}, err
		}
		if r.kind&int64(migrate.RevisionTypeExecute) != 0 && r.hash != sum {
			return plan{}, fmt.Errorf("%w: migration %s was changed after the store applied it", ErrMigrationChanged, f.Name())
		}
		p.applied = append(p.applied, migrationOf(f, r.executedAt, r.kind == int64(migrate.RevisionTypeBaseline)))
	}
	return p, nil
}

func migrationOf(f migrate.File, at time.Time, adopted bool) Migration {
	return Migration{Version: f.Version(), Description: f.Desc(), SQL: string(f.Bytes()), AppliedAt: at, Adopted: adopted}
}

// upToDate: the store has every migration recorded, and there is
// nothing to write.
func (p plan) upToDate() bool { return len(p.pending) == 0 && !p.adopt }

// status is the MigrationStatus of a plan.
func (p plan) status() MigrationStatus {
	s := MigrationStatus{Applied: p.applied}
	for _, f := range p.pending {
		s.Pending = append(s.Pending, migrationOf(f, time.Time{}, false))
	}
	return s
}

// queryer is a connection or a transaction.
type queryer interface {
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

// migrator is what differs between the dialects.
type migrator struct {
	dialect     dialectName
	createTable string
	hasTable    string        // one argument, the table's name; returns a count
	insert      string        // the revision's nine columns
	migrations  *migrationSet // nil: the dialect's own
}

var migrators = map[dialectName]migrator{
	postgresDialect: {
		dialect: postgresDialect,
		createTable: `CREATE TABLE IF NOT EXISTS ` + RevisionsTable + ` (version character varying NOT NULL PRIMARY KEY, description character varying NOT NULL,
			type bigint NOT NULL DEFAULT 2, applied bigint NOT NULL DEFAULT 0, total bigint NOT NULL DEFAULT 0, executed_at timestamptz NOT NULL,
			execution_time bigint NOT NULL, error text NULL, error_stmt text NULL, hash character varying NOT NULL, partial_hashes jsonb NULL,
			operator_version character varying NOT NULL)`,
		hasTable: `SELECT count(*) FROM information_schema.tables WHERE table_schema = current_schema() AND table_name = $1`,
		insert: `INSERT INTO ` + RevisionsTable + ` (version, description, type, applied, total, executed_at, execution_time, hash, operator_version)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)`,
	},
	sqliteDialect: {
		dialect: sqliteDialect,
		createTable: `CREATE TABLE IF NOT EXISTS ` + RevisionsTable + ` (version text NOT NULL PRIMARY KEY, description text NOT NULL,
			type integer NOT NULL DEFAULT 2, applied integer NOT NULL DEFAULT 0, total integer NOT NULL DEFAULT 0, executed_at datetime NOT NULL,
			execution_time integer NOT NULL, error text NULL, error_stmt text NULL, hash text NOT NULL, partial_hashes json NULL,
			operator_version text NOT NULL)`,
		hasTable: `SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = ?`,
		insert: `INSERT INTO ` + RevisionsTable + ` (version, description, type, applied, total, executed_at, execution_time, hash, operator_version)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
	},
}

func (m migrator) set() (*migrationSet, error) {
	if m.migrations != nil {
		return m.migrations, nil
	}
	sets, err := loadMigrations()
	if err != nil {
		return nil, err
	}
	return sets[m.dialect], nil
}

func (m migrator) has(ctx context.Context, q queryer, table string) (bool, error) {
	var n int
	if err := q.QueryRowContext(ctx, m.hasTable, table).Scan(&n); err != nil {
		return false, err
	}
	return n > 0, nil
}

// read plans the store's migrations, changing nothing.
func (m migrator) read(ctx context.Context, q queryer) (plan, error) {
	set, err := m.set()
	if err != nil {
		return plan{}, err
	}
	var revs []revision
	ok, err := m.has(ctx, q, RevisionsTable)
	if err != nil {
		return plan{}, fmt.Errorf("store: read migrations: %w", err)
	}
	if ok {
		rows, err := q.QueryContext(ctx, `SELECT version, description, type, executed_at, hash FROM `+RevisionsTable+` ORDER BY version`)
		if err != nil {
			return plan{}, fmt.Errorf("store: read migrations: %w", err)
		}
		defer rows.Close()
		for rows.Next() {
			var r revision
			if err := rows.Scan(&r.version, &r.description, &r.kind, &r.executedAt, &r.hash); err != nil {
				return plan{}, fmt.Errorf("store: read migrations: %w", err)
			}
			revs = append(revs, r)
		}
		if err := rows.Err(); err != nil {
			return plan{}, fmt.Errorf("store: read migrations: %w", err)
		}
		rows.Close()
	}
	hasStore, err := m.has(ctx, q, storeTable)
	if err != nil {
		return plan{}, fmt.Errorf("store: read migrations: %w", err)
	}
	return planMigrations(set, revs, hasStore)
}

// record writes a revision: the migration f, run (or, for an adopted
// baseline, taken as run) at now.
func (m migrator) record(ctx context.Context, q queryer, set *migrationSet, f migrate.File, kind migrate.RevisionType, now time.Time, took time.Duration) error {
	sum, err := set.sums.SumByName(f.Name())
	if err != nil {
		return err
	}
	stmts, err := f.Stmts()
	if err != nil {
		return err
	}
	n := len(stmts)
	_, err = q.ExecContext(ctx, m.insert, f.Version(), f.Desc(), int64(kind), n, n, now.UTC(), took.Nanoseconds(), sum, operatorVersion)
	return err
}

// apply applies p's migrations, recording each. With begin, each runs in
// a transaction of its own (PostgreSQL); without, all run on q, a
// transaction its caller ends (SQLite). It returns what it applied.
func (m migrator) apply(ctx context.Context, q queryer, begin func() (*sql.Tx, error), p plan) ([]Migration, error) {
	set, err := m.set()
	if err != nil {
		return nil, err
	}
	if p.adopt {
		if err := m.record(ctx, q, set, set.files[0], migrate.RevisionTypeBaseline, time.Now(), 0); err != nil {
			return nil, fmt.Errorf("store: record the baseline of a store made before versioned migrations: %w", err)
		}
	}
	var done []Migration
	for _, f := range p.pending {
		if err := m.applyFile(ctx, q, begin, set, f); err != nil {
			return done, fmt.Errorf("store: migration %s: %w", f.Name(), err)
		}
		done = append(done, migrationOf(f, time.Now(), false))
	}
	return done, nil
}

func (m migrator) applyFile(ctx context.Context, q queryer, begin func() (*sql.Tx, error), set *migrationSet, f migrate.File) (err error) {
	stmts, err := f.Stmts()
	if err != nil {
		return err
	}
	if begin != nil {
		tx, err := begin()
		if err != nil {
			return err
		}
		defer func() {
			if err != nil {
				err = errors.Join(err, tx.Rollback())
				return
			}
			err = tx.Commit()
		}()
		q = tx
	}
	start := time.Now()
	for _, s := range stmts {
		if _, err := q.ExecContext(ctx, s); err != nil {
			return fmt.Errorf("%s: %w", firstLine(s), err)
		}
	}
	if err := m.record(ctx, q, set, f, migrate.RevisionTypeExecute, start, time.Since(start)); err != nil {
		return fmt.Errorf("record it: %w", err)
	}
	return nil
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(strings.TrimSpace(s), "\n")
	if len(s) > 80 {
		s = s[:80] + "…"
	}
	return s
}

// migratePostgres brings a PostgreSQL store up to date under the session
// advisory lock MigrationLockKey, each migration in a transaction of its
// own.
func migratePostgres(ctx context.Context, db *sql.DB) ([]Migration, error) {
	m := migrators[postgresDialect]
	conn, err := db.Conn(ctx)
	if err != nil {
		return nil, fmt.Errorf("store: migrate: %w", err)
	}
	defer conn.Close()
	if p, err := m.read(ctx, conn); err != nil || p.upToDate() {
		return nil, err
	}
	if err := lockMigrations(ctx, conn, MigrationLockWait); err != nil {
		return nil, err
	}
	defer func() {
		// The lock is the session's: were unlocking to fail, closing the
		// connection would end it.
		if _, err := conn.ExecContext(context.WithoutCancel(ctx), `SELECT pg_advisory_unlock($1)`, MigrationLockKey); err != nil {
			_ = conn.Raw(func(any) error { return errors.New("drop the connection") })
		}
	}()
	if _, err := conn.ExecContext(ctx, m.createTable); err != nil {
		return nil, fmt.Errorf("store: migrate: %w", err)
	}
	p, err := m.read(ctx, conn)
	if err != nil {
		return nil, err
	}
	return m.apply(ctx, conn, func() (*sql.Tx, error) { return conn.BeginTx(ctx, nil) }, p)
}

// lockMigrations takes the session advisory lock MigrationLockKey on conn,
// waiting at most wait for another session to give it up.
func lockMigrations(ctx context.Context, conn *sql.Conn, wait time.Duration) error {
	lctx, cancel := context.WithTimeout(ctx, wait)
	defer cancel()
	_, err := conn.ExecContext(lctx, `SELECT pg_advisory_lock($1)`, MigrationLockKey)
	switch {
	case err == nil:
		return nil
	case ctx.Err() == nil && lctx.Err() != nil:
		return fmt.Errorf("store: migrate: another board has held the migration lock (pg_advisory_lock %d) for %v: is one still migrating this store?", MigrationLockKey, wait)
	default:
		return fmt.Errorf("store: migrate: take the migration lock: %w", err)
	}
}

// migrateSQLite brings the SQLite store at dsn up to date in one immediate
// transaction, which another process migrating the same file waits for.
// Foreign keys are off while it runs, as SQLite requires for a migration
// that rebuilds a table (the PRAGMAs in such a file do nothing inside a
// transaction), and PRAGMA foreign_key_check must find nothing amiss
// before it commits.
func migrateSQLite(ctx context.Context, dsn string) ([]Migration, error) {
	return migrateSQLiteWith(ctx, dsn, migrators[sqliteDialect])
}

func migrateSQLiteWith(ctx context.Context, dsn string, m migrator) ([]Migration, error) {
	db, err := sql.Open("sqlite", dsn)
	if err != nil {
		return nil, fmt.Errorf("store: migrate: %w", err)
	}
	defer db.Close()
	db.SetMaxOpenConns(1)
	conn, err := db.Conn(ctx)
	if err != nil {
		return nil, fmt.Errorf("store: migrate: %w", err)
	}
	defer conn.Close()
	// Most starts find nothing to do, and take no write lock to find it.
	if p, err := m.read(ctx, conn); err != nil || p.upToDate() {
		return nil, err
	}
	if _, err := conn.ExecContext(ctx, `PRAGMA foreign_keys = off`); err != nil {
		return nil, fmt.Errorf("store: migrate: %w", err)
	}
	tx, err := conn.BeginTx(ctx, nil) // BEGIN IMMEDIATE: the DSN says so
	if err != nil {
		return nil, fmt.Errorf("store: migrate: %w", err)
	}
	done, err := func() ([]Migration, error) {
		if _, err := tx.ExecContext(ctx, m.createTable); err != nil {
			return nil, fmt.Errorf("store: migrate: %w", err)
		}
		p, err := m.read(ctx, tx)
		if err != nil {
			return nil, err
		}
		done, err := m.apply(ctx, tx, nil, p)
		if err != nil {
			return nil, err
		}
		rows, err := tx.QueryContext(ctx, `PRAGMA foreign_key_check`)
		if err != nil {
			return nil, fmt.Errorf("store: migrate: %w", err)
		}
		broken := rows.Next()
		rows.Close()
		if broken {
			return nil, errors.New("store: migrate: the migrations leave rows whose foreign keys point nowhere (PRAGMA foreign_key_check)")
		}
		return done, nil
	}()
	if err != nil {
		return nil, errors.Join(err, tx.Rollback())
	}
	if err := tx.Commit(); err != nil {
		return nil, fmt.Errorf("store: migrate: %w", err)
	}
	return done, nil
}

// Migrate brings the store dsn names up to date, as Open does, and
// returns the migrations it applied; like Open, it makes an SQLite store
// where there is none, and the board's tables in an empty PostgreSQL
// database.
func Migrate(ctx context.Context, dsn string) ([]Migration, error) {
	src, err := parseDSN(dsn)
	if err != nil {
		return nil, err
	}
	if src.postgres {
		db, err := sql.Open("pgx", dsn)
		if err != nil {
			return nil, fmt.Errorf("open postgres: %w", err)
		}
		defer db.Close()
		return migratePostgres(ctx, db)
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
	return migrateSQLite(ctx, sqliteDSN(src.path, src.params))
}

// Migrations says which of this board's migrations the store dsn names
// has applied and which it has not, changing nothing. An SQLite store
// must exist.
func Migrations(ctx context.Context, dsn string) (MigrationStatus, error) {
	src, err := parseDSN(dsn)
	if err != nil {
		return MigrationStatus{}, err
	}
	var db *sql.DB
	m := migrators[sqliteDialect]
	if src.postgres {
		m = migrators[postgresDialect]
		db, err = sql.Open("pgx", dsn)
	} else {
		if err := sqliteExists(src.path); err != nil {
			return MigrationStatus{}, err
		}
		db, err = sql.Open("sqlite", sqliteDSN(src.path, src.params))
	}
	if err != nil {
		return MigrationStatus{}, fmt.Errorf("store: %w", err)
	}
	defer db.Close()
	conn, err := db.Conn(ctx)
	if err != nil {
		return MigrationStatus{}, fmt.Errorf("reach store: %w", err)
	}
	defer conn.Close()
	p, err := m.read(ctx, conn)
	if err != nil {
		return MigrationStatus{}, err
	}
	return p.status(), nil
}

// sqliteExists fails with a *NotFoundError when there is no file at path.
func sqliteExists(path string) error {
	if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) {
		return &NotFoundError{Path: path}
	} else if err != nil {
		return fmt.Errorf("store: %w", err)
	}
	return nil
}

// Available lists this board's migrations for the dialect dsn names, in
// the order they apply.
func Available(dsn string) ([]Migration, error) {
	src, err := parseDSN(dsn)
	if err != nil {
		return nil, err
	}
	m := migrators[sqliteDialect]
	if src.postgres {
		m = migrators[postgresDialect]
	}
	set, err := m.set()
	if err != nil {
		return nil, err
	}
	var all []Migration
	for _, f := range set.files {
		all = append(all, migrationOf(f, time.Time{}, false))
	}
	return all, nil
}
