package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"time"

	"entgo.io/ent/dialect"
	entsql "entgo.io/ent/dialect/sql"
)

// Limits on one group of transactions committed together.
const (
	// maxGroup is the most transactions one commit takes.
	maxGroup = 64
	// maxGroupAge is how long a group stays open while writers keep
	// arriving, so that the first of them is not kept waiting for the last.
	maxGroupAge = 10 * time.Millisecond
	// maxWriteWait is how long a writer waits for the write connection
	// before it gives up, as SQLite's busy_timeout would have it give up
	// on the lock (SQLiteDSN).
	maxWriteWait = 10 * time.Second
	// maxWriteStmts is how many prepared statements the write connection
	// keeps. Past it, a statement is prepared each time it runs.
	maxWriteStmts = 256
)

// errWriterBusy: the write connection stayed taken for maxWriteWait.
var errWriterBusy = errors.New("store: the write connection stayed busy")

// errGroupLost: the transaction group a caller's transaction had joined
// was rolled back, so its changes were not saved.
var errGroupLost = errors.New("store: the group of transactions was rolled back")

// sqliteDriver is the driver of an SQLite store. SQLite has one writer at
// a time, and with synchronous=FULL each commit waits for an fsync; writers
// that find the lock taken sleep in SQLite's busy handler, which does not
// wake when the lock is freed. So writers wait in Go instead, and commit
// together (group commit):
//
//   - Reads outside a transaction go to the pool, as they would without it.
//   - Every transaction, and every statement outside one that is not a
//     SELECT, goes to one write connection, one caller at a time (a
//     semaphore). The first caller of a group begins a transaction
//     (BEGIN IMMEDIATE); each caller's own transaction is a SAVEPOINT in it,
//     rolled back alone when the caller rolls back.
//   - The group commits, with one fsync, when the caller that holds the
//     connection finishes and nobody is waiting for it, or the group holds
//     maxGroup transactions or is maxGroupAge old. A caller's Commit
//     returns only when its group's COMMIT has returned, so a commit
//     reported is durable, and a group that fails fails every caller in it.
//
// The statements run on the write connection without the caller's
// cancellation: SQLite rolls back the whole transaction when a statement
// is interrupted, which would throw away the rest of the group. A caller's
// context still ends its wait for the connection.
//
// The pool and the write connection are two database/sql handles on the
// same file: the pool holds at most MaxSQLiteReads connections and keeps
// its statements prepared (readStmts); the writer's holds one. Neither can
// then take the other's connections, so a burst of reads never keeps the
// writer from its connection, nor the other way round.
type sqliteDriver struct {
	pool  *entsql.Driver
	reads *readStmts
	w     *sqliteWriter
}

var _ dialect.Driver = (*sqliteDriver)(nil)

// newSQLiteDriver wraps pool, and wdb for the write connection.
func newSQLiteDriver(pool *entsql.Driver, wdb *sql.DB) *sqliteDriver {
	return &sqliteDriver{
		pool:  pool,
		reads: &readStmts{db: pool.DB()},
		w:     &sqliteWriter{db: wdb, sem: make(chan struct{}, 1), maxAge: maxGroupAge, obs: new(observerSlot)},
	}
}

func (d *sqliteDriver) Dialect() string { return dialect.SQLite }

// Exec runs a statement outside a transaction as a transaction of its own.
func (d *sqliteDriver) Exec(ctx context.Context, query string, args, v any) error {
	tx, err := d.w.begin(ctx)
	if err != nil {
		return err
	}
	if err := tx.Exec(ctx, query, args, v); err != nil {
		_ = tx.Rollback()
		return err
	}
	return tx.Commit()
}

// Query runs a SELECT on the pool. Any other query (ent's INSERT …
// RETURNING) writes: it runs on the write connection on its own, after
// the open group has committed, and holds the connection until its rows
// are closed.
func (d *sqliteDriver) Query(ctx context.Context, query string, args, v any) error {
	if isSelect(query) {
		return d.reads.query(ctx, query, args, v)
	}
	return d.w.query(ctx, query, args, v)
}

