package e2e

import (
	"context"
	"encoding/json"
	"os/exec"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"

	"connectrpc.com/connect/v2"

	boardv1 "github.com/symphonix/symphonix/api/symphonix/board/v1"
	"github.com/symphonix/symphonix/api/symphonix/board/v1/boardv1connect"
	"github.com/symphonix/symphonix/approvals"
	"github.com/symphonix/symphonix/internal/boardtest"
	"github.com/symphonix/symphonix/internal/exampletest"
)

// The orders server of the refund desk, built once for the tests that run
// the desk with a refund they can read afterwards.
var (
	ordersOnce sync.Once
	ordersBin  string
	ordersErr  error
)

// governedDesk is a refund desk of the test's own (exampletest.RefundDesk),
// its orders server built once for the tests.
func governedDesk(t *testing.T) string {
	t.Helper()
	ordersOnce.Do(func() { ordersBin, ordersErr = exampletest.BuildOrders(bin) })
	if ordersErr != nil {
		t.Fatal(ordersErr)
	}
	return exampletest.RefundDesk(t, "../../examples/refund-desk", ordersBin)
}

// governance is a board process with a catch-all rule (one yes from an
// approver), an approver's client, and a token for the refund desk.
type governance struct {
	board     *proc
	url, data string
	rule      string // the rule's id
	approver  boardv1connect.ApprovalServiceClient
	tools     boardv1connect.ToolServiceClient // an admin's
	deskToken string
}

func startGovernance(t *testing.T) *governance {
	t.Helper()
	data := t.TempDir()
	board, url := startBoard(t, data, "127.0.0.1:0")
	mint := func(args ...string) string {
		out, _ := runCmd(t, "board", append([]string{"token"}, append(args, "--data", data)...)...)
		return strings.TrimSpace(out)
	}
	adminTok := mint("operator", "--name", "root", "--role", "admin")
	admin := boardv1connect.NewApprovalServiceClient(boardtest.NewClient(url, adminTok))
	put, err := admin.PutRule(t.Context(), &boardv1.PutRuleRequest{Rule: &boardv1.Rule{Agent: "*", Node: "*", Role: boardv1.Role_ROLE_APPROVER}})
	if err != nil {
		t.Fatal(err)
	}
	return &governance{
		board:     board,
		url:       url,
		data:      data,
		rule:      put.GetRule().GetId(),
		tools:     boardv1connect.NewToolServiceClient(boardtest.NewClient(url, adminTok)),
		approver:  boardv1connect.NewApprovalServiceClient(boardtest.NewClient(url, mint("operator", "--name", "ada", "--role", "approver"))),
		deskToken: mint("agent", "--name", "refund-desk"),
	}
}

// operatorToken mints an operator token from the command line.
func (g *governance) operatorToken(t *testing.T, name, role string) string {
	t.Helper()
	out, _ := runCmd(t, "board", "token", "operator", "--data", g.data, "--name", name, "--role", role)
	return strings.TrimSpace(out)
}

// serveDesk runs `agent serve --monitor` on desk, waits until it serves
// and is linked to the board, switches its two tools on (a board that
// never spoke switches nothing on) and waits until the agent has heard;
// it returns the process and the API's URL.
func (g *governance) serveDesk(t *testing.T, desk string) (*proc, string) {
	t.Helper()
	agent := startWithEnv(t, []string{"OPENAI_API_KEY="}, "agent", "serve", "--monitor", g.url, "--token", g.deskToken, desk)
	url := agent.waitLine(t, regexp.MustCompile(`^serving .* on (http://127\.0\.0\.1:\d+)$`))[1]
	agent.waitLine(t, regexp.MustCompile(`^agent refund-desk: linked to `))
	on := []string{"orders.lookup_order", "orders.refund"}
	if _, err := g.tools.ReplaceSwitches(t.Context(), &boardv1.ReplaceSwitchesRequest{Agent: "refund-desk", On: on}); err != nil {
		t.Fatalf("ReplaceSwitches(refund-desk, %v): %v", on, err)
	}
	agent.waitLine(t, regexp.MustCompile(`^agent refund-desk: tools: the board switched on 2: orders.lookup_order, orders.refund$`))
	return agent, url
}

