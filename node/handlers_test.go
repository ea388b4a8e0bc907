package node_test

import (
	"path/filepath"
	"regexp"
	"testing"
	"time"

	"github.com/symphonix/symphonix/internal/exampletest"
	"github.com/symphonix/symphonix/node"
)

// TestServeExecHandlers: a served agent runs a flow whose handlers and
// router are executables in its folder (examples/support-triage), says
// at start how each is provided, and answers a message with what they
// wrote.
func TestServeExecHandlers(t *testing.T) {
	t.Parallel()
	dir := exampletest.Copy(t, filepath.Join("..", "examples", "support-triage"))
	s := startServe(t, node.Config{Dir: dir})
	for _, want := range []string{
		`handler "classifyRequest": executable handlers/classifyRequest.sh (time limit 30s)`,
		`router "routeRequest": executable routers/routeRequest.sh (time limit 30s)`,
	} {
		s.out.wait(t, regexp.MustCompile(`^`+regexp.QuoteMeta(want)+`$`), 30*time.Second)
	}
	var done turn
	if status := call(t, "POST", s.url+"/api/threads/billing/messages", `{"input": {"request": "I was charged twice"}}`, &done); status != 200 ||
		done.State["category"] != "billing" || done.State["checked"] != true {
		t.Fatalf("message = %d %+v, want the billing path taken, checked twice", status, done)
	}
}
