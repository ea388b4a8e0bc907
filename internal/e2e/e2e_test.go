// Package e2e runs the real commands as processes: a board that is killed
// with SIGKILL and started again, agents that die, tokens minted and revoked
// from the command line while the board runs.
package e2e

import (
	"bufio"
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	boardv1 "github.com/symphonix/symphonix/api/symphonix/board/v1"
	"github.com/symphonix/symphonix/api/symphonix/board/v1/boardv1connect"
	"github.com/symphonix/symphonix/identity"
	"github.com/symphonix/symphonix/internal/boardtest"
	"github.com/symphonix/symphonix/internal/exampletest"
	"github.com/symphonix/symphonix/store"
)

var bin string // folder with the built board and agent commands

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "symphonix-e2e-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	bin = dir
	for _, cmd := range []string{"board", "agent"} {
		out, err := exec.Command("go", "build", "-o", filepath.Join(dir, cmd), "github.com/symphonix/symphonix/cmd/"+cmd).CombinedOutput()
		if err != nil {
			fmt.Fprintf(os.Stderr, "build %s: %v\n%s", cmd, err, out)
			os.Exit(1)
		}
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// ceiling bounds each wait of these tests for a process to do something.
// It only bounds a failure: a wait ends as soon as what it waits for has
// happened, so the ceiling is generous, for a loaded CI machine that runs
// the packages side by side.
const ceiling = time.Minute

// proc is a running command whose output lines the test can wait for.
type proc struct {
	cmd   *exec.Cmd
	mu    sync.Mutex
	lines []string
	added chan struct{}
	read  chan struct{} // closed once the output has been read to its end
}

func start(t *testing.T, name string, args ...string) *proc {
	t.Helper()
	return startWithEnv(t, nil, name, args...)
}

func (p *proc) readFrom(r io.Reader) {
	defer close(p.read)
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		p.mu.Lock()
		p.lines = append(p.lines, sc.Text())
		p.mu.Unlock()
		select {
		case p.added <- struct{}{}:
		default:
		}
	}
}

func (p *proc) output() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]string(nil), p.lines...)
}

// stop sends sig and waits until the process has ended, and its output
// has been read to the end (it and any child that shares it have closed
// it), and returns how the process ended.
func (p *proc) stop(t *testing.T, sig os.Signal) error {
	t.Helper()
	if err := p.cmd.Process.Signal(sig); err != nil {
		t.Fatal(err)
	}
	select {
	case <-p.read:
	case <-time.After(ceiling):
		t.Fatalf("%s: output still open %s after %v", p.cmd.Path, ceiling, sig)
	}
	return p.cmd.Wait()
}

// waitLine waits for a line matching re and returns its submatches. It
// fails at once when the output ends without one.
func (p *proc) waitLine(t *testing.T, re *regexp.Regexp) []string {
	t.Helper()
	deadline := time.After(ceiling)
	seen := 0
	for {
		lines := p.output()
		for ; seen < len(lines); seen++ {
			if m := re.FindStringSubmatch(lines[seen]); m != nil {
				return m
			}
		}
		select {
		case <-p.added:
		case <-p.read:
			if len(p.output()) == seen {
				t.Fatalf("no line matching %s: the output ended; output:\n%s", re, strings.Join(lines, "\n"))
			}
		case <-deadline:
			t.Fatalf("no line matching %s within %s; output:\n%s", re, ceiling, strings.Join(lines, "\n"))
		}
	}
}

func runCmd(t *testing.T, name string, args ...string) (stdout, stderr string) {
	t.Helper()
	cmd := exec.Command(filepath.Join(bin, name), args...)
	var out, errb strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, errb.String())
	}
	return out.String(), errb.String()
}

var listening = regexp.MustCompile(`listening on (http://127\.0\.0\.1:\d+)`)

func startBoard(t *testing.T, data, listen string) (p *proc, url string) {
	t.Helper()
	p = start(t, "board", "--data", data, "--listen", listen)
	return p, p.waitLine(t, listening)[1]
}

