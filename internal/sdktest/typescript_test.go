// Package sdktest runs the TypeScript SDK (sdk/typescript) against a real
// board: built from a copy with npm, its digests checked against the Go
// agent's vectors, its example agent linked and its operator script
// deciding what the agent raised, over Connect and gRPC.
package sdktest

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/symphonix/symphonix/agentlink"
	boardv1 "github.com/symphonix/symphonix/api/symphonix/board/v1"
	"github.com/symphonix/symphonix/api/symphonix/board/v1/boardv1connect"
	"github.com/symphonix/symphonix/approvals"
	"github.com/symphonix/symphonix/identity"
	"github.com/symphonix/symphonix/internal/boardtest"
)

// within bounds every wait: it only bounds a failure, so it is generous for
// two cores shared with other work.
const within = 60 * time.Second

// sdk is the SDK's folder, from this package's.
const sdk = "../../sdk/typescript"

// TestTypeScriptAgentAndOperator builds the SDK, links its example agent
// to a board, decides the approval the agent raises with the example
// operator script over Connect, sees the agent print the decision and exit
// 0, lists the fleet page by page over gRPC and Connect, and does the
// round again with the agent and the script both on gRPC.
func TestTypeScriptAgentAndOperator(t *testing.T) {
	t.Parallel()
	npm := needNode(t)
	dir := copySDK(t)
	run(t, dir, nil, npm, "ci", "--ignore-scripts", "--no-audit", "--no-fund", "--prefer-offline")
	run(t, dir, nil, npm, "run", "build")
	vectors, err := filepath.Abs("../../jcs/testdata/digest-vectors.json")
	if err != nil {
		t.Fatal(err)
	}
	out := run(t, dir, []string{"SYMPHONIX_DIGEST_VECTORS=" + vectors}, npm, "test")
	if !regexp.MustCompile(`(?m)^# pass [1-9]`).MatchString(out) || !strings.Contains(out, "# fail 0") {
		t.Fatalf("npm test: want every test passed and none failed, got:\n%s", out)
	}

	b := boardtest.Start(t, boardtest.Options{PingInterval: 300 * time.Millisecond})
	ctx := t.Context()
	admin := boardv1connect.NewApprovalServiceClient(b.Client(b.OperatorToken("root", identity.RoleAdmin)))
	if _, err := admin.PutRule(ctx, &boardv1.PutRuleRequest{Rule: &boardv1.Rule{
		Agent: "ts-refund-desk", Node: "pay", Role: boardv1.Role_ROLE_APPROVER,
	}}); err != nil {
		t.Fatalf("PutRule: %v", err)
	}
	approver := b.OperatorToken("ann", identity.RoleApprover)
	helloFromGo(t, b, "go-desk")

	// The agent links, pings, asks who decides and raises its approval.
	agent := start(t, dir, []string{
		"SYMPHONIX_BOARD_URL=" + b.URL,
		"SYMPHONIX_AGENT_TOKEN=" + b.AgentToken("ts-refund-desk"),
		"SYMPHONIX_RUN=run-ts-1",
	}, "node", "examples/dist/agent.js")
	if line := agent.waitFor(t, "linked: session "); !strings.HasSuffix(line, ", protocol 3, ping every 300 ms") {
		t.Errorf("agent printed %q; want it linked on protocol 3, pinging as the welcome says (every 300 ms)", line)
	}
	agent.waitFor(t, "switches: on [] spoken=false")
	agent.waitFor(t, "pong 1")
	agent.waitFor(t, "who decides pay: GOVERNED")
	raised := regexp.MustCompile(`^raised (\S+): pending digest=(sha256:[0-9a-f]{64})$`).FindStringSubmatch(agent.waitFor(t, "raised "))
	if raised == nil {
		t.Fatalf("agent: want \"raised <id>: pending digest=sha256:…\", got:\n%s", agent.output())
	}
	id, digest := raised[1], raised[2]

	// What it sent is what the Go agent would have: the same build for the
	// same flow, the same digest for the same operation.
	flowJSON, err := os.ReadFile(filepath.Join(sdk, "examples", "flow.json"))
	if err != nil {
		t.Fatal(err)
	}
	flowID, err := agentlink.IdentityOf(flowJSON)
	if err != nil {
		t.Fatal(err)
	}
	got, err := b.Agents(approver).GetAgent(ctx, &boardv1.GetAgentRequest{Name: "ts-refund-desk"})
	if err != nil {
		t.Fatalf("GetAgent: %v", err)
	}
	if a := got.GetAgent(); a.GetState() != boardv1.AgentState_AGENT_STATE_ONLINE || a.GetBuild() != flowID.Build ||
		strings.Join(a.GetTools(), ",") != "orders.refund" || len(a.GetCapabilities()) != 0 || a.GetProtocol() != "3" {
		t.Errorf("the board's ts-refund-desk = %v; want it online, of build %s, declaring orders.refund, speaking protocol 3 and announcing no capability", a, flowID.Build)
	}
	wantDigest, err := approvals.Digest(map[string]any{"order_id": "A-1042", "amount": 5000, "currency": "EUR"},
		"The customer was charged twice for order A-1042.")
	if err != nil {
		t.Fatal(err)
	}
	if digest != wantDigest {
		t.Errorf("the agent's digest = %s, want approvals.Digest of the same operation, %s", digest, wantDigest)
	}
	held, err := admin.GetApproval(ctx, &boardv1.GetApprovalRequest{Id: id})
	if err != nil {
		t.Fatalf("GetApproval(%s): %v", id, err)
	}
	if a := held.GetApproval(); a.GetDigest() != digest || a.GetState() != boardv1.ApprovalState_APPROVAL_STATE_PENDING ||
		a.GetRun() != "run-ts-1" || a.GetAsk() != "Refund 5000 EUR on order A-1042?" {
		t.Errorf("the board's approval %s = %v; want it pending, for run-ts-1, asking %q, with digest %s", id, a, "Refund 5000 EUR on order A-1042?", digest)
	}

	// An approver decides it with the operator script, over Connect.
	operator := []string{"SYMPHONIX_BOARD_URL=" + b.URL, "SYMPHONIX_TOKEN=" + approver}
	out = run(t, dir, operator, "node", "examples/dist/operator.js", "pending")
	if !strings.Contains(out, "pending "+id+" agent=ts-refund-desk node=pay") {
		t.Errorf("operator.js pending: want %s listed, got:\n%s", id, out)
	}
	out = run(t, dir, operator, "node", "examples/dist/operator.js", "decide", id, "yes", "checked", "the", "order")
	if !strings.Contains(out, "decided "+id+": approved say=yes") {
		t.Errorf("operator.js decide: want %s approved, got:\n%s", id, out)
	}
	line := agent.waitFor(t, "decision ")
	if wantLine := fmt.Sprintf("decision %s: yes by ann reason=%q digest=%s", id, "checked the order", digest); line != wantLine {
		t.Errorf("agent printed %q, want %q", line, wantLine)
	}
	if err := agent.wait(); err != nil {
		t.Fatalf("agent: %v, want exit 0; it printed:\n%s", err, agent.output())
	}
	// It said goodbye, closing its side: the board records it offline.
	boardtest.Eventually(t, within, "ts-refund-desk offline", func() bool {
		res, err := b.Agents(approver).GetAgent(ctx, &boardv1.GetAgentRequest{Name: "ts-refund-desk"})
		return err == nil && res.GetAgent().GetState() == boardv1.AgentState_AGENT_STATE_OFFLINE
	})

	// The fleet, one agent a page, over gRPC and over Connect: the script
	// follows the board's page tokens to the end, as many pages as a Go
	// client reading the same way.
	pages := 0
	for token := ""; pages == 0 || token != ""; pages++ {
		res, err := b.Agents(approver).ListAgents(ctx, &boardv1.ListAgentsRequest{PageSize: 1, PageToken: token})
		if err != nil {
			t.Fatalf("ListAgents: %v", err)
		}
		token = res.GetNextPageToken()
	}
	for _, transport := range []string{"grpc", "connect"} {
		env := append([]string{"SYMPHONIX_TRANSPORT=" + transport, "SYMPHONIX_PAGE_SIZE=1"}, operator...)
		out := run(t, dir, env, "node", "examples/dist/operator.js", "agents")
		for _, want := range []string{
			"agent go-desk ", // online, or offline if its silence outlasted the board's patience
			"agent ts-refund-desk offline protocol=3 build=" + flowID.Build + "\n",
			fmt.Sprintf("agents: 2 in %d page", pages),
		} {
			if !strings.Contains(out, want) {
				t.Errorf("operator.js agents over %s: want %q, got:\n%s", transport, want, out)
			}
		}
	}

	// The same agent under another name, which no rule governs: the board
	// says so, and the agent leaves it to its chat without raising anything.
	free := filepath.Join(t.TempDir(), "flow.json")
	if err := os.WriteFile(free, bytes.Replace(flowJSON, []byte(`"ts-refund-desk"`), []byte(`"ts-free-desk"`), 1), 0o644); err != nil {
		t.Fatal(err)
	}
	out = run(t, dir, []string{
		"SYMPHONIX_BOARD_URL=" + b.URL,
		"SYMPHONIX_AGENT_TOKEN=" + b.AgentToken("ts-free-desk"),
		"SYMPHONIX_FLOW=" + free,
		"SYMPHONIX_TRANSPORT=grpc",
	}, "node", "examples/dist/agent.js")
	if !strings.Contains(out, "who decides pay: NOT_GOVERNED\nnot governed: the chat decides it") || strings.Contains(out, "raised ") {
		t.Errorf("agent ts-free-desk over gRPC: want it told not governed and raising nothing, got:\n%s", out)
	}

	// The whole round again over gRPC: the agent links and raises over
	// gRPC, and the approver says no over gRPC.
	agent = start(t, dir, []string{
		"SYMPHONIX_BOARD_URL=" + b.URL,
		"SYMPHONIX_AGENT_TOKEN=" + b.AgentToken("ts-refund-desk"),
		"SYMPHONIX_RUN=run-ts-2",
		"SYMPHONIX_TRANSPORT=grpc",
	}, "node", "examples/dist/agent.js")
	raised = regexp.MustCompile(`^raised (\S+): pending digest=(sha256:[0-9a-f]{64})$`).FindStringSubmatch(agent.waitFor(t, "raised "))
	if raised == nil {
		t.Fatalf("agent over gRPC: want \"raised <id>: pending digest=sha256:…\", got:\n%s", agent.output())
	}
	if raised[1] == id {
		t.Errorf("agent over gRPC raised %s for run-ts-2, the approval of run-ts-1", raised[1])
	}
	grpcOperator := append([]string{"SYMPHONIX_TRANSPORT=grpc"}, operator...)
	out = run(t, dir, grpcOperator, "node", "examples/dist/operator.js", "decide", raised[1], "no", "not", "this", "one")
	if !strings.Contains(out, "decided "+raised[1]+": rejected say=no") {
		t.Errorf("operator.js decide over gRPC: want %s rejected, got:\n%s", raised[1], out)
	}
	line = agent.waitFor(t, "decision ")
	if wantLine := fmt.Sprintf("decision %s: no by ann reason=%q digest=%s", raised[1], "not this one", raised[2]); line != wantLine {
		t.Errorf("agent over gRPC printed %q, want %q", line, wantLine)
	}
	if err := agent.wait(); err != nil {
		t.Fatalf("agent over gRPC: %v, want exit 0; it printed:\n%s", err, agent.output())
	}

	// A bad answer from the board reaches the script as the board's code.
	out, err = runErr(t, dir, operator, "node", "examples/dist/operator.js", "decide", id, "no")
	if err == nil || !strings.Contains(out, "board: FailedPrecondition") {
		t.Errorf("operator.js decide on a decided approval: %v, want exit 1 saying failed_precondition; got:\n%s", err, out)
	}
}

