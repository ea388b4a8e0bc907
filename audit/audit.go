package audit

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
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
type Log struct {
	db  *ent.Client
	now func() time.Time
}

// New returns the audit log kept in db.
func New(db *ent.Client) *Log {
	return &Log{db: db, now: time.Now}
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
	// Prev is the hash of the entry before; "" for seq 1.
	Prev string
	// Hash is the entry's own hash (see hashOf).
	Hash string
}

// Why an entry fails Verify. VerifyResult.Why wraps one of them.
var (
	// ErrModified: the entry's hash is not the hash of what it says.
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
	// Bad is the seq of the first bad entry; 0 when the chain is intact.
	Bad int64
	// Why Bad is bad: wraps ErrModified, ErrUnlinked or
	// ErrMissing. Nil when the chain is intact.
	Why error
}

// OK reports whether the chain is intact.
func (r VerifyResult) OK() bool { return r.Why == nil }

// maxAppendAttempts bounds how often Append retries a seq another board
// took first (PostgreSQL only; see Append).
const maxAppendAttempts = 100

// Append writes e as the next entry inside the caller's transaction tx and
// returns its seq. The entry commits with the caller's change or not at all,
// so a change whose entry cannot be written is not made: the caller rolls
// back when Append fails.
//
// Entries are written one at a time. On SQLite the store's write
// transactions already are (one write connection, see package store). On
// PostgreSQL Append locks the last entry (SELECT … FOR UPDATE), so a second appender
// waits for the first to commit or roll back; and the insert gives way
// (ON CONFLICT (seq) DO NOTHING) when another board took the seq anyway —
// the first entry of an empty log, or a row read just before its
// successor committed — and Append reads the new last entry and tries
// again. The lock is held until tx ends: append last, just before commit.
func (a *Log) Append(ctx context.Context, tx *ent.Tx, e Record) (int64, error) {
	if e.Actor == "" {
		return 0, errors.New("audit: actor is required")
	}
	if e.Action == "" {
		return 0, errors.New("audit: action is required")
	}
	detail, err := canonicalDetail(e.Detail)
	if err != nil {
		return 0, err
	}
	at := e.At
	if at.IsZero() {
		at = a.now()
	}
	at = at.UTC().Truncate(time.Microsecond) // what PostgreSQL keeps
	for range maxAppendAttempts {
		last, err := tx.AuditEntry.Query().
			Where(store.ForUpdate).
			Order(ent.Desc(auditentry.FieldSeq)).
			Limit(1).
			Unique(false).
			All(ctx)
		if err != nil {
			return 0, fmt.Errorf("audit: read last entry: %w", err)
		}
		next := Entry{Seq: 1, At: at, Actor: e.Actor, Action: e.Action, Subject: e.Subject, Detail: detail}
		if len(last) > 0 {
			next.Seq, next.Prev = last[0].Seq+1, last[0].Hash
		}
		if next.Hash, err = hashOf(next); err != nil {
			return 0, err
		}
		_, err = tx.AuditEntry.Create().
			SetSeq(next.Seq).
			SetAt(next.At).
			SetActor(next.Actor).
			SetAction(next.Action).
			SetSubject(next.Subject).
			SetDetail(string(next.Detail)).
			SetPrev(next.Prev).
			SetHash(next.Hash).
			OnConflictColumns(auditentry.FieldSeq).
			DoNothing().
			ID(ctx)
		if errors.Is(err, sql.ErrNoRows) {
			continue // another board wrote next.Seq first
		}
		if err != nil {
			return 0, fmt.Errorf("audit: write entry %d: %w", next.Seq, err)
		}
		return next.Seq, nil
	}
	return 0, fmt.Errorf("audit: no free seq after %d attempts", maxAppendAttempts)
}

// AppendNow appends e in a transaction of its own, for a record that goes
// with no other change.
func (a *Log) AppendNow(ctx context.Context, e Record) (int64, error) {
	var seq int64
	err := store.InTx(ctx, a.db, func(tx *ent.Tx) error {
		var err error
		seq, err = a.Append(ctx, tx, e)
		return err
	})
	return seq, err
}

// verifyPage is how many entries Verify reads at a time.
const verifyPage = 1000

// Verify walks the log in seq order and checks every entry: its seq is
// the one after the entry before, its prev is that entry's hash, and its
// hash is the hash of its contents. It returns the first entry that fails,
// or, when none does, OK with the number of entries. An error is a failure
// to read the store, not a bad entry.
func (a *Log) Verify(ctx context.Context) (VerifyResult, error) {
	var c Chain
	var after int64 = -1 << 63
	for {
		rows, err := a.db.AuditEntry.Query().
			Where(auditentry.SeqGT(after)).
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
			return c.Result(), nil
		}
		after = rows[len(rows)-1].Seq
	}
}

// List returns up to limit entries with a seq above afterSeq, in seq
// order. A limit of zero or less means 100; more than 1000 means 1000.
func (a *Log) List(ctx context.Context, afterSeq int64, limit int) ([]Entry, error) {
	if limit <= 0 {
		limit = 100
	}
	limit = min(limit, 1000)
	rows, err := a.db.AuditEntry.Query().
		Where(auditentry.SeqGT(afterSeq)).
		Order(ent.Asc(auditentry.FieldSeq)).
		Limit(limit).
		All(ctx)
	if err != nil {
		return nil, fmt.Errorf("audit: list: %w", err)
	}
	out := make([]Entry, len(rows))
	for i, row := range rows {
		out[i] = entryOf(row)
	}
	return out, nil
}

func entryOf(row *ent.AuditEntry) Entry {
	return Entry{
		Seq:     row.Seq,
		At:      row.At.UTC(),
		Actor:   row.Actor,
		Action:  row.Action,
		Subject: row.Subject,
		Detail:  json.RawMessage(row.Detail),
		Prev:    row.Prev,
		Hash:    row.Hash,
	}
}
