package node_test

import (
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"os/user"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/symphonix/symphonix/agentlink"
	boardv1 "github.com/symphonix/symphonix/api/symphonix/board/v1"
	"github.com/symphonix/symphonix/identity"
	"github.com/symphonix/symphonix/internal/boardtest"
	"github.com/symphonix/symphonix/internal/exampletest"
	"github.com/symphonix/symphonix/node"
	"github.com/symphonix/symphonix/pause"
)

// refusal is a 503 the served API answers a message with while paused.
type refusal struct {
	status     int
	retryAfter string
	body       struct {
		Error  string
		Paused *struct{ Reason, By, Origin string }
	}
}

// postPaused posts a new message to thread and reads the answer as a
// refusal (whatever its status).
func postPaused(t *testing.T, url, thread string) refusal {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), "POST", url+"/api/threads/"+thread+"/messages", strings.NewReader(askForRefund))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	r := refusal{status: res.StatusCode, retryAfter: res.Header.Get("Retry-After")}
	if err := json.Unmarshal(b, &r.body); err != nil {
		t.Fatalf("POST %s = %d %s: %v", thread, res.StatusCode, b, err)
	}
	return r
}

// me is who a pause decided on this machine names: the login name, the
// uid when there is none, "unknown" when the process has no user.
func me(t *testing.T) string {
	t.Helper()
	u, err := user.Current()
	switch {
	case err != nil:
		return "unknown"
	case u.Username != "":
		return u.Username
	}
	return "uid " + u.Uid
}

// TestServePausedLocally: `agent pause` on the folder of a served agent
// refuses new messages (503, Retry-After, the reason and who) and says so
// on a line, while the run it has in flight is answered and finishes;
// `agent resume` takes new messages again; an agent started while paused
// stays paused.
func TestServePausedLocally(t *testing.T) {
	t.Parallel()
	dir := deskDir(t)
	s := startServe(t, node.Config{Dir: dir})
	var first turn
	if status := call(t, "POST", s.url+"/api/threads/in-flight/messages", askForRefund, &first); status != 200 || first.Pending == nil {
		t.Fatalf("message = %d %+v, want the refund's approval", status, first)
	}

	if err := node.Pause(node.Config{Dir: dir}); err == nil || !strings.Contains(err.Error(), "--reason") {
		t.Errorf("Pause without a reason = %v, want it refused, naming --reason", err)
	}
	var said lines
	if err := node.Pause(node.Config{Dir: dir, Reason: "the order system is being migrated", Stdout: &said}); err != nil {
		t.Fatal(err)
	}
	said.wait(t, regexp.MustCompile(`^agent refund-desk: paused by `+regexp.QuoteMeta(me(t))+` at \S+ \(on this machine\): the order system is being migrated$`), 0)
	said.wait(t, regexp.MustCompile(`^agent refund-desk: served at `+regexp.QuoteMeta(s.url)+` \(pid \d+\): it takes this up within a second`), 0)

	r := postPaused(t, s.url, "new")
	if r.status != 503 || r.retryAfter != "60" || r.body.Paused == nil || r.body.Paused.Reason != "the order system is being migrated" ||
		r.body.Paused.By != me(t) || r.body.Paused.Origin != "local" || !strings.Contains(r.body.Error, "the order system is being migrated") {
		t.Fatalf("a new message while paused = %+v; want 503, Retry-After 60, the reason, who and where", r)
	}
	s.out.wait(t, regexp.MustCompile(`^agent refund-desk: paused by \S+ at \S+ \(on this machine\): the order system is being migrated$`), 60*time.Second)
	var desc struct{ Paused *struct{ Reason string } }
	if call(t, "GET", s.url+"/api/agent", "", &desc); desc.Paused == nil || desc.Paused.Reason != "the order system is being migrated" {
		t.Errorf("GET /api/agent while paused = %+v, want the pause", desc)
	}

	var done turn
	if status := call(t, "POST", s.url+"/api/threads/in-flight/answer", `{"answer": "yes"}`, &done); status != 200 || done.Reply == "" {
		t.Fatalf("answering the run in flight while paused = %d %+v, want it finished", status, done)
	}
	exampletest.CheckRefundedOnce(t, dir)

	if err := node.Resume(node.Config{Dir: dir}); err != nil {
		t.Fatal(err)
	}
	var again turn
	if status := call(t, "POST", s.url+"/api/threads/after/messages", askForRefund, &again); status != 200 {
		t.Fatalf("a new message after the resume = %d %+v, want 200", status, again)
	}
	s.out.wait(t, regexp.MustCompile(`^agent refund-desk: taking work: resumed by \S+ at \S+ \(on this machine\)$`), 60*time.Second)
	if err := s.shutdown(t); err != nil {
		t.Fatal(err)
	}

	if err := node.Pause(node.Config{Dir: dir, Reason: "stay down"}); err != nil {
		t.Fatal(err)
	}
	restarted := startServe(t, node.Config{Dir: dir})
	restarted.out.wait(t, regexp.MustCompile(`^agent refund-desk: paused by \S+ at \S+ \(on this machine\): stay down: no new work is taken until it is resumed$`), 0)
	if r := postPaused(t, restarted.url, "after-restart"); r.status != 503 || r.body.Paused == nil || r.body.Paused.Reason != "stay down" {
		t.Errorf("a new message after a restart while paused = %+v, want 503 naming the reason", r)
	}
}

