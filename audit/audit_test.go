package audit_test

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/symphonix/symphonix/audit"
	"github.com/symphonix/symphonix/ent"
	"github.com/symphonix/symphonix/internal/boardtest"
	"github.com/symphonix/symphonix/store"
)

// auditStore opens a store at dsn with its audit log, and the same
// database through database/sql for tampering behind the board's back.
func auditStore(t *testing.T, dsn string) (*ent.Client, *audit.Log, *sql.DB) {
	t.Helper()
	db, err := store.Open(t.Context(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	driver := "sqlite"
	if strings.HasPrefix(dsn, "postgres") {
		driver = "pgx"
	}
	raw, err := sql.Open(driver, dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { raw.Close() })
	return db, audit.New(db), raw
}

func appendN(t *testing.T, a *audit.Log, n int) {
	t.Helper()
	for i := 1; i <= n; i++ {
		err := a.AppendNow(t.Context(), audit.Record{
			Actor:   "ops",
			Action:  "approval.decide",
			Subject: fmt.Sprintf("approval-%d", i),
			Detail:  map[string]any{"decision": "yes", "n": i},
		})
		if err != nil {
			t.Fatalf("AppendNow %d: %v", i, err)
		}
	}
}

// appendChained appends n entries and chains them: seq 1 to n in the
// order they were appended.
func appendChained(t *testing.T, a *audit.Log, n int) {
	t.Helper()
	appendN(t, a, n)
	if err := a.Sequence(t.Context()); err != nil {
		t.Fatalf("Sequence: %v", err)
	}
	all, err := a.List(t.Context(), 0, 1000)
	if err != nil {
		t.Fatal(err)
	}
	for i, e := range all {
		if want := fmt.Sprintf("approval-%d", i+1); e.Seq != int64(i+1) || e.Subject != want {
			t.Fatalf("entry %d = seq %d subject %s, want seq %d subject %s", i, e.Seq, e.Subject, i+1, want)
		}
	}
}

func verify(t *testing.T, a *audit.Log) audit.VerifyResult {
	t.Helper()
	r, err := a.Verify(t.Context())
	if err != nil {
		t.Fatalf("Verify: %v", err)
	}
	return r
}

func TestAuditAppendAndList(t *testing.T) {
	t.Parallel()
	_, a, _ := auditStore(t, store.SQLiteDSN(t.TempDir()))
	if r := verify(t, a); !r.OK() || r.Entries != 0 || r.Head != "" {
		t.Fatalf("Verify(empty) = %+v, want ok with 0 entries", r)
	}
	appendN(t, a, 3) // List chains them first
	all, err := a.List(t.Context(), 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(all) != 3 {
		t.Fatalf("List = %d entries, want 3", len(all))
	}
	prev := ""
	for i, e := range all {
		if e.Seq != int64(i+1) || e.Prev != prev || !strings.HasPrefix(e.Hash, "sha256:") {
			t.Errorf("entry %d = seq %d prev %q hash %q, want seq %d prev %q", i, e.Seq, e.Prev, e.Hash, i+1, prev)
		}
		if want := fmt.Sprintf(`{"decision":"yes","n":%d}`, i+1); string(e.Detail) != want {
			t.Errorf("entry %d detail = %s, want %s", e.Seq, e.Detail, want)
		}
		prev = e.Hash
	}
	r := verify(t, a)
	if !r.OK() || r.Entries != 3 || r.Head != all[2].Hash {
		t.Fatalf("Verify = %+v, want ok with 3 entries and head %s", r, all[2].Hash)
	}
	page, err := a.List(t.Context(), 1, 1)
	if err != nil {
		t.Fatal(err)
	}
	if len(page) != 1 || page[0].Seq != 2 {
		t.Fatalf("List(after 1, limit 1) = %+v, want seq 2", page)
	}
}

// TestAuditHash pins what is hashed: the canonical JSON below, written out
// by hand, is the protocol. A failure here is a change to every stored
// chain.
func TestAuditHash(t *testing.T) {
	t.Parallel()
	_, a, _ := auditStore(t, store.SQLiteDSN(t.TempDir()))
	at := time.Date(2026, 1, 2, 3, 4, 5, 123456789, time.FixedZone("x", 3600))
	if err := a.AppendNow(t.Context(), audit.Record{
		Actor: "cli", Action: "token.mint", Subject: "abc", At: at,
		Detail: map[string]any{"name": "ops", "kind": "operator"},
	}); err != nil {
		t.Fatal(err)
	}
	got, err := a.List(t.Context(), 0, 1)
	if err != nil {
		t.Fatal(err)
	}
	const canonical = `{"action":"token.mint","actor":"cli","at":"2026-01-02T02:04:05.123456Z",` +
		`"detail":{"kind":"operator","name":"ops"},"prev":"","seq":1,"subject":"abc"}`
	sum := sha256.Sum256([]byte(canonical))
	want := "sha256:" + hex.EncodeToString(sum[:])
	if len(got) != 1 || got[0].Hash != want {
		t.Fatalf("hash = %+v, want %s", got, want)
	}
	if !got[0].At.Equal(at.Truncate(time.Microsecond)) {
		t.Errorf("at = %s, want %s", got[0].At, at.Truncate(time.Microsecond))
	}
}

func TestAuditAppendRefuses(t *testing.T) {
	t.Parallel()
	_, a, _ := auditStore(t, store.SQLiteDSN(t.TempDir()))
	for name, rec := range map[string]audit.Record{
		"no actor":   {Action: "token.mint"},
		"no action":  {Actor: "ops"},
		"bad detail": {Actor: "ops", Action: "token.mint", Detail: map[string]any{"c": make(chan int)}},
	} {
		if err := a.AppendNow(t.Context(), rec); err == nil {
			t.Errorf("AppendNow(%s) succeeded, want an error", name)
		}
	}
	if r := verify(t, a); r.Entries != 0 {
		t.Fatalf("Verify = %+v after refused appends, want no entries", r)
	}
}

// tamper changes a log of five entries behind the board's back: after
// they were chained, or (before) while they wait for the sequencer.
var tamper = []struct {
	name    string
	before  bool
	sql     []string
	wantBad int64
	wantWhy error // nil: the change cannot be told (docs/audit.md)
}{
	{
		name:    "detail modified",
		sql:     []string{`UPDATE audit_entries SET detail = '{"decision":"no","n":3}' WHERE seq = 3`},
		wantBad: 3, wantWhy: audit.ErrModified,
	},
	{
		name:    "actor modified",
		sql:     []string{`UPDATE audit_entries SET actor = 'mallory' WHERE seq = 1`},
		wantBad: 1, wantWhy: audit.ErrModified,
	},
	{
		name:    "detail not json",
		sql:     []string{`UPDATE audit_entries SET detail = 'nope' WHERE seq = 5`},
		wantBad: 5, wantWhy: audit.ErrModified,
	},
	{
		name:    "middle deleted",
		sql:     []string{`DELETE FROM audit_entries WHERE seq = 3`},
		wantBad: 3, wantWhy: audit.ErrMissing,
	},
	{
		name: "middle deleted and renumbered",
		sql: []string{
			`DELETE FROM audit_entries WHERE seq = 3`,
			`UPDATE audit_entries SET seq = 3 WHERE seq = 4`,
			`UPDATE audit_entries SET seq = 4 WHERE seq = 5`,
		},
		wantBad: 3, wantWhy: audit.ErrUnlinked,
	},
	{
		name: "reordered",
		sql: []string{
			`UPDATE audit_entries SET seq = 1000 WHERE seq = 2`,
			`UPDATE audit_entries SET seq = 2 WHERE seq = 3`,
			`UPDATE audit_entries SET seq = 3 WHERE seq = 1000`,
		},
		wantBad: 2, wantWhy: audit.ErrUnlinked,
	},
	{
		name:    "first deleted",
		sql:     []string{`DELETE FROM audit_entries WHERE seq = 1`},
		wantBad: 1, wantWhy: audit.ErrMissing,
	},
	{
		name:    "content hash changed",
		sql:     []string{`UPDATE audit_entries SET content = 'sha256:00' WHERE seq = 2`},
		wantBad: 2, wantWhy: audit.ErrModified,
	},
	{
		name:    "detail modified before chained",
		before:  true,
		sql:     []string{`UPDATE audit_entries SET detail = '{"decision":"no","n":3}' WHERE subject = 'approval-3'`},
		wantBad: 3, wantWhy: audit.ErrModified,
	},
	{
		name:    "subject modified before chained",
		before:  true,
		sql:     []string{`UPDATE audit_entries SET subject = 'approval-9' WHERE subject = 'approval-4'`},
		wantBad: 4, wantWhy: audit.ErrModified,
	},
	{
		name:    "detail not json before chained",
		before:  true,
		sql:     []string{`UPDATE audit_entries SET detail = 'nope' WHERE subject = 'approval-2'`},
		wantBad: 2, wantWhy: audit.ErrModified,
	},
	{
		name:   "deleted before chained",
		before: true,
		sql:    []string{`DELETE FROM audit_entries WHERE subject = 'approval-2'`},
	},
}

func TestAuditTamper(t *testing.T) {
	t.Parallel()
	for _, tc := range tamper {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			_, a, raw := auditStore(t, store.SQLiteDSN(t.TempDir()))
			testTamper(t, a, raw, tc.before, tc.sql, tc.wantBad, tc.wantWhy)
		})
	}
}

func TestAuditTamperPostgres(t *testing.T) {
	t.Parallel()
	for _, tc := range tamper {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			_, a, raw := auditStore(t, boardtest.PostgresDSN(t))
			testTamper(t, a, raw, tc.before, tc.sql, tc.wantBad, tc.wantWhy)
		})
	}
}