// approvalOf waits for the board's one approval on thread and returns it.
// shownOf is what the approval shows, as the agent sent it.
func shownOf(t *testing.T, a *boardv1.Approval) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal([]byte(a.GetShowJson()), &m); err != nil {
		t.Fatalf("approval %s: show_json: %v", a.GetId(), err)
	}
	return m
}

func (g *governance) approvalOf(t *testing.T, thread string) *boardv1.Approval {
	t.Helper()
	var found *boardv1.Approval
	boardtest.Eventually(t, ceiling, "the approval of thread "+thread+" on the board", func() bool {
		res, err := g.approver.ListApprovals(t.Context(), &boardv1.ListApprovalsRequest{Agent: "refund-desk"})
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for _, a := range res.GetApprovals() {
			if a.GetThread() == thread {
				found, n = a, n+1
			}
		}
		if n > 1 {
			t.Fatalf("%d approvals on the board for thread %s, want one", n, thread)
		}
		return n == 1
	})
	return found
}

// deskTurn is a turn of the served API (serve.Turn), as far as the tests
// read it.
type deskTurn struct {
	Thread  string
	State   map[string]any
	Reply   string
	Waiting bool
	Pending *struct {
		Kind, Node, Question, Digest string
		Show                         map[string]any
	}
	Decides *struct{ Who, Why, Rule string }
	// Decided: GET /api/threads/{thread} only.
	Decided *struct {
		State                      map[string]any
		Reply, Ended, Why, Receipt string
	}
	Error string
}

// checkFinishedByTheBoard fails t unless the thread, after the board's
// decision, waits for nothing and says the decision finished the run with
// the refund made and a reply. The agent prints its line about the
// decision before the API has the outcome: it is waited for.
func checkFinishedByTheBoard(t *testing.T, api, thread string) {
	t.Helper()
	var th deskTurn
	// What the decision came to is kept as the run resumes; the thread
	// stops waiting once the run has finished.
	boardtest.Eventually(t, ceiling, "thread "+thread+" says what the decision came to, and waits no more", func() bool {
		th = threadState(t, api, thread)
		return th.Decided != nil && !th.Waiting && th.Pending == nil && th.Decides == nil
	})
	if th.Waiting || th.Pending != nil || th.Decides != nil {
		t.Errorf("thread after the decision = %+v, want nothing waiting", th)
	}
	d := th.Decided
	if d == nil {
		t.Fatalf("thread after the decision = %+v, want what the decision came to", th)
	}
	refund, _ := d.State["refund"].(map[string]any)
	if d.Ended != "" || refund["status"] != "refunded" || refund["amount"] != 49.9 || d.Reply == "" {
		t.Errorf("decided = %+v, want the run finished with the refund of 49.9 and a reply", *d)
	}
	if strings.Count(d.Receipt, ".") != 2 {
		t.Errorf("decided receipt = %q, want the board's receipt kept with the run", d.Receipt)
	}
}

// askForRefund posts the customer's message about A-1001 on thread and
// checks that the run waits at the refund's approval, decided on the board
// under rule.
func askForRefund(t *testing.T, api, thread, rule string) deskTurn {
	t.Helper()
	var turn deskTurn
	status := callAgent(t, "POST", api+"/api/threads/"+thread+"/messages",
		`{"input": {"order_id": "A-1001", "request": "The mug arrived broken; I want my money back."}}`, &turn)
	if status != 200 || turn.Pending == nil || turn.Pending.Kind != "approval" || turn.Pending.Node != "pay" ||
		turn.Pending.Show["order.amount"] != 49.9 || !strings.HasPrefix(turn.Pending.Digest, "sha256:") {
		t.Fatalf("message = %d %+v, want the refund's approval showing 49.9 with a digest", status, turn)
	}
	if d := turn.Decides; d == nil || d.Who != "board" || d.Rule != rule || d.Why == "" {
		t.Fatalf("message: decides = %+v, want the board, under rule %s, with why", d, rule)
	}
	return turn
}

