package node_test

import (
	"context"
	"encoding/json"
	"errors"
	"io/fs"
	"net"
	"os"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/symphonix/symphonix/agent"
	boardv1 "github.com/symphonix/symphonix/api/symphonix/board/v1"
	"github.com/symphonix/symphonix/internal/exampletest"
	"github.com/symphonix/symphonix/journal"
	"github.com/symphonix/symphonix/node"
	"github.com/symphonix/symphonix/subscription"
)

// refundInput is what a run of the desk starts with.
var refundInput = map[string]string{"order_id": "A-1001", "request": "The mug arrived broken; I want my money back."}

// TestRunWithoutBoard: the run stops at the refund's card on stderr; with
// no answer on stdin it ends waiting on its thread, and the next Run on
// the thread resumes it and takes the answer; --json's state is all there
// is on stdout.
func TestRunWithoutBoard(t *testing.T) {
	t.Parallel()
	dir := deskDir(t)
	stdout, stderr := &lines{}, &lines{}
	err := node.Run(t.Context(), node.Config{Dir: dir, Thread: "t1", Input: refundInput, Stdout: stdout, Stderr: stderr})
	if !errors.Is(err, node.ErrNoAnswer) || !strings.Contains(err.Error(), `"t1"`) {
		t.Fatalf("Run with nothing on stdin = %v, want ErrNoAnswer naming thread t1", err)
	}
	stderr.wait(t, regexp.MustCompile(`^approval needed at pay: Refund 49.9 EUR on order A-1001 to Ada Lovelace\?$`), 0)
	if stdout.String() != "" || len(exampletest.Refunds(t, dir)) != 0 {
		t.Errorf("stdout %q, refunds %v; want nothing of either before an answer", stdout.String(), exampletest.Refunds(t, dir))
	}

	stdout, stderr = &lines{}, &lines{}
	err = node.Run(t.Context(), node.Config{Dir: dir, Thread: "t1", JSON: true, Stdin: strings.NewReader("yes\n"), Stdout: stdout, Stderr: stderr})
	if err != nil {
		t.Fatalf("Run resumed with yes: %v; stderr:\n%s", err, stderr)
	}
	stderr.wait(t, regexp.MustCompile(`^resuming the run waiting on thread "t1"$`), 0)
	var state map[string]any
	if err := json.Unmarshal([]byte(stdout.String()), &state); err != nil {
		t.Fatalf("stdout %q is not one JSON object: %v", stdout.String(), err)
	}
	if refund, _ := state["refund"].(map[string]any); refund["status"] != "refunded" || state["reply"] == "" {
		t.Errorf("state = %v, want the refund made and a reply", state)
	}
	exampletest.CheckRefundedOnce(t, dir)
}

// TestRunOutputs: without JSON, each output channel a line; an input the
// flow does not declare is refused before anything runs.
func TestRunOutputs(t *testing.T) {
	t.Parallel()
	dir := deskDir(t)
	var stdout lines
	err := node.Run(t.Context(), node.Config{Dir: dir, Input: refundInput, Stdin: strings.NewReader("no\n"), Stdout: &stdout})
	if err != nil {
		t.Fatal(err)
	}
	if out := stdout.String(); !strings.HasPrefix(out, "reply: ") || strings.Count(out, "\n") < 1 {
		t.Errorf("stdout = %q, want the reply on a line of its own", out)
	}
	if got := exampletest.Refunds(t, dir); len(got) != 0 {
		t.Errorf("refunds after a no = %v, want none", got)
	}
	err = node.Run(t.Context(), node.Config{Dir: dir, Thread: "other", Input: map[string]string{"order": "A-1"}})
	if err == nil || !strings.Contains(err.Error(), "order") {
		t.Errorf("Run with an undeclared input = %v, want it refused, naming it", err)
	}
}

// rememberSwitchedOn leaves in dir the board's word that both the desk's
// tools are on, as an agent linked there before would have: a run whose
// board does not speak in time calls what the board last said it may.
func rememberSwitchedOn(t *testing.T, dir string) {
	t.Helper()
	a, err := agent.Open(t.Context(), dir, agent.Config{Monitored: true})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	if _, err := a.Subscription.Set([]string{"orders.lookup_order", "orders.refund"}); err != nil {
		t.Fatal(err)
	}
}

