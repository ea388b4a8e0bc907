package board

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"entgo.io/ent/dialect"
	entsql "entgo.io/ent/dialect/sql"

	"github.com/symphonix/symphonix/ent"
	"github.com/symphonix/symphonix/ent/auditentry"
	"github.com/symphonix/symphonix/jcs"
)

// Audit is the board's audit log: an append-only chain of entries in the
// store, each carrying the hash of the one before, so that an entry
// modified, deleted or moved after it was written is found by Verify.
// docs/audit.md says exactly what is hashed and what the chain does not
// catch.
type Audit struct {
	db  *ent.Client
	now func() time.Time
}

// NewAudit returns the audit log kept in db.
func NewAudit(db *ent.Client) *Audit {
	return &Audit{db: db, now: time.Now}
}

// AuditRecord is what happened, as the caller tells it to Append.
type AuditRecord struct {
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

// AuditEntry is one entry of the log as stored.
type AuditEntry struct {
	Seq     int64
	At      time.Time
	Actor   string
	Action  string
	Subject string
	// Detail is the JSON object in its canonical (RFC 8785) form.
	Detail json.RawMessage
	// Prev is the hash of the entry before; "" for seq 1.
	Prev string
	// Hash is the entry's own hash (see auditHash).
	Hash string
}

// Why an entry fails Verify. VerifyResult.Why wraps one of them.
var (
	// ErrAuditModified: the entry's hash is not the hash of what it says.
	ErrAuditModified = errors.New("hash does not match its contents")
	// ErrAuditUnlinked: the entry's prev is not the hash of the entry
	// before it, so an entry between them was deleted or they were moved.
	ErrAuditUnlinked = errors.New("prev does not match the entry before")
	// ErrAuditMissing: a seq is missing, so its entry was deleted.
	ErrAuditMissing = errors.New("missing")
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
	// Why Bad is bad: wraps ErrAuditModified, ErrAuditUnlinked or
	// ErrAuditMissing. Nil when the chain is intact.
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
func (a *Audit) Append(ctx context.Context, tx *ent.Tx, e AuditRecord) (int64, error) {
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
			Where(forUpdate).
			Order(ent.Desc(auditentry.FieldSeq)).
			Limit(1).
			Unique(false).
			All(ctx)
		if err != nil {
			return 0, fmt.Errorf("audit: read last entry: %w", err)
		}
		next := AuditEntry{Seq: 1, At: at, Actor: e.Actor, Action: e.Action, Subject: e.Subject, Detail: detail}
		if len(last) > 0 {
			next.Seq, next.Prev = last[0].Seq+1, last[0].Hash
		}
		if next.Hash, err = auditHash(next); err != nil {
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

// forUpdate locks the rows a query reads on PostgreSQL. SQLite has no
// FOR UPDATE and needs none: its write transactions run one at a time.
func forUpdate(s *entsql.Selector) {
	if s.Dialect() == dialect.Postgres {
		s.ForUpdate()
	}
}

// AppendNow appends e in a transaction of its own, for a record that goes
// with no other change.
func (a *Audit) AppendNow(ctx context.Context, e AuditRecord) (int64, error) {
	var seq int64
	err := inTx(ctx, a.db, func(tx *ent.Tx) error {
		var err error
		seq, err = a.Append(ctx, tx, e)
		return err
	})
	return seq, err
}

// inTx runs f in a transaction, committing when it returns nil and rolling
// back otherwise.
func inTx(ctx context.Context, db *ent.Client, f func(tx *ent.Tx) error) error {
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

// verifyPage is how many entries Verify reads at a time.
const verifyPage = 1000

// Verify walks the log in seq order and checks every entry: its seq is
// the one after the entry before, its prev is that entry's hash, and its
// hash is the hash of its contents. It returns the first entry that fails,
// or, when none does, OK with the number of entries. An error is a failure
// to read the store, not a bad entry.
func (a *Audit) Verify(ctx context.Context) (VerifyResult, error) {
	var r VerifyResult
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
			want := r.Entries + 1
			switch {
			case row.Seq > want:
				r.Bad, r.Why = want, fmt.Errorf("seq %d %w", want, ErrAuditMissing)
				return r, nil
			case row.Seq < want: // an entry with a seq below 1
				r.Bad, r.Why = row.Seq, ErrAuditUnlinked
				return r, nil
			case row.Prev != r.Head:
				r.Bad, r.Why = row.Seq, ErrAuditUnlinked
				return r, nil
			}
			if h, err := auditHash(entryOf(row)); err != nil || h != row.Hash {
				r.Bad, r.Why = row.Seq, ErrAuditModified
				return r, nil
			}
			r.Entries, r.Head = row.Seq, row.Hash
		}
		if len(rows) < verifyPage {
			return r, nil
		}
		after = rows[len(rows)-1].Seq
	}
}

// List returns up to limit entries with a seq above afterSeq, in seq
// order. A limit of zero or less means 100; more than 1000 means 1000.
func (a *Audit) List(ctx context.Context, afterSeq int64, limit int) ([]AuditEntry, error) {
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
	out := make([]AuditEntry, len(rows))
	for i, row := range rows {
		out[i] = entryOf(row)
	}
	return out, nil
}

func entryOf(row *ent.AuditEntry) AuditEntry {
	return AuditEntry{
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

// canonicalDetail is d as a canonical JSON object.
func canonicalDetail(d map[string]any) (json.RawMessage, error) {
	if d == nil {
		return json.RawMessage("{}"), nil
	}
	data, err := json.Marshal(d)
	if err != nil {
		return nil, fmt.Errorf("audit: detail: %w", err)
	}
	c, err := jcs.Canonical(data)
	if err != nil {
		return nil, fmt.Errorf("audit: detail: %w", err)
	}
	return c, nil
}

// auditHash is an entry's hash: jcs.Digest ("sha256:" + hex SHA-256
// of the RFC 8785 canonical form) of the JSON object
//
//	{"action":…, "actor":…, "at":…, "detail":{…}, "prev":…, "seq":…, "subject":…}
//
// where at is RFC 3339 in UTC with up to nine fractional digits and no
// trailing zeros (time.RFC3339Nano), detail is the entry's JSON object
// (not a string holding it) and seq is a number. Changing this changes
// every hash in every store: never do it.
func auditHash(e AuditEntry) (string, error) {
	if len(e.Detail) == 0 || e.Detail[0] != '{' {
		return "", errors.New("audit: detail: not a JSON object")
	}
	doc := struct {
		Seq     int64           `json:"seq"`
		At      string          `json:"at"`
		Actor   string          `json:"actor"`
		Action  string          `json:"action"`
		Subject string          `json:"subject"`
		Detail  json.RawMessage `json:"detail"`
		Prev    string          `json:"prev"`
	}{e.Seq, e.At.UTC().Format(time.RFC3339Nano), e.Actor, e.Action, e.Subject, e.Detail, e.Prev}
	h, err := jcs.DigestOf(doc)
	if err != nil {
		return "", fmt.Errorf("audit: hash: %w", err)
	}
	return h, nil
}
