package store

import (
	"runtime"
	"sync"
	"sync/atomic"
	"time"
	"weak"

	"github.com/symphonix/symphonix/ent"
)

// Observer is told how a store's transactions go, for a board's metrics.
// Its methods are called where the store works, one transaction or group
// at a time: they must be quick, must not block, and must be safe to call
// from many goroutines at once.
type Observer interface {
	// Transaction: a transaction run by InTx ended after took, from its
	// begin to its commit or rollback; committed says whether it was kept.
	Transaction(took time.Duration, committed bool)
	// Group: SQLite committed n transactions together (n ≥ 1), with one
	// fsync. PostgreSQL has no groups and never calls it.
	Group(n int)
}

// Observe tells o how db's transactions go from now on, in place of the
// observer before it; nil stops telling. db must be a client Open
// returned: any other is never observed.
func Observe(db *ent.Client, o Observer) {
	if s := observerOf(db); s != nil {
		if o == nil {
			s.o.Store(nil)
			return
		}
		s.o.Store(&o)
	}
}

// observerSlot holds the observer of one store, if any.
type observerSlot struct {
	o atomic.Pointer[Observer]
}

func (s *observerSlot) get() Observer {
	if s == nil {
		return nil
	}
	if p := s.o.Load(); p != nil {
		return *p
	}
	return nil
}

// observed maps the clients Open returned to their slots. The clients are
// held weakly: a client that is no longer used is dropped from the map.
var observed sync.Map // weak.Pointer[ent.Client] → *observerSlot

// watch registers db with slot.
func watch(db *ent.Client, slot *observerSlot) {
	key := weak.Make(db)
	observed.Store(key, slot)
	runtime.AddCleanup(db, func(k weak.Pointer[ent.Client]) { observed.Delete(k) }, key)
}

// observerOf is db's slot, or nil for a client Open did not return.
func observerOf(db *ent.Client) *observerSlot {
	v, ok := observed.Load(weak.Make(db))
	if !ok {
		return nil
	}
	return v.(*observerSlot)
}