// needNode returns npm's path, and skips the test where node or npm is
// missing, except under CI, which must run it; so does -short outside CI.
func needNode(t *testing.T) string {
	t.Helper()
	ci := os.Getenv("CI") == "true"
	if testing.Short() && !ci {
		t.Skip("-short: the TypeScript SDK's build and run take a minute")
	}
	paths := map[string]string{}
	for _, name := range []string{"node", "npm"} {
		p, err := exec.LookPath(name)
		switch {
		case err == nil:
			paths[name] = p
		case ci:
			t.Fatalf("%s not on PATH; CI must have it", name)
		default:
			t.Skipf("%s not on PATH (outside CI): install Node.js 20 or later to run this test", name)
		}
	}
	return paths["npm"]
}

// copySDK copies sdk/typescript, less what npm and tsc write into it, into
// a temporary folder, so nothing the test does lands in the tree.
func copySDK(t *testing.T) string {
	t.Helper()
	dst := filepath.Join(t.TempDir(), "typescript")
	skip := map[string]bool{"node_modules": true, "dist": true}
	err := filepath.WalkDir(sdk, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(sdk, path)
		if err != nil {
			return err
		}
		switch {
		case d.IsDir() && skip[d.Name()]:
			return filepath.SkipDir
		case d.IsDir():
			return os.MkdirAll(filepath.Join(dst, rel), 0o755)
		case !d.Type().IsRegular():
			return nil
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dst, rel), data, 0o644)
	})
	if err != nil {
		t.Fatalf("copy %s: %v", sdk, err)
	}
	return dst
}

