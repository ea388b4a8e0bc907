package node_test

import (
	"context"
	"errors"
	"regexp"
	"strings"
	"testing"
	"time"

	boardv1 "github.com/symphonix/symphonix/api/symphonix/board/v1"
	"github.com/symphonix/symphonix/internal/boardtest"
	"github.com/symphonix/symphonix/internal/exampletest"
	"github.com/symphonix/symphonix/lock"
	"github.com/symphonix/symphonix/node"
)

// TestRunWithoutTheBoardWaitsForIt: an approval raised to the board stays
// the board's when the agent runs again without one: a yes on standard
// input refunds nothing, and the run says why it waits. `agent cancel`
// ends it here, and the board, told when the agent links again, shows the
// approval cancelled by the agent.
func TestRunWithoutTheBoardWaitsForIt(t *testing.T) {
	t.Parallel()
	g := startGovernance(t)
	dir := deskDir(t)
	g.switchOn(t, dir, "orders.lookup_order", "orders.refund")

	// Raised to the board, then stopped.
	ctx, stop := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() {
		done <- node.Run(ctx, node.Config{Dir: dir, BoardURL: g.bt.URL, Token: g.bt.AgentToken("refund-desk"), Thread: "g1", Input: refundInput})
	}()
	a := g.approvalOf(t, "g1")
	stop()
	if err := <-done; !errors.Is(err, node.ErrStopped) {
		t.Fatalf("the linked Run, stopped = %v, want ErrStopped", err)
	}

	// Again, without a board, a yes on standard input.
	var stderr lines
	err := node.Run(t.Context(), node.Config{Dir: dir, Thread: "g1", Stdin: strings.NewReader("yes\n"), Stderr: &stderr})
	if !errors.Is(err, node.ErrBoardDecides) || !strings.Contains(err.Error(), "agent cancel --thread g1") {
		t.Fatalf("Run without a board = %v, want ErrBoardDecides, saying how to end it", err)
	}
	stderr.wait(t, regexp.MustCompile(`^approval at pay: Refund 49.9 EUR on order A-1001 to Ada Lovelace\?$`), 0)
	stderr.wait(t, regexp.MustCompile(`^the organisation decides this on the board .*, and no board is configured: the run waits`), 0)
	if got := exampletest.Refunds(t, dir); len(got) != 0 {
		t.Fatalf("refunds made without the board's decision: %v", got)
	}
	if st := g.state(t, a.GetId()); st != "pending" {
		t.Fatalf("the approval is %s on the board, want pending", st)
	}

	// Ended here; the board hears of it when the agent links again.
	var stdout lines
	if err := node.Cancel(t.Context(), node.Config{Dir: dir, Thread: "g1", Reason: "the customer called", Stdout: &stdout}); err != nil {
		t.Fatalf("Cancel: %v", err)
	}
	stdout.wait(t, regexp.MustCompile(`^thread g1: the run waiting at pay \(Refund 49.9 EUR on order A-1001 to Ada Lovelace\?\) was ended, without an answer$`), 0)
	stdout.wait(t, regexp.MustCompile(`^thread g1: the board held its approval: it is told, and cancels it, the next time this agent is linked to it$`), 0)
	if err := node.Cancel(t.Context(), node.Config{Dir: dir, Thread: "g1"}); !errors.Is(err, node.ErrNothingWaits) {
		t.Fatalf("Cancel again = %v, want ErrNothingWaits", err)
	}
	if st := g.state(t, a.GetId()); st != "pending" {
		t.Fatalf("the approval is %s on the board before the agent linked, want pending", st)
	}
	s := startServe(t, node.Config{Dir: dir, BoardURL: g.bt.URL, Token: g.bt.AgentToken("refund-desk")})
	boardtest.Eventually(t, time.Minute, "the approval cancelled on the board", func() bool { return g.state(t, a.GetId()) == "cancelled" })
	got, err := g.approver.GetApproval(t.Context(), &boardv1.GetApprovalRequest{Id: a.GetId()})
	if err != nil {
		t.Fatal(err)
	}
	if d := got.GetApproval().GetDecision(); strings.Join(d.GetWho(), ",") != "refund-desk" || !strings.Contains(d.GetReason(), "the customer called") {
		t.Errorf("the cancellation = %v, want it by refund-desk, with the reason", d)
	}
	if err := s.shutdown(t); err != nil {
		t.Errorf("Serve: %v", err)
	}
	if got := exampletest.Refunds(t, dir); len(got) != 0 {
		t.Errorf("refunds made for a run ended without an answer: %v", got)
	}
}

// TestCancelWhileServed: the folder's lock keeps Cancel off a served agent.
func TestCancelWhileServed(t *testing.T) {
	t.Parallel()
	dir := deskDir(t)
	startServe(t, node.Config{Dir: dir})
	var held *lock.HeldError
	if err := node.Cancel(t.Context(), node.Config{Dir: dir, Thread: "t1"}); !errors.As(err, &held) {
		t.Fatalf("Cancel on a served folder = %v, want a *lock.HeldError", err)
	}
}