// threadState is GET /api/threads/{thread}.
func threadState(t *testing.T, api, thread string) deskTurn {
	t.Helper()
	var th deskTurn
	if status := callAgent(t, "GET", api+"/api/threads/"+thread, "", &th); status != 200 {
		t.Fatalf("GET thread %s = %d %+v", thread, status, th)
	}
	return th
}

// decidedLines counts the agent's lines saying the board's decision
// finished the run on thread.
func decidedLines(p *proc, thread string) int {
	n := 0
	for _, l := range p.output() {
		if l == "thread "+thread+": the board decided; the run finished" {
			n++
		}
	}
	return n
}

// TestGovernedRefundDecidedOnTheBoard: the refund desk served with a board
// whose rule governs every approval: the refund's approval is the board's
// (decides: board); a yes in the chat is refused with 409 and moves no
// money; an approver's yes on the board resumes the run by itself, and the
// orders server makes the refund, once.
func TestGovernedRefundDecidedOnTheBoard(t *testing.T) {
	t.Parallel()
	g := startGovernance(t)
	desk := governedDesk(t)
	agent, api := g.serveDesk(t, desk)
	thread := threadName(t)
	turn := askForRefund(t, api, thread, g.rule)

	var refused deskTurn
	status := callAgent(t, "POST", api+"/api/threads/"+thread+"/answer", `{"answer": "yes"}`, &refused)
	th := threadState(t, api, thread)
	if !th.Waiting || th.Pending == nil || th.Decides == nil || th.Decides.Who != "board" || th.Decides.Rule != g.rule || th.Pending.Digest != turn.Pending.Digest {
		t.Fatalf("thread after the refused answer = %+v, want waiting on the board under rule %s", th, g.rule)
	}
	if status != 409 || !strings.Contains(refused.Error, th.Decides.Why) || !strings.Contains(refused.Error, g.rule) {
		t.Errorf("answer yes in the chat = %d %q, want 409 naming why: %q", status, refused.Error, th.Decides.Why)
	}
	if refunds := exampletest.Refunds(t, desk); len(refunds) != 0 {
		t.Fatalf("refunds made after the refused answer = %v, want none", refunds)
	}

	a := g.approvalOf(t, thread)
	if a.GetState() != boardv1.ApprovalState_APPROVAL_STATE_PENDING || a.GetDigest() != turn.Pending.Digest || a.GetNode() != "pay" || a.GetRuleId() != g.rule ||
		shownOf(t, a)["order.amount"] != 49.9 {
		t.Fatalf("approval on the board = %v, want pending at pay, digest %s, rule %s, showing 49.9", a, turn.Pending.Digest, g.rule)
	}
	res, err := g.approver.Decide(t.Context(), &boardv1.DecideRequest{Id: a.GetId(), Say: boardv1.Say_SAY_YES, Digest: a.GetDigest(), Reason: "the mug was broken"})
	if err != nil || res.GetApproval().GetState() != boardv1.ApprovalState_APPROVAL_STATE_APPROVED {
		t.Fatalf("Decide(yes) = %v, %v; want approved", res, err)
	}
	agent.waitLine(t, regexp.MustCompile(`^thread `+regexp.QuoteMeta(thread)+`: the board decided; the run finished$`))
	checkFinishedByTheBoard(t, api, thread)
	exampletest.CheckRefundedOnce(t, desk)
	// The calls of the run the board's decision resumed are the thread's
	// too.
	if got, want := strings.Join(exampletest.JournalCalls(t, desk, thread), ","), "tool orders.lookup_order,llm decide,tool orders.refund,llm answer"; got != want {
		t.Errorf("journal calls for the thread = %s, want %s (calls with no thread: %s)", got, want, exampletest.JournalCalls(t, desk, ""))
	}
}

