package serve_test

import (
	"strings"
	"testing"

	"github.com/symphonix/symphonix/journal"
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
