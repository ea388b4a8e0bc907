package store_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/symphonix/symphonix/internal/boardtest"
	"github.com/symphonix/symphonix/store"
)

// TestNotifyListen: on PostgreSQL what one client sends on a channel
// reaches another client listening on it, after its up; an SQLite store
// has no notifications; a payload over the bound and a channel that is not
// a plain name are refused.
func TestNotifyListen(t *testing.T) {
	t.Parallel()
	dsn := boardtest.PostgresDSN(t)
	sender, err := store.Open(t.Context(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer sender.Close()
	listener, err := store.Open(t.Context(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer listener.Close()
	got, up := make(chan string, 4), make(chan struct{}, 4)
	done := make(chan error, 1)
	go func() {
		done <- store.Listen(t.Context(), listener, "test_wake", func(p string) { got <- p }, func() { up <- struct{}{} })
	}()
	<-up
	if err := store.Notify(t.Context(), sender, "test_wake", "hello"); err != nil {
		t.Fatal(err)
	}
	if p := <-got; p != "hello" {
		t.Errorf("received %q, want hello", p)
	}
	if err := store.Notify(t.Context(), sender, "test_wake", strings.Repeat("x", store.MaxNotifyPayload+1)); err == nil {
		t.Error("a payload over the bound was sent")
	}
	if err := store.Listen(t.Context(), listener, `x"; DROP TABLE agents; --`, nil, nil); err == nil {
		t.Error("a channel that is not a plain name was listened to")
	}

	lite, err := store.Open(t.Context(), store.SQLiteDSN(t.TempDir()))
	if err != nil {
		t.Fatal(err)
	}
	defer lite.Close()
	if err := store.Notify(t.Context(), lite, "test_wake", "x"); !errors.Is(err, store.ErrNoNotifications) {
		t.Errorf("Notify on SQLite = %v, want ErrNoNotifications", err)
	}
}
