package node_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"connectrpc.com/connect/v2"

	"github.com/symphonix/symphonix/agentlink"
	boardv1 "github.com/symphonix/symphonix/api/symphonix/board/v1"
	"github.com/symphonix/symphonix/api/symphonix/board/v1/boardv1connect"
	"github.com/symphonix/symphonix/identity"
	"github.com/symphonix/symphonix/internal/boardtest"
	"github.com/symphonix/symphonix/internal/exampletest"
	"github.com/symphonix/symphonix/node"
)

// refundDesk is the example the tests serve and run. Each test copies its
// flow into a folder of its own, so the repository's folder is neither
// written nor locked.
const refundDesk = "../examples/refund-desk"

// orders is the refund desk's orders server, built once for the package.
var orders string

func TestMain(m *testing.M) {
	if os.Getenv(holdServer) != "" {
		// Started by a flow as its MCP server (holdFlow), not as tests.
		os.Exit(serveHold())
	}
	os.Exit(runTests(m))
}

func runTests(m *testing.M) int {
	tmp, err := os.MkdirTemp("", "node-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(tmp)
	if orders, err = exampletest.BuildOrders(tmp); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return m.Run()
}

// lines is a writer whose lines a test can wait for. It is safe for
// concurrent use, as Config.Stdout must be.
type lines struct {
	mu  sync.Mutex
	buf strings.Builder
}

func (l *lines) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.Write(p)
}

func (l *lines) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.String()
}

// find returns the submatches of the first whole line matching re.
func (l *lines) find(re *regexp.Regexp) []string {
	for line := range strings.Lines(l.String()) {
		if m := re.FindStringSubmatch(strings.TrimSuffix(line, "\n")); m != nil {
			return m
		}
	}
	return nil
}

