package audit

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/symphonix/symphonix/ent"
	"github.com/symphonix/symphonix/ent/auditentry"
	"github.com/symphonix/symphonix/store"
)

// Log is the audit log: an append-only chain of entries in the
// store, each carrying the hash of the one before, so that an entry
// modified, deleted or moved after it was written is found by Verify.
// docs/audit.md says exactly what is hashed and what the chain does not
// catch.
//
// Appending and chaining are two steps. Append writes an entry in the
// caller's transaction without a place in the chain (unsequenced), so
// appenders never wait for one another; Sequence, run by one sequencer at
// a time across every board on the store, gives committed entries their
// seq, prev and hash in batches. Run keeps a board's log sequenced.
type Log struct {
	db   *ent.Client
	now  func() time.Time
	wake chan struct{} // shared by every Log on db: see wakeOf
}

// New returns the audit log kept in db.
func New(db *ent.Client) *Log {
	return &Log{db: db, now: time.Now, wake: wakeOf(db)}
}

// wakes holds one wake-up channel per store, so an entry appended through
// any Log on a store (the board's, identity's) wakes the sequencer that
// Run keeps on it.
var wakes sync.Map // *ent.Client → chan struct{}

func wakeOf(db *ent.Client) chan struct{} {
	c, _ := wakes.LoadOrStore(db, make(chan struct{}, 1))
	return c.(chan struct{})
}

// Record is what happened, as the caller tells it to Append.
type Record struct {
	// Actor: required. Who: an operator's name, an agent's name, "cli" for
	// the command line, "board" for the board itself.
	Actor string
	// Action: required. What, as noun.verb: "token.mint", "approval.decide".
	Action string
	// Subject: what it is about, such as a token or approval id.
	Subject string
	// Detail: anything else worth keeping, as a JSON object; nil is {}.
	// Never a secret or a token: the log is read by operators and exported.
	Detail map[string]any
	// At: when; zero means now. Kept to the microsecond, in UTC.
	At time.Time
}

// Entry is one entry of the log as stored.
type Entry struct {
	Seq     int64
	At      time.Time
	Actor   string
	Action  string
	Subject string
	// Detail is the JSON object in its canonical (RFC 8785) form.
	Detail json.RawMessage
	// Content is the hash of the entry's contents without seq and prev
	// (see contentOf), written when the entry was appended; "" for an
	// entry written before it was kept, and in entries read from the API.
	Content string
	// Prev is the hash of the entry before; "" for seq 1.
	Prev string
	// Hash is the entry's own hash (see hashOf).
	Hash string
}

// Why an entry fails Verify. VerifyResult.Why wraps one of them.
var (
	// ErrModified: the entry's hash (or its content hash) is not the
	// hash of what it says.
	ErrModified = errors.New("hash does not match its contents")
	// ErrUnlinked: the entry's prev is not the hash of the entry
	// before it, so an entry between them was deleted or they were moved.
	ErrUnlinked = errors.New("prev does not match the entry before")
	// ErrMissing: a seq is missing, so its entry was deleted.
	ErrMissing = errors.New("missing")
)

// VerifyResult is what Verify found.
type VerifyResult struct {
	// Entries is how many entries were checked and found good: all of
	// them when the chain is intact.
	Entries int64
	// Head is the hash of the last good entry ("" for none). Written down
	// somewhere the database's owner cannot reach, it lets a later Verify
	// tell a chain rewritten from the start (see docs/audit.md).
	Head string
	// Bad is the seq of the first bad entry; 0 when the chain is intact
	// or the bad entry is one not yet chained (BadRow).
	Bad int64
	// Pending is how many entries were not yet chained when Verify read
	// them (a store it could not sequence, such as a read-only one, or
	// entries committed while it ran); their content hashes were checked.
	Pending int64
	// BadRow is the row id of the first entry not yet chained whose content
	// hash does not match it, when the chained entries are all good; 0
	// for none. Such an entry has no seq to name.
	BadRow int
	// Why Bad is bad: wraps ErrModified, ErrUnlinked or
	// ErrMissing. Nil when the chain is intact.
	Why error
}

// OK reports whether the chain is intact.
func (r VerifyResult) OK() bool { return r.Why == nil }

// Append writes e inside the caller's transaction tx, unsequenced: with
// its content hash but no seq, prev or hash yet. The entry commits with
// the caller's change or not at all, so a change whose entry cannot be
// written is not made: the caller rolls back when Append fails.
//
// Append takes no lock and reads nothing, so appenders on every board run
// side by side; the sequencer (Sequence, kept running by Run) chains the
// entry once tx commits, and a commit wakes the Run on the same store.
func (a *Log) Append(ctx context.Context, tx *ent.Tx, e Record) error {
	if e.Actor == "" {
		return errors.New("audit: actor is required")
	}
	if e.Action == "" {
		return errors.New("audit: action is required")
	}
	if e.At.IsZero() {
		e.At = a.now()
	}
	next, content, err := recordEntry(e)
	if err != nil {
		return err
	}
	err = tx.AuditEntry.Create().
		SetAt(next.At).
		SetActor(next.Actor).
		SetAction(next.Action).
		SetSubject(next.Subject).
		SetDetail(string(next.Detail)).
		SetContent(content).
		Exec(ctx)
	if err != nil {
		return fmt.Errorf("audit: write entry: %w", err)
	}
	tx.OnCommit(func(next ent.Committer) ent.Committer {
		return ent.CommitFunc(func(ctx context.Context, tx *ent.Tx) error {
			err := next.Commit(ctx, tx)
			if err == nil {
				a.poke()
			}
			return err
		})
	})
	return nil
}

