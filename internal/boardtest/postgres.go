package boardtest

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"os"
	"testing"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib" // the "pgx" driver
)

// PostgresDSN creates an empty database for the test on the PostgreSQL at
// SYMPHONIX_TEST_POSTGRES (default postgres://postgres@127.0.0.1:5432/postgres),
// drops it when the test ends, and returns its DSN. Without a reachable
// server the test is skipped, except under CI=true, where it fails.
func PostgresDSN(t testing.TB) string {
	t.Helper()
	admin := os.Getenv("SYMPHONIX_TEST_POSTGRES")
	if admin == "" {
		admin = "postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable"
	}
	db, err := sql.Open("pgx", admin)
	if err == nil {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		err = db.PingContext(ctx)
		cancel()
	}
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("PostgreSQL at %s: %v", admin, err)
		}
		t.Skipf("no PostgreSQL at %s (set SYMPHONIX_TEST_POSTGRES; under CI=true this fails): %v", admin, err)
	}
	var p [6]byte
	_, _ = rand.Read(p[:])
	name := "symphonix_test_" + hex.EncodeToString(p[:])
	if _, err := db.Exec("CREATE DATABASE " + name); err != nil {
		t.Fatalf("create database: %v", err)
	}
	t.Cleanup(func() {
		_, _ = db.Exec("DROP DATABASE IF EXISTS " + name + " WITH (FORCE)")
		db.Close()
	})
	return "postgres://postgres@127.0.0.1:5432/" + name + "?sslmode=disable"
}
