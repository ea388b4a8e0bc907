package main

import (
	"database/sql"
	"fmt"
	"strings"
	"testing"

	"github.com/symphonix/symphonix/audit"
	"github.com/symphonix/symphonix/store"
)

// TestAuditOverAPI: with --board, audit list and verify read the board's
// AuditService; verify recomputes every hash here and names the first
// entry changed in the store; without --board they read the store.
func TestAuditOverAPI(t *testing.T) {
	t.Parallel()
	f := startFleet(t)
	f.governRefunds(t)
	f.ok(t, "approvals", "decide", f.raise(t, "r1", 40), "approve", "--yes")

	out := f.ok(t, "audit", "verify")
	if !regexpLine(out, `^audit: [5-9] entries, chain intact$`) {
		t.Errorf("audit verify --board:\n%s", out)
	}
	// The store, read directly, has the same head.
	fromStore, _, err := runWith(t, noEnv, nil, "audit", "verify", "--data", f.b.Dir)
	if err != nil || fromStore != out {
		t.Errorf("audit verify --data: %v\n%s\nwant what --board printed:\n%s", err, fromStore, out)
	}
	type entry struct {
		Seq    int64          `json:"seq"`
		Actor  string         `json:"actor"`
		Action string         `json:"action"`
		Detail map[string]any `json:"detail"`
	}
	entries := decodeJSON[[]entry](t, f.ok(t, "audit", "list", "-o", "json", "--after", "2", "--limit", "2"))
	if len(entries) != 2 || entries[0].Seq != 3 || entries[0].Action != "rule.put" || entries[0].Detail["node"] != "approve" {
		t.Errorf("audit list -o json --after 2 --limit 2 = %+v", entries)
	}
	fromStore, _, err = runWith(t, noEnv, nil, "audit", "list", "-o", "json", "--after", "2", "--limit", "2", "--data", f.b.Dir)
	if err != nil || fromStore != f.ok(t, "audit", "list", "-o", "json", "--after", "2", "--limit", "2") {
		t.Errorf("audit list -o json: the store's and the board's differ (%v):\n%s", err, fromStore)
	}

	_, _, err = f.board(t, "audit", "verify", "--data", f.b.Dir)
	wantExit(t, err, 2, "--data and --board")
	// A board in the environment: audit reads it, unless the command line
	// names a store.
	boardEnv := func(k string) string {
		if k == "SYMPHONIX_BOARD" {
			return f.b.URL
		}
		return f.env(k)
	}
	if got, _, err := runWith(t, boardEnv, nil, "audit", "verify"); err != nil || got != out {
		t.Errorf("audit verify with SYMPHONIX_BOARD: %v\n%s", err, got)
	}
	if got, _, err := runWith(t, boardEnv, nil, "audit", "verify", "--data", t.TempDir()); err == nil || !strings.Contains(err.Error(), "no store at") {
		t.Errorf("audit verify --data EMPTY with SYMPHONIX_BOARD: %v\n%s, want the store read (and found missing)", err, got)
	}

	// An entry changed in the store behind the board's back.
	raw, err := sql.Open("sqlite", store.SQLiteDSN(f.b.Dir))
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	if _, err := raw.ExecContext(t.Context(), `UPDATE audit_entries SET actor = 'mallory' WHERE seq = 3`); err != nil {
		t.Fatal(err)
	}
	out, _, err = f.board(t, "audit", "verify")
	wantExit(t, err, 1, "audit chain broken")
	if !strings.Contains(out, "audit: entry 3: hash does not match its contents") {
		t.Errorf("audit verify after tampering:\n%s", out)
	}
	js, _, _ := f.board(t, "audit", "verify", "-o", "json")
	if v := decodeJSON[map[string]any](t, js); v["ok"] != false || v["bad"] != 3.0 || v["entries"] != 2.0 {
		t.Errorf("audit verify -o json after tampering = %v", v)
	}
}

// TestAuditVerifyChainsPending: entries committed but not yet chained (no
// board ran the sequencer) are chained by audit verify before it checks
// them, in the order they were written; one changed while it waited is
// named by its seq.
func TestAuditVerifyChainsPending(t *testing.T) {
	t.Parallel()
	for _, tamper := range []bool{false, true} {
		dir := t.TempDir()
		db, err := store.Open(t.Context(), store.SQLiteDSN(dir))
		if err != nil {
			t.Fatal(err)
		}
		for i := range 3 {
			if err := audit.New(db).AppendNow(t.Context(), audit.Record{Actor: "cli", Action: "test.pending", Subject: fmt.Sprint(i + 1)}); err != nil {
				t.Fatal(err)
			}
		}
		db.Close()
		if tamper {
			raw, err := sql.Open("sqlite", store.SQLiteDSN(dir))
			if err != nil {
				t.Fatal(err)
			}
			if _, err := raw.ExecContext(t.Context(), `UPDATE audit_entries SET subject = 'x' WHERE subject = '2'`); err != nil {
				t.Fatal(err)
			}
			raw.Close()
		}
		out, _, err := runWith(t, noEnv, nil, "audit", "verify", "--data", dir)
		if tamper {
			wantExit(t, err, 1, "audit chain broken")
			if !strings.Contains(out, "audit: entry 2: hash does not match its contents") {
				t.Errorf("audit verify, entry 2 changed before it was chained:\n%s", out)
			}
			continue
		}
		if err != nil || !regexpLine(out, `^audit: 3 entries, chain intact$`) || strings.Contains(out, "not yet chained") {
			t.Errorf("audit verify: %v\n%s", err, out)
		}
		list, _, err := runWith(t, noEnv, nil, "audit", "list", "-o", "json", "--data", dir)
		type entry struct {
			Seq     int64  `json:"seq"`
			Subject string `json:"subject"`
		}
		got := decodeJSON[[]entry](t, list)
		if err != nil || len(got) != 3 || got[0] != (entry{1, "1"}) || got[2] != (entry{3, "3"}) {
			t.Errorf("audit list -o json = %+v, %v; want seq 1 to 3 in the order written", got, err)
		}
	}
}
