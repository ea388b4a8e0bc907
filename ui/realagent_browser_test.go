package ui_test

import (
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/symphonix/symphonix/identity"
	"github.com/symphonix/symphonix/internal/browsertest"
	"github.com/symphonix/symphonix/node"
)

// watchman is the smallest flow an agent serves: one model node, with the
// stand-in model. It declares no MCP server and never waits for a person,
// so its only health check is its folder's health.json.
const watchman = `{
  "version": "0.17",
  "name": "watchman",
  "description": "Answers a question; its health is a ledger's port.",
  "inputs": ["question"],
  "outputs": ["answer"],
  "state": {
    "question": { "type": "string", "description": "What is asked." },
    "answer": { "type": "string", "description": "The answer." }
  },
  "start": "answer",
  "nodes": [
    { "id": "answer", "type": "llm", "output": "answer", "prompt": "Answer: {{question}}" }
  ],
  "edges": [
    { "from": "answer", "to": "END" }
  ]
}`

// ledger is a TCP service the agent's health.json checks: it accepts and
// closes connections until stop closes it.
type ledger struct {
	ln   net.Listener
	stop func()
}

func startLedger(t *testing.T) *ledger {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()
	l := &ledger{ln: ln, stop: sync.OnceFunc(func() {
		ln.Close()
		<-done
	})}
	t.Cleanup(l.stop)
	return l
}

// TestBrowserRealAgentDegrades: a real agent, served with node.Serve and
// linked to the board, checks a TCP service its health.json names every
// round; the agents table shows it ok, and, when the service goes away,
// degraded with the failing check named within one round, without a
// reload; so does its page.
func TestBrowserRealAgentDegrades(t *testing.T) {
	// A round at least as long as the link's spacing of reports
	// (agentlink.HealthSpacing), so that the round that finds the failure
	// sends it at once.
	const round = 6 * time.Second
	bt := linkBoard(t)
	svc := startLedger(t)
	dir := filepath.Join(t.TempDir(), "watchman")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	files := map[string]string{
		"flow.json":   watchman,
		"health.json": fmt.Sprintf(`{"checks": [{"name": "ledger-db", "tcp": %q}]}`, svc.ln.Addr().String()),
	}
	for name, text := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() {
		served <- node.Serve(ctx, node.Config{Dir: dir, BoardURL: bt.URL, Token: bt.AgentToken("watchman"), HealthInterval: round})
	}()
	t.Cleanup(func() {
		cancel()
		select {
		case err := <-served:
			if err != nil {
				t.Errorf("Serve: %v", err)
			}
		case <-time.After(browsertest.Ceiling):
			t.Errorf("Serve did not return within %s of its context ending", browsertest.Ceiling)
		}
	})

	b := browsertest.New(t)
	signInTo(t, b, bt, bt.OperatorToken("vic", identity.RoleViewer), "agents")
	b.Until("watchman ok", rowHealth, "watchman", "ok")
	b.Eval(`window.sameDocument = "yes"; "set"`)

	svc.stop()
	stopped := time.Now()
	b.Until("watchman degraded", rowHealth, "watchman", "degraded")
	// One round, and a few seconds for the board, the watch and the page.
	if took := time.Since(stopped); took > round+4*time.Second {
		t.Errorf("degraded on the page %s after the service went away, want within one round (%s) and 4 s", took.Round(time.Millisecond), round)
	}
	if got := b.Eval(`document.querySelector('tr[data-agent="watchman"] .health').title`); !strings.Contains(got, "ledger-db failed") {
		t.Errorf("watchman's health title = %q, want it to name ledger-db failing", got)
	}
	openAgentPage(t, b, "watchman")
	b.Until("ledger-db shown failing on the page", checkShown, "ledger-db", "error")
	b.Until("the failure in the incidents", `() => {
		const li = document.querySelector('#incidents li[data-check="ledger-db"]');
		return li !== null && li.dataset.ongoing === "true";
	}`)
	if got := b.Eval(`window.sameDocument || "reloaded"`); got != "yes" {
		t.Errorf("page: %s, want the same document throughout", got)
	}
}