// TestRunWithBoard: linked to a board, the refund's approval is the
// board's: the run says so and waits, Stdin unread, until the board's yes
// finishes it. The board's word on the tools is said on stderr.
func TestRunWithBoard(t *testing.T) {
	t.Parallel()
	g := startGovernance(t)
	dir := deskDir(t)
	g.switchOn(t, dir, "orders.lookup_order", "orders.refund")

	var stdout, stderr lines
	done := make(chan error, 1)
	go func() {
		done <- node.Run(t.Context(), node.Config{
			Dir: dir, BoardURL: g.bt.URL, Token: g.bt.AgentToken("refund-desk"), Thread: "governed", JSON: true,
			Input: refundInput, Stdin: strings.NewReader("yes\n"), Stdout: &stdout, Stderr: &stderr,
		})
	}()
	stderr.wait(t, regexp.MustCompile(`^agent refund-desk: tools: the board switched on 2: orders.lookup_order, orders.refund$`), 60*time.Second)
	stderr.wait(t, regexp.MustCompile(`^approval at pay: Refund 49.9 EUR on order A-1001 to Ada Lovelace\?$`), 60*time.Second)
	stderr.wait(t, regexp.MustCompile(`^the organisation decides this on the board`), 60*time.Second)
	a := g.approvalOf(t, "governed")
	select {
	case err := <-done:
		t.Fatalf("Run returned %v before the board decided; stderr:\n%s", err, &stderr)
	default:
	}
	if got := exampletest.Refunds(t, dir); len(got) != 0 {
		t.Fatalf("refunds before the board decided: %v", got)
	}
	g.approve(t, a)
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("Run after the board's yes = %v; stderr:\n%s", err, &stderr)
		}
	case <-time.After(time.Minute):
		t.Fatalf("Run did not finish within 10 s of the board's yes; stderr:\n%s", &stderr)
	}
	var state map[string]any
	if err := json.Unmarshal([]byte(stdout.String()), &state); err != nil {
		t.Fatalf("stdout %q is not one JSON object: %v", stdout.String(), err)
	}
	exampletest.CheckRefundedOnce(t, dir)
	if stderr.find(regexp.MustCompile(`^approval needed at `)) != nil {
		t.Errorf("the board's approval was put to the terminal too; stderr:\n%s", &stderr)
	}
}

// TestRunStoppedWhileTheBoardDecides: a run whose approval the board has
// yet to decide ends with ErrStopped when its context does; it waits on
// its thread.
func TestRunStoppedWhileTheBoardDecides(t *testing.T) {
	t.Parallel()
	g := startGovernance(t)
	dir := deskDir(t)
	g.switchOn(t, dir, "orders.lookup_order", "orders.refund")
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	var stderr lines
	done := make(chan error, 1)
	go func() {
		done <- node.Run(ctx, node.Config{Dir: dir, BoardURL: g.bt.URL, Token: g.bt.AgentToken("refund-desk"), Input: refundInput, Stderr: &stderr})
	}()
	g.approvalOf(t, "terminal")
	cancel()
	select {
	case err := <-done:
		if !errors.Is(err, node.ErrStopped) {
			t.Errorf("Run after its context ended = %v, want ErrStopped", err)
		}
	case <-time.After(time.Minute):
		t.Fatal("Run did not return within 10 s of its context ending")
	}
}