// wait waits for a line matching re and returns its submatches.
func (l *lines) wait(t *testing.T, re *regexp.Regexp, within time.Duration) []string {
	t.Helper()
	deadline := time.Now().Add(within)
	for {
		if m := l.find(re); m != nil {
			return m
		}
		if time.Now().After(deadline) {
			t.Fatalf("no line matching %s within %s; the lines:\n%s", re, within, l)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// served is Serve running until the test stops it.
type served struct {
	out  *lines
	url  string
	done chan error
	stop context.CancelFunc
}

// startServe runs Serve with cfg (its Stdout the lines the test reads)
// and waits until it says where it serves. The test's end stops it.
func startServe(t *testing.T, cfg node.Config) *served {
	t.Helper()
	s := &served{out: &lines{}, done: make(chan error, 1)}
	cfg.Stdout = s.out
	ctx, cancel := context.WithCancel(context.Background())
	s.stop = cancel
	go func() { s.done <- node.Serve(ctx, cfg) }()
	t.Cleanup(func() {
		cancel()
		select {
		case <-s.done:
		case <-time.After(time.Minute):
			t.Error("Serve did not return within 20 s of its context ending")
		}
	})
	serving := regexp.MustCompile(`^serving ` + regexp.QuoteMeta(cfg.Dir) + ` on (http://127\.0\.0\.1:\d+)$`)
	deadline := time.Now().Add(30 * time.Second)
	for {
		if m := s.out.find(serving); m != nil {
			s.url = m[1]
			return s
		}
		select {
		case err := <-s.done:
			s.done <- err
			t.Fatalf("Serve returned %v before serving; the lines:\n%s", err, s.out)
		case <-time.After(10 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatalf("no serving line within 30 s; the lines:\n%s", s.out)
		}
	}
}

// shutdown ends Serve's context and returns what Serve returned.
func (s *served) shutdown(t *testing.T) error {
	t.Helper()
	s.stop()
	select {
	case err := <-s.done:
		s.done <- err // for the cleanup
		return err
	case <-time.After(time.Minute):
		t.Fatal("Serve did not return within 20 s of its context ending")
	}
	return nil
}

// call sends one request to the served API (as its operator: a client on
// this machine that is not a browser) and decodes the answer into out.
func call(t *testing.T, method, url, body string, out any) int {
	t.Helper()
	var r io.Reader
	if body != "" {
		r = strings.NewReader(body)
	}
	req, err := http.NewRequestWithContext(t.Context(), method, url, r)
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

// askForRefund is the customer's message about order A-1001.
const askForRefund = `{"input": {"order_id": "A-1001", "request": "The mug arrived broken; I want my money back."}}`

// turn is what the served API answers a message or an answer with, and a
// thread's state, as far as the tests read it.
type turn struct {
	State   map[string]any
	Reply   string
	Waiting bool
	Pending *struct {
		Kind, Node, Question, Digest string
		Show                         map[string]any
	}
	Decides *struct{ Who, Why string }
	Decided *struct {
		State             map[string]any
		Reply, Ended, Why string
	}
	Error string
}

// governance is a board with a rule that governs every approval (one
// yes from an approver), and clients to switch tools and decide.
type governance struct {
	bt       *boardtest.Board
	tools    boardv1connect.ToolServiceClient         // an admin's
	convs    boardv1connect.ConversationServiceClient // an admin's
	approver boardv1connect.ApprovalServiceClient
	agents   boardv1connect.AgentServiceClient
}

func startGovernance(t *testing.T) *governance {
	t.Helper()
	bt := boardtest.Start(t, boardtest.Options{})
	admin := bt.Client(bt.OperatorToken("root", identity.RoleAdmin))
	if _, err := boardv1connect.NewApprovalServiceClient(admin).PutRule(t.Context(),
		&boardv1.PutRuleRequest{Rule: &boardv1.Rule{Agent: "*", Node: "*", Role: boardv1.Role_ROLE_APPROVER}}); err != nil {
		t.Fatalf("PutRule: %v", err)
	}
	return &governance{
		bt:       bt,
		tools:    boardv1connect.NewToolServiceClient(admin),
		convs:    boardv1connect.NewConversationServiceClient(admin),
		approver: boardv1connect.NewApprovalServiceClient(bt.Client(bt.OperatorToken("ada", identity.RoleApprover))),
		agents:   bt.Agents(bt.OperatorToken("ops", identity.RoleViewer)),
	}
}

// approvalOf waits for the board's one pending approval on thread.
func (g *governance) approvalOf(t *testing.T, thread string) *boardv1.Approval {
	t.Helper()
	var found *boardv1.Approval
	boardtest.Eventually(t, time.Minute, "the approval of thread "+thread+" on the board", func() bool {
		res, err := g.approver.ListApprovals(t.Context(), &boardv1.ListApprovalsRequest{Agent: "refund-desk", State: boardv1.ApprovalState_APPROVAL_STATE_PENDING})
		if err != nil {
			t.Fatal(err)
		}
		for _, a := range res.GetApprovals() {
			if a.GetThread() == thread {
				found = a
			}
		}
		return found != nil
	})
	return found
}

// switchOn switches on, on g's board, the tools of the desk in dir
// (switchOn).
func (g *governance) switchOn(t *testing.T, dir string, tools ...string) {
	t.Helper()
	switchOn(t, g.bt, dir, tools...)
}

// switchOn switches on, on bt, the tools of the desk in dir, as an
// operator does for an agent that has linked before: the desk says hello
// once (from no folder of its own: nothing is remembered in dir, and it
// announces no capabilities), so the board knows what it declares.
func switchOn(t *testing.T, bt *boardtest.Board, dir string, on ...string) {
	t.Helper()
	id, err := agentlink.ReadIdentity(dir)
	if err != nil {
		t.Fatal(err)
	}
	up := make(chan struct{}, 1)
	link, err := agentlink.New(agentlink.Config{
		BoardURL: bt.URL, Token: bt.AgentToken(id.Name), Identity: id,
		OnState: func(s agentlink.State) {
			if s.Up {
				select {
				case up <- struct{}{}:
				default:
				}
			}
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = link.Run(ctx)
	}()
	select {
	case <-up:
	case <-time.After(time.Minute):
		t.Fatal("the desk's link did not come up within a minute")
	}
	cancel()
	<-done
	tools := boardv1connect.NewToolServiceClient(bt.Client(bt.OperatorToken("root", identity.RoleAdmin)))
	if _, err := tools.ReplaceSwitches(t.Context(), &boardv1.ReplaceSwitchesRequest{Agent: id.Name, On: on}); err != nil {
		t.Fatalf("ReplaceSwitches: %v", err)
	}
}

// agentOn is what the board's agents client says of the agent name; nil
// while the board has never seen it.
func agentOn(t *testing.T, agents boardv1connect.AgentServiceClient, name string) *boardv1.Agent {
	t.Helper()
	res, err := agents.GetAgent(t.Context(), &boardv1.GetAgentRequest{Name: name})
	if connect.CodeOf(err) == connect.CodeNotFound {
		return nil
	}
	if err != nil {
		t.Fatalf("GetAgent %s: %v", name, err)
	}
	return res.GetAgent()
}

// healthHistory is every round of the agent name's health the board keeps,
// newest first (a test's agent reports far fewer than a page).
func healthHistory(t *testing.T, agents boardv1connect.AgentServiceClient, name string) []*boardv1.HealthRound {
	t.Helper()
	res, err := agents.GetHealthHistory(t.Context(), &boardv1.GetHealthHistoryRequest{Name: name, PageSize: 1000})
	if connect.CodeOf(err) == connect.CodeNotFound {
		return nil
	}
	if err != nil {
		t.Fatalf("GetHealthHistory %s: %v", name, err)
	}
	if res.GetNextPageToken() != "" {
		t.Fatalf("GetHealthHistory %s: more than a page of rounds", name)
	}
	return res.GetRounds()
}

// state is the state of the approval id on the board.
func (g *governance) state(t *testing.T, id string) string {
	t.Helper()
	res, err := g.approver.GetApproval(t.Context(), &boardv1.GetApprovalRequest{Id: id})
	if err != nil {
		t.Fatal(err)
	}
	return strings.ToLower(strings.TrimPrefix(res.GetApproval().GetState().String(), "APPROVAL_STATE_"))
}

// approve says yes to a on the board.
func (g *governance) approve(t *testing.T, a *boardv1.Approval) {
	t.Helper()
	if _, err := g.approver.Decide(t.Context(), &boardv1.DecideRequest{
		Id: a.GetId(), Say: boardv1.Say_SAY_YES, Digest: a.GetDigest(), Reason: "checked the order"}); err != nil {
		t.Fatalf("Decide yes: %v", err)
	}
}

// deskDir is a refund desk of the test's own, its orders server the one
// built for the package.
func deskDir(t *testing.T) string {
	t.Helper()
	return exampletest.RefundDesk(t, refundDesk, orders)
}
