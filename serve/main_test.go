package serve_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/symphonix/symphonix/agent"
	"github.com/symphonix/symphonix/internal/exampletest"
	"github.com/symphonix/symphonix/journal"
	"github.com/symphonix/symphonix/serve"
)

// refundDesk is the example folder the tests serve, each from a copy of
// its own (exampletest), so that the runs they leave waiting stay out of
// the repository. Its MCP server is `go run ./mcp-orders`, one process per
// opened agent, holding its orders in memory: each order can be refunded
// once per agent, so the tests that refund use different orders. Threads
// are named uniquely.
const refundDesk = "../examples/refund-desk"

// desk is the refund desk opened once for the package, from a copy in a
// temporary folder, with a journal (metadata only) there too. Its orders
// are never refunded: a test that says yes opens its own (openDesk), so
// that the package can run any number of times in one process (-count).
var desk struct {
	agent   *agent.Agent
	journal string
	j       *journal.Journal
}

func TestMain(m *testing.M) {
	os.Exit(runTests(m))
}

func runTests(m *testing.M) int {
	tmp, err := os.MkdirTemp("", "serve-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(tmp)
	desk.journal = filepath.Join(tmp, "journal.jsonl")
	j, err := journal.Open(journal.Config{Path: desk.journal})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer j.Close()
	desk.j = j
	dir, err := exampletest.CopyTo(tmp, refundDesk)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	desk.agent, err = agent.Open(context.Background(), dir, agent.Config{WrapModel: j.WrapModel, WrapTools: j.WrapTools})
	if err != nil {
		fmt.Fprintln(os.Stderr, "opening the refund desk:", err)
		return 1
	}
	defer desk.agent.Close()
	return m.Run()
}

// openDesk opens a refund desk of the test's own, in a copy of its own
// with a fresh order table, journalled in a temporary folder with detail.
func openDesk(t *testing.T, detail journal.Detail) (a *agent.Agent, path string) {
	t.Helper()
	a, j := openDeskJournal(t, detail)
	return a, j.Path()
}

// openDeskJournal is openDesk, returning the journal.
func openDeskJournal(t *testing.T, detail journal.Detail) (*agent.Agent, *journal.Journal) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "journal.jsonl")
	j, err := journal.Open(journal.Config{Path: path, Detail: detail})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { j.Close() })
	a, err := agent.Open(t.Context(), exampletest.Copy(t, refundDesk), agent.Config{WrapModel: j.WrapModel, WrapTools: j.WrapTools})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { a.Close() })
	return a, j
}

var threads atomic.Int64

// threadName is a thread no other run of any test has used.
func threadName(t *testing.T) string {
	name := strings.NewReplacer("/", "-", " ", "-").Replace(t.Name())
	return fmt.Sprintf("%s-%d-%d", name, time.Now().UnixNano(), threads.Add(1))
}

// newServer serves a on an httptest server, its conversations index in a
// temporary folder.
func newServer(t *testing.T, a *agent.Agent) *httptest.Server {
	t.Helper()
	return newServerAt(t, a, filepath.Join(t.TempDir(), "conversations.json"))
}

func newServerAt(t *testing.T, a *agent.Agent, index string) *httptest.Server {
	t.Helper()
	s, err := serve.New(t.Context(), serve.Config{Agent: a, Conversations: index})
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(s)
	t.Cleanup(ts.Close)
	return ts
}

// do sends one request; body, when not "", is sent as application/json.
func do(t *testing.T, ts *httptest.Server, method, path, body string) (int, []byte) {
	t.Helper()
	var r io.Reader
	if body != "" {
		r = strings.NewReader(body)
	}
	req, err := http.NewRequestWithContext(t.Context(), method, ts.URL+path, r)
	if err != nil {
		t.Fatal(err)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	res, err := ts.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	return res.StatusCode, b
}

// turn sends a request that must succeed and decodes its turn.
func turn(t *testing.T, ts *httptest.Server, path, body string) serve.Turn {
	t.Helper()
	status, b := do(t, ts, http.MethodPost, path, body)
	if status != http.StatusOK {
		t.Fatalf("POST %s %s = %d %s, want 200", path, body, status, b)
	}
	var tr serve.Turn
	if err := json.Unmarshal(b, &tr); err != nil {
		t.Fatalf("POST %s: %v in %s", path, err, b)
	}
	return tr
}

// message is the body of a message asking for a refund of order.
func message(order string) string {
	return fmt.Sprintf(`{"input": {"order_id": %q, "request": "The mug arrived broken; I want my money back."}}`, order)
}

// journalLines returns the lines of the journal at path for thread.
func journalLines(t *testing.T, path, thread string) []map[string]any {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []map[string]any
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var e map[string]any
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
			t.Fatalf("journal line %q: %v", sc.Text(), err)
		}
		if e["thread"] == thread {
			out = append(out, e)
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}