// helloDir writes a flow folder for an agent named name.
func helloDir(t *testing.T, name string) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), name)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	flow := fmt.Sprintf(`{"version":"0.17","name":%q,"description":"An agent for the end-to-end tests.","start":"greet","nodes":[{"id":"greet","handler":"greet"}],"edges":[{"from":"greet","to":"END"}]}`, name)
	if err := os.WriteFile(filepath.Join(dir, "flow.json"), []byte(flow), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

func agentsClient(url, token string) boardv1connect.AgentServiceClient {
	return boardv1connect.NewAgentServiceClient(boardtest.NewClient(url, token))
}

func agentState(t *testing.T, agents boardv1connect.AgentServiceClient, name string) *boardv1.Agent {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), ceiling)
	defer cancel()
	res, err := agents.GetAgent(ctx, &boardv1.GetAgentRequest{Name: name})
	if err != nil {
		return nil
	}
	return res.GetAgent()
}

// TestAgentProcessDies: an agent process killed with SIGKILL (no goodbye)
// is offline on the board once the board's grace has passed, noticed from
// the connection that ended: the board's pings are too far apart to
// notice it within the ceiling.
func TestAgentProcessDies(t *testing.T) {
	t.Parallel()
	bt := boardtest.Start(t, boardtest.Options{PingInterval: time.Hour, PingTimeout: time.Hour})
	agent := start(t, "agent", "--monitor", bt.URL, "--token", bt.AgentToken("mortal"), helloDir(t, "mortal"))
	agent.waitLine(t, regexp.MustCompile(`agent mortal: linked to`))
	agents := bt.Agents(bt.OperatorToken("ops", identity.RoleViewer))
	a := agentState(t, agents, "mortal")
	// This agent is only linked (its handlers live in a generated program), so
	// it announces what this process does for it: its pause, and the two
	// every agent of this protocol has (delegation and its cycle check,
	// which nothing about a deployment turns off), and nothing else.
	if a.GetState() != boardv1.AgentState_AGENT_STATE_ONLINE || strings.Join(a.GetCapabilities(), ",") != "delegation,delegation-cycle,pause" {
		t.Fatalf("mortal = %v, want online announcing delegation, delegation-cycle and pause, and nothing else", a)
	}
	if err := agent.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	died := time.Now()
	boardtest.Eventually(t, ceiling, "mortal offline after SIGKILL", func() bool {
		return agentState(t, agents, "mortal").GetState() != boardv1.AgentState_AGENT_STATE_ONLINE
	})
	t.Logf("offline %s after SIGKILL", time.Since(died).Round(time.Millisecond))
}

// TestAgentWithoutBoard: no monitor URL, no link, and it says so.
func TestAgentWithoutBoard(t *testing.T) {
	t.Parallel()
	agent := start(t, "agent", helloDir(t, "alone"))
	agent.waitLine(t, regexp.MustCompile(`agent alone: no board configured .*running without a board`))
}

// TestBoardKilledAndRestarted: the board process is killed with SIGKILL and
// started again on the same store; the agent process, untouched, is back
// online under the same name. A token revoked from the command line while
// the board runs closes the agent's live link, and the agent exits.
func TestBoardKilledAndRestarted(t *testing.T) {
	t.Parallel()
	data := t.TempDir()
	boardProc, url := startBoard(t, data, "127.0.0.1:0")
	listen := strings.TrimPrefix(url, "http://")

	opTok, _ := runCmd(t, "board", "token", "operator", "--data", data, "--name", "ops", "--role", "viewer")
	agentTok, agentErr := runCmd(t, "board", "token", "agent", "--data", data, "--name", "phoenix")
	opTok, agentTok = strings.TrimSpace(opTok), strings.TrimSpace(agentTok)
	if strings.Count(opTok, ".") != 2 || strings.Count(agentTok, ".") != 2 || strings.ContainsAny(agentTok, " \n") {
		t.Fatalf("board token printed %q and %q, want one JWT each on stdout", opTok, agentTok)
	}
	tokenID := regexp.MustCompile(`token id ([0-9a-f]+)`).FindStringSubmatch(agentErr)
	if tokenID == nil {
		t.Fatalf("board token agent said %q on stderr, want the token id", agentErr)
	}

	agent := start(t, "agent", "--monitor", url, "--token", agentTok, helloDir(t, "phoenix"))
	first := agent.waitLine(t, regexp.MustCompile(`agent phoenix: linked to .* \(session (\w+)\)`))[1]
	agents := agentsClient(url, opTok)
	a := agentState(t, agents, "phoenix")
	if a.GetState() != boardv1.AgentState_AGENT_STATE_ONLINE || a.GetSession() != first {
		t.Fatalf("phoenix = %v, want online in session %s", a, first)
	}
	firstSeen := a.GetFirstSeenTime().AsTime()

	if err := boardProc.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = boardProc.cmd.Wait()
	agent.waitLine(t, regexp.MustCompile(`agent phoenix: link down`))

	_, url2 := startBoard(t, data, listen)
	if url2 != url {
		t.Fatalf("restarted board at %s, want %s", url2, url)
	}
	boardtest.Eventually(t, ceiling, "phoenix back online in a new session", func() bool {
		a := agentState(t, agents, "phoenix")
		return a.GetState() == boardv1.AgentState_AGENT_STATE_ONLINE && a.GetSession() != first && a.GetSession() != ""
	})
	if got := agentState(t, agents, "phoenix").GetFirstSeenTime().AsTime(); !got.Equal(firstSeen) {
		t.Errorf("first seen after restart = %v, want %v (the same agent)", got, firstSeen)
	}

	runCmd(t, "board", "token", "revoke", "--data", data, tokenID[1])
	boardtest.Eventually(t, ceiling, "phoenix offline after its token was revoked", func() bool {
		return agentState(t, agents, "phoenix").GetState() != boardv1.AgentState_AGENT_STATE_ONLINE
	})
	// No redial brings a revoked token back: the agent gives up, saying so.
	agent.waitLine(t, regexp.MustCompile(`^agent: link to .*: the board refused the agent's token \(unauthenticated: token revoked\); mint a token`))
	if code := exited(t, agent); code != 1 {
		t.Errorf("agent after its token was revoked: exit status %d, want 1", code)
	}
}