func testTamper(t *testing.T, a *audit.Log, raw *sql.DB, before bool, stmts []string, wantBad int64, wantWhy error) {
	t.Helper()
	if before {
		appendN(t, a, 5)
	} else {
		appendChained(t, a, 5)
		if r := verify(t, a); !r.OK() || r.Entries != 5 {
			t.Fatalf("Verify before tampering = %+v, want ok with 5 entries", r)
		}
	}
	for _, s := range stmts {
		res, err := raw.ExecContext(t.Context(), s)
		if err != nil {
			t.Fatalf("%s: %v", s, err)
		}
		if n, err := res.RowsAffected(); err != nil || n != 1 {
			t.Fatalf("%s: %d rows, %v; want 1", s, n, err)
		}
	}
	r := verify(t, a) // chains what was waiting first
	if wantWhy == nil {
		if !r.OK() || r.Entries != 4 {
			t.Fatalf("Verify = %+v, want ok with the 4 entries left", r)
		}
		return
	}
	if r.OK() || r.Bad != wantBad || !errors.Is(r.Why, wantWhy) {
		t.Fatalf("Verify = bad %d (%v), want bad %d (%v)", r.Bad, r.Why, wantBad, wantWhy)
	}
	if r.Entries != wantBad-1 {
		t.Errorf("Verify = %d good entries, want %d", r.Entries, wantBad-1)
	}
}

