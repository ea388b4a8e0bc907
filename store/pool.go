package store

import (
	"context"
	"database/sql"
	"sync"
	"time"

	entsql "entgo.io/ent/dialect/sql"
)

// Bounds on the connections a store opens. Without them database/sql opens
// one connection for every query in flight: a fleet of agents redialling at
// once would open thousands, each holding file descriptors, until the board
// has none left for the links themselves (docs/limits.md).
const (
	// MaxSQLiteReads is how many connections an SQLite store reads on at
	// once, beside its one write connection. Reads past it wait in Go for
	// a connection, in their context. SQLite here is pure Go, so more
	// connections than cores buys little: a read is CPU.
	MaxSQLiteReads = 8
	// MaxPostgresConns is how many connections a board opens to
	// PostgreSQL. Queries past it wait in Go, in their context. Several
	// boards may share one server (its max_connections is 100 by default).
	MaxPostgresConns = 32
	// maxReadStmts is how many prepared statements the read pool keeps.
	// Past it, a statement is prepared each time it runs.
	maxReadStmts = 256
)

// boundPool keeps db to n connections, all kept open once made: with the
// default of two idle connections, a burst would open and close
// connections as fast as it ran queries.
func boundPool(db *sql.DB, n int) {
	db.SetMaxOpenConns(n)
	db.SetMaxIdleConns(n)
	db.SetConnMaxIdleTime(10 * time.Minute)
}

// readStmts are the read pool's prepared statements, by their text: the
// board runs the same few queries (a token, an agent, its undelivered
// decisions) on every arrival, and SQLite spends much of a small read
// preparing it. A *sql.Stmt prepares itself once on each connection of
// the pool that runs it.
type readStmts struct {
	db *sql.DB

	mu     sync.Mutex
	stmts  map[string]*sql.Stmt
	closed bool
}

// query runs a SELECT on the pool, prepared once.
func (r *readStmts) query(ctx context.Context, query string, args, v any) error {
	rows, err := rowsOf(v)
	if err != nil {
		return err
	}
	argv, err := argsOf(args)
	if err != nil {
		return err
	}
	st := r.stmt(ctx, query)
	var rs *sql.Rows
	if st != nil {
		rs, err = st.QueryContext(ctx, argv...)
	} else {
		rs, err = r.db.QueryContext(ctx, query, argv...)
	}
	if err != nil {
		return err
	}
	*rows = entsql.Rows{ColumnScanner: rs}
	return nil
}

// stmt is the prepared statement for query, or nil when the cache is full
// or the query does not prepare (running it unprepared then says why).
func (r *readStmts) stmt(ctx context.Context, query string) *sql.Stmt {
	r.mu.Lock()
	st, ok := r.stmts[query]
	full := r.closed || len(r.stmts) >= maxReadStmts
	r.mu.Unlock()
	if ok || full {
		return st
	}
	st, err := r.db.PrepareContext(ctx, query)
	if err != nil {
		return nil
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if prev, ok := r.stmts[query]; ok || r.closed {
		// Another reader prepared it meanwhile, or the store closed.
		_ = st.Close()
		return prev
	}
	if r.stmts == nil {
		r.stmts = make(map[string]*sql.Stmt)
	}
	r.stmts[query] = st
	return st
}

// close closes the prepared statements.
func (r *readStmts) close() {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, st := range r.stmts {
		_ = st.Close()
	}
	r.stmts = nil
	r.closed = true
}