// TestBoardStopsGracefully: SIGTERM ends the board with status 0, its
// agents recorded offline in the store (seen by the next board).
func TestBoardStopsGracefully(t *testing.T) {
	t.Parallel()
	data := t.TempDir()
	boardProc, url := startBoard(t, data, "127.0.0.1:0")
	agentTok, _ := runCmd(t, "board", "token", "agent", "--data", data, "--name", "polite")
	agent := start(t, "agent", "--monitor", url, "--token", strings.TrimSpace(agentTok), helloDir(t, "polite"))
	agent.waitLine(t, regexp.MustCompile(`agent polite: linked to`))

	if err := boardProc.stop(t, syscall.SIGTERM); err != nil {
		t.Fatalf("board after SIGTERM: %v, want exit status 0", err)
	}
	boardProc.waitLine(t, regexp.MustCompile(`board stopped`))

	// Read what the stopped board left, before the agent can redial.
	out, _ := runCmd(t, "board", "token", "list", "--data", data)
	if !strings.Contains(out, "polite") {
		t.Errorf("token list = %q, want the agent's token in it", out)
	}
	store, err := store.Open(context.Background(), store.SQLiteDSN(data))
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	a, err := store.Agent.Query().Only(context.Background())
	if err != nil || a.Name != "polite" || a.Online {
		t.Errorf("stored agent after SIGTERM = %+v, %v; want polite, offline", a, err)
	}
}

