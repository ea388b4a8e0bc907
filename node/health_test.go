package node_test

import (
	"context"
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

	"google.golang.org/protobuf/proto"

	boardv1 "github.com/symphonix/symphonix/api/symphonix/board/v1"
	"github.com/symphonix/symphonix/api/symphonix/board/v1/boardv1connect"
	"github.com/symphonix/symphonix/board"
	"github.com/symphonix/symphonix/identity"
	"github.com/symphonix/symphonix/internal/boardtest"
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

// healthBoard is a real board for the health tests, and a viewer's client
// of it. It takes a report a second from a link rather than one every 5 s:
// the agent spaces its reports 5 s apart when it sends them, the board
// counts from when they arrive, and on a busy machine a first report held
// up on the way would make the next look early and be refused.
func healthBoard(t *testing.T) (*boardtest.Board, boardv1connect.AgentServiceClient) {
	t.Helper()
	bt := boardtest.Start(t, boardtest.Options{Limits: board.Limits{HealthEvery: time.Second}})
	return bt, bt.Agents(bt.OperatorToken("ops", identity.RoleViewer))
}

// lineOf is the line named name in r.
func lineOf(t *testing.T, r *boardv1.HealthRound, name string) *boardv1.HealthCheck {
	t.Helper()
	for _, c := range r.GetChecks() {
		if c.GetName() == name {
			return c
		}
	}
	t.Fatalf("no line %s in %v", name, r)
	return nil
}

// outcome is how r came out: its status, and each line's status and
// detail (not how long the checks took, nor when the round was).
func outcome(r *boardv1.HealthRound) string {
	s := r.GetStatus().String()
	for _, c := range r.GetChecks() {
		s += fmt.Sprintf("; %s %s %q", c.GetName(), c.GetStatus(), c.GetDetail())
	}
	return s
}

// TestHealthAnnounced: a served agent with health checks announces
// health, and its rounds reach the board; one whose checks are turned off
// does not announce it, and the board has no round of it.
func TestHealthAnnounced(t *testing.T) {
	t.Parallel()
	on, onAgents := healthBoard(t)
	off, offAgents := healthBoard(t)
	startServe(t, node.Config{Dir: deskDir(t), BoardURL: on.URL, Token: on.AgentToken("refund-desk")})
	startServe(t, node.Config{Dir: deskDir(t), BoardURL: off.URL, Token: off.AgentToken("refund-desk"), NoHealthChecks: true})

	var a *boardv1.Agent
	boardtest.Eventually(t, time.Minute, "the first round on the board", func() bool {
		a = agentOn(t, onAgents, "refund-desk")
		return a.GetHealth() != nil
	})
	if !slices.Contains(a.GetCapabilities(), "health") {
		t.Errorf("with health checks, the hello announces %q; want health among them", a.GetCapabilities())
	}
	if a.GetHealth().GetStatus() == boardv1.HealthStatus_HEALTH_STATUS_UNSPECIFIED {
		t.Errorf("the first round = %v, want a status", a.GetHealth())
	}

	// By now the agent with checks has linked and reported; the one
	// without, started with it, has linked too, and reported nothing.
	var b *boardv1.Agent
	boardtest.Eventually(t, time.Minute, "the agent without health checks on its board", func() bool {
		b = agentOn(t, offAgents, "refund-desk")
		return b.GetState() == boardv1.AgentState_AGENT_STATE_ONLINE
	})
	if !slices.Equal(b.GetCapabilities(), []string{"chat", "delegation", "delegation-cycle", "fire", "live-runs", "pairing", "pause", "runs", "users"}) { // sorted by the board
		t.Errorf("with health checks off, the hello announces %q; want chat, users, pairing, pause, runs, live-runs, fire, delegation, delegation-cycle", b.GetCapabilities())
	}
	if b.GetHealth() != nil {
		t.Errorf("with health checks off, the board's latest round = %v, want none", b.GetHealth())
	}
	if rounds := healthHistory(t, offAgents, "refund-desk"); len(rounds) != 0 {
		t.Errorf("with health checks off, the board keeps %d rounds, want none: %v", len(rounds), rounds)
	}
}

// TestHealthReportedOnChange: every check of a served agent is a line of
// its rounds — its MCP server, its model (asked with its key), its waiting
// store, health.json's and the embedding program's — and the board keeps
// the first round, then nothing while rounds come out the same (past the
// 5 s the agent spaces its reports by), then the round in which the
// model's key is refused and a TCP service went away, with no key in its
// details; the change is said on a line.
func TestHealthReportedOnChange(t *testing.T) {
	t.Parallel()
	bt, agents := healthBoard(t)
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
		Dir: dir, BoardURL: bt.URL, Token: bt.AgentToken("refund-desk"), Getenv: prov.getenv, HealthInterval: time.Second,
		HealthChecks: []node.HealthCheck{{Name: "printer", Check: func(context.Context) error { return nil }}},
	})

	var rounds []*boardv1.HealthRound
	boardtest.Eventually(t, time.Minute, "the first round on the board", func() bool {
		rounds = healthHistory(t, agents, "refund-desk")
		return len(rounds) > 0
	})
	first := rounds[len(rounds)-1]
	var names []string
	for _, c := range first.GetChecks() {
		names = append(names, c.GetName())
		if c.GetStatus() != boardv1.CheckStatus_CHECK_STATUS_OK {
			t.Errorf("line %s = %v, want ok", c.GetName(), c)
		}
	}
	if first.GetStatus() != boardv1.HealthStatus_HEALTH_STATUS_OK || strings.Join(names, ",") != "ledger-db,mcp:orders,model,printer,waiting" {
		t.Fatalf("the first round = %v; want ok, with ledger-db, mcp:orders, model, printer and waiting", first)
	}
	s.out.wait(t, regexp.MustCompile(`^agent refund-desk: health ok \(5 checks\)$`), 0)

	// Seven more rounds, a second apart and the same: the last starts more
	// than 5 s after the first was reported, when the agent may report again,
	// and none is.
	asked := prov.asked.Load()
	boardtest.Eventually(t, time.Minute, "seven more rounds", func() bool { return prov.asked.Load() >= asked+7 })
	if rounds := healthHistory(t, agents, "refund-desk"); len(rounds) != 1 {
		t.Fatalf("after rounds that came out the same, the board keeps %d rounds, want only the first: %v", len(rounds), rounds)
	}
	prov.refuse.Store(true)
	ln.Close()

	var last *boardv1.HealthRound
	boardtest.Eventually(t, time.Minute, "the round with the model and ledger-db failing on the board", func() bool {
		rounds = healthHistory(t, agents, "refund-desk")
		last = rounds[0]
		return lineOf(t, last, "model").GetStatus() == boardv1.CheckStatus_CHECK_STATUS_ERROR &&
			lineOf(t, last, "ledger-db").GetStatus() == boardv1.CheckStatus_CHECK_STATUS_ERROR
	})
	if last.GetStatus() != boardv1.HealthStatus_HEALTH_STATUS_DEGRADED {
		t.Errorf("the newest round = %v; want degraded", last)
	}
	if model := lineOf(t, last, "model"); !strings.Contains(model.GetDetail(), "401") {
		t.Errorf("the model's line = %v, want an error saying 401", model)
	}
	if db := lineOf(t, last, "ledger-db"); db.GetDetail() == "" {
		t.Errorf("the TCP check's line after its listener closed = %v, want an error saying why", db)
	}
	if ok := lineOf(t, last, "waiting"); ok.GetStatus() != boardv1.CheckStatus_CHECK_STATUS_OK {
		t.Errorf("the waiting store's line = %v, want ok", ok)
	}
	// Between the first round and that one, only changes: a round taken
	// while the two went away one after the other may show one of them.
	if oldest := rounds[len(rounds)-1]; !proto.Equal(oldest, first) {
		t.Errorf("the oldest round kept = %v, want the first, %v", oldest, first)
	}
	for i, r := range rounds {
		if i > 0 && outcome(r) == outcome(rounds[i-1]) {
			t.Errorf("rounds %d and %d (newest first) came out the same, and both were reported: %s", i-1, i, outcome(r))
		}
		for _, c := range r.GetChecks() {
			if strings.Contains(c.GetDetail(), testModelKey) || strings.Contains(c.GetDetail(), "health-0123456789") {
				t.Errorf("line %s carries the model's key: %q", c.GetName(), c.GetDetail())
			}
		}
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