// TestAgentKilledWhileWaiting: the agent process is killed with SIGKILL
// while its run waits for the board; the approver decides while it is
// down; `agent serve` started again on the same folder is given the
// decision and acts on it exactly once: one refund, one "the board
// decided" line, the run finished, and the approval approved on the board.
func TestAgentKilledWhileWaiting(t *testing.T) {
	t.Parallel()
	g := startGovernance(t)
	desk := governedDesk(t)
	first, api := g.serveDesk(t, desk)
	thread := threadName(t)
	turn := askForRefund(t, api, thread, g.rule)
	a := g.approvalOf(t, thread)
	if a.GetState() != boardv1.ApprovalState_APPROVAL_STATE_PENDING || a.GetDigest() != turn.Pending.Digest {
		t.Fatalf("approval on the board = %v, want pending with digest %s", a, turn.Pending.Digest)
	}

	if err := first.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = first.cmd.Wait()
	agents := agentsClient(g.url, g.operatorToken(t, "vic", "viewer"))
	boardtest.Eventually(t, ceiling, "refund-desk offline after SIGKILL", func() bool {
		return agentState(t, agents, "refund-desk").GetState() != boardv1.AgentState_AGENT_STATE_ONLINE
	})
	res, err := g.approver.Decide(t.Context(), &boardv1.DecideRequest{Id: a.GetId(), Say: boardv1.Say_SAY_YES, Digest: a.GetDigest()})
	if err != nil || res.GetApproval().GetState() != boardv1.ApprovalState_APPROVAL_STATE_APPROVED {
		t.Fatalf("Decide(yes) while the agent is down = %v, %v; want approved", res, err)
	}
	if refunds := exampletest.Refunds(t, desk); len(refunds) != 0 {
		t.Fatalf("refunds made while the agent was down = %v, want none", refunds)
	}

	second, api := g.serveDesk(t, desk)
	second.waitLine(t, regexp.MustCompile(`^thread `+regexp.QuoteMeta(thread)+`: the board decided; the run finished$`))
	// The decision reaches the new process twice: pushed by the board when
	// the link comes up, and in the answer to the re-ask of what it holds,
	// which the board sends after the push. Once it has re-asked, it has
	// been given the decision every way it will be.
	second.waitLine(t, regexp.MustCompile(`msg="re-asked held approvals"`))
	checkFinishedByTheBoard(t, api, thread)
	// Stopping, the agent carries every decision it was given through to
	// its end, and says what it came to, before it exits.
	if err := second.stop(t, syscall.SIGTERM); err != nil {
		t.Errorf("agent serve after SIGTERM: %v, want exit status 0", err)
	}
	if n := decidedLines(second, thread); n != 1 {
		t.Errorf("%d lines saying the board decided, want 1:\n%s", n, strings.Join(second.output(), "\n"))
	}
	if n := decidedLines(first, thread); n != 0 {
		t.Errorf("the killed agent said the board decided %d times, want 0", n)
	}
	for _, l := range second.output() {
		if strings.Contains(l, "thread "+thread+": after the board's decision") {
			t.Errorf("agent said %q, want the run finished without an error", l)
		}
	}
	exampletest.CheckRefundedOnce(t, desk)
	// Counted with or without their thread: a resumed run's calls are
	// journalled without it (TestGovernedRefundDecidedOnTheBoard).
	calls := append(exampletest.JournalCalls(t, desk, thread), exampletest.JournalCalls(t, desk, "")...)
	if n := strings.Count(strings.Join(calls, ","), "tool orders.refund"); n != 1 {
		t.Errorf("the journal has %d refund calls, want 1: %s", n, calls)
	}
	got, err := g.approver.GetApproval(context.Background(), &boardv1.GetApprovalRequest{Id: a.GetId()})
	if err != nil || got.GetApproval().GetState() != boardv1.ApprovalState_APPROVAL_STATE_APPROVED {
		t.Errorf("approval after the restart = %v, %v; want approved", got, err)
	}
}