func (d *sqliteDriver) Tx(ctx context.Context) (dialect.Tx, error) { return d.w.begin(ctx) }

// BeginTx is Tx: ent's Client.BeginTx calls it. The options do not apply;
// every transaction on the write connection is serializable.
func (d *sqliteDriver) BeginTx(ctx context.Context, _ *sql.TxOptions) (dialect.Tx, error) {
	return d.w.begin(ctx)
}

// Close commits the open group, closes the write connection and then the pool.
func (d *sqliteDriver) Close() error {
	d.w.sem <- struct{}{}
	if d.w.group != nil {
		d.w.commit()
	}
	d.w.drop()
	first := !d.w.closed
	d.w.closed = true
	<-d.w.sem
	if !first {
		return nil
	}
	d.reads.close()
	return errors.Join(d.w.db.Close(), d.pool.Close())
}

// isSelect reports whether query is a SELECT, which only reads.
func isSelect(query string) bool {
	q := strings.TrimLeft(query, " \t\r\n(")
	return len(q) >= 6 && strings.EqualFold(q[:6], "SELECT")
}

// sqliteWriter owns the write connection. Everything but sem and waiting
// belongs to whoever holds sem.
type sqliteWriter struct {
	db      *sql.DB
	sem     chan struct{} // a send takes the write connection, a receive gives it back
	waiting atomic.Int64  // callers waiting for sem
	maxAge  time.Duration // maxGroupAge; a test may hold a group open longer
	obs     *observerSlot // told the size of each group committed (Observe)

	conn   *sql.Conn              // nil until first used, and after it failed
	stmts  map[string]*cachedStmt // conn's prepared statements, by their text
	group  *commitGroup           // the open group: BEGIN done, COMMIT not yet
	closed bool
}

// cachedStmt is a statement prepared on the write connection. SQLite
// spends much of a small write preparing its statements; the writer runs
// the same few again and again.
type cachedStmt struct {
	st   *sql.Stmt
	busy bool // its rows are open: it cannot run again until they close
}

// stmt is the prepared statement for query, or nil when there is none to
// use: the statement is running, the cache is full, or it does not prepare
// (running it unprepared then reports why).
func (w *sqliteWriter) stmt(ctx context.Context, query string) *cachedStmt {
	if s, ok := w.stmts[query]; ok {
		if s.busy {
			return nil
		}
		return s
	}
	if len(w.stmts) >= maxWriteStmts {
		return nil
	}
	st, err := w.conn.PrepareContext(ctx, query)
	if err != nil {
		return nil
	}
	if w.stmts == nil {
		w.stmts = make(map[string]*cachedStmt)
	}
	s := &cachedStmt{st: st}
	w.stmts[query] = s
	return s
}

// execContext runs a statement on the write connection, prepared once.
func (w *sqliteWriter) execContext(ctx context.Context, query string, args ...any) (sql.Result, error) {
	if s := w.stmt(ctx, query); s != nil {
		return s.st.ExecContext(ctx, args...)
	}
	return w.conn.ExecContext(ctx, query, args...)
}

// queryContext runs a query on the write connection, prepared once. The
// statement is busy until the rows are closed.
func (w *sqliteWriter) queryContext(ctx context.Context, query string, args ...any) (entsql.ColumnScanner, error) {
	s := w.stmt(ctx, query)
	if s == nil {
		return w.conn.QueryContext(ctx, query, args...)
	}
	rows, err := s.st.QueryContext(ctx, args...)
	if err != nil {
		return nil, err
	}
	s.busy = true
	return &stmtRows{Rows: rows, s: s}, nil
}

// stmtRows frees its statement when closed.
type stmtRows struct {
	*sql.Rows
	s *cachedStmt
}

func (r *stmtRows) Close() error {
	err := r.Rows.Close()
	r.s.busy = false
	return err
}

