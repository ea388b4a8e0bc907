package store

import (
	"errors"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestSQLitePragmasWhateverTheForm: every form of SQLite DSN gets WAL,
// the busy timeout, foreign keys and synchronous=FULL, read back from the
// connection; parameters of the caller's own are kept.
func TestSQLitePragmasWhateverTheForm(t *testing.T) {
	t.Parallel()
	forms := map[string]func(path string) string{
		"path":                       func(p string) string { return p },
		"file: URL":                  func(p string) string { return "file:" + p },
		"file: URL, foreign keys on": func(p string) string { return "file:" + p + "?_pragma=foreign_keys(1)" },
		"file:/// URL with a pragma": func(p string) string { return "file://" + p + "?_pragma=cache_size(-4000)" },
		"file://localhost URL":       func(p string) string { return "file://localhost" + p },
		"SQLiteDSN":                  func(p string) string { return SQLiteDSN(filepath.Dir(p)) },
		"path with a pragma":         func(p string) string { return p + "?_pragma=cache_size(-4000)" },
	}
	for name, form := range forms {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			path := filepath.Join(t.TempDir(), "board.db")
			dsn := form(path)
			drv, err := openSQLite(t.Context(), dsn)
			if err != nil {
				t.Fatalf("openSQLite(%s): %v", dsn, err)
			}
			defer drv.Close()
			if _, err := os.Stat(path); err != nil {
				t.Errorf("openSQLite(%s) made no %s: %v", dsn, path, err)
			}
			want := map[string]string{"journal_mode": "wal", "busy_timeout": "10000", "foreign_keys": "1", "synchronous": "2"}
			if strings.Contains(dsn, "cache_size") {
				want["cache_size"] = "-4000"
			}
			for pragma, v := range want {
				var got string
				if err := drv.pool.DB().QueryRowContext(t.Context(), "PRAGMA "+pragma).Scan(&got); err != nil {
					t.Fatal(err)
				}
				if got != v {
					t.Errorf("openSQLite(%s): PRAGMA %s = %s, want %s", dsn, pragma, got, v)
				}
			}
		})
	}
}

// TestDSNRefused: a scheme that is not PostgreSQL's or file:, an SQLite
// DSN that would set the board's pragmas itself, and one without a file
// are refused with ErrDSN, naming neither the DSN's password nor creating
// anything.
func TestDSNRefused(t *testing.T) {
	t.Parallel()
	for _, dsn := range []string{
		"mysql://root:s3cret@db.example/board",
		"MySQL://x",
		"sqlite3://board.db",
		"http://example.com/board.db",
		"postgres:board",
		"file://db.example/board.db",
		"file:board.db?_pragma=journal_mode(DELETE)",
		"file:board.db?_pragma=synchronous%3DOFF",
		"file:board.db?_txlock=deferred",
		"file:board.db?_fk=0",
		"file:board.db?mode=ro",
		"board.db?_busy_timeout=1",
		"file::memory:",
		":memory:",
		"file:",
	} {
		_, err := parseDSN(dsn)
		if !errors.Is(err, ErrDSN) {
			t.Errorf("parseDSN(%s) = %v, want ErrDSN", dsn, err)
			continue
		}
		if strings.Contains(err.Error(), "s3cret") {
			t.Errorf("parseDSN(%s) = %v: the error shows the password", dsn, err)
		}
	}
	_, err := parseDSN("mysql://x")
	for _, want := range []string{`"mysql"`, "postgres://", "file:"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("parseDSN(mysql://x) = %v, want it to name %s", err, want)
		}
	}
}

// TestOpenUnknownSchemeMakesNothing: store.Open on mysql://x fails
// without making a file or folder in the working directory.
func TestOpenUnknownSchemeMakesNothing(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	if _, err := Open(t.Context(), "mysql://x"); !errors.Is(err, ErrDSN) {
		t.Errorf("Open(mysql://x) = %v, want ErrDSN", err)
	}
	if _, err := TakeLock("mysql://x"); !errors.Is(err, ErrDSN) {
		t.Errorf("TakeLock(mysql://x) = %v, want ErrDSN", err)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Errorf("Open(mysql://x) left %v in the working directory", entries)
	}
}

// TestSQLiteDSNPath: SQLiteDSN and the DSN Open builds name the file
// whatever characters its folder's name has.
func TestSQLiteDSNPath(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "a b%20c?d#e")
	drv, err := openSQLite(t.Context(), SQLiteDSN(dir))
	if err != nil {
		t.Fatal(err)
	}
	drv.Close()
	if _, err := os.Stat(filepath.Join(dir, "board.db")); err != nil {
		t.Errorf("SQLiteDSN(%q): %v", dir, err)
	}
	src, err := parseDSN("file:" + url.PathEscape(filepath.Join(dir, "board.db")))
	if err != nil || src.path != filepath.Join(dir, "board.db") {
		t.Errorf("parseDSN of an escaped file: URL = %q, %v; want %q", src.path, err, filepath.Join(dir, "board.db"))
	}
}
