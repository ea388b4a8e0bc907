package store

import (
	"database/sql"
	"os"
	"path/filepath"
	"testing"

	"ariga.io/atlas/sql/migrate"
)

// testMigrations is a migrator for SQLite with the given files instead of
// the store's own.
func testMigrations(t *testing.T, files ...migrate.File) migrator {
	t.Helper()
	sums, err := migrate.NewHashFile(files)
	if err != nil {
		t.Fatal(err)
	}
	m := migrators[sqliteDialect]
	m.migrations = &migrationSet{files: files, sums: sums}
	return m
}

// TestSQLiteRebuildKeepsChildren: a migration that rebuilds a table, as
// Atlas writes one for SQLite (copy into new_T, drop T, rename), keeps the
// rows of the tables whose foreign keys point at it, ON DELETE CASCADE
// and all: foreign keys are off while the store migrates, since the
// PRAGMA in the file does nothing inside the migration's transaction.
func TestSQLiteRebuildKeepsChildren(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "board.db")
	if err := createOwnerOnly(path); err != nil {
		t.Fatal(err)
	}
	dsn := sqliteDSN(path, nil)
	first := migrate.NewLocalFile("1_parents.sql", []byte(
		"CREATE TABLE parents (id integer PRIMARY KEY, name text NOT NULL);\n"+
			"CREATE TABLE children (id integer PRIMARY KEY, parent_id integer NOT NULL REFERENCES parents (id) ON DELETE CASCADE);\n"))
	rebuild := migrate.NewLocalFile("2_change_parents.sql", []byte(
		"PRAGMA foreign_keys = off;\n"+
			"CREATE TABLE new_parents (id integer PRIMARY KEY, name text NOT NULL, note text NOT NULL DEFAULT '');\n"+
			"INSERT INTO new_parents (id, name) SELECT id, name FROM parents;\n"+
			"DROP TABLE parents;\n"+
			"ALTER TABLE new_parents RENAME TO parents;\n"+
			"PRAGMA foreign_keys = on;\n"))
	if _, err := migrateSQLiteWith(t.Context(), dsn, testMigrations(t, first)); err != nil {
		t.Fatal(err)
	}
	db, err := sql.Open("sqlite", dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for _, q := range []string{`INSERT INTO parents (id, name) VALUES (1, 'p')`, `INSERT INTO children (id, parent_id) VALUES (1, 1), (2, 1)`} {
		if _, err := db.ExecContext(t.Context(), q); err != nil {
			t.Fatal(err)
		}
	}
	done, err := migrateSQLiteWith(t.Context(), dsn, testMigrations(t, first, rebuild))
	if err != nil {
		t.Fatal(err)
	}
	if len(done) != 1 || done[0].Version != "2" {
		t.Errorf("migrate applied %+v, want migration 2 alone", done)
	}
	var children, notes int
	if err := db.QueryRowContext(t.Context(), `SELECT count(*) FROM children`).Scan(&children); err != nil {
		t.Fatal(err)
	}
	if err := db.QueryRowContext(t.Context(), `SELECT count(*) FROM parents WHERE note = ''`).Scan(&notes); err != nil {
		t.Fatal(err)
	}
	if children != 2 || notes != 1 {
		t.Errorf("after rebuilding parents: %d children, %d parents with the new column; want 2 and 1", children, notes)
	}
	var fk int
	if err := db.QueryRowContext(t.Context(), `PRAGMA foreign_keys`).Scan(&fk); err != nil || fk != 1 {
		t.Errorf("PRAGMA foreign_keys on the store's connections = %d, %v; want 1", fk, err)
	}
}

// TestUpgradeFromVersioned: a store a board with only the baseline made
// and recorded (the release after this one will find stores so) is
// brought up by this board: the later migrations are applied and recorded
// once each, the baseline is not run again, and its rows are still there.
func TestUpgradeFromVersioned(t *testing.T) {
	t.Parallel()
	sets, err := loadMigrations()
	if err != nil {
		t.Fatal(err)
	}
	all := sets[sqliteDialect].files
	path := filepath.Join(t.TempDir(), "board.db")
	if err := createOwnerOnly(path); err != nil {
		t.Fatal(err)
	}
	dsn := sqliteDSN(path, nil)
	done, err := migrateSQLiteWith(t.Context(), dsn, testMigrations(t, all[0]))
	if err != nil || len(done) != 1 {
		t.Fatalf("the baseline alone: %v, %v", done, err)
	}
	rows, err := os.ReadFile(filepath.Join("testdata", "upgrade", "sqlite", "2-rows.sql"))
	if err != nil {
		t.Fatal(err)
	}
	stmts, err := migrate.NewLocalFile("rows.sql", rows).Stmts()
	if err != nil {
		t.Fatal(err)
	}
	db, err := sql.Open("sqlite", dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for _, s := range stmts {
		if _, err := db.ExecContext(t.Context(), s); err != nil {
			t.Fatal(err)
		}
	}
	c, err := Open(t.Context(), dsn)
	if err != nil {
		t.Fatalf("Open of a store with the baseline recorded: %v", err)
	}
	defer c.Close()
	var revs, baselines, users int
	if err := db.QueryRowContext(t.Context(), `SELECT count(*), sum(type = 2) FROM `+RevisionsTable).Scan(&revs, &baselines); err != nil {
		t.Fatal(err)
	}
	if revs != len(all) || baselines != len(all) {
		t.Errorf("revisions after the upgrade: %d, %d of them run; want %d, all run", revs, baselines, len(all))
	}
	if err := db.QueryRowContext(t.Context(), `SELECT count(*) FROM users WHERE email = 'ann@example.com'`).Scan(&users); err != nil || users != 1 {
		t.Errorf("users after the upgrade: %d, %v; want the one there was", users, err)
	}
	st, err := Migrations(t.Context(), dsn)
	if err != nil || len(st.Pending) != 0 || st.Applied[0].Adopted {
		t.Errorf("Migrations after the upgrade = %+v, %v; want none pending, the baseline run not adopted", st, err)
	}
}
