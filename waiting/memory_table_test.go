package waiting

import (
	"testing"
	"time"

	"github.com/symphonix/symphonix/flow"
)

// TestMemoryTable: the threads' memory is a Checkpointer of its own on the
// store's file, apart from the waiting runs; it survives reopening, and a
// thread's memory nobody wrote for KeepDays is forgotten on open.
func TestMemoryTable(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	c := &clock{now: time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)}
	s := openStore(t, dir, Config{Now: c.Now})
	m := MemoryOf(s)
	if m == nil {
		t.Fatal("MemoryOf(a Store) = nil")
	}
	exercise(t, m)

	ctx := t.Context()
	if err := m.Put(ctx, "kept", []byte(`{"v":1}`)); err != nil {
		t.Fatal(err)
	}
	if err := s.Put(ctx, "kept", []byte("a waiting run")); err != nil {
		t.Fatal(err)
	}
	if got, _, _ := m.Get(ctx, "kept"); string(got) != `{"v":1}` {
		t.Errorf("memory of kept = %q: the waiting run's Put must not reach it", got)
	}
	if err := s.Delete(ctx, "kept"); err != nil {
		t.Fatal(err)
	}
	if _, ok, _ := m.Get(ctx, "kept"); !ok {
		t.Error("deleting the waiting run deleted the thread's memory")
	}
	c.now = c.now.Add(24 * time.Hour)
	if err := m.Put(ctx, "later", []byte(`{"v":1}`)); err != nil {
		t.Fatal(err)
	}
	s.Close()

	// Reopened 30 days after "kept" was written and 29 after "later".
	c.now = c.now.Add(29 * 24 * time.Hour)
	s = openStore(t, dir, Config{Now: c.Now})
	got, err := MemoryOf(s).Threads(ctx)
	if err != nil {
		t.Fatal(err)
	}
	// exercise's threads were written with "kept": forgotten with it.
	if len(got) != 1 || got[0] != "later" {
		t.Errorf("memory threads after 30 days = %q, want only later", got)
	}
}

// TestMemoryOfMemory: a checkpointer in memory has no durable memory beside
// it; the engine keeps its own.
func TestMemoryOfMemory(t *testing.T) {
	t.Parallel()
	if m := MemoryOf(newMemory(nil)); m != nil {
		t.Errorf("MemoryOf(memory) = %T, want nil", m)
	}
	if m := MemoryOf(&flow.MemoryCheckpointer{}); m != nil {
		t.Errorf("MemoryOf(flow.MemoryCheckpointer) = %T, want nil", m)
	}
}
