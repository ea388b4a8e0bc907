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
		seq, err := a.AppendNow(t.Context(), audit.Record{
			Actor:   "ops",
			Action:  "approval.decide",
			Subject: fmt.Sprintf("approval-%d", i),
			Detail:  map[string]any{"decision": "yes", "n": i},
		})
		if err != nil {
			t.Fatalf("AppendNow %d: %v", i, err)
		}
		if seq != int64(i) {
			t.Fatalf("AppendNow %d = seq %d, want %d", i, seq, i)
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
	appendN(t, a, 3)
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
	if _, err := a.AppendNow(t.Context(), audit.Record{
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
		if _, err := a.AppendNow(t.Context(), rec); err == nil {
			t.Errorf("AppendNow(%s) succeeded, want an error", name)
		}
	}
	if r := verify(t, a); r.Entries != 0 {
		t.Fatalf("Verify = %+v after refused appends, want no entries", r)
	}
}

// tamper changes the stored chain of five entries behind the board's back.
var tamper = []struct {
	name    string
	sql     []string
	wantBad int64
	wantWhy error
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
}

func TestAuditTamper(t *testing.T) {
	t.Parallel()
	for _, tc := range tamper {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			_, a, raw := auditStore(t, store.SQLiteDSN(t.TempDir()))
			testTamper(t, a, raw, tc.sql, tc.wantBad, tc.wantWhy)
		})
	}
}

func testTamper(t *testing.T, a *audit.Log, raw *sql.DB, stmts []string, wantBad int64, wantWhy error) {
	t.Helper()
	appendN(t, a, 5)
	if r := verify(t, a); !r.OK() || r.Entries != 5 {
		t.Fatalf("Verify before tampering = %+v, want ok with 5 entries", r)
	}
	for _, s := range stmts {
		if _, err := raw.ExecContext(t.Context(), s); err != nil {
			t.Fatalf("%s: %v", s, err)
		}
	}
	r := verify(t, a)
	if r.OK() || r.Bad != wantBad || !errors.Is(r.Why, wantWhy) {
		t.Fatalf("Verify = bad %d (%v), want bad %d (%v)", r.Bad, r.Why, wantBad, wantWhy)
	}
	if r.Entries != wantBad-1 {
		t.Errorf("Verify = %d good entries, want %d", r.Entries, wantBad-1)
	}
}

func TestAuditRolledBack(t *testing.T) {
	t.Parallel()
	db, a, _ := auditStore(t, store.SQLiteDSN(t.TempDir()))
	tx, err := db.Tx(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	seq, err := a.Append(t.Context(), tx, audit.Record{Actor: "ops", Action: "approval.decide", Subject: "a1"})
	if err != nil || seq != 1 {
		t.Fatalf("Append = %d, %v; want 1", seq, err)
	}
	if err := tx.Rollback(); err != nil {
		t.Fatal(err)
	}
	if got, err := a.List(t.Context(), 0, 0); err != nil || len(got) != 0 {
		t.Fatalf("List after rollback = %+v, %v; want none", got, err)
	}
	appendN(t, a, 1) // seq 1 again
	if r := verify(t, a); !r.OK() || r.Entries != 1 {
		t.Fatalf("Verify = %+v, want ok with 1 entry", r)
	}
}

func TestAuditConcurrent(t *testing.T) {
	t.Parallel()
	_, a, _ := auditStore(t, store.SQLiteDSN(t.TempDir()))
	testConcurrent(t, a, 50)
}

// testConcurrent appends n entries from n goroutines at once: every one
// gets its own seq, 1 to n, and the chain is intact.
func testConcurrent(t *testing.T, a *audit.Log, n int) {
	t.Helper()
	var wg sync.WaitGroup
	seqs := make([]int64, n)
	errs := make([]error, n)
	for i := range n {
		wg.Go(func() {
			seqs[i], errs[i] = a.AppendNow(context.Background(), audit.Record{
				Actor: fmt.Sprintf("agent-%d", i), Action: "approval.raise", Subject: fmt.Sprint(i),
			})
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		t.Fatalf("AppendNow: %v", err)
	}
	seen := make(map[int64]bool)
	for _, s := range seqs {
		seen[s] = true
	}
	for s := int64(1); s <= int64(n); s++ {
		if !seen[s] {
			t.Errorf("no append got seq %d", s)
		}
	}
	if r := verify(t, a); !r.OK() || r.Entries != int64(n) {
		t.Fatalf("Verify = %+v, want ok with %d entries", r, n)
	}
}

// TestAuditPostgres: the same log on PostgreSQL, where appenders on other
// connections (other boards) are serialized by the row lock and the
// ON CONFLICT retry rather than by the database.
func TestAuditPostgres(t *testing.T) {
	t.Parallel()
	_, a, raw := auditStore(t, boardtest.PostgresDSN(t))
	testConcurrent(t, a, 50)
	if _, err := raw.ExecContext(t.Context(), `UPDATE audit_entries SET subject = 'other' WHERE seq = 17`); err != nil {
		t.Fatal(err)
	}
	if r := verify(t, a); r.Bad != 17 || !errors.Is(r.Why, audit.ErrModified) {
		t.Fatalf("Verify = bad %d (%v), want bad 17 (%v)", r.Bad, r.Why, audit.ErrModified)
	}
	_, a, raw = auditStore(t, boardtest.PostgresDSN(t))
	testTamper(t, a, raw, tamper[5].sql, tamper[5].wantBad, tamper[5].wantWhy) // reordered
}
