package store

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/symphonix/symphonix/ent"
	"github.com/symphonix/symphonix/ent/setting"
)

func groupStore(t *testing.T) (*ent.Client, *sqliteWriter) {
	t.Helper()
	drv, err := openSQLite(t.Context(), SQLiteDSN(t.TempDir()))
	if err != nil {
		t.Fatal(err)
	}
	store := ent.NewClient(ent.Driver(drv))
	t.Cleanup(func() { store.Close() })
	return store, drv.w
}

// waitFor polls cond until it holds or five seconds have passed.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); !cond(); {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(time.Millisecond)
	}
}

// write is one small write in tx: a setting named key.
func write(ctx context.Context, tx *ent.Tx, key string) error {
	return tx.Setting.Create().SetID(key).SetUpdatedAt(time.Now()).Exec(ctx)
}

func writeIn(t *testing.T, tx *ent.Tx, key string) {
	t.Helper()
	if err := write(t.Context(), tx, key); err != nil {
		t.Fatalf("write %s: %v", key, err)
	}
}

// written is the keys of the settings in the store, in order.
func written(t *testing.T, store *ent.Client) []string {
	t.Helper()
	keys, err := store.Setting.Query().Order(ent.Asc(setting.FieldID)).IDs(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	return keys
}

// TestGroupCommitMany: transactions from many goroutines at once all
// commit, each with its write.
func TestGroupCommitMany(t *testing.T) {
	t.Parallel()
	store, _ := groupStore(t)
	const n = 64
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for i := range n {
		wg.Go(func() {
			tx, err := store.Tx(t.Context())
			if err == nil {
				if err = write(t.Context(), tx, fmt.Sprintf("key-%02d", i)); err == nil {
					err = tx.Commit()
				} else {
					tx.Rollback()
				}
			}
			errs <- err
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatalf("write: %v", err)
		}
	}
	if got := len(written(t, store)); got != n {
		t.Fatalf("%d settings written, want %d", got, n)
	}
}

// TestGroupCommitRollbackAlone: in one group, a transaction that rolls
// back takes only its own changes with it; the ones before and after it
// commit, and each Commit returns once the group has.
func TestGroupCommitRollbackAlone(t *testing.T) {
	t.Parallel()
	store, w := groupStore(t)
	ctx := t.Context()

	first, err := store.Tx(ctx)
	if err != nil {
		t.Fatal(err)
	}
	writeIn(t, first, "first")
	// Two more writers queue behind the first.
	second, third := make(chan error, 1), make(chan error, 1)
	go func() {
		tx, err := store.Tx(ctx)
		if err == nil {
			err = errors.Join(write(ctx, tx, "second"), tx.Rollback())
		}
		second <- err
	}()
	waitFor(t, "the second writer to queue", func() bool { return w.waiting.Load() == 1 })
	go func() {
		tx, err := store.Tx(ctx)
		if err == nil {
			if err = write(ctx, tx, "third"); err == nil {
				err = tx.Commit()
			}
		}
		third <- err
	}()
	waitFor(t, "the third writer to queue", func() bool { return w.waiting.Load() == 2 })
	firstDone := make(chan error, 1)
	go func() { firstDone <- first.Commit() }()
	for _, c := range []chan error{second, third, firstDone} {
		if err := <-c; err != nil {
			t.Fatal(err)
		}
	}
	if got := written(t, store); fmt.Sprint(got) != "[first third]" {
		t.Fatalf("entries %v, want [first third]", got)
	}
}

// TestGroupCommitWaiterGivesUp: a writer whose context ends while it
// waits for the connection returns at once, and the transaction ahead of
// it commits.
func TestGroupCommitWaiterGivesUp(t *testing.T) {
	t.Parallel()
	store, w := groupStore(t)
	ctx := t.Context()

	first, err := store.Tx(ctx)
	if err != nil {
		t.Fatal(err)
	}
	writeIn(t, first, "first")
	wctx, cancel := context.WithCancel(ctx)
	gaveUp := make(chan error, 1)
	go func() {
		_, err := store.Tx(wctx)
		gaveUp <- err
	}()
	waitFor(t, "the second writer to queue", func() bool { return w.waiting.Load() == 1 })
	cancel()
	if err := <-gaveUp; !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled writer: Tx = %v, want %v", err, context.Canceled)
	}
	if err := first.Commit(); err != nil {
		t.Fatalf("first Commit = %v", err)
	}
	if got := written(t, store); fmt.Sprint(got) != "[first]" {
		t.Fatalf("entries %v, want [first]", got)
	}
}

// TestGroupCommitLeftOpen: a group left open for a writer that then gave
// up is committed all the same.
func TestGroupCommitLeftOpen(t *testing.T) {
	t.Parallel()
	store, w := groupStore(t)
	w.maxAge = time.Hour // a slow machine must not close the group by its age
	ctx := t.Context()

	first, err := store.Tx(ctx)
	if err != nil {
		t.Fatal(err)
	}
	writeIn(t, first, "first")
	w.waiting.Add(1) // a writer queues…
	firstDone := make(chan error, 1)
	go func() { firstDone <- first.Commit() }()
	waitFor(t, "the first writer to hand the connection on", func() bool { return len(w.sem) == 0 })
	select {
	case err := <-firstDone:
		t.Fatalf("first Commit = %v before its group committed", err)
	default:
	}
	w.waiting.Add(-1) // …and gives up, as acquire does
	w.abandon()
	select {
	case err := <-firstDone:
		if err != nil {
			t.Fatalf("first Commit = %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("first Commit still waiting for a group nobody commits")
	}
	if got := written(t, store); fmt.Sprint(got) != "[first]" {
		t.Fatalf("entries %v, want [first]", got)
	}
}

// TestGroupCommitDoneTx: a transaction used after it ended is refused.
func TestGroupCommitDoneTx(t *testing.T) {
	t.Parallel()
	store, _ := groupStore(t)
	tx, err := store.Tx(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	if err := tx.Commit(); err == nil {
		t.Fatal("second Commit = nil, want an error")
	}
	// The writer is free again.
	tx, err = store.Tx(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	writeIn(t, tx, "after")
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
}