// TestGovernedDecisionForAnotherOperationIsNotPerformed: an approver's yes
// made for another operation than the one the refund desk raised (a
// digest of the same order with another amount: what a stale screen
// shows) is refused by the board as a failed precondition; the approval
// stays pending, the run keeps waiting and no money moves. The yes for
// the operation raised is then acted on as usual.
//
// The agent's own refusal of a decision whose digest is not the one it
// holds cannot be reached through the real board, which refuses first; it
// is tested in governed/governed_test.go.
func TestGovernedDecisionForAnotherOperationIsNotPerformed(t *testing.T) {
	t.Parallel()
	g := startGovernance(t)
	desk := governedDesk(t)
	agent, api := g.serveDesk(t, desk)
	thread := threadName(t)
	turn := askForRefund(t, api, thread, g.rule)
	a := g.approvalOf(t, thread)

	show := shownOf(t, a)
	show["order.amount"] = 5000.0
	other, err := approvals.Digest(show, a.GetAccount())
	if err != nil {
		t.Fatal(err)
	}
	if other == a.GetDigest() {
		t.Fatalf("the other operation's digest is the raised one's, %s", other)
	}
	_, err = g.approver.Decide(t.Context(), &boardv1.DecideRequest{Id: a.GetId(), Say: boardv1.Say_SAY_YES, Digest: other})
	if connect.CodeOf(err) != connect.CodeFailedPrecondition {
		t.Fatalf("Decide(yes) for another digest: %v, want failed_precondition", err)
	}
	got, err := g.approver.GetApproval(t.Context(), &boardv1.GetApprovalRequest{Id: a.GetId()})
	if err != nil || got.GetApproval().GetState() != boardv1.ApprovalState_APPROVAL_STATE_PENDING {
		t.Errorf("approval after the refused decision = %v, %v; want pending", got, err)
	}
	if th := threadState(t, api, thread); !th.Waiting || th.Pending == nil || th.Pending.Digest != turn.Pending.Digest {
		t.Errorf("thread after the refused decision = %+v, want waiting for %s", th, turn.Pending.Digest)
	}
	if refunds := exampletest.Refunds(t, desk); len(refunds) != 0 {
		t.Fatalf("refunds made after a decision for another operation = %v, want none", refunds)
	}

	if _, err := g.approver.Decide(t.Context(), &boardv1.DecideRequest{Id: a.GetId(), Say: boardv1.Say_SAY_YES, Digest: a.GetDigest()}); err != nil {
		t.Fatalf("Decide(yes) for the raised digest: %v", err)
	}
	agent.waitLine(t, regexp.MustCompile(`^thread `+regexp.QuoteMeta(thread)+`: the board decided; the run finished$`))
	exampletest.CheckRefundedOnce(t, desk)
	// Decisions reach the agent in the order the board made them, and the
	// agent, stopping, carries each it was given through to its end before
	// it exits: had the refused one reached it, its output would say so.
	if err := agent.stop(t, syscall.SIGTERM); err != nil {
		t.Errorf("agent serve after SIGTERM: %v, want exit status 0", err)
	}
	if n := decidedLines(agent, thread); n != 1 {
		t.Errorf("the agent said the board decided %d times, want once:\n%s", n, strings.Join(agent.output(), "\n"))
	}
	for _, l := range agent.output() {
		if strings.Contains(l, "a decision for another operation") || strings.Contains(l, "a decision refused") {
			t.Errorf("agent said %q, want no decision but the one for the operation raised", l)
		}
	}
}

// TestAgentRunWaitsForTheBoard: `agent run --monitor` at a terminal, the
// refund governed by the board: the run says the organisation decides,
// reads no answer from standard input, waits, and finishes with the refund
// when an approver says yes on the board.
func TestAgentRunWaitsForTheBoard(t *testing.T) {
	t.Parallel()
	g := startGovernance(t)
	desk := governedDesk(t)
	on := []string{"orders.lookup_order", "orders.refund"}
	// The agent must have linked once for the board to know what it declares.
	serving, _ := g.serveDesk(t, desk)
	if err := serving.cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = serving.cmd.Wait()

	run := startWithEnv(t, []string{"OPENAI_API_KEY="}, "agent", "run", "--json", "--thread", "terminal",
		"--monitor", g.url, "--token", g.deskToken,
		"--input", "order_id=A-1001", "--input", "request=The mug arrived broken; I want my money back.", desk)
	run.waitLine(t, regexp.MustCompile(`^agent refund-desk: tools: the board switched on 2: `+regexp.QuoteMeta(strings.Join(on, ", "))+`$`))
	// The run starts once the board has said which tools are on: its link
	// is up, and the board is asked who decides.
	run.waitLine(t, regexp.MustCompile(`^the organisation decides this on the board`))
	if refunds := exampletest.Refunds(t, desk); len(refunds) != 0 {
		t.Fatalf("refunds before the board decided: %v", refunds)
	}
	a := g.approvalOf(t, "terminal")
	if _, err := g.approver.Decide(t.Context(), &boardv1.DecideRequest{Id: a.GetId(), Say: boardv1.Say_SAY_YES, Digest: a.GetDigest()}); err != nil {
		t.Fatal(err)
	}
	// --json: the final state alone on stdout, once the run has finished.
	line := run.waitLine(t, regexp.MustCompile(`^(\{.*\})$`))[1]
	var state map[string]any
	if err := json.Unmarshal([]byte(line), &state); err != nil {
		t.Fatal(err)
	}
	if err := run.cmd.Wait(); err != nil {
		t.Fatalf("agent run after the board's yes: %v", err)
	}
	if refund, _ := state["refund"].(map[string]any); refund["status"] != "refunded" {
		t.Fatalf("final state %v, want the refund made", state)
	}
	exampletest.CheckRefundedOnce(t, desk)
}