// TestRunWaitsForTheBoardsWordOnTools: a first run linked to a board, in a
// folder that keeps no word of the board's, starts once the board has said
// which tools are on: the flow's first node calls a tool the board
// switched on, and the call is made.
func TestRunWaitsForTheBoardsWordOnTools(t *testing.T) {
	t.Parallel()
	g := startGovernance(t)
	dir := deskDir(t)
	g.switchOn(t, dir, "orders.lookup_order", "orders.refund")
	if _, err := os.Stat(subscription.MemoryPath(dir)); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("the folder keeps a word of the board's already (%v); want none", err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	var stderr lines
	done := make(chan error, 1)
	go func() {
		done <- node.Run(ctx, node.Config{
			Dir: dir, BoardURL: g.bt.URL, Token: g.bt.AgentToken("refund-desk"), Thread: "first-run",
			Input: refundInput, Stderr: &stderr,
		})
	}()
	// The question shows the order lookup_order found.
	stderr.wait(t, regexp.MustCompile(`^approval at pay: Refund 49.9 EUR on order A-1001 to Ada Lovelace\?$`), 60*time.Second)
	g.approvalOf(t, "first-run")
	cancel()
	select {
	case err := <-done:
		if !errors.Is(err, node.ErrStopped) {
			t.Errorf("Run after its context ended = %v, want ErrStopped", err)
		}
	case <-time.After(time.Minute):
		t.Fatal("Run did not return within 10 s of its context ending")
	}
}

// TestRunWithASilentBoard: a board that accepts the link and never
// answers: the run waits Config.SwitchesWithin for its word, then starts
// with what the subscription has (docs/tools.md) and says which: nothing,
// so the first tool call is refused for nobody having decided; or the
// board's last word kept in the folder, with which the run goes on to the
// refund's approval, which waits for the board.
func TestRunWithASilentBoard(t *testing.T) {
	t.Parallel()
	silent := silentBoard(t)
	const within = 300 * time.Millisecond

	t.Run("nothing kept", func(t *testing.T) {
		t.Parallel()
		dir := deskDir(t)
		var stderr lines
		err := node.Run(t.Context(), node.Config{
			Dir: dir, BoardURL: silent, Token: "a-token", Thread: "t1", Input: refundInput,
			SwitchesWithin: within, Stderr: &stderr,
		})
		if err == nil || !strings.Contains(err.Error(), "has not said yet, so no tool is switched on") {
			t.Errorf("Run = %v, want the first tool call refused for nobody having decided", err)
		}
		stderr.wait(t, regexp.MustCompile(`^agent refund-desk: tools: the board has not said which are on within 300ms, and no word of its is kept in this folder: none are on until it says$`), 0)
	})
	t.Run("the last word kept", func(t *testing.T) {
		t.Parallel()
		dir := deskDir(t)
		rememberSwitchedOn(t, dir)
		ctx, cancel := context.WithCancel(t.Context())
		defer cancel()
		var stderr lines
		done := make(chan error, 1)
		go func() {
			done <- node.Run(ctx, node.Config{
				Dir: dir, BoardURL: silent, Token: "a-token", Thread: "t1", Input: refundInput,
				SwitchesWithin: within, Stderr: &stderr,
			})
		}()
		stderr.wait(t, regexp.MustCompile(`^agent refund-desk: tools: the board has not said which are on within 300ms: the run starts with its last word, kept in this folder: 2 on: orders.lookup_order, orders.refund$`), 60*time.Second)
		stderr.wait(t, regexp.MustCompile(`^approval at pay: Refund 49.9 EUR on order A-1001 to Ada Lovelace\?$`), 60*time.Second)
		cancel()
		if err := <-done; !errors.Is(err, node.ErrStopped) {
			t.Errorf("Run after its context ended = %v, want ErrStopped", err)
		}
		if got := exampletest.Refunds(t, dir); len(got) != 0 {
			t.Errorf("refunds without the board: %v", got)
		}
	})
}

// silentBoard is a board that takes connections and never says a word;
// it returns its URL.
func silentBoard(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var (
		mu    sync.Mutex
		conns []net.Conn
	)
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, c)
			mu.Unlock()
		}
	}()
	t.Cleanup(func() {
		ln.Close()
		mu.Lock()
		defer mu.Unlock()
		for _, c := range conns {
			c.Close()
		}
	})
	return "http://" + ln.Addr().String()
}

