package serve_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"

	"github.com/symphonix/symphonix/journal"
	"github.com/symphonix/symphonix/serve"
)

// TestJournalFullDetail: the calls of a served run are journaled under its
// thread; with full detail the journal keeps what each call was given and
// gave back, and withholds nothing.
func TestJournalFullDetail(t *testing.T) {
	t.Parallel()
	a, path := openDesk(t, journal.DetailFull)
	ts := newServer(t, a)
	thread := threadName(t)
	turn(t, ts, "/api/threads/"+thread+"/messages", message("A-1001"))
	turn(t, ts, "/api/threads/"+thread+"/answer", `{"answer": "yes"}`)

	lines := journalLines(t, path, thread)
	if len(lines) != 4 {
		t.Fatalf("journal has %d lines for the thread, want 4: %v", len(lines), lines)
	}
	for _, e := range lines {
		if _, ok := e["withheld"]; ok {
			t.Errorf("full-detail line %v withholds something", e)
		}
	}
	lookup, decide, refund := lines[0], lines[1], lines[2]
	if args, _ := lookup["args"].(map[string]any); args["order_id"] != "A-1001" {
		t.Errorf("lookup line = %v, want its args", lookup)
	}
	if res, _ := lookup["result"].(map[string]any); res["customer"] != "Ada Lovelace" {
		t.Errorf("lookup line = %v, want its result", lookup)
	}
	if p, _ := decide["prompt"].(string); !strings.Contains(p, "A customer wrote about order A-1001") || decide["reply"] == "" {
		t.Errorf("decide line = %v, want its prompt and reply", decide)
	}
	if res, _ := refund["result"].(map[string]any); res["status"] != "refunded" {
		t.Errorf("refund line = %v, want its result", refund)
	}
}

// TestCalls: GET /api/calls reads the journal back, newest first, by kind
// and limit, each entry naming its thread and run; bad values are 400
// naming the parameter.
func TestCalls(t *testing.T) {
	t.Parallel()
	a, j := openDeskJournal(t, journal.DetailMetadata)
	s, err := serve.New(t.Context(), serve.Config{Agent: a, Conversations: filepath.Join(t.TempDir(), "c.json"), Journal: j})
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(s)
	t.Cleanup(ts.Close)
	thread := threadName(t)
	turn(t, ts, "/api/threads/"+thread+"/messages", message("A-1001")) // lookup, decide; waits at pay

	calls := func(query string) []journal.Entry {
		t.Helper()
		status, b := do(t, ts, http.MethodGet, "/api/calls"+query, "")
		if status != http.StatusOK {
			t.Fatalf("GET /api/calls%s = %d %s", query, status, b)
		}
		var c serve.Calls
		if err := json.Unmarshal(b, &c); err != nil {
			t.Fatal(err)
		}
		return c.Calls
	}
	all := calls("")
	if len(all) != 2 || all[0].Kind != journal.KindLLM || all[0].Name != "decide" || all[1].Kind != journal.KindTool || all[1].Name != "orders.lookup_order" {
		t.Fatalf("calls = %+v, want decide (llm) then lookup (tool), newest first", all)
	}
	for _, e := range all {
		if e.Thread != thread || e.Run == "" || e.Run != all[0].Run {
			t.Errorf("entry %s: thread %q run %q, want the thread and one run id", e.Name, e.Thread, e.Run)
		}
	}
	if got := calls("?kind=tool"); len(got) != 1 || got[0].Name != "orders.lookup_order" {
		t.Errorf("kind=tool: %+v", got)
	}
	if got := calls("?kind=llm&limit=1"); len(got) != 1 || got[0].Name != "decide" {
		t.Errorf("kind=llm&limit=1: %+v", got)
	}
	if got := calls("?limit=1"); len(got) != 1 || got[0].Name != "decide" {
		t.Errorf("limit=1: %+v", got)
	}
	for _, bad := range []struct{ query, field string }{
		{"?limit=0", "limit"}, {"?limit=501", "limit"}, {"?limit=ten", "limit"}, {"?limit=", "limit"}, {"?kind=model", "kind"},
	} {
		status, b := do(t, ts, http.MethodGet, "/api/calls"+bad.query, "")
		var e struct{ Error, Field string }
		_ = json.Unmarshal(b, &e)
		if status != http.StatusBadRequest || e.Field != bad.field || !strings.HasPrefix(e.Error, bad.field+": ") {
			t.Errorf("GET /api/calls%s = %d %s, want 400 naming %s", bad.query, status, b, bad.field)
		}
	}
}
