package node_test

import (
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"context"

	boardv1 "github.com/symphonix/symphonix/api/symphonix/board/v1"
	"github.com/symphonix/symphonix/node"
)

// testModelKey is the model key the tests' agents are given.
const testModelKey = "sk-test-health-0123456789abcdef"

// provider is an OpenAI-compatible server that lists its models, for the
// model check, until refuse is set: then it answers 401 naming the key it
// was sent, as a provider may.
type provider struct {
	url    string
	asked  atomic.Int64
	refuse atomic.Bool
}

func startProvider(t *testing.T) *provider {
	t.Helper()
	p := &provider{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/v1/models" {
			http.NotFound(w, r)
			return
		}
		p.asked.Add(1)
		if p.refuse.Load() || r.Header.Get("Authorization") != "Bearer "+testModelKey {
			w.WriteHeader(http.StatusUnauthorized)
			io.WriteString(w, `{"error": {"message": "Incorrect API key provided: `+strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ")+`"}}`)
			return
		}
		io.WriteString(w, `{"object": "list", "data": [{"id": "gpt-4o-mini", "object": "model"}]}`)
	}))
	t.Cleanup(srv.Close)
	p.url = srv.URL + "/v1"
	return p
}

func (p *provider) getenv(name string) string {
	return map[string]string{"OPENAI_API_KEY": testModelKey, "OPENAI_BASE_URL": p.url}[name]
}

// writeHealthJSON writes dir/health.json.
func writeHealthJSON(t *testing.T, dir, text string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(dir, "health.json"), []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

// awaitHealth waits for the board's next health report.
func (b *pushBoard) awaitHealth(t *testing.T) *boardv1.HealthReport {
	t.Helper()
	select {
	case r := <-b.health:
		return r
	case <-time.After(time.Minute):
		t.Fatal("no health report within a minute")
	}
	return nil
}

// lineOf is the line named name in r.
func lineOf(t *testing.T, r *boardv1.HealthReport, name string) *boardv1.HealthCheck {
	t.Helper()
	for _, c := range r.GetChecks() {
		if c.GetName() == name {
			return c
		}
	}
	t.Fatalf("no line %s in %v", name, r)
	return nil
}

// TestHealthAnnounced: a served agent with health checks announces
// health; one whose checks are turned off does not, and reports none.
func TestHealthAnnounced(t *testing.T) {
	t.Parallel()
	on, onURL := startPushBoard(t)
	startServe(t, node.Config{Dir: deskDir(t), BoardURL: onURL, Token: "a-token"})
	if h := <-on.hellos; !slices.Contains(h.GetCapabilities(), "health") {
		t.Errorf("with health checks, the hello announces %q; want health among them", h.GetCapabilities())
	}
	if r := on.awaitHealth(t); r.GetStatus() == boardv1.HealthStatus_HEALTH_STATUS_UNSPECIFIED {
		t.Errorf("the first report = %v, want a status", r)
	}

	off, offURL := startPushBoard(t)
	s := startServe(t, node.Config{Dir: deskDir(t), BoardURL: offURL, Token: "a-token", NoHealthChecks: true})
	if h := <-off.hellos; !slices.Equal(h.GetCapabilities(), []string{"users", "pairing", "pause"}) {
		t.Errorf("with health checks off, the hello announces %q; want users, pairing, pause", h.GetCapabilities())
	}
	off.awaitPauseState(t, "after the welcome", func(*boardv1.PauseState) bool { return true })
	var a turn
	call(t, "POST", s.url+"/api/threads/t1/messages", askForRefund, &a) // the link is up and in use
	select {
	case r := <-off.health:
		t.Errorf("with health checks off, the board was sent %v", r)
	default:
	}
}

// TestHealthReportedOnChange: every check of a served agent is a line of
// its rounds — its MCP server, its model (asked with its key), its waiting
// store, health.json's and the embedding program's — and the board hears
// the first round, then nothing while rounds come out the same, then the
// round in which the model's key is refused and a TCP service went away,
// with no key in its details; the change is said on a line.
func TestHealthReportedOnChange(t *testing.T) {
	t.Parallel()
	b, url := startPushBoard(t)
	prov := startProvider(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()
	dir := deskDir(t)
	writeHealthJSON(t, dir, fmt.Sprintf(`{"checks": [{"name": "ledger-db", "tcp": %q}]}`, ln.Addr().String()))
	s := startServe(t, node.Config{
		Dir: dir, BoardURL: url, Token: "a-token", Getenv: prov.getenv, HealthInterval: time.Second,
		HealthChecks: []node.HealthCheck{{Name: "printer", Check: func(context.Context) error { return nil }}},
	})

	first := b.awaitHealth(t)
	var names []string
	for _, c := range first.GetChecks() {
		names = append(names, c.GetName())
		if c.GetStatus() != boardv1.CheckStatus_CHECK_STATUS_OK {
			t.Errorf("line %s = %v, want ok", c.GetName(), c)
		}
	}
	if first.GetStatus() != boardv1.HealthStatus_HEALTH_STATUS_OK || strings.Join(names, ",") != "ledger-db,mcp:orders,model,printer,waiting" {
		t.Fatalf("the first report = %v; want ok, with ledger-db, mcp:orders, model, printer and waiting", first)
	}
	s.out.wait(t, regexp.MustCompile(`^agent refund-desk: health ok \(5 checks\)$`), 0)

	// Three more rounds, the same: not reported.
	for deadline := time.Now().Add(time.Minute); prov.asked.Load() < 4; {
		if time.Now().After(deadline) {
			t.Fatalf("the model was asked %d times within a minute, want a round a second", prov.asked.Load())
		}
		time.Sleep(20 * time.Millisecond)
	}
	prov.refuse.Store(true)
	ln.Close()

	next := b.awaitHealth(t)
	if next.GetStatus() != boardv1.HealthStatus_HEALTH_STATUS_DEGRADED {
		t.Fatalf("the report after the first = %v; want the degraded one (unchanged rounds are not reported)", next)
	}
	model := lineOf(t, next, "model")
	if model.GetStatus() != boardv1.CheckStatus_CHECK_STATUS_ERROR || !strings.Contains(model.GetDetail(), "401") {
		t.Errorf("the model's line = %v, want an error saying 401", model)
	}
	for _, c := range next.GetChecks() {
		if strings.Contains(c.GetDetail(), testModelKey) || strings.Contains(c.GetDetail(), "health-0123456789") {
			t.Errorf("line %s carries the model's key: %q", c.GetName(), c.GetDetail())
		}
	}
	if db := lineOf(t, next, "ledger-db"); db.GetStatus() != boardv1.CheckStatus_CHECK_STATUS_ERROR || db.GetDetail() == "" {
		t.Errorf("the TCP check's line after its listener closed = %v, want an error saying why", db)
	}
	if ok := lineOf(t, next, "waiting"); ok.GetStatus() != boardv1.CheckStatus_CHECK_STATUS_OK {
		t.Errorf("the waiting store's line = %v, want ok", ok)
	}
	s.out.wait(t, regexp.MustCompile(`^agent refund-desk: health degraded: ledger-db error: .+; model error: .*401.*$`), 60*time.Second)
	if strings.Contains(s.out.String(), testModelKey) {
		t.Errorf("the agent's lines carry the model's key:\n%s", s.out)
	}
}

// TestHealthMCPServerKilled: an MCP server whose process is killed fails
// the next round's mcp:<server> line, saying so; the round after starts
// it again, and the agent is healthy again.
func TestHealthMCPServerKilled(t *testing.T) {
	t.Parallel()
	dir := deskDir(t)
	log := &lines{}
	s := startServe(t, node.Config{Dir: dir, HealthInterval: time.Second,
		Logger: slog.New(slog.NewTextHandler(log, nil))})
	s.out.wait(t, regexp.MustCompile(`^agent refund-desk: health ok \(2 checks\)$`), 60*time.Second)
	started := log.wait(t, regexp.MustCompile(`msg="mcp server started" server=orders pid=(\d+)`), 0)
	pid, _ := strconv.Atoi(started[1])
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	s.out.wait(t, regexp.MustCompile(`^agent refund-desk: health degraded: mcp:orders error: .+$`), 60*time.Second)
	deadline := time.Now().Add(time.Minute)
	for strings.Count(s.out.String(), "agent refund-desk: health ok (2 checks)\n") < 2 {
		if time.Now().After(deadline) {
			t.Fatalf("not healthy again within a minute; the lines:\n%s", s.out)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestHealthJSONUnreadable: a health.json that cannot be read does not
// stop the agent: its line fails every round, naming the file and what is
// wrong.
func TestHealthJSONUnreadable(t *testing.T) {
	t.Parallel()
	dir := deskDir(t)
	writeHealthJSON(t, dir, `{"checks": [{"name": "db", "tcp": "db:5432", "timeout": 3}]}`)
	s := startServe(t, node.Config{Dir: dir, HealthInterval: time.Second})
	s.out.wait(t, regexp.MustCompile(`^agent refund-desk: health degraded: health.json error: .*health.json: checks\[0\]\.timeout: unknown field.*$`), 60*time.Second)
	var desc struct{ Name string }
	if call(t, "GET", s.url+"/api/agent", "", &desc); desc.Name != "refund-desk" {
		t.Errorf("GET /api/agent = %+v, want the agent served", desc)
	}
}
