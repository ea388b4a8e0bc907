package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/symphonix/symphonix/internal/boardtest"
	"github.com/symphonix/symphonix/store"
)

// migrationCount is how many migrations the store's sqlite directory has.
func migrationCount(t *testing.T) int {
	t.Helper()
	files, err := filepath.Glob(filepath.Join("..", "..", "store", "migrations", "sqlite", "*.sql"))
	if err != nil || len(files) == 0 {
		t.Fatalf("the sqlite migrations: %v, %v", files, err)
	}
	return len(files)
}

// TestMigrateSQLite: board migrate refuses a folder with no store unless
// --create; --dry-run prints each migration's SQL and makes nothing;
// migrate applies them all and says so, once; migrate status lists them
// applied, in a table and as JSON.
func TestMigrateSQLite(t *testing.T) {
	t.Parallel()
	data := filepath.Join(t.TempDir(), "data")
	n := migrationCount(t)
	var out, errb bytes.Buffer
	err := run(t.Context(), []string{"migrate", "--data", data}, noEnv, &out, &errb)
	if !errors.Is(err, store.ErrNoStore) || !strings.Contains(err.Error(), "--create") {
		t.Fatalf("migrate on a folder with no store = %v, want ErrNoStore naming --create", err)
	}
	if err := run(t.Context(), []string{"migrate", "--data", data, "--create", "--dry-run"}, noEnv, &out, &errb); err != nil {
		t.Fatalf("migrate --dry-run: %v", err)
	}
	if got := strings.Count(out.String(), "-- would apply "); got != n || !strings.Contains(out.String(), "CREATE TABLE `agents`") {
		t.Errorf("migrate --dry-run printed %d migrations, want %d with their SQL:\n%s", got, n, out.String())
	}
	if _, err := os.Stat(filepath.Join(data, "board.db")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("migrate --dry-run made the store: %v", err)
	}

	out.Reset()
	if err := run(t.Context(), []string{"migrate", "--data", data, "--create"}, noEnv, &out, &errb); err != nil {
		t.Fatalf("migrate --create: %v", err)
	}
	if got := strings.Count(out.String(), "applied "); got != n || !strings.Contains(out.String(), "_baseline") {
		t.Errorf("migrate --create printed %q, want %d lines applied, the baseline first", out.String(), n)
	}
	out.Reset()
	if err := run(t.Context(), []string{"migrate", "--data", data}, noEnv, &out, &errb); err != nil {
		t.Fatalf("second migrate: %v", err)
	}
	if !strings.HasPrefix(out.String(), "nothing to apply") {
		t.Errorf("second migrate printed %q, want nothing to apply", out.String())
	}

	out.Reset()
	if err := run(t.Context(), []string{"migrate", "status", "--data", data, "-o", "json"}, noEnv, &out, &errb); err != nil {
		t.Fatalf("migrate status: %v", err)
	}
	var list []migrationJSON
	if err := json.Unmarshal(out.Bytes(), &list); err != nil {
		t.Fatalf("migrate status -o json: %v\n%s", err, out.String())
	}
	if len(list) != n || list[0].Description != "baseline" || list[0].AppliedAt == nil {
		t.Errorf("migrate status -o json = %+v, want %d applied, the baseline first", list, n)
	}
	out.Reset()
	if err := run(t.Context(), []string{"migrate", "status", "--data", data}, noEnv, &out, &errb); err != nil {
		t.Fatalf("migrate status: %v", err)
	}
	if !strings.Contains(out.String(), "VERSION") || strings.Contains(out.String(), "pending") {
		t.Errorf("migrate status printed\n%s\nwant a table with nothing pending", out.String())
	}
}

// TestMigrateRefusesWhileServed: board migrate does not change an SQLite
// store a board is serving.
func TestMigrateRefusesWhileServed(t *testing.T) {
	t.Parallel()
	data := t.TempDir()
	lock, err := store.TakeLock(store.SQLiteDSN(data))
	if err != nil {
		t.Fatal(err)
	}
	defer lock.Release()
	err = run(t.Context(), []string{"migrate", "--data", data, "--create"}, noEnv, &bytes.Buffer{}, &bytes.Buffer{})
	var locked *store.LockedError
	if !errors.As(err, &locked) {
		t.Errorf("migrate of a store in use = %v, want a *store.LockedError", err)
	}
}

// TestMigratePostgres: on an empty PostgreSQL database, migrate status
// says there is no store; migrate --create applies every migration, and
// status then lists each one applied.
func TestMigratePostgres(t *testing.T) {
	t.Parallel()
	dsn := boardtest.PostgresDSN(t)
	n := migrationCount(t)
	var out bytes.Buffer
	err := run(t.Context(), []string{"migrate", "status", "--database", dsn}, noEnv, &out, &bytes.Buffer{})
	if !errors.Is(err, store.ErrNoStore) {
		t.Fatalf("migrate status on an empty database = %v, want ErrNoStore", err)
	}
	if err := run(t.Context(), []string{"migrate", "--database", dsn, "--create"}, noEnv, &out, &bytes.Buffer{}); err != nil {
		t.Fatalf("migrate --create: %v", err)
	}
	if got := strings.Count(out.String(), "applied "); got != n {
		t.Errorf("migrate --create printed %q, want %d applied", out.String(), n)
	}
	out.Reset()
	if err := run(t.Context(), []string{"migrate", "status", "--database", dsn, "-o", "json"}, noEnv, &out, &bytes.Buffer{}); err != nil {
		t.Fatalf("migrate status: %v", err)
	}
	var list []migrationJSON
	if err := json.Unmarshal(out.Bytes(), &list); err != nil {
		t.Fatal(err)
	}
	for _, m := range list {
		if m.AppliedAt == nil {
			t.Errorf("migrate status after migrate: %s pending", m.Version)
		}
	}
	if len(list) != n {
		t.Errorf("migrate status lists %d migrations, want %d", len(list), n)
	}
}
