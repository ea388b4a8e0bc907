package waiting

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/symphonix/symphonix/flow"
)

func openStore(t *testing.T, dir string, opts Config) *Store {
	t.Helper()
	s, err := Open(t.Context(), dir, opts)
	if err != nil {
		t.Fatalf("Open(%s) = %v", dir, err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// exercise runs the Checkpointer contract against c; both the store and the
// memory fallback must keep it.
func exercise(t *testing.T, c flow.Checkpointer) {
	t.Helper()
	ctx := t.Context()
	if got, err := c.Threads(ctx); err != nil || len(got) != 0 {
		t.Fatalf("Threads() on an empty checkpointer = %q, %v; want none", got, err)
	}
	if _, ok, err := c.Get(ctx, "nobody"); ok || err != nil {
		t.Fatalf("Get(nobody) = ok %v, %v; want not ok", ok, err)
	}
	cp := []byte("first")
	if err := c.Put(ctx, "t1", cp); err != nil {
		t.Fatalf("Put(t1) = %v", err)
	}
	cp[0] = 'X' // the checkpointer must have kept its own copy
	if err := c.Put(ctx, "t2", []byte{0, 1, 2, 255}); err != nil {
		t.Fatalf("Put(t2) = %v", err)
	}
	if err := c.Put(ctx, "t3", nil); err != nil {
		t.Fatalf("Put(t3, nil) = %v", err)
	}
	if err := c.Put(ctx, "t2", []byte("second")); err != nil {
		t.Fatalf("Put(t2) again = %v", err)
	}
	for thread, want := range map[string][]byte{"t1": []byte("first"), "t2": []byte("second"), "t3": {}} {
		got, ok, err := c.Get(ctx, thread)
		if err != nil || !ok || !bytes.Equal(got, want) {
			t.Errorf("Get(%s) = %q, %v, %v; want %q", thread, got, ok, err, want)
		}
	}
	got, err := c.Threads(ctx)
	if err != nil {
		t.Fatalf("Threads() = %v", err)
	}
	if diff := cmp.Diff([]string{"t1", "t2", "t3"}, got); diff != "" {
		t.Errorf("Threads() (-want +got):\n%s", diff)
	}
	if err := c.Delete(ctx, "t1"); err != nil {
		t.Fatalf("Delete(t1) = %v", err)
	}
	if err := c.Delete(ctx, "t1"); err != nil {
		t.Fatalf("Delete(t1) twice = %v; deleting what is not there is not an error", err)
	}
	if _, ok, err := c.Get(ctx, "t1"); ok || err != nil {
		t.Errorf("Get(t1) after Delete = ok %v, %v; want not ok", ok, err)
	}
	got, err = c.Threads(ctx)
	if err != nil {
		t.Fatalf("Threads() = %v", err)
	}
	if diff := cmp.Diff([]string{"t2", "t3"}, got); diff != "" {
		t.Errorf("Threads() after Delete (-want +got):\n%s", diff)
	}
}

func TestStore(t *testing.T) {
	t.Parallel()
	exercise(t, openStore(t, t.TempDir(), Config{}))
}

func TestMemory(t *testing.T) {
	t.Parallel()
	exercise(t, newMemory(nil))
}

func TestOpenCreatesPrivateFolder(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	s := openStore(t, dir, Config{})
	if got, want := s.Path(), filepath.Join(dir, ".symphonix", "waiting.db"); got != want {
		t.Errorf("Path() = %s, want %s", got, want)
	}
	fi, err := os.Stat(filepath.Join(dir, ".symphonix"))
	if err != nil {
		t.Fatal(err)
	}
	if perm := fi.Mode().Perm(); perm != 0o700 {
		t.Errorf(".symphonix mode = %o, want 700", perm)
	}
	if _, err := os.Stat(s.Path()); err != nil {
		t.Errorf("the database file is not there: %v", err)
	}
}

// TestReopen is a restart: what one store put, the next one opened on the
// folder (as a second process would) gets.
func TestReopen(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	dir := t.TempDir()
	s, err := Open(ctx, dir, Config{})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Put(ctx, "thread-1", []byte("paused at approve")); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatalf("Close() = %v", err)
	}
	s = openStore(t, dir, Config{})
	got, ok, err := s.Get(ctx, "thread-1")
	if err != nil || !ok || string(got) != "paused at approve" {
		t.Errorf("Get(thread-1) after reopening = %q, %v, %v; want %q", got, ok, err, "paused at approve")
	}
}

// TestTwoStoresOneFolder: two stores on one folder at once (two processes)
// see each other's writes.
func TestTwoStoresOneFolder(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	dir := t.TempDir()
	a, b := openStore(t, dir, Config{}), openStore(t, dir, Config{})
	if err := a.Put(ctx, "t", []byte("from a")); err != nil {
		t.Fatal(err)
	}
	if got, ok, err := b.Get(ctx, "t"); err != nil || !ok || string(got) != "from a" {
		t.Errorf("b.Get(t) = %q, %v, %v; want %q", got, ok, err, "from a")
	}
}

type clock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *clock) set(t time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = t
}

func (c *clock) advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

func TestForgetsUntouchedThreads(t *testing.T) {
	t.Parallel()
	const day = 24 * time.Hour
	type write struct {
		thread string
		ago    time.Duration // before the store opens again
	}
	tests := []struct {
		name     string
		keepDays int
		writes   []write // in order
		want     []string
	}{
		{
			name:   "default thirty days",
			writes: []write{{"a year", 365 * day}, {"31d", 31 * day}, {"30d", 30 * day}, {"29d", 29 * day}, {"fresh", 0}},
			want:   []string{"29d", "fresh"},
		},
		{
			name:     "seven days",
			keepDays: 7,
			writes:   []write{{"8d", 8 * day}, {"6d", 6 * day}},
			want:     []string{"6d"},
		},
		{
			name:   "the last write counts",
			writes: []write{{"rewritten", 60 * day}, {"old", 45 * day}, {"rewritten", 2 * day}},
			want:   []string{"rewritten"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			ctx := t.Context()
			dir := t.TempDir()
			now := time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC)
			c := &clock{}
			opts := Config{Now: c.Now, KeepDays: tt.keepDays}
			s, err := Open(ctx, dir, opts)
			if err != nil {
				t.Fatal(err)
			}
			threads := map[string]bool{}
			for _, w := range tt.writes {
				c.set(now.Add(-w.ago))
				if err := s.Put(ctx, w.thread, []byte(w.thread)); err != nil {
					t.Fatal(err)
				}
				threads[w.thread] = true
			}
			s.Close()
			c.set(now)
			s = openStore(t, dir, opts)
			got, err := s.Threads(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Threads() after reopening (-want +got):\n%s", diff)
			}
			if got, want := s.Forgotten(), len(threads)-len(tt.want); got != want {
				t.Errorf("Forgotten() = %d, want %d", got, want)
			}
		})
	}
}