// recordEntry is e as an entry, unsequenced, and its content hash.
func recordEntry(e Record) (Entry, string, error) {
	detail, err := canonicalDetail(e.Detail)
	if err != nil {
		return Entry{}, "", err
	}
	at := e.At.UTC().Truncate(time.Microsecond) // what PostgreSQL keeps
	next := Entry{At: at, Actor: e.Actor, Action: e.Action, Subject: e.Subject, Detail: detail}
	content, err := contentOf(next)
	return next, content, err
}

// RecordContent is the content hash (Entry.Content) Append gives e's
// entry; e.At must be set. A decision's receipt names its entry by it.
func RecordContent(e Record) (string, error) {
	if e.At.IsZero() {
		return "", errors.New("audit: at is required")
	}
	_, content, err := recordEntry(e)
	return content, err
}

// poke wakes the sequencer without waiting for it.
func (a *Log) poke() {
	select {
	case a.wake <- struct{}{}:
	default:
	}
}

// AppendNow appends e in a transaction of its own, for a record that goes
// with no other change.
func (a *Log) AppendNow(ctx context.Context, e Record) error {
	return store.InTx(ctx, a.db, func(tx *ent.Tx) error {
		return a.Append(ctx, tx, e)
	})
}

// verifyPage is how many entries Verify reads at a time.
const verifyPage = 1000

// Verify first chains what is waiting (Sequence), then walks the log in
// seq order and checks every entry: its seq is the one after the entry
// before, its prev is that entry's hash, its hash is the hash of its
// contents, and so is its content hash where it has one. It returns the
// first entry that fails, or, when none does, OK with the number of
// entries. Entries still not chained (a store Verify cannot write to, or
// entries committed while it runs) are counted in Pending and their
// content hashes checked. An error is a failure to read the store, not a
// bad entry.
func (a *Log) Verify(ctx context.Context) (VerifyResult, error) {
	_ = a.Sequence(ctx) // a read-only store cannot be sequenced: Pending says so
	var c Chain
	var after int64 = -1 << 63
	for {
		rows, err := a.db.AuditEntry.Query().
			Where(auditentry.SeqNotNil(), auditentry.SeqGT(after)).
			Order(ent.Asc(auditentry.FieldSeq)).
			Limit(verifyPage).
			All(ctx)
		if err != nil {
			return VerifyResult{}, fmt.Errorf("audit: read entries: %w", err)
		}
		for _, row := range rows {
			if !c.Next(entryOf(row)) {
				return c.Result(), nil
			}
		}
		if len(rows) < verifyPage {
			break
		}
		after = *rows[len(rows)-1].Seq
	}
	r := c.Result()
	afterID := 0
	for {
		rows, err := a.db.AuditEntry.Query().
			Where(auditentry.SeqIsNil(), auditentry.IDGT(afterID)).
			Order(ent.Asc(auditentry.FieldID)).
			Limit(verifyPage).
			All(ctx)
		if err != nil {
			return VerifyResult{}, fmt.Errorf("audit: read entries not yet chained: %w", err)
		}
		for _, row := range rows {
			r.Pending++
			e := entryOf(row)
			if h, err := contentOf(e); r.Why == nil && (err != nil || h != e.Content) {
				r.BadRow, r.Why = row.ID, ErrModified
			}
		}
		if len(rows) < verifyPage {
			return r, nil
		}
		afterID = rows[len(rows)-1].ID
	}
}

// List returns up to limit entries with a seq above afterSeq, in seq
// order. A limit of zero or less means 100; more than 1000 means 1000.
// It first chains what is waiting (Sequence), so the entries committed
// before the call are listed; on a store it cannot write to, entries not
// yet chained are left out.
func (a *Log) List(ctx context.Context, afterSeq int64, limit int) ([]Entry, error) {
	return a.Find(ctx, Query{AfterSeq: afterSeq, Limit: limit})
}

func entryOf(row *ent.AuditEntry) Entry {
	var seq int64
	if row.Seq != nil {
		seq = *row.Seq
	}
	return Entry{
		Seq:     seq,
		At:      row.At.UTC(),
		Actor:   row.Actor,
		Action:  row.Action,
		Subject: row.Subject,
		Detail:  json.RawMessage(row.Detail),
		Content: row.Content,
		Prev:    row.Prev,
		Hash:    row.Hash,
	}
}
