package store_test

import (
	"database/sql"
	"strings"
	"testing"
	"time"

	"github.com/symphonix/symphonix/internal/boardtest"
	"github.com/symphonix/symphonix/store"
)

// TestMigrationLockWaitBounded: while another session holds the migration
// lock, taking it fails once the wait is over, naming the lock.
func TestMigrationLockWaitBounded(t *testing.T) {
	t.Parallel()
	dsn := boardtest.PostgresDSN(t)
	db, err := sql.Open("pgx", dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	holder, err := db.Conn(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	defer holder.Close()
	if _, err := holder.ExecContext(t.Context(), `SELECT pg_advisory_lock($1)`, store.MigrationLockKey); err != nil {
		t.Fatal(err)
	}
	waiter, err := db.Conn(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	defer waiter.Close()
	err = store.LockMigrations(t.Context(), waiter, 200*time.Millisecond)
	if err == nil || !strings.Contains(err.Error(), "migration lock") {
		t.Fatalf("lockMigrations while another session holds it = %v, want an error naming the migration lock", err)
	}
	if _, err := holder.ExecContext(t.Context(), `SELECT pg_advisory_unlock($1)`, store.MigrationLockKey); err != nil {
		t.Fatal(err)
	}
	// The wait's end closed the waiting session; a board would start anew.
	again, err := db.Conn(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	defer again.Close()
	if err := store.LockMigrations(t.Context(), again, time.Minute); err != nil {
		t.Errorf("lockMigrations once it is free: %v", err)
	}
}