// command is name with args in dir, with env added to the test's.
func command(ctx context.Context, dir string, env []string, name string, args ...string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "npm_config_update_notifier=false", "NO_COLOR=1")
	cmd.Env = append(cmd.Env, env...)
	cmd.WaitDelay = 5 * time.Second
	return cmd
}

// run runs a command to its end and returns what it printed; failing to
// run or exiting non-zero fails the test.
func run(t *testing.T, dir string, env []string, name string, args ...string) string {
	t.Helper()
	out, err := runErr(t, dir, env, name, args...)
	if err != nil {
		t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
	}
	return out
}

// runErr runs a command to its end, within a few minutes, and returns what
// it printed and how it exited.
func runErr(t *testing.T, dir string, env []string, name string, args ...string) (string, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Minute)
	defer cancel()
	out, err := command(ctx, dir, env, name, args...).CombinedOutput()
	return string(out), err
}

// process is a command running beside the test, and every line it has
// printed so far.
type process struct {
	mu      sync.Mutex
	lines   []string
	ended   bool
	changed chan struct{} // closed and replaced when a line comes or it ends
	done    chan error
}

func start(t *testing.T, dir string, env []string, name string, args ...string) *process {
	t.Helper()
	cmd := command(t.Context(), dir, env, name, args...)
	pr, pw := io.Pipe()
	cmd.Stdout, cmd.Stderr = pw, pw
	p := &process{changed: make(chan struct{}), done: make(chan error, 1)}
	if err := cmd.Start(); err != nil {
		t.Fatalf("start %s: %v", name, err)
	}
	read := make(chan struct{})
	go func() {
		defer close(read)
		s := bufio.NewScanner(pr)
		for s.Scan() {
			p.update(func() { p.lines = append(p.lines, s.Text()) })
		}
	}()
	go func() {
		err := cmd.Wait()
		pw.Close()
		<-read
		p.update(func() { p.ended = true })
		p.done <- err
	}()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
	})
	return p
}

