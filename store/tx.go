package store

import (
	"context"
	"fmt"
	"time"

	"entgo.io/ent/dialect"
	entsql "entgo.io/ent/dialect/sql"

	"github.com/symphonix/symphonix/ent"
)

// InTx runs f in a transaction, committing when it returns nil and rolling
// back otherwise.
//
// A store being observed (Observe) is told how long the transaction took,
// from before its begin to after its commit or rollback.
func InTx(ctx context.Context, db *ent.Client, f func(tx *ent.Tx) error) (err error) {
	if o := observerOf(db).get(); o != nil {
		start := time.Now()
		defer func() { o.Transaction(time.Since(start), err == nil) }()
	}
	tx, err := db.Tx(ctx)
	if err != nil {
		return fmt.Errorf("begin: %w", err)
	}
	if err := f(tx); err != nil {
		_ = tx.Rollback()
		return err
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("commit: %w", err)
	}
	return nil
}

// ForUpdate locks the rows a query reads on PostgreSQL. SQLite has no
// FOR UPDATE and needs none: its write transactions run one at a time.
func ForUpdate(s *entsql.Selector) {
	if s.Dialect() == dialect.Postgres {
		s.ForUpdate()
	}
}
