package store

import (
	"context"
	"os"
	"sync"
	"sync/atomic"
	"testing"

	entsql "entgo.io/ent/dialect/sql"
)

// slowRead is a SELECT that keeps its connection busy for a while: it
// counts tens of thousands of rows it makes up.
const slowRead = `SELECT count(*) FROM (WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i+1 FROM n WHERE i < 30000) SELECT i FROM n)`

// TestSQLiteConnectionsBounded: a burst of reads far larger than the pool
// opens at most MaxSQLiteReads connections to read on and one to write
// on, and every read is answered; the process's file descriptors grow by
// a bound that does not depend on the burst.
//
// Not parallel: the file descriptors counted are the whole process's.
func TestSQLiteConnectionsBounded(t *testing.T) {
	drv, err := openSQLite(t.Context(), SQLiteDSN(t.TempDir()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { drv.Close() })
	// A write, so the write connection is open too.
	if err := drv.Exec(t.Context(), "CREATE TABLE t (x)", []any{}, nil); err != nil {
		t.Fatal(err)
	}
	fdsBefore := openFiles(t)

	const burst = 200
	var (
		wg       sync.WaitGroup
		stop     = make(chan struct{})
		mostOpen atomic.Int64
		mostFDs  atomic.Int64
		failed   atomic.Int64
	)
	watch := make(chan struct{})
	go func() {
		defer close(watch)
		for {
			if n := int64(drv.pool.DB().Stats().OpenConnections); n > mostOpen.Load() {
				mostOpen.Store(n)
			}
			if n := int64(openFiles(t)); n > mostFDs.Load() {
				mostFDs.Store(n)
			}
			select {
			case <-stop:
				return
			default:
			}
		}
	}()
	for range burst {
		wg.Go(func() {
			var rows entsql.Rows
			if err := drv.Query(context.Background(), slowRead, []any{}, &rows); err != nil {
				t.Errorf("read: %v", err)
				failed.Add(1)
				return
			}
			defer rows.Close()
			for rows.Next() {
			}
			if err := rows.Err(); err != nil {
				t.Errorf("read: %v", err)
			}
		})
	}
	wg.Wait()
	close(stop)
	<-watch
	if n := mostOpen.Load(); n > MaxSQLiteReads {
		t.Errorf("%d reads at once opened %d connections, want at most %d", burst, n, MaxSQLiteReads)
	}
	if n := mostOpen.Load(); n < 2 {
		t.Errorf("%d reads at once used %d connections: the burst never overlapped", burst, n)
	}
	// Each connection holds the database and its WAL open; a few more for
	// whatever else the process opened meanwhile.
	if grew := mostFDs.Load() - int64(fdsBefore); fdsBefore > 0 && grew > 3*MaxSQLiteReads+8 {
		t.Errorf("file descriptors grew by %d during the burst, want at most %d", grew, 3*MaxSQLiteReads+8)
	}
	t.Logf("%d reads at once: %d connections, file descriptors %d → at most %d", burst, mostOpen.Load(), fdsBefore, mostFDs.Load())
}

// openFiles is how many file descriptors the process has open, or 0
// where there is no /proc/self/fd to count them in.
func openFiles(t *testing.T) int {
	t.Helper()
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		return 0
	}
	return len(ents)
}