// TestRunPaused: `agent run` of a paused agent starts no run (ErrPaused,
// naming the reason), and answers the run already waiting on its thread.
func TestRunPaused(t *testing.T) {
	t.Parallel()
	dir := deskDir(t)
	if err := node.Run(t.Context(), node.Config{Dir: dir, Thread: "waits", Input: refundInput}); !errors.Is(err, node.ErrNoAnswer) {
		t.Fatalf("the first Run = %v, want ErrNoAnswer", err)
	}
	if err := node.Pause(node.Config{Dir: dir, Reason: "closing the books"}); err != nil {
		t.Fatal(err)
	}
	var stderr lines
	err := node.Run(t.Context(), node.Config{Dir: dir, Thread: "new", Input: refundInput, Stdin: strings.NewReader("yes\n"), Stderr: &stderr})
	if !errors.Is(err, node.ErrPaused) || !strings.Contains(err.Error(), "closing the books") {
		t.Fatalf("a new run while paused = %v, want ErrPaused naming the reason", err)
	}
	if stderr.String() != "" {
		t.Errorf("the refused run said %q; want nothing before the refusal", stderr.String())
	}
	if err := node.Run(t.Context(), node.Config{Dir: dir, Thread: "waits", Stdin: strings.NewReader("yes\n")}); err != nil {
		t.Fatalf("answering the waiting run while paused = %v, want it finished", err)
	}
	exampletest.CheckRefundedOnce(t, dir)
}

