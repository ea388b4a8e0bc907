package waiting

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"time"

	_ "modernc.org/sqlite" // registers the "sqlite" driver

	"github.com/symphonix/symphonix/flow"
)

// KeepDays is how long a thread nobody has written to is kept, in days,
// unless Config says otherwise.
const KeepDays = 30

// schemaVersion is the layout this build writes, kept in PRAGMA user_version.
// A database of a newer layout is refused rather than written over.
const schemaVersion = 3

var _ flow.Checkpointer = (*Store)(nil)

// Config tunes Open and OpenOrMemory. The zero value is the default.
type Config struct {
	// Now is the clock: it stamps every Put and decides what is old when the
	// store opens. Nil means time.Now.
	Now func() time.Time
	// KeepDays is how many days an untouched thread is kept. Zero or less
	// means KeepDays (30).
	KeepDays int
}

func (c Config) now() time.Time {
	if c.Now == nil {
		return time.Now()
	}
	return c.Now()
}

func (c Config) days() int {
	if c.KeepDays <= 0 {
		return KeepDays
	}
	return c.KeepDays
}

func (c Config) keep() time.Duration {
	return time.Duration(c.days()) * 24 * time.Hour
}

// Path is where the runs waiting in dir are kept: <dir>/.symphonix/waiting.db.
// The folder is the agent's, and .symphonix belongs in its .gitignore and
// .dockerignore: what is kept there is what people said.
func Path(dir string) string {
	return filepath.Join(dir, ".symphonix", "waiting.db")
}

// dsn is the database's DSN: a busy timeout instead of "database is locked"
// (another process may hold the file), WAL, and synchronous=FULL so that a
// checkpoint that was put survives a power cut.
func dsn(path string) string {
	u := url.URL{Scheme: "file", Opaque: filepath.ToSlash(path)}
	q := url.Values{}
	for _, p := range []string{"busy_timeout(10000)", "journal_mode(WAL)", "synchronous(FULL)"} {
		q.Add("_pragma", p)
	}
	u.RawQuery = q.Encode()
	return u.String()
}

// Store keeps waiting runs in SQLite. It is safe for concurrent use, also by
// several processes on one folder. Close it when done.
type Store struct {
	db        *sql.DB
	path      string
	now       func() time.Time
	forgotten int
}

// Open opens (creating it and its folder, 0700, if need be) the store of the
// agent folder dir, and forgets every thread nobody has written to for
// cfg.KeepDays. It never changes a file that is not a database of its own:
// such a file is an error, left as it was.
func Open(ctx context.Context, dir string, cfg Config) (*Store, error) {
	path := Path(dir)
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, fmt.Errorf("waiting: create folder: %w", err)
	}
	db, err := sql.Open("sqlite", dsn(path))
	if err != nil {
		return nil, fmt.Errorf("waiting: open %s: %w", path, err)
	}
	s := &Store{db: db, path: path, now: cfg.now}
	if err := s.prepare(ctx, cfg.now(), cfg.keep()); err != nil {
		db.Close()
		return nil, fmt.Errorf("waiting: open %s: %w", path, err)
	}
	return s, nil
}

// ErrNewerLayout is returned (wrapped) by Open for a database written by a
// newer build, which this one must not write over.
var ErrNewerLayout = errors.New("waiting: the database was written by a newer version")