func (p *process) update(f func()) {
	p.mu.Lock()
	defer p.mu.Unlock()
	f()
	close(p.changed)
	p.changed = make(chan struct{})
}

// waitFor returns the first line the process printed that begins with
// prefix, waiting for it; it fails the test when the process ends or
// within passes first.
func (p *process) waitFor(t *testing.T, prefix string) string {
	t.Helper()
	timeout := time.After(within)
	for {
		p.mu.Lock()
		for _, line := range p.lines {
			if strings.HasPrefix(line, prefix) {
				p.mu.Unlock()
				return line
			}
		}
		ended, changed := p.ended, p.changed
		p.mu.Unlock()
		if ended {
			t.Fatalf("agent ended before printing %q; it printed:\n%s", prefix, p.output())
		}
		select {
		case <-changed:
		case <-timeout:
			t.Fatalf("agent did not print %q within %s; it printed:\n%s", prefix, within, p.output())
		}
	}
}

// wait waits for the process to end, within the ceiling.
func (p *process) wait() error {
	select {
	case err := <-p.done:
		return err
	case <-time.After(within):
		return fmt.Errorf("still running after %s", within)
	}
}

func (p *process) output() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return strings.Join(p.lines, "\n")
}

// helloFromGo links a second agent, from Go, so the fleet is two agents
// long: the board has seen it once it is welcomed.
func helloFromGo(t *testing.T, b *boardtest.Board, name string) {
	t.Helper()
	ctx, cancel := context.WithCancel(t.Context())
	t.Cleanup(cancel)
	client := boardv1connect.NewAgentLinkServiceClient(b.Client(b.AgentToken(name)))
	stream, err := client.Link(ctx)
	if err != nil {
		t.Fatalf("link %s: %v", name, err)
	}
	t.Cleanup(func() { stream.Close() })
	if err := stream.Send(&boardv1.LinkRequest{Kind: &boardv1.LinkRequest_Hello{Hello: &boardv1.Hello{
		Name: name, Protocol: agentlink.Protocol,
	}}}); err != nil {
		t.Fatalf("hello %s: %v", name, err)
	}
	res, err := stream.Receive()
	if err != nil || res.GetWelcome() == nil {
		t.Fatalf("link %s: %v, %v; want a welcome", name, res, err)
	}
}