// TestForgetsOnlyWhenOpening: a thread that grows old while the store is
// open is kept until the next open, so a run is never taken away from under
// an agent that is running.
func TestForgetsOnlyWhenOpening(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	c := &clock{now: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	dir := t.TempDir()
	s := openStore(t, dir, Config{Now: c.Now})
	if err := s.Put(ctx, "t", []byte("x")); err != nil {
		t.Fatal(err)
	}
	c.advance(90 * 24 * time.Hour)
	if _, ok, err := s.Get(ctx, "t"); !ok || err != nil {
		t.Errorf("Get(t) while open = ok %v, %v; want it kept until the store opens again", ok, err)
	}
	s2 := openStore(t, dir, Config{Now: c.Now})
	if _, ok, err := s2.Get(ctx, "t"); ok || err != nil {
		t.Errorf("Get(t) after opening 90 days later = ok %v, %v; want forgotten", ok, err)
	}
}

func TestConcurrentPuts(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	dir := t.TempDir()
	stores := []flow.Checkpointer{openStore(t, dir, Config{}), openStore(t, dir, Config{})}
	const n = 20
	var wg sync.WaitGroup
	errs := make(chan error, n*5)
	for i := range n {
		wg.Go(func() {
			s := stores[i%len(stores)]
			thread := fmt.Sprintf("thread-%02d", i)
			for j := range 5 {
				if err := s.Put(ctx, thread, fmt.Appendf(nil, "%s step %d", thread, j)); err != nil {
					errs <- err
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Errorf("Put = %v", err)
	}
	got, err := stores[0].Threads(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != n {
		t.Fatalf("Threads() = %d threads, want %d", len(got), n)
	}
	for i := range n {
		thread := fmt.Sprintf("thread-%02d", i)
		cp, ok, err := stores[1].Get(ctx, thread)
		if want := thread + " step 4"; err != nil || !ok || string(cp) != want {
			t.Errorf("Get(%s) = %q, %v, %v; want %q", thread, cp, ok, err, want)
		}
	}
}

func TestConcurrentMemory(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	m := newMemory(nil)
	var wg sync.WaitGroup
	for i := range 20 {
		wg.Go(func() {
			thread := fmt.Sprintf("t%d", i)
			_ = m.Put(ctx, thread, []byte(thread))
			_, _, _ = m.Get(ctx, thread)
			_, _ = m.Threads(ctx)
		})
	}
	wg.Wait()
	if got, _ := m.Threads(ctx); len(got) != 20 {
		t.Errorf("Threads() = %d threads, want 20", len(got))
	}
}

func TestOpenRefusesNotADatabase(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path := Path(dir)
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	content := bytes.Repeat([]byte("this is somebody's notes, not a database\n"), 200)
	if err := os.WriteFile(path, content, 0o600); err != nil {
		t.Fatal(err)
	}
	if s, err := Open(t.Context(), dir, Config{}); err == nil {
		s.Close()
		t.Fatal("Open(a folder whose waiting.db is text) = nil error, want one")
	}
	got, err := os.ReadFile(path)
	if err != nil || !bytes.Equal(got, content) {
		t.Errorf("the file that is not a database was changed (%v)", err)
	}
}

func TestOpenRefusesNewerLayout(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	dir := t.TempDir()
	s := openStore(t, dir, Config{})
	if _, err := s.db.ExecContext(ctx, "PRAGMA user_version = 99"); err != nil {
		t.Fatal(err)
	}
	s.Close()
	if s, err := Open(ctx, dir, Config{}); !errors.Is(err, ErrNewerLayout) {
		if err == nil {
			s.Close()
		}
		t.Errorf("Open(a newer layout) = %v, want ErrNewerLayout", err)
	}
}

func TestCanceledContext(t *testing.T) {
	t.Parallel()
	s := openStore(t, t.TempDir(), Config{})
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if err := s.Put(ctx, "t", []byte("x")); err == nil {
		t.Error("Put(a cancelled context) = nil, want an error")
	}
}
