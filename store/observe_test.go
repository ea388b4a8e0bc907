package store_test

import (
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/symphonix/symphonix/ent"
	"github.com/symphonix/symphonix/store"
)

// recorder is an Observer that keeps what it is told.
type recorder struct {
	mu        sync.Mutex
	committed int
	rolled    int
	groups    []int
}

func (r *recorder) Transaction(took time.Duration, committed bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if took <= 0 {
		panic("transaction took no time")
	}
	if committed {
		r.committed++
	} else {
		r.rolled++
	}
}

func (r *recorder) Group(n int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.groups = append(r.groups, n)
}

// TestObserve: an observed SQLite store tells its observer of every
// transaction InTx ran, kept or not, and of the groups it committed them
// in, which together hold every transaction kept; once the observer is
// taken away, it is told nothing.
func TestObserve(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	db, err := store.Open(ctx, store.SQLiteDSN(t.TempDir()))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	rec := new(recorder)
	store.Observe(db, rec)

	const writers = 40
	var wg sync.WaitGroup
	for i := range writers {
		wg.Go(func() {
			err := store.InTx(ctx, db, func(tx *ent.Tx) error {
				if err := tx.Setting.Create().SetID(fmt.Sprintf("k%d", i)).SetUpdatedAt(time.Now()).Exec(ctx); err != nil {
					return err
				}
				if i%4 == 0 {
					return errors.New("changed my mind")
				}
				return nil
			})
			if (err != nil) != (i%4 == 0) {
				t.Errorf("InTx %d = %v", i, err)
			}
		})
	}
	wg.Wait()

	rec.mu.Lock()
	committed, rolled := rec.committed, rec.rolled
	inGroups := 0
	for _, n := range rec.groups {
		if n < 1 {
			t.Errorf("Group(%d): want at least 1", n)
		}
		inGroups += n
	}
	rec.mu.Unlock()
	if committed != writers*3/4 || rolled != writers/4 {
		t.Errorf("Transaction: %d kept and %d rolled back, want %d and %d", committed, rolled, writers*3/4, writers/4)
	}
	if inGroups != committed {
		t.Errorf("Group: %d transactions in groups, want %d (every one kept)", inGroups, committed)
	}

	store.Observe(db, nil)
	if err := store.InTx(ctx, db, func(tx *ent.Tx) error {
		return tx.Setting.Create().SetID("after").SetUpdatedAt(time.Now()).Exec(ctx)
	}); err != nil {
		t.Fatal(err)
	}
	rec.mu.Lock()
	defer rec.mu.Unlock()
	if rec.committed != committed {
		t.Errorf("after Observe(nil): told of %d more transactions, want none", rec.committed-committed)
	}
}