// commitGroup is the transactions committed together.
type commitGroup struct {
	done  chan struct{} // closed when the group has committed or failed
	err   error         // why it failed; set before done is closed
	n     int           // transactions released into it
	start time.Time
}

// acquire takes the write connection, or gives up when ctx ends or it
// has waited maxWriteWait.
func (w *sqliteWriter) acquire(ctx context.Context) error {
	select {
	case w.sem <- struct{}{}: // free: no timer
		return nil
	default:
	}
	w.waiting.Add(1)
	t := time.NewTimer(maxWriteWait)
	defer t.Stop()
	select {
	case w.sem <- struct{}{}:
		w.waiting.Add(-1)
		return nil
	case <-ctx.Done():
		w.waiting.Add(-1)
		w.abandon()
		return ctx.Err()
	case <-t.C:
		w.waiting.Add(-1)
		w.abandon()
		return errWriterBusy
	}
}

// abandon is a caller that stopped waiting: whoever released the
// connection may have left the group open for it to join, so someone has
// to commit it. The goroutine ends once it has had the connection.
func (w *sqliteWriter) abandon() {
	go func() {
		w.sem <- struct{}{}
		w.release()
	}()
}

// release gives the write connection back, first committing the open
// group when nobody else is waiting to join it or it is full or old.
func (w *sqliteWriter) release() {
	if g := w.group; g != nil && (w.waiting.Load() == 0 || g.n >= maxGroup || time.Since(g.start) >= w.maxAge) {
		w.commit()
	}
	<-w.sem
}

// exec runs a statement of the writer's own on the write connection.
func (w *sqliteWriter) exec(query string) error {
	_, err := w.execContext(context.Background(), query)
	return err
}

// connect makes sure there is a write connection.
func (w *sqliteWriter) connect(ctx context.Context) error {
	if w.closed {
		return errors.New("store: closed")
	}
	if w.conn != nil {
		return nil
	}
	c, err := w.db.Conn(ctx)
	if err != nil {
		return fmt.Errorf("store: write connection: %w", err)
	}
	w.conn = c
	return nil
}

// drop closes the write connection after a failure, which rolls back
// whatever it had open; the next writer opens another.
func (w *sqliteWriter) drop() {
	for _, s := range w.stmts {
		_ = s.st.Close()
	}
	w.stmts = nil
	if w.conn != nil {
		_ = w.conn.Close()
		w.conn = nil
	}
}

// begin starts a caller's transaction in the open group, opening one if
// there is none.
func (w *sqliteWriter) begin(ctx context.Context) (dialect.Tx, error) {
	if err := w.acquire(ctx); err != nil {
		return nil, err
	}
	if err := w.connect(ctx); err != nil {
		w.release()
		return nil, err
	}
	if w.group == nil {
		if err := w.exec("BEGIN IMMEDIATE"); err != nil {
			w.drop()
			w.release()
			return nil, fmt.Errorf("store: begin: %w", err)
		}
		w.group = &commitGroup{done: make(chan struct{}), start: time.Now()}
	}
	if err := w.exec("SAVEPOINT tx"); err != nil {
		w.fail(err)
		w.release()
		return nil, fmt.Errorf("store: begin: %w", err)
	}
	return &sqliteTx{w: w}, nil
}

// commit commits the open group and tells its callers.
func (w *sqliteWriter) commit() {
	g := w.group
	w.group = nil
	if g.n == 0 {
		// Nothing in it was kept: every caller rolled back.
		if err := w.exec("ROLLBACK"); err != nil {
			w.drop()
		}
	} else if err := w.exec("COMMIT"); err != nil {
		g.err = fmt.Errorf("commit: %w", err)
		w.drop()
	} else if o := w.obs.get(); o != nil {
		o.Group(g.n)
	}
	close(g.done)
}