// TestPauseFromTheBoard: a served agent announces users, pairing, health
// and pause, in protocol 3; an operator's pause on the board reaches it,
// is kept in its folder (origin board, with the operator's name and the
// board's time), refuses new messages and is said on a line, and the
// board sees it delivered; the operator's resume goes the same way, and
// the agent takes new messages again.
func TestPauseFromTheBoard(t *testing.T) {
	t.Parallel()
	bt := boardtest.Start(t, boardtest.Options{})
	olga := bt.Agents(bt.OperatorToken("Olga Ops", identity.RoleAdmin))
	dir := deskDir(t)
	switchOn(t, bt, dir, "orders.lookup_order", "orders.refund")
	s := startServe(t, node.Config{Dir: dir, BoardURL: bt.URL, Token: bt.AgentToken("refund-desk")})
	var a *boardv1.Agent
	boardtest.Eventually(t, time.Minute, "the served desk's hello on the board", func() bool {
		a = agentOn(t, olga, "refund-desk")
		return len(a.GetCapabilities()) > 0 // the desk that switched tools on announced none
	})
	// The board keeps the capabilities sorted, whatever their order in the hello.
	if a.GetProtocol() != "3" || !slices.Equal(a.GetCapabilities(), []string{"chat", "delegation", "delegation-cycle", "fire", "health", "live-runs", "pairing", "pause", "runs", "users"}) {
		t.Errorf("hello = protocol %q, capabilities %q; want 3 and chat, users, pairing, health, pause, runs, live-runs, fire, delegation, delegation-cycle", a.GetProtocol(), a.GetCapabilities())
	}

	res, err := olga.PauseAgent(t.Context(), &boardv1.PauseAgentRequest{Name: "refund-desk", Reason: "quarterly audit"})
	if err != nil {
		t.Fatalf("PauseAgent: %v", err)
	}
	at := res.GetAgent().GetPause().GetTime().AsTime()
	boardtest.Eventually(t, time.Minute, "the pause delivered", func() bool {
		a = agentOn(t, olga, "refund-desk")
		return a.GetPause().GetDelivered()
	})
	if p := a.GetPause(); !p.GetPaused() || p.GetOrigin() != boardv1.PauseOrigin_PAUSE_ORIGIN_BOARD || p.GetReason() != "quarterly audit" || p.GetBy() != "Olga Ops" {
		t.Errorf("the board's view once the agent answered = %v, want Olga Ops's pause, from the board", p)
	}
	kept, err := pause.Read(dir)
	if err != nil || !kept.Paused || kept.Origin != pause.Board || kept.Reason != "quarterly audit" || kept.By != "Olga Ops" || !kept.Time.Equal(at) {
		t.Errorf("the folder's pause = %+v, %v; want the board's, at %s", kept, err, at)
	}
	if r := postPaused(t, s.url, "new"); r.status != 503 || r.body.Paused == nil || r.body.Paused.Origin != "board" || r.body.Paused.By != "Olga Ops" {
		t.Errorf("a new message after the board's pause = %+v, want 503 naming the board's pause", r)
	}
	s.out.wait(t, regexp.MustCompile(`^agent refund-desk: paused by Olga Ops at `+regexp.QuoteMeta(at.UTC().Format(time.RFC3339))+` \(on the board\): quarterly audit$`), 60*time.Second)

	if _, err := olga.ResumeAgent(t.Context(), &boardv1.ResumeAgentRequest{Name: "refund-desk"}); err != nil {
		t.Fatalf("ResumeAgent: %v", err)
	}
	boardtest.Eventually(t, time.Minute, "the resume delivered", func() bool {
		p := agentOn(t, olga, "refund-desk").GetPause()
		return !p.GetPaused() && p.GetDelivered() && p.GetOrigin() == boardv1.PauseOrigin_PAUSE_ORIGIN_BOARD
	})
	if kept, err := pause.Read(dir); err != nil || kept.Paused || kept.Origin != pause.Board || kept.By != "Olga Ops" {
		t.Errorf("the folder's pause after the board's resume = %+v, %v; want not paused, by Olga Ops from the board", kept, err)
	}
	var again turn
	if status := call(t, "POST", s.url+"/api/threads/after/messages", askForRefund, &again); status != 200 || again.Pending == nil {
		t.Errorf("a new message after the board's resume = %d %+v, want the refund's approval", status, again)
	}
}

// TestRunAnnouncesPause: a run at a terminal announces pause and nothing
// else: it serves no chat, and runs no health checks.
func TestRunAnnouncesPause(t *testing.T) {
	t.Parallel()
	bt := boardtest.Start(t, boardtest.Options{})
	agents := bt.Agents(bt.OperatorToken("ops", identity.RoleViewer))
	dir := deskDir(t)
	switchOn(t, bt, dir, "orders.lookup_order", "orders.refund")
	err := node.Run(t.Context(), node.Config{Dir: dir, BoardURL: bt.URL, Token: bt.AgentToken("refund-desk"), Input: refundInput})
	if !errors.Is(err, node.ErrNoAnswer) {
		t.Errorf("Run = %v, want ErrNoAnswer (nothing on stdin)", err)
	}
	var a *boardv1.Agent
	boardtest.Eventually(t, time.Minute, "the run's hello on the board", func() bool {
		a = agentOn(t, agents, "refund-desk")
		return len(a.GetCapabilities()) > 0 // the desk that switched tools on announced none
	})
	// A run at a terminal takes no fired runs.
	if !slices.Equal(a.GetCapabilities(), []string{agentlink.CapabilityDelegation, agentlink.CapabilityDelegationCycle, agentlink.CapabilityLiveRuns, agentlink.CapabilityPause, agentlink.CapabilityRuns}) {
		t.Errorf("a run's hello announces %q, want pause, runs, live-runs, delegation and delegation-cycle", a.GetCapabilities())
	}
}