// TestRunRefusesInputForAWaitingRun: a run waits on the thread for order
// A-1001; a second Run there with input for order A-1002 is refused,
// naming the waiting run and the ways on, and the waiting run is left as
// it was: answered, it refunds A-1001.
func TestRunRefusesInputForAWaitingRun(t *testing.T) {
	t.Parallel()
	dir := deskDir(t)
	if err := node.Run(t.Context(), node.Config{Dir: dir, Thread: "t1", Input: refundInput}); !errors.Is(err, node.ErrNoAnswer) {
		t.Fatalf("the first Run = %v, want ErrNoAnswer", err)
	}
	var stderr lines
	other := map[string]string{"order_id": "A-1002", "request": "My lamp never came."}
	err := node.Run(t.Context(), node.Config{Dir: dir, Thread: "t1", Input: other, Stdin: strings.NewReader("yes\n"), Stderr: &stderr})
	if !errors.Is(err, node.ErrRunWaiting) {
		t.Fatalf("Run with new input on a waiting thread = %v, want ErrRunWaiting", err)
	}
	for _, want := range []string{`"t1"`, "at pay", "order A-1001", "agent run --thread t1", "agent cancel --thread t1", "another thread"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("the refusal %q does not say %q", err, want)
		}
	}
	if stderr.find(regexp.MustCompile(`^resuming`)) != nil || len(exampletest.Refunds(t, dir)) != 0 {
		t.Fatalf("the refused Run resumed the waiting run: refunds %v; stderr:\n%s", exampletest.Refunds(t, dir), &stderr)
	}
	if err := node.Run(t.Context(), node.Config{Dir: dir, Thread: "t1", Stdin: strings.NewReader("yes\n")}); err != nil {
		t.Fatalf("answering the waiting run: %v", err)
	}
	exampletest.CheckRefundedOnce(t, dir)
}

// TestRunPicksUpTheBoardsDecision: a run stopped while the board decides
// finishes, with the refund, when the next Run on its thread links after
// the board's yes; no second approval is raised for it.
func TestRunPicksUpTheBoardsDecision(t *testing.T) {
	t.Parallel()
	g := startGovernance(t)
	dir := deskDir(t)
	g.switchOn(t, dir, "orders.lookup_order", "orders.refund")
	ctx, stop := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() {
		done <- node.Run(ctx, node.Config{Dir: dir, BoardURL: g.bt.URL, Token: g.bt.AgentToken("refund-desk"), Thread: "later", Input: refundInput})
	}()
	a := g.approvalOf(t, "later")
	stop()
	if err := <-done; !errors.Is(err, node.ErrStopped) {
		t.Fatalf("Run stopped = %v, want ErrStopped", err)
	}
	g.approve(t, a)

	var stdout, stderr lines
	err := node.Run(t.Context(), node.Config{Dir: dir, BoardURL: g.bt.URL, Token: g.bt.AgentToken("refund-desk"), Thread: "later",
		JSON: true, Stdout: &stdout, Stderr: &stderr})
	if err != nil {
		t.Fatalf("the next Run = %v; stderr:\n%s", err, &stderr)
	}
	exampletest.CheckRefundedOnce(t, dir)
	res, err := g.approver.ListApprovals(t.Context(), &boardv1.ListApprovalsRequest{Agent: "refund-desk"})
	if err != nil {
		t.Fatal(err)
	}
	if got := res.GetApprovals(); len(got) != 1 || got[0].GetId() != a.GetId() {
		t.Errorf("approvals on the board = %v, want only the one decided", got)
	}
}

// TestRunJournals: `agent run` keeps the folder's journal as a served agent
// does: every model and tool call of the run, under its thread and the
// run's id, with the detail it was given; the start lines say so.
func TestRunJournals(t *testing.T) {
	t.Parallel()
	dir := deskDir(t)
	stderr := &lines{}
	err := node.Run(t.Context(), node.Config{Dir: dir, Thread: "t9", Input: refundInput, Stdin: strings.NewReader("no\n"),
		Stderr: stderr, JournalDetail: journal.DetailFull})
	if err != nil {
		t.Fatalf("Run: %v; stderr:\n%s", err, stderr)
	}
	stderr.wait(t, regexp.MustCompile(`^journal: .*journal\.jsonl, with payloads \(full detail\), rotated past 10485760 bytes$`), 0)
	entries, err := journal.Read(journal.Path(dir), 0, "")
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range entries {
		got = append(got, e.Kind+":"+e.Name)
		if e.Thread != "t9" || e.Run == "" || e.Run != entries[0].Run {
			t.Errorf("entry %s: thread %q, run %q; want t9 and the run's one id", e.Name, e.Thread, e.Run)
		}
	}
	// Newest first: the reply after the refusal, the decision, the lookup.
	if want := "llm:answer llm:decide tool:orders.lookup_order"; strings.Join(got, " ") != want {
		t.Errorf("journal = %q, want %s", got, want)
	}
	if p := entries[1].Prompt; !strings.Contains(p, "A customer wrote about order A-1001") {
		t.Errorf("the decide line's prompt = %q, want it kept (full detail)", p)
	}
}