// TestAuditForged: an entry forged into the middle of the chain, with its
// seq, prev, hash and content hash all computed as the sequencer would
// and the entries after it renumbered, is found at the entry after it.
func TestAuditForged(t *testing.T) {
	t.Parallel()
	for name, dsn := range map[string]func(t *testing.T) string{
		"sqlite":   func(t *testing.T) string { return store.SQLiteDSN(t.TempDir()) },
		"postgres": func(t *testing.T) string { return boardtest.PostgresDSN(t) },
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			db, a, raw := auditStore(t, dsn(t))
			appendChained(t, a, 5)
			for _, s := range []string{
				`UPDATE audit_entries SET seq = 6 WHERE seq = 5`,
				`UPDATE audit_entries SET seq = 5 WHERE seq = 4`,
			} {
				if _, err := raw.ExecContext(t.Context(), s); err != nil {
					t.Fatalf("%s: %v", s, err)
				}
			}
			third, err := a.List(t.Context(), 2, 1)
			if err != nil || len(third) != 1 {
				t.Fatalf("List(after 2) = %v, %v", third, err)
			}
			f := audit.Entry{Seq: 4, At: time.Now().UTC().Truncate(time.Microsecond), Actor: "mallory", Action: "token.mint",
				Subject: "forged", Detail: []byte(`{}`), Prev: third[0].Hash}
			if f.Hash, err = audit.HashOf(f); err != nil {
				t.Fatal(err)
			}
			if f.Content, err = audit.ContentOf(f); err != nil {
				t.Fatal(err)
			}
			err = db.AuditEntry.Create().SetSeq(f.Seq).SetAt(f.At).SetActor(f.Actor).SetAction(f.Action).
				SetSubject(f.Subject).SetDetail(string(f.Detail)).SetContent(f.Content).SetPrev(f.Prev).SetHash(f.Hash).
				Exec(t.Context())
			if err != nil {
				t.Fatal(err)
			}
			r := verify(t, a)
			if r.Bad != 5 || !errors.Is(r.Why, audit.ErrUnlinked) || r.Entries != 4 {
				t.Fatalf("Verify = %+v, want entry 5 unlinked after 4 good", r)
			}
		})
	}
}