// TestPauseAndHealthOnTheBoard: against a real board, a served agent's
// health rounds are the board's view of it; an operator's pause reaches
// it, is kept in its folder and refuses new messages, and the board sees
// it delivered; a resume on the agent's machine reaches the board as the
// agent's word.
func TestPauseAndHealthOnTheBoard(t *testing.T) {
	t.Parallel()
	g := startGovernance(t)
	admin := g.bt.Agents(g.bt.OperatorToken("root", identity.RoleAdmin))
	dir := deskDir(t)
	g.switchOn(t, dir, "orders.lookup_order", "orders.refund")
	s := startServe(t, node.Config{Dir: dir, BoardURL: g.bt.URL, Token: g.bt.AgentToken("refund-desk"), HealthInterval: time.Second})

	var a *boardv1.Agent
	boardtest.Eventually(t, time.Minute, "the desk's health on the board", func() bool {
		a = agentOn(t, g.agents, "refund-desk")
		return a.GetHealth() != nil
	})
	if a.GetProtocol() != "3" || !slices.Equal(slices.Sorted(slices.Values(a.GetCapabilities())), []string{"chat", "delegation", "delegation-cycle", "fire", "health", "live-runs", "pairing", "pause", "runs", "users"}) {
		t.Errorf("the board's desk speaks %q and announces %q; want 3, and chat, users, pairing, health, pause, runs, live-runs, fire, delegation, delegation-cycle", a.GetProtocol(), a.GetCapabilities())
	}
	var lines []string
	for _, c := range a.GetHealth().GetChecks() {
		lines = append(lines, c.GetName()+" "+c.GetStatus().String())
	}
	if a.GetHealth().GetStatus() != boardv1.HealthStatus_HEALTH_STATUS_OK ||
		strings.Join(lines, ",") != "mcp:orders CHECK_STATUS_OK,waiting CHECK_STATUS_OK" {
		t.Errorf("the board's view of the desk's health = %v; want ok, mcp:orders and waiting ok", a.GetHealth())
	}

	if _, err := admin.PauseAgent(t.Context(), &boardv1.PauseAgentRequest{Name: "refund-desk", Reason: "quarterly audit"}); err != nil {
		t.Fatalf("PauseAgent: %v", err)
	}
	s.out.wait(t, regexp.MustCompile(`^agent refund-desk: paused by root at \S+ \(on the board\): quarterly audit$`), 60*time.Second)
	if kept, err := pause.Read(dir); err != nil || !kept.Paused || kept.Origin != pause.Board || kept.By != "root" {
		t.Errorf("the folder's pause = %+v, %v; want root's, from the board", kept, err)
	}
	if r := postPaused(t, s.url, "new"); r.status != 503 || r.body.Paused == nil || r.body.Paused.Reason != "quarterly audit" {
		t.Errorf("a new message after the operator's pause = %+v, want 503 naming it", r)
	}
	boardtest.Eventually(t, time.Minute, "the pause delivered", func() bool {
		p := agentOn(t, g.agents, "refund-desk").GetPause()
		return p.GetPaused() && p.GetDelivered()
	})

	if err := node.Resume(node.Config{Dir: dir, Reason: "audit done"}); err != nil {
		t.Fatal(err)
	}
	boardtest.Eventually(t, time.Minute, "the local resume on the board", func() bool {
		p := agentOn(t, g.agents, "refund-desk").GetPause()
		return !p.GetPaused() && p.GetOrigin() == boardv1.PauseOrigin_PAUSE_ORIGIN_LOCAL && p.GetBy() == me(t)
	})
	var again turn
	if status := call(t, "POST", s.url+"/api/threads/after/messages", askForRefund, &again); status != 200 || again.Pending == nil {
		t.Errorf("a new message after the resume = %d %+v, want the refund's approval", status, again)
	}
}
