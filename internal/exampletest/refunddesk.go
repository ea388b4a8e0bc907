package exampletest

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// BuildOrders builds the refund desk's orders server (its mcp-orders) into
// dir and returns the binary's path. Build it once for a test binary: in
// TestMain, or behind a sync.Once.
func BuildOrders(dir string) (string, error) {
	bin := filepath.Join(dir, "mcp-orders")
	out, err := exec.Command("go", "build", "-o", bin, "github.com/symphonix/symphonix/examples/refund-desk/mcp-orders").CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("build mcp-orders: %v\n%s", err, out)
	}
	return bin, nil
}

// RefundDesk makes a refund desk of the test's own: the flow of the example
// at src in a new folder, its orders server the binary orders
// (BuildOrders), keeping its orders in orders.json in that folder, so a
// refund made is there to read (Refunds) and survives a restart of the
// server. The flow is otherwise the example's.
func RefundDesk(t testing.TB, src, orders string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(src, "flow.json"))
	if err != nil {
		t.Fatal(err)
	}
	var f map[string]any
	if err := json.Unmarshal(b, &f); err != nil {
		t.Fatal(err)
	}
	srv := f["requires"].(map[string]any)["mcp"].(map[string]any)["orders"].(map[string]any)
	srv["command"] = orders
	delete(srv, "args")
	srv["env"] = map[string]any{"ORDERS_STATE": "orders.json"}
	if b, err = json.MarshalIndent(f, "", "  "); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "refund-desk")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "flow.json"), b, 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

// Refunds reads the refunds the desk in dir made: none before its first.
func Refunds(t testing.TB, dir string) []map[string]any {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, "orders.json"))
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	var st struct{ Refunds []map[string]any }
	if err := json.Unmarshal(b, &st); err != nil {
		t.Fatalf("orders.json %s: %v", b, err)
	}
	return st.Refunds
}

// CheckRefundedOnce fails t unless the desk in dir made exactly one refund,
// of order A-1001's 49.9.
func CheckRefundedOnce(t testing.TB, dir string) {
	t.Helper()
	r := Refunds(t, dir)
	if len(r) != 1 || r[0]["order_id"] != "A-1001" || r[0]["amount"] != 49.9 || r[0]["status"] != "refunded" {
		t.Errorf("refunds made = %v, want one, of 49.9 on A-1001", r)
	}
}

// JournalCalls lists the calls the journal of the agent in dir has for
// thread, as "kind name".
func JournalCalls(t testing.TB, dir, thread string) []string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, ".symphonix", "journal.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	var calls []string
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		var e map[string]any
		if err := json.Unmarshal([]byte(line), &e); err != nil {
			t.Fatalf("journal line %q: %v", line, err)
		}
		if e["thread"] == thread {
			calls = append(calls, fmt.Sprint(e["kind"], " ", e["name"]))
		}
	}
	return calls
}
