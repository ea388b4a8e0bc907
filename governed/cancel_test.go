package governed_test

import (
	"errors"
	"strings"
	"testing"

	boardv1 "github.com/symphonix/symphonix/api/symphonix/board/v1"
	"github.com/symphonix/symphonix/flow"
	"github.com/symphonix/symphonix/governed"
	"github.com/symphonix/symphonix/internal/boardtest"
	"github.com/symphonix/symphonix/waiting"
)

// TestARestartWithoutTheBoardDoesNotStepOverTheRule: an approval the board
// holds stays the board's when the agent restarts with no board
// configured: the run waits, and the chat's yes is refused.
func TestARestartWithoutTheBoardDoesNotStepOverTheRule(t *testing.T) {
	t.Parallel()
	bt := boardtest.Start(t, boardtest.Options{})
	governAll(t, bt, 0)
	b := &bank{}
	dir := t.TempDir()
	d := openDesk(t, deskOptions{board: bt, bank: b, dir: dir})
	res, _ := d.invoke("t1", 5000)
	pendingOnBoard(t, bt, 1)
	d.stop()

	d = openDesk(t, deskOptions{bank: b, dir: dir}) // no board configured
	for name, verdict := range map[string]func() (governed.Verdict, error){
		"Verdict": func() (governed.Verdict, error) { return d.gov.Verdict(t.Context(), "t1", res.Pending) },
		"Settle":  func() (governed.Verdict, error) { return d.gov.Settle(t.Context(), "t1", res.Pending) },
	} {
		v, err := verdict()
		if err != nil || v.Who != governed.Organisation || !strings.Contains(v.Why, "no board is configured") {
			t.Errorf("%s without a board = %+v, %v; want the organisation's, saying no board is configured", name, v, err)
		}
	}
	if _, v, err := d.gov.Answer(t.Context(), "t1", "yes"); !errors.Is(err, governed.ErrGoverned) || v.Who != governed.Organisation {
		t.Fatalf("Answer without a board = %+v, %v; want ErrGoverned", v, err)
	}
	if p, err := d.graph.Pending(t.Context(), "t1"); err != nil || p == nil {
		t.Fatalf("Pending after the refused answer = %v, %v; want the run still waiting", p, err)
	}
	if got := b.payments(); len(got) != 0 {
		t.Fatalf("paid %v without the board's decision", got)
	}
}

// TestCancelledHereTellsTheBoard: a person at the agent ends a run the
// board holds: the run ends unpaid, its note is withdrawn, and when the
// agent next links the board cancels the approval, as the agent, and the
// note becomes a plain tombstone.
func TestCancelledHereTellsTheBoard(t *testing.T) {
	t.Parallel()
	bt := boardtest.Start(t, boardtest.Options{})
	governAll(t, bt, 0)
	b := &bank{}
	dir := t.TempDir()
	d := openDesk(t, deskOptions{board: bt, bank: b, dir: dir})
	_, v := d.invoke("t1", 5000)
	a := pendingOnBoard(t, bt, 1)[0]
	d.stop()

	d = openDesk(t, deskOptions{bank: b, dir: dir}) // no board configured
	end, err := d.gov.Cancel(t.Context(), "t1", "the customer called")
	if err != nil || !end.Withdrawn || end.Pending == nil || end.Pending.Node != "pay" {
		t.Fatalf("Cancel = %+v, %v; want the run at pay ended, withdrawn", end, err)
	}
	if p, err := d.graph.Pending(t.Context(), "t1"); err != nil || p != nil {
		t.Fatalf("Pending after Cancel = %+v, %v; want nothing waiting", p, err)
	}
	n, ok, err := waiting.HoldingOf(d.store).Find(t.Context(), v.Run, "pay")
	if err != nil || !ok || n.State != waiting.Withdrawn || !strings.Contains(n.Why, "the customer called") {
		t.Fatalf("note after Cancel = %+v, %v, %v; want withdrawn, with the reason", n, ok, err)
	}
	if _, err := d.gov.Cancel(t.Context(), "t1", ""); !errors.Is(err, flow.ErrNothingPending) {
		t.Fatalf("Cancel again = %v, want ErrNothingPending", err)
	}
	d.stop()

	d = openDesk(t, deskOptions{board: bt, bank: b, dir: dir}) // linked again: told
	got, err := admin(bt).GetApproval(t.Context(), &boardv1.GetApprovalRequest{Id: a.GetId()})
	if err != nil {
		t.Fatal(err)
	}
	if dec := got.GetApproval().GetDecision(); got.GetApproval().GetState() != boardv1.ApprovalState_APPROVAL_STATE_CANCELLED ||
		strings.Join(dec.GetWho(), ",") != "pay-desk" || !strings.Contains(dec.GetReason(), "the customer called") {
		t.Fatalf("the approval once the agent linked = %v, want cancelled by pay-desk with the reason", got.GetApproval())
	}
	if n, ok, err = waiting.HoldingOf(d.store).Find(t.Context(), v.Run, "pay"); err != nil || !ok || n.State != waiting.Tombstone {
		t.Fatalf("note once the board was told = %+v, %v, %v; want a tombstone", n, ok, err)
	}
	if got := b.payments(); len(got) != 0 {
		t.Fatalf("paid %v for a run ended without an answer", got)
	}
}

// TestCancelACard: with no board, Cancel ends a run waiting at a card
// too, and a thread where nothing waits is ErrNothingPending.
func TestCancelACard(t *testing.T) {
	t.Parallel()
	b := &bank{}
	d := openDesk(t, deskOptions{bank: b})
	if _, err := d.gov.Cancel(t.Context(), "t1", ""); !errors.Is(err, flow.ErrNothingPending) {
		t.Fatalf("Cancel with nothing waiting = %v, want ErrNothingPending", err)
	}
	d.invoke("t1", 10)
	end, err := d.gov.Cancel(t.Context(), "t1", "")
	if err != nil || end.Withdrawn || end.Pending == nil {
		t.Fatalf("Cancel of a card = %+v, %v; want it ended, nothing to tell a board", end, err)
	}
	if _, _, err := d.gov.Answer(t.Context(), "t1", "yes"); !errors.Is(err, flow.ErrNothingPending) {
		t.Fatalf("Answer after Cancel = %v, want ErrNothingPending", err)
	}
	if got := b.payments(); len(got) != 0 {
		t.Fatalf("paid %v", got)
	}
}