// TestRestartedWithoutTheBoard: an approval raised to the board stays the
// board's when the agent is run again without one: `agent run` answering
// yes on standard input exits 1 saying why the run waits, and refunds
// nothing. `agent cancel` ends the run, and the board, told when the agent
// is served linked again, shows the approval cancelled by the agent.
func TestRestartedWithoutTheBoard(t *testing.T) {
	t.Parallel()
	g := startGovernance(t)
	desk := governedDesk(t)
	const thread = "g1"
	agent, api := g.serveDesk(t, desk)
	askForRefund(t, api, thread, g.rule)
	a := g.approvalOf(t, thread)
	if err := agent.stop(t, syscall.SIGTERM); err != nil {
		t.Fatalf("agent serve after SIGTERM: %v", err)
	}

	_, stderr, err := refundDesk(t, desk, thread, "", "yes\n")
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 1 ||
		!strings.Contains(stderr, "the organisation decides this on the board") || !strings.Contains(stderr, "no board is configured") ||
		!strings.Contains(stderr, "agent cancel --thread "+thread) {
		t.Fatalf("agent run without the board: %v, want exit 1, the run waiting for the board\n%s", err, stderr)
	}
	if refunds := exampletest.Refunds(t, desk); len(refunds) != 0 {
		t.Fatalf("refunds made without the board's decision: %v", refunds)
	}

	out, _ := runCmd(t, "agent", "cancel", "--thread", thread, "--reason", "the customer called", desk)
	if !strings.Contains(out, "thread "+thread+": the run waiting at pay") || !strings.Contains(out, "the board held its approval") {
		t.Fatalf("agent cancel printed %q, want the run ended and the board to be told", out)
	}
	if got := g.approvalState(t, a.GetId()); got.GetState() != boardv1.ApprovalState_APPROVAL_STATE_PENDING {
		t.Fatalf("the approval before the agent linked again = %v, want pending", got)
	}
	g.serveDesk(t, desk)
	var got *boardv1.Approval
	boardtest.Eventually(t, ceiling, "the approval cancelled on the board", func() bool {
		got = g.approvalState(t, a.GetId())
		return got.GetState() == boardv1.ApprovalState_APPROVAL_STATE_CANCELLED
	})
	if d := got.GetDecision(); strings.Join(d.GetWho(), ",") != "refund-desk" || !strings.Contains(d.GetReason(), "the customer called") {
		t.Errorf("the cancellation = %v, want it by refund-desk, with the reason", d)
	}
	if refunds := exampletest.Refunds(t, desk); len(refunds) != 0 {
		t.Errorf("refunds made for a run ended without an answer: %v", refunds)
	}
}

// approvalState is the approval id as the board has it now.
func (g *governance) approvalState(t *testing.T, id string) *boardv1.Approval {
	t.Helper()
	res, err := g.approver.GetApproval(t.Context(), &boardv1.GetApprovalRequest{Id: id})
	if err != nil {
		t.Fatal(err)
	}
	return res.GetApproval()
}