// prepare checks the layout, creates the table, and forgets old threads.
func (s *Store) prepare(ctx context.Context, now time.Time, keep time.Duration) error {
	var version int
	if err := s.db.QueryRowContext(ctx, "PRAGMA user_version").Scan(&version); err != nil {
		return err
	}
	if version > schemaVersion {
		return fmt.Errorf("%w (layout %d, this build knows %d)", ErrNewerLayout, version, schemaVersion)
	}
	if version < schemaVersion {
		if _, err := s.db.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS waiting (
			thread     TEXT PRIMARY KEY,
			checkpoint BLOB NOT NULL,
			updated_at INTEGER NOT NULL -- unix milliseconds
		)`); err != nil {
			return err
		}
		// Layout 2 adds the holding notes (holding.go).
		if _, err := s.db.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS holding (
			run         TEXT NOT NULL,
			node        TEXT NOT NULL,
			thread      TEXT NOT NULL,
			ask         TEXT NOT NULL,
			show        BLOB NOT NULL,
			account     TEXT NOT NULL,
			digest      TEXT NOT NULL,
			state       TEXT NOT NULL,
			rule        TEXT NOT NULL,
			approval_id TEXT NOT NULL,
			why         TEXT NOT NULL,
			at          INTEGER NOT NULL, -- unix milliseconds
			updated_at  INTEGER NOT NULL, -- unix milliseconds
			PRIMARY KEY (run, node)
		)`); err != nil {
			return err
		}
		if _, err := s.db.ExecContext(ctx, `CREATE INDEX IF NOT EXISTS holding_thread ON holding (thread)`); err != nil {
			return err
		}
		// Layout 3 adds the threads' memory (memory_table.go).
		if _, err := s.db.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS memory (
			thread     TEXT PRIMARY KEY,
			memory     BLOB NOT NULL,
			updated_at INTEGER NOT NULL -- unix milliseconds
		)`); err != nil {
			return err
		}
		if _, err := s.db.ExecContext(ctx, fmt.Sprintf("PRAGMA user_version = %d", schemaVersion)); err != nil {
			return err
		}
	}
	// One row is one whole thread, so forgetting a row forgets the thread.
	res, err := s.db.ExecContext(ctx, "DELETE FROM waiting WHERE updated_at <= ?", now.Add(-keep).UnixMilli())
	if err != nil {
		return fmt.Errorf("forget old threads: %w", err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return fmt.Errorf("forget old threads: %w", err)
	}
	// A note follows its run; the note of a run that was ended (a
	// tombstone, withdrawn or not) is kept as long as a thread.
	if _, err := s.db.ExecContext(ctx, `DELETE FROM holding WHERE updated_at <= ?
		OR (state NOT IN (?, ?) AND thread NOT IN (SELECT thread FROM waiting))`,
		now.Add(-keep).UnixMilli(), string(Tombstone), string(Withdrawn)); err != nil {
		return fmt.Errorf("forget old notes: %w", err)
	}
	if _, err := s.db.ExecContext(ctx, "DELETE FROM memory WHERE updated_at <= ?", now.Add(-keep).UnixMilli()); err != nil {
		return fmt.Errorf("forget old memory: %w", err)
	}
	s.forgotten = int(n)
	return nil
}

// Path returns the database file the store keeps its runs in.
func (s *Store) Path() string { return s.path }

// Forgotten returns how many threads Open forgot because nobody had written
// to them for KeepDays.
func (s *Store) Forgotten() int { return s.forgotten }

// Put stores thread's checkpoint, replacing any before it, and marks the
// thread touched now. It returns once the write is on disk.
func (s *Store) Put(ctx context.Context, thread string, checkpoint []byte) error {
	if checkpoint == nil {
		checkpoint = []byte{} // the column is NOT NULL; nil and empty are one checkpoint
	}
	_, err := s.db.ExecContext(ctx, `INSERT INTO waiting (thread, checkpoint, updated_at) VALUES (?, ?, ?)
		ON CONFLICT (thread) DO UPDATE SET checkpoint = excluded.checkpoint, updated_at = excluded.updated_at`,
		thread, checkpoint, s.now().UnixMilli())
	if err != nil {
		return fmt.Errorf("waiting: put %q: %w", thread, err)
	}
	return nil
}

// Get returns thread's checkpoint; ok is false when there is none. Reading a
// thread does not touch it.
func (s *Store) Get(ctx context.Context, thread string) ([]byte, bool, error) {
	var cp []byte
	err := s.db.QueryRowContext(ctx, "SELECT checkpoint FROM waiting WHERE thread = ?", thread).Scan(&cp)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return nil, false, nil
	case err != nil:
		return nil, false, fmt.Errorf("waiting: get %q: %w", thread, err)
	}
	if cp == nil {
		cp = []byte{}
	}
	return cp, true, nil
}

// Delete forgets thread. Deleting a thread that is not there is not an error.
func (s *Store) Delete(ctx context.Context, thread string) error {
	if _, err := s.db.ExecContext(ctx, "DELETE FROM waiting WHERE thread = ?", thread); err != nil {
		return fmt.Errorf("waiting: delete %q: %w", thread, err)
	}
	return nil
}

// Threads lists the threads that have a checkpoint, in order.
func (s *Store) Threads(ctx context.Context) ([]string, error) {
	rows, err := s.db.QueryContext(ctx, "SELECT thread FROM waiting ORDER BY thread")
	if err != nil {
		return nil, fmt.Errorf("waiting: threads: %w", err)
	}
	defer rows.Close()
	var threads []string
	for rows.Next() {
		var t string
		if err := rows.Scan(&t); err != nil {
			return nil, fmt.Errorf("waiting: threads: %w", err)
		}
		threads = append(threads, t)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("waiting: threads: %w", err)
	}
	return threads, nil
}

// Close closes the database. What was put is already on disk.
func (s *Store) Close() error {
	return s.db.Close()
}
