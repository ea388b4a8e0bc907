package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"regexp"
	"runtime"
	"sync"
	"time"
	"weak"

	"github.com/jackc/pgx/v5/stdlib"

	"github.com/symphonix/symphonix/ent"
)

// ErrNoNotifications: the store is not PostgreSQL, whose LISTEN/NOTIFY
// Notify and Listen use. An SQLite store has one board, which needs none.
var ErrNoNotifications = errors.New("store: notifications need a PostgreSQL store")

// MaxNotifyPayload is the most bytes a notification carries (PostgreSQL's
// own limit is 8,000).
const MaxNotifyPayload = 1024

var channelShape = regexp.MustCompile(`^[a-z_][a-z0-9_]{0,62}$`)

// postgresPools maps the PostgreSQL clients Open returned to their pools.
// The clients are held weakly, as observed holds them.
var postgresPools sync.Map // weak.Pointer[ent.Client] → *sql.DB

func rememberPool(client *ent.Client, db *sql.DB) {
	key := weak.Make(client)
	postgresPools.Store(key, db)
	runtime.AddCleanup(client, func(k weak.Pointer[ent.Client]) { postgresPools.Delete(k) }, key)
}

func poolOf(client *ent.Client) (*sql.DB, error) {
	v, ok := postgresPools.Load(weak.Make(client))
	if !ok {
		return nil, ErrNoNotifications
	}
	return v.(*sql.DB), nil
}

// Notifies reports whether the store can send and receive notifications.
func Notifies(client *ent.Client) bool {
	_, err := poolOf(client)
	return err == nil
}

// Notify sends payload on channel to every connection listening on it, in
// PostgreSQL, at once (not in a transaction of the caller's: send it after
// the change it announces has committed).
func Notify(ctx context.Context, client *ent.Client, channel, payload string) error {
	db, err := poolOf(client)
	if err != nil {
		return err
	}
	if len(payload) > MaxNotifyPayload {
		return fmt.Errorf("store: a notification of %d bytes, at most %d", len(payload), MaxNotifyPayload)
	}
	_, err = db.ExecContext(ctx, "SELECT pg_notify($1, $2)", channel, payload)
	return err
}

// Listen listens on channel until ctx ends, calling got with each
// notification's payload (on one goroutine, in order) and up each time it
// begins to listen: first, and again after a lost connection, once it has
// one again (what was sent meanwhile is lost: up is where the caller
// catches up). A connection lost is taken again after a backoff of 250 ms
// doubling to 5 s. It holds one connection of the store's pool while it
// listens. It returns ErrNoNotifications for a store that is not
// PostgreSQL, and nil when ctx ends.
func Listen(ctx context.Context, client *ent.Client, channel string, got func(payload string), up func()) error {
	db, err := poolOf(client)
	if err != nil {
		return err
	}
	if !channelShape.MatchString(channel) {
		return fmt.Errorf("store: channel %q: want lower-case letters, digits and _", channel)
	}
	wait := 250 * time.Millisecond
	for {
		err := listenOnce(ctx, db, channel, got, func() {
			wait = 250 * time.Millisecond
			up()
		})
		if ctx.Err() != nil {
			return nil
		}
		_ = err // the caller learns of the gap through up
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return nil
		case <-t.C:
		}
		wait = min(2*wait, 5*time.Second)
	}
}

// listenOnce listens on one connection until it fails or ctx ends.
func listenOnce(ctx context.Context, db *sql.DB, channel string, got func(string), up func()) error {
	conn, err := db.Conn(ctx)
	if err != nil {
		return err
	}
	defer conn.Close()
	return conn.Raw(func(dc any) error {
		sc, ok := dc.(*stdlib.Conn)
		if !ok {
			return ErrNoNotifications
		}
		pc := sc.Conn()
		quoted := `"` + channel + `"`
		if _, err := pc.Exec(ctx, "LISTEN "+quoted); err != nil {
			return err
		}
		// The connection goes back to the pool when this ends: it must
		// not keep listening there.
		defer func() {
			uctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
			defer cancel()
			_, _ = pc.Exec(uctx, "UNLISTEN "+quoted)
		}()
		up()
		for {
			n, err := pc.WaitForNotification(ctx)
			if err != nil {
				return err
			}
			got(n.Payload)
		}
	})
}
