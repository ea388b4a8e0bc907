package main

import (
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/symphonix/symphonix/internal/boardtest"
	"github.com/symphonix/symphonix/receipts"
)

// TestReceiptCommands: a decision's receipt, saved from the approval,
// verifies offline with the keys the board publishes (and those board
// receipt keys prints from the store); the same receipt with a byte
// changed does not, exiting 1 with why; rotate-key adds a key starting
// later and retires the one signing now, both still printed.
func TestReceiptCommands(t *testing.T) {
	t.Parallel()
	dsn := boardtest.PostgresDSN(t)
	f := startFleet(t, boardtest.Options{DSN: dsn})
	f.governRefunds(t)
	id := f.raise(t, "r1", 40)
	f.ok(t, "approvals", "decide", id, "approve", "--yes")
	receipt := f.approval(t, id).GetDecision().GetReceipt()
	if receipt == "" {
		t.Fatal("the decided approval has no receipt")
	}
	dir := t.TempDir()
	file := filepath.Join(dir, "receipt.jws")
	if err := os.WriteFile(file, []byte(receipt+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	resp, err := http.Get(f.b.URL + "/.well-known/receipt-keys.json")
	if err != nil {
		t.Fatal(err)
	}
	published, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	keys := filepath.Join(dir, "keys.json")
	if err := os.WriteFile(keys, published, 0o600); err != nil {
		t.Fatal(err)
	}

	out, _ := runOK(t, "receipt", "verify", file, "--keys", keys)
	for _, want := range []string{"receipt: valid", "approval " + id + " (agent refund-bot, run r1, node approve)", "said yes by ops", "rule refunds, version "} {
		if !strings.Contains(out, want) {
			t.Errorf("receipt verify: %q missing:\n%s", want, out)
		}
	}
	var r receipts.Receipt
	jsonOut, _ := runOK(t, "receipt", "verify", file, "--keys", keys, "-o", "json")
	if err := json.Unmarshal([]byte(jsonOut), &r); err != nil || r.Approval != id || r.Say != "yes" || r.Audit == "" {
		t.Errorf("receipt verify -o json: %+v, %v", r, err)
	}

	// The store's keys, as receipt keys prints them, verify it too.
	printed, _ := runOK(t, "receipt", "keys", "--database", dsn)
	fromStore := filepath.Join(dir, "store-keys.json")
	if err := os.WriteFile(fromStore, []byte(printed), 0o600); err != nil {
		t.Fatal(err)
	}
	runOK(t, "receipt", "verify", file, "--keys", fromStore)

	tampered := filepath.Join(dir, "tampered.jws")
	parts := strings.Split(receipt, ".")
	flip := map[byte]string{'A': "B"}[parts[2][0]]
	if flip == "" {
		flip = "A"
	}
	parts[2] = flip + parts[2][1:] // the signature's first byte changed
	if err := os.WriteFile(tampered, []byte(strings.Join(parts, ".")), 0o600); err != nil {
		t.Fatal(err)
	}
	out, _, code, err := runArgs(t, nil, "receipt", "verify", tampered, "--keys", keys)
	if code != 1 || err == nil || !strings.Contains(out, "receipt: not valid:") {
		t.Errorf("receipt verify of a tampered receipt: exit %d, %v, %q; want exit 1 saying why", code, err, out)
	}
	if _, _, code, _ := runArgs(t, nil, "receipt", "verify", file); code != 2 {
		t.Errorf("receipt verify without --keys: exit %d, want 2", code)
	}

	if _, _, code, _ := runArgs(t, nil, "receipt", "rotate-key", "--database", dsn, "--start-in", "1s"); code != 2 {
		t.Errorf("rotate-key --start-in 1s: exit %d, want 2 (too soon for the boards to publish it)", code)
	}
	runOK(t, "receipt", "rotate-key", "--database", dsn, "--start-in", "1m")
	printed, _ = runOK(t, "receipt", "keys", "--database", dsn)
	set, err := receipts.ParseKeySet([]byte(printed))
	if err != nil || len(set) != 2 || set[0].NotAfter.IsZero() || !set[0].NotAfter.Equal(set[1].NotBefore) {
		t.Fatalf("keys after rotate-key: %+v, %v; want the old one retired when the new one starts", set, err)
	}
	if _, err := receipts.Verify(receipt, set); err != nil {
		t.Errorf("the receipt with the keys after rotation: %v", err)
	}
}