// TestAgentValidate: exit 0 for a valid flow; 1 for an invalid one, with
// every problem, its code and its path.
func TestAgentValidate(t *testing.T) {
	t.Parallel()
	cmd := exec.Command(filepath.Join(bin, "agent"), "validate", example(t, "hello"))
	if out, err := cmd.CombinedOutput(); err != nil || !strings.Contains(string(out), "valid") {
		t.Errorf("agent validate examples/hello: %v\n%s", err, out)
	}

	dir := t.TempDir()
	bad := `{"version":"0.1","start":"x","state":{"a":{}},"nodes":[{"id":"x","handler":"h"},{"id":"y","handler":"h"}],"edges":[{"from":"x","to":"END"}]}`
	if err := os.WriteFile(filepath.Join(dir, "flow.json"), []byte(bad), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(filepath.Join(bin, "agent"), "validate", dir).CombinedOutput()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 1 {
		t.Fatalf("agent validate of an invalid flow: %v, want exit status 1\n%s", err, out)
	}
	for _, want := range []string{
		`state: FEATURE_TOO_NEW: Declaring state requires version "0.2" or later`,
		`nodes[1]: UNREACHABLE_NODE:`,
	} {
		if !strings.Contains(string(out), want) {
			t.Errorf("agent validate output lacks %q:\n%s", want, out)
		}
	}
}

// TestAgentValidateTriggers: the built agent checks the flow's trigger file
// beside the flow: exit 0 when it is right, 1 with each problem's file,
// path and code when it is not.
func TestAgentValidateTriggers(t *testing.T) {
	t.Parallel()
	dir := example(t, "hello")
	write := func(content string) {
		t.Helper()
		if err := os.WriteFile(filepath.Join(dir, "triggers.json"), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(`{"flow": "flow.json", "triggers": [{"id": "morning", "kind": "schedule", "schedule": "0 9 * * 1-5", "timeZone": "Europe/Paris", "input": {"who": "the team on {{time.weekday}}"}}]}`)
	out, err := exec.Command(filepath.Join(bin, "agent"), "validate", dir).CombinedOutput()
	if err != nil || !strings.Contains(string(out), "triggers.json: valid (1 trigger(s))") {
		t.Fatalf("agent validate with a valid trigger file: %v\n%s", err, out)
	}

	write(`{"flow": "flow.json", "triggers": [{"id": "morning", "kind": "schedule", "schedule": "0 9 * * 8", "timeZone": "Europe/Pariss", "input": {"whom": "{{headers.cookie}}"}}]}`)
	out, err = exec.Command(filepath.Join(bin, "agent"), "validate", dir).CombinedOutput()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 1 {
		t.Fatalf("agent validate with trigger problems: %v, want exit status 1\n%s", err, out)
	}
	for _, want := range []string{
		"flow.json: valid",
		`triggers.json: triggers[0].schedule: SCHEDULE_INVALID: the day of week field "8"`,
		"triggers.json: triggers[0].timeZone: TIME_ZONE_UNKNOWN:",
		"triggers.json: triggers[0].input.whom: INPUT_READS_UNKNOWN: {{headers.cookie}}: request headers are never offered",
		"triggers.json: triggers[0].input.whom: INPUT_UNKNOWN:",
		"triggers.json: triggers[0].input: INPUT_MISSING: the flow's input(s) who",
		"triggers.json: 5 problem(s)",
	} {
		if !strings.Contains(string(out), want) {
			t.Errorf("agent validate output lacks %q:\n%s", want, out)
		}
	}
}

// TestAgentCheck: readiness findings and the plan; exit 1 when not ready.
func TestAgentCheck(t *testing.T) {
	t.Parallel()
	out, err := exec.Command(filepath.Join(bin, "agent"), "check", example(t, "hello")).CombinedOutput()
	if err != nil {
		t.Fatalf("agent check examples/hello: %v\n%s", err, out)
	}
	for _, want := range []string{"Would write:", "handlers: -", "From the declaration: -", "flow.json: ready"} {
		if !strings.Contains(string(out), want) {
			t.Errorf("agent check output lacks %q:\n%s", want, out)
		}
	}
	dir := t.TempDir()
	undescribed := `{"version":"0.7","start":"a","nodes":[{"id":"a","handler":"h"}],"edges":[{"from":"a","to":"END"}]}`
	if err := os.WriteFile(filepath.Join(dir, "flow.json"), []byte(undescribed), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err = exec.Command(filepath.Join(bin, "agent"), "check", dir).CombinedOutput()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 1 || !strings.Contains(string(out), "NO_DESCRIPTION (problem)") || !strings.Contains(string(out), "not ready") {
		t.Errorf("agent check of an undescribed flow: %v\n%s", err, out)
	}
}

// example copies the example folder name into a folder of the test's
// own, for a command to run on: what an agent writes beside its flow
// (.symphonix/) must not land in the repository's examples, where the
// next person to run one would find the test's threads.
func example(t *testing.T, name string) string {
	t.Helper()
	return exampletest.Copy(t, filepath.Join("..", "..", "examples", name))
}

// refundDesk runs `agent run --json` on the refund desk copied to desk
// with answers on stdin, and returns the final state, or the exit error
// and stderr. The run's input is about order; none for order "" (the run
// waiting on the thread is resumed).
func refundDesk(t *testing.T, desk, thread, order, answers string) (state map[string]any, stderr string, err error) {
	t.Helper()
	args := []string{"run", "--json", "--thread", thread}
	if order != "" {
		args = append(args, "--input", "order_id="+order, "--input", "request=The mug arrived broken; I want my money back.")
	}
	cmd := exec.Command(filepath.Join(bin, "agent"), append(args, desk)...)
	cmd.Env = append(os.Environ(), "OPENAI_API_KEY=", "MONITOR_URL=")
	cmd.Stdin = strings.NewReader(answers)
	var out, errb strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		return nil, errb.String(), err
	}
	if err := json.Unmarshal([]byte(out.String()), &state); err != nil {
		t.Fatalf("agent run --json printed %q: %v", out.String(), err)
	}
	return state, errb.String(), nil
}

func threadName(t *testing.T) string {
	return strings.ReplaceAll(t.Name(), "/", "-") + fmt.Sprint(time.Now().UnixNano())
}

// TestRefundDeskApproved: the example runs end to end on the stand-in
// model with no key: it looks the order up through its MCP server, asks
// for approval showing the amount and the order, refunds, and answers.
func TestRefundDeskApproved(t *testing.T) {
	t.Parallel()
	state, stderr, err := refundDesk(t, example(t, "refund-desk"), threadName(t), "A-1001", "yes\n")
	if err != nil {
		t.Fatalf("agent run: %v\n%s", err, stderr)
	}
	refund, _ := state["refund"].(map[string]any)
	if refund["status"] != "refunded" || refund["amount"] != 49.9 || state["reply"] == "" {
		t.Errorf("final state = %v, want a refund of 49.9 and a reply", state)
	}
	for _, want := range []string{"model: stand-in", "waiting runs are kept in", "approval needed at pay: Refund 49.9 EUR on order A-1001", "order.amount     49.9"} {
		if !strings.Contains(stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, stderr)
		}
	}
}

// TestRefundDeskRejected: a no goes to onReject; the refund never ran.
func TestRefundDeskRejected(t *testing.T) {
	t.Parallel()
	state, stderr, err := refundDesk(t, example(t, "refund-desk"), threadName(t), "A-1002", "no\n")
	if err != nil {
		t.Fatalf("agent run: %v\n%s", err, stderr)
	}
	if _, refunded := state["refund"]; refunded || state["reply"] == "" {
		t.Errorf("final state = %v, want no refund and a reply", state)
	}
}

// TestRefundDeskResumesAfterRestart: a run paused at its approval is kept
// in the folder's waiting store; the process ends; a process with another
// order's input is refused, and a new process answers the waiting run and
// it completes.
func TestRefundDeskResumesAfterRestart(t *testing.T) {
	t.Parallel()
	desk, thread := example(t, "refund-desk"), threadName(t)
	_, stderr, err := refundDesk(t, desk, thread, "A-1001", "")
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 1 || !strings.Contains(stderr, "the run waits on thread") {
		t.Fatalf("first process: %v, want exit 1 with the run waiting\n%s", err, stderr)
	}
	_, stderr, err = refundDesk(t, desk, thread, "A-1002", "yes\n")
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 1 || !strings.Contains(stderr, "a run waits on the thread") ||
		!strings.Contains(stderr, "agent cancel --thread "+thread) {
		t.Fatalf("a process with another order's input: %v, want exit 1, refused, naming the waiting run\n%s", err, stderr)
	}
	state, stderr, err := refundDesk(t, desk, thread, "", "yes\n")
	if err != nil {
		t.Fatalf("second process: %v\n%s", err, stderr)
	}
	if !strings.Contains(stderr, "resuming the run waiting on thread") {
		t.Errorf("second process did not say it resumed:\n%s", stderr)
	}
	if refund, _ := state["refund"].(map[string]any); refund["status"] != "refunded" || refund["order_id"] != "A-1001" {
		t.Errorf("final state = %v, want the refund of A-1001 made", state)
	}
}

// TestAgentPausedRun: `agent pause` writes the folder's pause, and the
// next `agent run` starts no run, saying why, and exits 75; `agent
// resume` lets it run again.
func TestAgentPausedRun(t *testing.T) {
	t.Parallel()
	desk := example(t, "refund-desk")
	out, _ := runCmd(t, "agent", "pause", "--reason", "closing the books", desk)
	if !strings.HasPrefix(out, "agent refund-desk: paused by ") || !strings.Contains(out, "(on this machine): closing the books") {
		t.Errorf("agent pause said %q", out)
	}
	_, stderr, err := refundDesk(t, desk, threadName(t), "A-1001", "yes\n")
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 75 || !strings.Contains(stderr, "closing the books") {
		t.Fatalf("agent run while paused: %v, want exit 75 naming the reason\n%s", err, stderr)
	}
	runCmd(t, "agent", "resume", desk)
	if _, stderr, err := refundDesk(t, desk, threadName(t), "A-1001", "yes\n"); err != nil {
		t.Fatalf("agent run after the resume: %v\n%s", err, stderr)
	}
}

// startWithEnv is start with more of the environment set.
func startWithEnv(t *testing.T, env []string, name string, args ...string) *proc {
	t.Helper()
	cmd := exec.Command(filepath.Join(bin, name), args...)
	cmd.Env = append(append(os.Environ(), "MONITOR_URL=", "MONITOR_TOKEN="), env...)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = cmd.Stdout
	p := &proc{cmd: cmd, added: make(chan struct{}, 1), read: make(chan struct{})}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go p.readFrom(stdout)
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		if t.Failed() {
			t.Logf("%s output:\n%s", name, strings.Join(p.output(), "\n"))
		}
	})
	return p
}