func TestAuditRolledBack(t *testing.T) {
	t.Parallel()
	db, a, _ := auditStore(t, store.SQLiteDSN(t.TempDir()))
	tx, err := db.Tx(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if err := a.Append(t.Context(), tx, audit.Record{Actor: "ops", Action: "approval.decide", Subject: "a1"}); err != nil {
		t.Fatalf("Append: %v", err)
	}
	if err := tx.Rollback(); err != nil {
		t.Fatal(err)
	}
	if got, err := a.List(t.Context(), 0, 0); err != nil || len(got) != 0 {
		t.Fatalf("List after rollback = %+v, %v; want none", got, err)
	}
	appendChained(t, a, 1) // seq 1 again
	if r := verify(t, a); !r.OK() || r.Entries != 1 {
		t.Fatalf("Verify = %+v, want ok with 1 entry", r)
	}
}

func TestAuditConcurrent(t *testing.T) {
	t.Parallel()
	db, a, _ := auditStore(t, store.SQLiteDSN(t.TempDir()))
	testConcurrent(t, []*ent.Client{db}, []*audit.Log{a}, 8, 10)
}

// TestAuditPostgres: on PostgreSQL, 32 appenders on two boards' stores (two
// ent clients, two sequencers running) append in their own transactions,
// one in five rolled back: exactly the committed entries are chained, once
// each, and the chain is intact.
func TestAuditPostgres(t *testing.T) {
	t.Parallel()
	dsn := boardtest.PostgresDSN(t)
	dbA, a, raw := auditStore(t, dsn)
	dbB, b, _ := auditStore(t, dsn)
	testConcurrent(t, []*ent.Client{dbA, dbB}, []*audit.Log{a, b}, 32, 20)
	if _, err := raw.ExecContext(t.Context(), `UPDATE audit_entries SET subject = 'other' WHERE seq = 17`); err != nil {
		t.Fatal(err)
	}
	if r := verify(t, b); r.Bad != 17 || !errors.Is(r.Why, audit.ErrModified) {
		t.Fatalf("Verify = bad %d (%v), want bad 17 (%v)", r.Bad, r.Why, audit.ErrModified)
	}
}

// testConcurrent appends from g goroutines, n each, spread over logs (one
// per store client), each in its own transaction, every fifth rolled back,
// while every log's sequencer runs. Then every committed entry is in the
// chain exactly once, no rolled-back one is, and the chain verifies.
func testConcurrent(t *testing.T, dbs []*ent.Client, logs []*audit.Log, g, n int) {
	t.Helper()
	ctx, cancel := context.WithCancel(t.Context())
	var runs sync.WaitGroup
	for _, l := range logs {
		runs.Go(func() {
			l.Run(ctx, time.Millisecond, 5*time.Millisecond, func(err error) { t.Errorf("sequencer: %v", err) })
		})
	}
	errRollback := errors.New("rolled back")
	var wg sync.WaitGroup
	errs := make([]error, g)
	for i := range g {
		wg.Go(func() {
			l, db := logs[i%len(logs)], dbs[i%len(logs)]
			for j := range n {
				err := store.InTx(ctx, db, func(tx *ent.Tx) error {
					if err := l.Append(ctx, tx, audit.Record{Actor: fmt.Sprintf("agent-%d", i), Action: "approval.raise", Subject: fmt.Sprintf("%d/%d", i, j)}); err != nil {
						return err
					}
					if j%5 == 4 {
						return errRollback
					}
					return nil
				})
				if err != nil && !errors.Is(err, errRollback) {
					errs[i] = err
					return
				}
			}
		})
	}
	wg.Wait()
	cancel()
	runs.Wait()
	if err := errors.Join(errs...); err != nil {
		t.Fatalf("append: %v", err)
	}
	r := verify(t, logs[0])
	want := g * n * 4 / 5
	if !r.OK() || r.Entries != int64(want) || r.Pending != 0 {
		t.Fatalf("Verify = %+v, want ok with %d entries, none pending", r, want)
	}
	seen := make(map[string]bool)
	for after := int64(0); ; {
		page, err := logs[len(logs)-1].List(t.Context(), after, 1000)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range page {
			if seen[e.Subject] {
				t.Errorf("entry %s chained twice", e.Subject)
			}
			seen[e.Subject] = true
			after = e.Seq
		}
		if len(page) < 1000 {
			break
		}
	}
	for i := range g {
		for j := range n {
			if s := fmt.Sprintf("%d/%d", i, j); seen[s] != (j%5 != 4) {
				t.Errorf("entry %s chained = %v, want %v", s, seen[s], j%5 != 4)
			}
		}
	}
}

// TestAuditOlderEntries: a store whose entries were chained when they were
// written, without a content hash, verifies as before, and the sequencer
// goes on from its last entry.
func TestAuditOlderEntries(t *testing.T) {
	t.Parallel()
	db, a, raw := auditStore(t, store.SQLiteDSN(t.TempDir()))
	prev := ""
	for i := int64(1); i <= 3; i++ {
		e := audit.Entry{Seq: i, At: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC), Actor: "cli", Action: "token.mint",
			Subject: fmt.Sprint(i), Detail: []byte(`{}`), Prev: prev}
		var err error
		if e.Hash, err = audit.HashOf(e); err != nil {
			t.Fatal(err)
		}
		err = db.AuditEntry.Create().SetSeq(e.Seq).SetAt(e.At).SetActor(e.Actor).SetAction(e.Action).
			SetSubject(e.Subject).SetPrev(e.Prev).SetHash(e.Hash).Exec(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		prev = e.Hash
	}
	appendN(t, a, 2)
	if r := verify(t, a); !r.OK() || r.Entries != 5 {
		t.Fatalf("Verify = %+v, want ok with 5 entries", r)
	}
	got, err := a.List(t.Context(), 3, 10)
	if err != nil || len(got) != 2 || got[0].Prev != prev || got[0].Content == "" {
		t.Fatalf("List(after 3) = %+v, %v; want two new entries, the first after %s", got, err, prev)
	}
	if _, err := raw.ExecContext(t.Context(), `UPDATE audit_entries SET subject = 'x' WHERE seq = 2`); err != nil {
		t.Fatal(err)
	}
	if r := verify(t, a); r.Bad != 2 || !errors.Is(r.Why, audit.ErrModified) {
		t.Fatalf("Verify = %+v, want entry 2 modified", r)
	}
}

// TestAuditAppendersDoNotWait: on PostgreSQL an append does not wait for
// another transaction that appended and has not yet committed (no lock on
// the hot path), and neither does the sequencer: it chains what has
// committed and leaves the open one for later.
func TestAuditAppendersDoNotWait(t *testing.T) {
	t.Parallel()
	db, a, _ := auditStore(t, boardtest.PostgresDSN(t))
	appendChained(t, a, 1)
	open, err := db.Tx(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	defer open.Rollback()
	if err := a.Append(t.Context(), open, audit.Record{Actor: "slow", Action: "approval.raise", Subject: "open"}); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	if err := a.AppendNow(ctx, audit.Record{Actor: "ops", Action: "approval.decide", Subject: "approval-2"}); err != nil {
		t.Fatalf("AppendNow while another append is open: %v", err)
	}
	if err := a.Sequence(ctx); err != nil {
		t.Fatalf("Sequence while an append is open: %v", err)
	}
	if r := verify(t, a); !r.OK() || r.Entries != 2 || r.Pending != 0 {
		t.Fatalf("Verify = %+v, want ok with 2 entries", r)
	}
	if err := open.Commit(); err != nil {
		t.Fatal(err)
	}
	got, err := a.List(t.Context(), 2, 10)
	if err != nil || len(got) != 1 || got[0].Subject != "open" || got[0].Seq != 3 {
		t.Fatalf("List(after 2) = %+v, %v; want the entry committed last as seq 3", got, err)
	}
}
