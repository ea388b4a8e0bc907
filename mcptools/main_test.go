package mcptools

import (
	"bytes"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// ordersBin is the example refund desk's order server, built once for every
// test: the tests run real processes speaking real MCP.
var ordersBin string

func TestMain(m *testing.M) {
	os.Exit(testMain(m))
}

func testMain(m *testing.M) int {
	dir, err := os.MkdirTemp("", "mcptools-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(dir)
	ordersBin = filepath.Join(dir, "mcp-orders")
	build := exec.Command("go", "build", "-o", ordersBin, "../examples/refund-desk/mcp-orders")
	if out, err := build.CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "building mcp-orders: %v\n%s", err, out)
		return 1
	}
	return m.Run()
}

// ordersFlow is a flow folder holding the order server at ./bin/mcp-orders,
// and its declaration: both tools, and state kept in orders.json beside the
// flow so refunds survive a restart.
func ordersFlow(t *testing.T) (dir string, servers map[string]Server) {
	t.Helper()
	dir = t.TempDir()
	if err := os.Mkdir(filepath.Join(dir, "bin"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(ordersBin, filepath.Join(dir, "bin", "mcp-orders")); err != nil {
		t.Fatal(err)
	}
	return dir, map[string]Server{
		"orders": {
			Command: "./bin/mcp-orders",
			Env:     map[string]string{"ORDERS_STATE": "orders.json"},
			Tools: []Tool{
				{Name: "lookup_order", Description: "Look up an order by its id."},
				{Name: "refund", Description: "Refund an order, once."},
			},
		},
	}
}

// openOrders opens the orders flow, logging into the returned log, and closes
// it when the test ends.
func openOrders(t *testing.T) (*Set, *logBuffer) {
	t.Helper()
	dir, servers := ordersFlow(t)
	log := new(logBuffer)
	s, err := Open(t.Context(), dir, servers, Config{
		Logger: slog.New(slog.NewTextHandler(log, &slog.HandlerOptions{Level: slog.LevelDebug})),
	})
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() {
		if err := s.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return s, log
}

// logBuffer is a log safe for the concurrent writes of calls and watchers.
type logBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *logBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *logBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// starts counts the server starts in the log.
func (b *logBuffer) starts() int {
	return strings.Count(b.String(), `msg="mcp server started"`)
}