// fail ends the open group after a statement of the writer's own failed:
// SQLite may have rolled the transaction back already.
func (w *sqliteWriter) fail(cause error) {
	w.drop()
	if g := w.group; g != nil {
		w.group = nil
		g.err = fmt.Errorf("%w: %w", errGroupLost, cause)
		close(g.done)
	}
}

// query runs a writing query outside a transaction, on its own in
// autocommit, holding the write connection until its rows are closed.
func (w *sqliteWriter) query(ctx context.Context, query string, args, v any) error {
	rows, err := rowsOf(v)
	if err != nil {
		return err
	}
	if err := w.acquire(ctx); err != nil {
		return err
	}
	if w.group != nil {
		w.commit()
	}
	if err := w.connect(ctx); err != nil {
		<-w.sem
		return err
	}
	if err := (entsql.Conn{ExecQuerier: w.conn}).Query(ctx, query, args, rows); err != nil {
		w.release()
		return err
	}
	rows.ColumnScanner = &releaseOnClose{ColumnScanner: rows.ColumnScanner, release: w.release}
	return nil
}

// releaseOnClose gives the write connection back when the rows are closed.
type releaseOnClose struct {
	entsql.ColumnScanner
	release func()
	closed  bool
}

func (r *releaseOnClose) Close() error {
	err := r.ColumnScanner.Close()
	if !r.closed {
		r.closed = true
		r.release()
	}
	return err
}

// sqliteTx is one caller's transaction: a SAVEPOINT in the open group.
type sqliteTx struct {
	w    *sqliteWriter
	done bool
}

var _ dialect.Tx = (*sqliteTx)(nil)

func (t *sqliteTx) Exec(ctx context.Context, query string, args, v any) error {
	if t.done {
		return sql.ErrTxDone
	}
	argv, err := argsOf(args)
	if err != nil {
		return err
	}
	res, err := t.w.execContext(context.WithoutCancel(ctx), query, argv...)
	if err != nil {
		return err
	}
	switch v := v.(type) {
	case nil:
	case *sql.Result:
		*v = res
	default:
		return fmt.Errorf("store: invalid type %T, expect *sql.Result", v)
	}
	return nil
}

func (t *sqliteTx) Query(ctx context.Context, query string, args, v any) error {
	if t.done {
		return sql.ErrTxDone
	}
	rows, err := rowsOf(v)
	if err != nil {
		return err
	}
	argv, err := argsOf(args)
	if err != nil {
		return err
	}
	cs, err := t.w.queryContext(context.WithoutCancel(ctx), query, argv...)
	if err != nil {
		return err
	}
	*rows = entsql.Rows{ColumnScanner: cs}
	return nil
}

// Commit keeps the caller's changes in the group, gives the write
// connection back, and returns when the group has committed.
func (t *sqliteTx) Commit() error {
	if t.done {
		return sql.ErrTxDone
	}
	t.done = true
	w := t.w
	g := w.group
	if err := w.exec("RELEASE tx"); err != nil {
		w.fail(err)
		w.release()
		return fmt.Errorf("commit: %w", err)
	}
	g.n++
	w.release()
	<-g.done
	return g.err
}

// Rollback undoes the caller's changes, and only those.
func (t *sqliteTx) Rollback() error {
	if t.done {
		return sql.ErrTxDone
	}
	t.done = true
	w := t.w
	err := w.exec("ROLLBACK TO tx")
	if err == nil {
		err = w.exec("RELEASE tx")
	}
	if err != nil {
		w.fail(err)
	}
	w.release()
	return err
}

// rowsOf is the rows ent passes a query to fill.
func rowsOf(v any) (*entsql.Rows, error) {
	rows, ok := v.(*entsql.Rows)
	if !ok {
		return nil, fmt.Errorf("store: invalid type %T, expect *sql.Rows", v)
	}
	return rows, nil
}

// argsOf is the arguments ent passes a statement.
func argsOf(args any) ([]any, error) {
	argv, ok := args.([]any)
	if !ok {
		return nil, fmt.Errorf("store: invalid type %T, expect []any for args", args)
	}
	return argv, nil
}