// callAgent sends one request to a served agent's API and decodes the
// answer into out.
func callAgent(t *testing.T, method, url, body string, out any) int {
	t.Helper()
	var r io.Reader
	if body != "" {
		r = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, url, r)
	if err != nil {
		t.Fatal(err)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, url, err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, out); err != nil {
		t.Fatalf("%s %s = %d %s: %v", method, url, res.StatusCode, b, err)
	}
	return res.StatusCode
}

// TestAgentServe: `agent serve` on the refund desk says where it serves;
// a second `agent serve` on the same folder fails naming the first; the
// HTTP API takes a message to its approval and a yes to the refund, and
// the journal has the calls without their payloads; SIGTERM stops it with
// status 0 and the lock released.
func TestAgentServe(t *testing.T) {
	t.Parallel()
	desk := example(t, "refund-desk")
	agent := startWithEnv(t, []string{"OPENAI_API_KEY="}, "agent", "serve", desk)
	url := agent.waitLine(t, regexp.MustCompile(`^serving `+regexp.QuoteMeta(desk)+` on (http://127\.0\.0\.1:\d+)$`))[1]

	second := exec.Command(filepath.Join(bin, "agent"), "serve", desk)
	second.Env = append(os.Environ(), "MONITOR_URL=", "MONITOR_TOKEN=", "OPENAI_API_KEY=")
	out, err := second.CombinedOutput()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 1 {
		t.Errorf("a second agent serve on the folder: %v, want exit status 1\n%s", err, out)
	}
	for _, want := range []string{fmt.Sprintf("pid %d", agent.cmd.Process.Pid), url} {
		if !strings.Contains(string(out), want) {
			t.Errorf("a second agent serve said %q, want the first named (%s)", out, want)
		}
	}

	thread := threadName(t)
	type pending struct {
		Kind, Node, Question, Digest string
		Show                         map[string]any
	}
	var first struct {
		Thread  string
		State   map[string]any
		Pending *pending
	}
	status := callAgent(t, "POST", url+"/api/threads/"+thread+"/messages",
		`{"input": {"order_id": "A-1001", "request": "The mug arrived broken; I want my money back."}}`, &first)
	if status != 200 || first.Pending == nil || first.Pending.Kind != "approval" || first.Pending.Node != "pay" ||
		first.Pending.Show["order.amount"] != 49.9 || !strings.HasPrefix(first.Pending.Digest, "sha256:") {
		t.Fatalf("message = %d %+v, want the refund's approval showing 49.9 with a digest", status, first)
	}
	var conflict struct{ Error string }
	if status := callAgent(t, "POST", url+"/api/threads/"+thread+"/messages", `{"text": "A-1001"}`, &conflict); status != 409 || conflict.Error == "" {
		t.Errorf("a message to the waiting thread = %d %+v, want 409", status, conflict)
	}
	var done struct {
		State   map[string]any
		Reply   string
		Pending *pending
	}
	status = callAgent(t, "POST", url+"/api/threads/"+thread+"/answer", `{"answer": "yes"}`, &done)
	refund, _ := done.State["refund"].(map[string]any)
	if status != 200 || done.Pending != nil || refund["status"] != "refunded" || done.Reply == "" {
		t.Fatalf("answer yes = %d %+v, want the refund made and a reply", status, done)
	}
	var convs struct {
		Conversations []struct {
			Thread  string
			Waiting bool
		}
	}
	callAgent(t, "GET", url+"/api/conversations", "", &convs)
	found := false
	for _, c := range convs.Conversations {
		found = found || (c.Thread == thread && !c.Waiting)
	}
	if !found {
		t.Errorf("conversations = %+v, want %s, not waiting", convs, thread)
	}

	if err := agent.stop(t, syscall.SIGTERM); err != nil {
		t.Errorf("agent serve after SIGTERM: %v, want exit status 0", err)
	}
	if _, err := os.Stat(filepath.Join(desk, ".symphonix", "agent.lock")); !os.IsNotExist(err) {
		t.Errorf("the lock after SIGTERM: %v, want it gone", err)
	}

	journal, err := os.ReadFile(filepath.Join(desk, ".symphonix", "journal.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	var calls []string
	for _, line := range strings.Split(strings.TrimSpace(string(journal)), "\n") {
		var e map[string]any
		if err := json.Unmarshal([]byte(line), &e); err != nil {
			t.Fatalf("journal line %q: %v", line, err)
		}
		if e["thread"] != thread {
			continue
		}
		calls = append(calls, fmt.Sprint(e["kind"], " ", e["name"]))
		if _, ok := e["withheld"]; !ok || e["prompt"] != nil || e["args"] != nil || e["result"] != nil || e["reply"] != nil {
			t.Errorf("journal line %v, want its payloads withheld", e)
		}
	}
	if want := "tool orders.lookup_order,llm decide,tool orders.refund,llm answer"; strings.Join(calls, ",") != want {
		t.Errorf("journal calls = %q, want %s", calls, want)
	}
}

// TestAuditVerify: tokens minted and revoked from the command line are in
// the audit log, without the tokens themselves; board audit verify passes,
// and once the SQLite file is changed behind the board's back it exits 1
// and names the changed entry.
func TestAuditVerify(t *testing.T) {
	t.Parallel()
	data := t.TempDir()
	opsTok, _ := runCmd(t, "board", "token", "operator", "--create", "--data", data, "--name", "ops", "--role", "admin")
	agentTok, idLine := runCmd(t, "board", "token", "agent", "--data", data, "--name", "refunds")
	id := regexp.MustCompile(`token id ([0-9a-f]+)`).FindStringSubmatch(idLine)
	if id == nil {
		t.Fatalf("no token id in %q", idLine)
	}
	runCmd(t, "board", "token", "revoke", "--data", data, id[1])

	out, _ := runCmd(t, "board", "audit", "verify", "--data", data)
	if !strings.HasPrefix(out, "audit: 3 entries, chain intact\n") {
		t.Fatalf("board audit verify = %q, want 3 entries, chain intact", out)
	}
	list, _ := runCmd(t, "board", "audit", "list", "--data", data, "--output", "json")
	var entries []struct {
		Seq     int64  `json:"seq"`
		Action  string `json:"action"`
		Subject string `json:"subject"`
	}
	if err := json.Unmarshal([]byte(list), &entries); err != nil {
		t.Fatalf("board audit list --output json = %q: %v", list, err)
	}
	if len(entries) != 3 || entries[0].Action != "token.mint" || entries[2].Action != "token.revoke" || entries[2].Subject != id[1] {
		t.Fatalf("board audit list = %q, want two mints and a revoke", list)
	}
	for _, tok := range []string{opsTok, agentTok} {
		if strings.Contains(list, strings.TrimSpace(tok)) {
			t.Errorf("board audit list shows a token: %q", list)
		}
	}
	if page, _ := runCmd(t, "board", "audit", "list", "--data", data, "--after", "1", "--limit", "1"); !regexp.MustCompile(`^SEQ +AT .*\n2 +\S+ +cli +token\.mint `).MatchString(page) || strings.Count(page, "\n") != 2 {
		t.Errorf("board audit list --after 1 --limit 1 = %q, want a header and entry 2 alone", page)
	}

	db, err := sql.Open("sqlite", store.SQLiteDSN(data))
	if err != nil {
		t.Fatal(err)
	}
	_, err = db.ExecContext(t.Context(), `UPDATE audit_entries SET detail = '{"kind":"agent","name":"someone-else"}' WHERE seq = 2`)
	db.Close()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(filepath.Join(bin, "board"), "audit", "verify", "--data", data)
	var stdout, stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err = cmd.Run()
	if code := cmd.ProcessState.ExitCode(); err == nil || code != 1 {
		t.Fatalf("board audit verify after tampering: %v (exit %d), want exit status 1", err, code)
	}
	if want := "audit: entry 2: hash does not match its contents\n"; stdout.String() != want {
		t.Errorf("board audit verify after tampering = %q (stderr %q), want %q", stdout.String(), stderr.String(), want)
	}
}
