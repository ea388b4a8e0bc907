package board

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/symphonix/symphonix/ent"
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

func appendIn(t *testing.T, a *Audit, tx *ent.Tx, subject string) {
	t.Helper()
	if _, err := a.Append(t.Context(), tx, AuditRecord{Actor: "test", Action: "test.write", Subject: subject}); err != nil {
		t.Fatalf("append %s: %v", subject, err)
	}
}

func subjects(t *testing.T, a *Audit) []string {
	t.Helper()
	es, err := a.List(t.Context(), 0, 1000)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range es {
		out = append(out, e.Subject)
	}
	return out
}

// TestGroupCommitMany: transactions from many goroutines at once all
// commit, each with its audit entry, and the chain is intact.
func TestGroupCommitMany(t *testing.T) {
	t.Parallel()
	store, _ := groupStore(t)
	a := NewAudit(store)
	const n = 64
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for i := range n {
		wg.Go(func() {
			_, err := a.AppendNow(t.Context(), AuditRecord{Actor: "test", Action: "test.write", Subject: fmt.Sprint(i)})
			errs <- err
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatalf("AppendNow: %v", err)
		}
	}
	r, err := a.Verify(t.Context())
	if err != nil || !r.OK() || r.Entries != n {
		t.Fatalf("Verify = %+v, %v; want %d good entries", r, err, n)
	}
}

// TestGroupCommitRollbackAlone: in one group, a transaction that rolls
// back takes only its own changes with it; the ones before and after it
// commit, and each Commit returns once the group has.
func TestGroupCommitRollbackAlone(t *testing.T) {
	t.Parallel()
	store, w := groupStore(t)
	a := NewAudit(store)
	ctx := t.Context()

	first, err := store.Tx(ctx)
	if err != nil {
		t.Fatal(err)
	}
	appendIn(t, a, first, "first")
	// Two more writers queue behind the first.
	second, third := make(chan error, 1), make(chan error, 1)
	go func() {
		tx, err := store.Tx(ctx)
		if err == nil {
			_, err = a.Append(ctx, tx, AuditRecord{Actor: "test", Action: "test.write", Subject: "second"})
			err = errors.Join(err, tx.Rollback())
		}
		second <- err
	}()
	waitFor(t, "the second writer to queue", func() bool { return w.waiting.Load() == 1 })
	go func() {
		tx, err := store.Tx(ctx)
		if err == nil {
			if _, err = a.Append(ctx, tx, AuditRecord{Actor: "test", Action: "test.write", Subject: "third"}); err == nil {
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
	if got := subjects(t, a); fmt.Sprint(got) != "[first third]" {
		t.Fatalf("entries %v, want [first third]", got)
	}
	if r, err := a.Verify(ctx); err != nil || !r.OK() {
		t.Fatalf("Verify = %+v, %v", r, err)
	}
}

// TestGroupCommitWaiterGivesUp: a writer whose context ends while it
// waits for the connection returns at once, and the transaction ahead of
// it commits.
func TestGroupCommitWaiterGivesUp(t *testing.T) {
	t.Parallel()
	store, w := groupStore(t)
	a := NewAudit(store)
	ctx := t.Context()

	first, err := store.Tx(ctx)
	if err != nil {
		t.Fatal(err)
	}
	appendIn(t, a, first, "first")
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
	if got := subjects(t, a); fmt.Sprint(got) != "[first]" {
		t.Fatalf("entries %v, want [first]", got)
	}
}

// TestGroupCommitLeftOpen: a group left open for a writer that then gave
// up is committed all the same.
func TestGroupCommitLeftOpen(t *testing.T) {
	t.Parallel()
	store, w := groupStore(t)
	a := NewAudit(store)
	ctx := t.Context()

	first, err := store.Tx(ctx)
	if err != nil {
		t.Fatal(err)
	}
	appendIn(t, a, first, "first")
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
	if got := subjects(t, a); fmt.Sprint(got) != "[first]" {
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
	if _, err := NewAudit(store).AppendNow(t.Context(), AuditRecord{Actor: "test", Action: "test.write"}); err != nil {
		t.Fatal(err)
	}
}
