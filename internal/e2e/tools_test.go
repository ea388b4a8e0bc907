package e2e

import (
	"regexp"
	"strings"
	"testing"

	boardv1 "github.com/symphonix/symphonix/api/symphonix/board/v1"
	"github.com/symphonix/symphonix/internal/boardtest"
	"github.com/symphonix/symphonix/internal/exampletest"
)

// TestToolSwitchesLive: the refund desk served with a board. A board that
// never spoke switches nothing on; a switch flipped while a run waits
// applies to that run's next call, with no restart; a switch turned off
// refuses the call, which never reaches the orders server; with the board
// stopped, a restarted agent keeps the board's last word from its folder,
// and a fresh one calls nothing.
func TestToolSwitchesLive(t *testing.T) {
	t.Parallel()
	g := startGovernance(t)
	desk := governedDesk(t)
	serveIt := func(dir string) *proc {
		return startWithEnv(t, []string{"OPENAI_API_KEY="}, "agent", "serve", "--monitor", g.url, "--token", g.deskToken, dir)
	}
	agent := serveIt(desk)
	agent.waitLine(t, regexp.MustCompile(`^tools: none until the board says which are on$`))
	api := agent.waitLine(t, regexp.MustCompile(`^serving .* on (http://127\.0\.0\.1:\d+)$`))[1]
	agent.waitLine(t, regexp.MustCompile(`^agent refund-desk: tools: the board has not said which are on, so none are$`))

	switchOn := func(on ...string) {
		t.Helper()
		if _, err := g.tools.ReplaceSwitches(t.Context(), &boardv1.ReplaceSwitchesRequest{Agent: "refund-desk", On: on}); err != nil {
			t.Fatalf("ReplaceSwitches(%v): %v", on, err)
		}
		agent.waitLine(t, regexp.MustCompile(`^agent refund-desk: tools: the board switched on \d+: `+regexp.QuoteMeta(strings.Join(on, ", "))+`$`))
	}
	decideYes := func(thread string) {
		t.Helper()
		a := g.approvalOf(t, thread)
		if _, err := g.approver.Decide(t.Context(), &boardv1.DecideRequest{Id: a.GetId(), Say: boardv1.Say_SAY_YES, Digest: a.GetDigest()}); err != nil {
			t.Fatalf("Decide(yes) on %s: %v", thread, err)
		}
	}

	// Only the lookup is on: the run gets as far as the refund's approval.
	switchOn("orders.lookup_order")
	first := threadName(t) + "-1"
	askForRefund(t, api, first, g.rule)
	// Flipped while the run waits: the refund is on for its next call.
	switchOn("orders.lookup_order", "orders.refund")
	decideYes(first)
	checkFinishedByTheBoard(t, api, first)
	exampletest.CheckRefundedOnce(t, desk)

	// Switched off while the next run waits: the refund is refused, and
	// the orders server never sees it.
	second := threadName(t) + "-2"
	askForRefund(t, api, second, g.rule)
	switchOn("orders.lookup_order")
	decideYes(second)
	var th deskTurn
	boardtest.Eventually(t, ceiling, "the second run's outcome", func() bool {
		th = threadState(t, api, second)
		return th.Decided != nil
	})
	if th.Decided.Ended != "failed" || !strings.Contains(th.Decided.Why, `"orders.refund"`) {
		t.Fatalf("second run after the board's yes = %+v, want it failed on the refused refund", *th.Decided)
	}
	exampletest.CheckRefundedOnce(t, desk)
	if calls := exampletest.JournalCalls(t, desk, second); len(calls) < 3 || calls[2] != "tool orders.refund" {
		t.Errorf("journal calls of the refused run = %v, want the refused refund journaled", calls)
	}

	// The board stops; the agent restarts without it, and keeps its last
	// word from the folder.
	if err := g.board.cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	agent.waitLine(t, regexp.MustCompile(`^agent refund-desk: link down: `))
	if err := agent.cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = agent.cmd.Wait()
	again := serveIt(desk)
	again.waitLine(t, regexp.MustCompile(`^tools: the board's last word, from .*subscription\.json: 1 on, until the board speaks$`))

	// A fresh agent that never heard from the board calls nothing.
	fresh := serveIt(governedDesk(t))
	fresh.waitLine(t, regexp.MustCompile(`^tools: none until the board says which are on$`))
}
