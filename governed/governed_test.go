package governed_test

import (
	"context"
	"encoding/json"
	"errors"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"google.golang.org/protobuf/types/known/durationpb"

	"github.com/symphonix/symphonix/agentlink"
	boardv1 "github.com/symphonix/symphonix/api/symphonix/board/v1"
	"github.com/symphonix/symphonix/api/symphonix/board/v1/boardv1connect"
	"github.com/symphonix/symphonix/flow"
	"github.com/symphonix/symphonix/governed"
	"github.com/symphonix/symphonix/identity"
	"github.com/symphonix/symphonix/internal/boardtest"
	"github.com/symphonix/symphonix/waiting"
)

// bank is the pay tool: it records every payment it makes.
type bank struct {
	mu   sync.Mutex
	paid []float64
}

func (b *bank) call(_ context.Context, name string, args map[string]any) (any, error) {
	amount, _ := args["amount"].(float64)
	b.mu.Lock()
	b.paid = append(b.paid, amount)
	b.mu.Unlock()
	return map[string]any{"tool": name, "amount": amount}, nil
}

func (b *bank) payments() []float64 {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]float64(nil), b.paid...)
}

// result is one run a decision resumed or ended.
type result struct {
	thread string
	res    flow.Result
	v      governed.Verdict
	err    error
}

// desk is one agent process: its store, graph, governed approvals and
// link. stop ends it as a crash would leave it: nothing but the folder.
type desk struct {
	t       *testing.T
	dir     string
	store   *waiting.Store
	graph   *flow.Graph
	gov     *governed.Approvals
	link    *agentlink.Link
	results chan result
	raised  chan [2]string // OnRaised's run and approval
	up      chan struct{}
	stopped bool
	stop    func()
}

type deskOptions struct {
	board    *boardtest.Board // nil: no board configured
	unlinked bool             // a board configured, but never reached
	dir      string           // "": a new folder
	bank     *bank
}

func openDesk(t *testing.T, o deskOptions) *desk {
	t.Helper()
	if o.dir == "" {
		o.dir = t.TempDir()
	}
	if o.bank == nil {
		o.bank = &bank{}
	}
	store, err := waiting.Open(t.Context(), o.dir, waiting.Config{})
	if err != nil {
		t.Fatal(err)
	}
	f, err := flow.LoadFile(filepath.Join("testdata", "pay.json"))
	if err != nil {
		t.Fatal(err)
	}
	g, err := flow.Build(f, flow.BuildOptions{Tools: o.bank.call, Checkpointer: store})
	if err != nil {
		t.Fatal(err)
	}
	d := &desk{t: t, dir: o.dir, store: store, graph: g, results: make(chan result, 16), raised: make(chan [2]string, 16), up: make(chan struct{}, 16)}
	monitored := o.board != nil || o.unlinked
	d.gov, err = governed.New(governed.Config{
		Graph:     g,
		Holding:   waiting.HoldingOf(store),
		Monitored: monitored,
		Threads:   store.Threads,
		OnResult: func(thread string, res flow.Result, v governed.Verdict, err error) {
			d.results <- result{thread, res, v, err}
		},
		OnRaised: func(run, approvalID string) { d.raised <- [2]string{run, approvalID} },
	})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	if o.board != nil {
		d.link, err = agentlink.New(agentlink.Config{
			BoardURL:     o.board.URL,
			Token:        o.board.AgentToken("pay-desk"),
			Identity:     agentlink.Identity{Name: "pay-desk"},
			MinBackoff:   20 * time.Millisecond,
			MaxBackoff:   200 * time.Millisecond,
			AnswerWithin: 5 * time.Second,
			Holding:      d.gov,
			OnDecision:   d.gov.Decided,
			OnState: func(s agentlink.State) {
				if s.Up {
					go func() {
						_ = d.gov.Recover(ctx)
						d.up <- struct{}{}
					}()
				}
			},
		})
		if err != nil {
			t.Fatal(err)
		}
		d.gov.Use(d.link)
		go func() {
			defer close(done)
			_ = d.link.Run(ctx)
		}()
	} else {
		close(done)
	}
	d.stop = func() {
		if d.stopped {
			return
		}
		d.stopped = true
		cancel()
		<-done
		d.gov.Close()
		store.Close()
	}
	t.Cleanup(d.stop)
	if o.board != nil {
		d.awaitUp()
	}
	return d
}

func (d *desk) awaitUp() {
	d.t.Helper()
	select {
	case <-d.up:
	case <-time.After(10 * time.Second):
		d.t.Fatal("the link did not come up in 10 s")
	}
}

func (d *desk) result() result {
	d.t.Helper()
	select {
	case r := <-d.results:
		return r
	case <-time.After(10 * time.Second):
		d.t.Fatal("no run resumed or ended in 10 s")
	}
	return result{}
}

func (d *desk) noResult(within time.Duration) {
	d.t.Helper()
	select {
	case r := <-d.results:
		d.t.Fatalf("a run was resumed or ended: %+v", r)
	case <-time.After(within):
	}
}

// stopAfterResend stops the desk once its link has read the decision on
// id that the board sent again when the link came up, and the desk has
// finished acting on it, if it did: what it did is then in d.results and
// the bank. The board sends the undelivered decisions, and marks them
// delivered, before it answers anything on a new link, so after a round
// trip the decision was read, and marked again means sent again.
func (d *desk) stopAfterResend(bt *boardtest.Board, id string) {
	d.t.Helper()
	if _, _, err := d.link.WhoDecides(d.t.Context(), "pay"); err != nil {
		d.t.Fatalf("WhoDecides: %v", err)
	}
	if !markedDelivered(d.t, bt, id) {
		d.t.Fatalf("approval %s: the board did not send its decision again", id)
	}
	d.stop() // waits for the decisions it acts on
	select {
	case r := <-d.results:
		d.t.Fatalf("the decision sent again resumed or ended a run: %+v", r)
	default:
	}
}

func (d *desk) invoke(thread string, amount float64) (flow.Result, governed.Verdict) {
	d.t.Helper()
	res, v, err := d.gov.Invoke(d.t.Context(), thread, map[string]any{"amount": amount, "why": "the parcel arrived broken"})
	if err != nil {
		d.t.Fatalf("Invoke: %v", err)
	}
	if res.Pending == nil || res.Pending.Kind != flow.PendingApproval {
		d.t.Fatalf("Invoke did not pause at the approval: %+v", res)
	}
	return res, v
}

func (d *desk) note(thread string) (waiting.Note, bool) {
	d.t.Helper()
	n, ok, err := waiting.HoldingOf(d.store).Note(d.t.Context(), thread)
	if err != nil {
		d.t.Fatal(err)
	}
	return n, ok
}

func governAll(t *testing.T, bt *boardtest.Board, limit time.Duration) {
	t.Helper()
	q := int32(1)
	r := &boardv1.Rule{Agent: "*", Node: "*", Role: boardv1.Role_ROLE_APPROVER, Quorum: &q}
	if limit > 0 {
		r.TimeLimit = durationpb.New(limit)
	}
	if _, err := admin(bt).PutRule(t.Context(), &boardv1.PutRuleRequest{Rule: r}); err != nil {
		t.Fatalf("PutRule: %v", err)
	}
}

func admin(bt *boardtest.Board) boardv1connect.ApprovalServiceClient {
	return boardv1connect.NewApprovalServiceClient(bt.Client(bt.OperatorToken("root", identity.RoleAdmin)))
}

func approver(bt *boardtest.Board, name string) boardv1connect.ApprovalServiceClient {
	return boardv1connect.NewApprovalServiceClient(bt.Client(bt.OperatorToken(name, identity.RoleApprover)))
}

// pendingOnBoard waits for n pending approvals and returns them.
// shownOf is what the approval shows, as the agent sent it.
func shownOf(t *testing.T, a *boardv1.Approval) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal([]byte(a.GetShowJson()), &m); err != nil {
		t.Fatalf("approval %s: show_json: %v", a.GetId(), err)
	}
	return m
}

func pendingOnBoard(t *testing.T, bt *boardtest.Board, n int) []*boardv1.Approval {
	t.Helper()
	var got []*boardv1.Approval
	boardtest.Eventually(t, 10*time.Second, "pending approvals on the board", func() bool {
		res, err := admin(bt).ListApprovals(t.Context(), &boardv1.ListApprovalsRequest{State: boardv1.ApprovalState_APPROVAL_STATE_PENDING})
		if err != nil {
			t.Fatal(err)
		}
		got = res.GetApprovals()
		return len(got) == n
	})
	return got
}

// markedDelivered reports whether the board has marked the decision on id
// delivered.
func markedDelivered(t *testing.T, bt *boardtest.Board, id string) bool {
	t.Helper()
	row, err := bt.Store.Approval.Get(t.Context(), id)
	if err != nil {
		t.Fatal(err)
	}
	return row.DeliveredAt != nil
}

// loseDeliveredMark waits for the board to mark the decision on id
// delivered, which it does soon after sending it, and clears the mark, as
// a board that crashed before writing it leaves it: the board sends the
// decision again when the agent next links.
func loseDeliveredMark(t *testing.T, bt *boardtest.Board, id string) {
	t.Helper()
	boardtest.Eventually(t, 5*time.Second, "the decision marked delivered", func() bool { return markedDelivered(t, bt, id) })
	if err := bt.Store.Approval.UpdateOneID(id).ClearDeliveredAt().Exec(t.Context()); err != nil {
		t.Fatal(err)
	}
}

func decide(t *testing.T, bt *boardtest.Board, a *boardv1.Approval, say string) {
	t.Helper()
	_, err := approver(bt, "ann").Decide(t.Context(), &boardv1.DecideRequest{
		Id: a.GetId(), Say: boardv1.Say(boardv1.Say_value["SAY_"+strings.ToUpper(say)]), Digest: a.GetDigest(), Reason: "checked the order"})
	if err != nil {
		t.Fatalf("Decide %s: %v", say, err)
	}
}

func TestNoBoardConfiguredTheChatDecides(t *testing.T) {
	t.Parallel()
	b := &bank{}
	d := openDesk(t, deskOptions{bank: b})
	_, v := d.invoke("t1", 5000)
	if v.Who != governed.Chat {
		t.Fatalf("verdict %+v, want the chat", v)
	}
	res, v, err := d.gov.Answer(t.Context(), "t1", "yes")
	if err != nil || !res.Finished() || v.Who != "" {
		t.Fatalf("Answer yes = %+v, %+v, %v; want the run finished", res, v, err)
	}
	if got := b.payments(); len(got) != 1 || got[0] != 5000 {
		t.Fatalf("payments %v, want [5000]", got)
	}
}

func TestNotGovernedIsACard(t *testing.T) {
	t.Parallel()
	bt := boardtest.Start(t, boardtest.Options{})
	b := &bank{}
	d := openDesk(t, deskOptions{board: bt, bank: b})
	_, v := d.invoke("t1", 70)
	if v.Who != governed.Chat || !strings.Contains(v.Why, "no rule") {
		t.Fatalf("verdict %+v, want the chat, because no rule governs it", v)
	}
	if n, ok := d.note("t1"); !ok || n.State != waiting.Card {
		t.Fatalf("note %+v (%v), want a card", n, ok)
	}
	if _, _, err := d.gov.Answer(t.Context(), "t1", "yes"); err != nil {
		t.Fatal(err)
	}
	if got := b.payments(); len(got) != 1 || got[0] != 70 {
		t.Fatalf("payments %v, want [70]", got)
	}
	if _, ok := d.note("t1"); ok {
		t.Error("the card's note outlived its answer")
	}
}

func TestApprovedOnTheBoard(t *testing.T) {
	t.Parallel()
	bt := boardtest.Start(t, boardtest.Options{})
	governAll(t, bt, 0)
	b := &bank{}
	d := openDesk(t, deskOptions{board: bt, bank: b})
	res, v := d.invoke("t1", 5000)
	if v.Who != governed.Organisation || v.Rule.ID == "" {
		t.Fatalf("verdict %+v, want the organisation, naming the rule", v)
	}
	a := pendingOnBoard(t, bt, 1)[0]
	if a.GetDigest() != res.Pending.Digest || a.GetRun() != v.Run || a.GetThread() != "t1" || a.GetNode() != "pay" ||
		a.GetAccount() != "the parcel arrived broken" || shownOf(t, a)["amount"] != 5000.0 {
		t.Fatalf("raised %v; want the pause's digest %s, run %s", a, res.Pending.Digest, v.Run)
	}
	// The run that waits hears which approval the board holds for it.
	select {
	case r := <-d.raised:
		if r != [2]string{res.Pending.Run, a.GetId()} || a.GetRunId() != res.Pending.Run {
			t.Errorf("OnRaised %q, the approval's run_id %q; want run %s and approval %s", r, a.GetRunId(), res.Pending.Run, a.GetId())
		}
	default:
		t.Error("OnRaised was not called for the raise the board answered")
	}
	// The chat cannot answer it: not with yes, and not with no.
	for _, say := range []string{"yes", "no"} {
		if _, _, err := d.gov.Answer(t.Context(), "t1", say); !errors.Is(err, governed.ErrGoverned) {
			t.Fatalf("Answer %q in the chat = %v, want ErrGoverned", say, err)
		}
	}
	if got := b.payments(); len(got) != 0 {
		t.Fatalf("paid %v before the board decided", got)
	}

	decide(t, bt, a, "yes")
	r := d.result()
	if r.err != nil || !r.res.Finished() || r.thread != "t1" {
		t.Fatalf("after the decision: %+v", r)
	}
	if got := b.payments(); len(got) != 1 || got[0] != 5000 {
		t.Fatalf("payments %v, want [5000]", got)
	}
	if _, ok := d.note("t1"); ok {
		t.Error("the note outlived the decision acted on")
	}
	// The same decision delivered again acts on nothing: the board comes
	// back from a crash before it marked the decision delivered, and sends
	// it again when the desk links to it anew.
	loseDeliveredMark(t, bt, a.GetId())
	bt.Restart()
	d.awaitUp()
	d.stopAfterResend(bt, a.GetId())
	if got := b.payments(); len(got) != 1 {
		t.Fatalf("payments %v after a second delivery, want one", got)
	}
}

func TestRejectedOnTheBoard(t *testing.T) {
	t.Parallel()
	bt := boardtest.Start(t, boardtest.Options{})
	governAll(t, bt, 0)
	b := &bank{}
	d := openDesk(t, deskOptions{board: bt, bank: b})
	d.invoke("t1", 5000)
	decide(t, bt, pendingOnBoard(t, bt, 1)[0], "no")
	if r := d.result(); r.err != nil || !r.res.Finished() {
		t.Fatalf("after no: %+v", r)
	}
	if got := b.payments(); len(got) != 0 {
		t.Fatalf("paid %v after a no", got)
	}
}

func TestNoBoardReachableWaits(t *testing.T) {
	t.Parallel()
	b := &bank{}
	dir := t.TempDir()
	d := openDesk(t, deskOptions{unlinked: true, bank: b, dir: dir})
	_, v := d.invoke("t1", 5000)
	if v.Who != governed.Organisation || !strings.Contains(v.Why, "never answered here") && !strings.Contains(v.Why, "never") {
		t.Fatalf("verdict %+v, want waiting for the board", v)
	}
	if n, ok := d.note("t1"); !ok || n.State != waiting.Asking {
		t.Fatalf("note %+v, want asking", n)
	}
	if _, _, err := d.gov.Answer(t.Context(), "t1", "yes"); !errors.Is(err, governed.ErrGoverned) {
		t.Fatalf("Answer with no board = %v, want ErrGoverned", err)
	}
	d.stop()

	// The board comes: the run is asked about, and decided there.
	bt := boardtest.Start(t, boardtest.Options{})
	governAll(t, bt, 0)
	d = openDesk(t, deskOptions{board: bt, bank: b, dir: dir})
	a := pendingOnBoard(t, bt, 1)[0]
	decide(t, bt, a, "yes")
	if r := d.result(); r.err != nil || !r.res.Finished() {
		t.Fatalf("after yes: %+v", r)
	}
	if got := b.payments(); len(got) != 1 || got[0] != 5000 {
		t.Fatalf("payments %v, want [5000]", got)
	}
}

func TestARestartDoesNotStepOverTheRule(t *testing.T) {
	t.Parallel()
	bt := boardtest.Start(t, boardtest.Options{})
	governAll(t, bt, 0)
	b := &bank{}
	dir := t.TempDir()
	d := openDesk(t, deskOptions{board: bt, bank: b, dir: dir})
	d.invoke("t1", 5000)
	pendingOnBoard(t, bt, 1)
	d.stop()

	// Restarted with the board configured but not reachable: still governed.
	d = openDesk(t, deskOptions{unlinked: true, bank: b, dir: dir})
	if _, _, err := d.gov.Answer(t.Context(), "t1", "yes"); !errors.Is(err, governed.ErrGoverned) {
		t.Fatalf("Answer after a restart = %v, want ErrGoverned", err)
	}
	if got := b.payments(); len(got) != 0 {
		t.Fatalf("paid %v", got)
	}
}

func TestCancelledLeavesATombstone(t *testing.T) {
	t.Parallel()
	bt := boardtest.Start(t, boardtest.Options{})
	governAll(t, bt, 0)
	b := &bank{}
	dir := t.TempDir()
	d := openDesk(t, deskOptions{board: bt, bank: b, dir: dir})
	_, v := d.invoke("t1", 5000)
	a := pendingOnBoard(t, bt, 1)[0]
	if _, err := admin(bt).Cancel(t.Context(), &boardv1.CancelRequest{Id: a.GetId(), Reason: "customer withdrew"}); err != nil {
		t.Fatal(err)
	}
	r := d.result()
	if !errors.Is(r.err, governed.ErrCancelled) || !strings.Contains(r.v.Why, "customer withdrew") {
		t.Fatalf("after cancel: %+v, want ErrCancelled with the reason", r)
	}
	if p, err := d.graph.Pending(t.Context(), "t1"); err != nil || p != nil {
		t.Fatalf("Pending after cancel = %+v, %v; want nothing waiting", p, err)
	}
	n, ok, err := waiting.HoldingOf(d.store).Find(t.Context(), v.Run, "pay")
	if err != nil || !ok || n.State != waiting.Tombstone {
		t.Fatalf("note %+v, %v, %v; want a tombstone", n, ok, err)
	}
	// A decision for it afterwards answers nothing. What a board sends
	// again for a cancelled approval is its cancellation, never a yes: the
	// board comes back from a crash before it marked the cancellation
	// delivered, and the desk from a restart, so its link remembers nothing
	// it was sent; when the desk links again the cancellation reaches the
	// tombstone.
	loseDeliveredMark(t, bt, a.GetId())
	d.stop()
	bt.Restart()
	d = openDesk(t, deskOptions{board: bt, bank: b, dir: dir})
	d.stopAfterResend(bt, a.GetId())
	if got := b.payments(); len(got) != 0 {
		t.Fatalf("paid %v for a cancelled run", got)
	}
	d = openDesk(t, deskOptions{board: bt, bank: b, dir: dir})
	n, ok, err = waiting.HoldingOf(d.store).Find(t.Context(), v.Run, "pay")
	if err != nil || !ok || n.State != waiting.Tombstone {
		t.Fatalf("note after the cancellation came again %+v, %v, %v; want the tombstone", n, ok, err)
	}
	// The thread is free for a new run, which is asked about afresh.
	_, v2 := d.invoke("t1", 10)
	if v2.Run == v.Run || v2.Who != governed.Organisation {
		t.Fatalf("new run's verdict %+v", v2)
	}
}

func TestExpiredIsNeitherYesNorNo(t *testing.T) {
	t.Parallel()
	bt := boardtest.Start(t, boardtest.Options{RevocationPoll: 20 * time.Millisecond})
	governAll(t, bt, 200*time.Millisecond)
	b := &bank{}
	d := openDesk(t, deskOptions{board: bt, bank: b})
	d.invoke("t1", 5000)
	r := d.result()
	if !errors.Is(r.err, governed.ErrExpired) {
		t.Fatalf("after the time limit: %+v, want ErrExpired", r)
	}
	if got := b.payments(); len(got) != 0 {
		t.Fatalf("paid %v", got)
	}
	if p, _ := d.graph.Pending(t.Context(), "t1"); p != nil {
		t.Fatalf("still waiting at %+v", p)
	}
}

// A decision for 5,000 presented to a run that now holds 50,000 is not
// performed; what the run holds now is raised afresh.
func TestDecisionForAnotherOperation(t *testing.T) {
	t.Parallel()
	bt := boardtest.Start(t, boardtest.Options{})
	governAll(t, bt, 0)
	b := &bank{}
	d := openDesk(t, deskOptions{board: bt, bank: b})
	d.invoke("t1", 5000)
	a := pendingOnBoard(t, bt, 1)[0]

	// Behind the note's back, the thread's run now holds 50,000.
	if err := d.graph.Cancel(t.Context(), "t1"); err != nil {
		t.Fatal(err)
	}
	res, err := d.graph.Invoke(t.Context(), "t1", map[string]any{"amount": 50000.0, "why": "the parcel arrived broken"})
	if err != nil || res.Pending == nil {
		t.Fatalf("Invoke 50000: %+v, %v", res, err)
	}

	decide(t, bt, a, "yes")
	r := d.result()
	if r.res.Pending == nil || r.res.Pending.Digest != res.Pending.Digest || r.v.Who != governed.Organisation {
		t.Fatalf("after the decision for 5,000: %+v; want the run still waiting on 50,000, asked afresh", r)
	}
	if got := b.payments(); len(got) != 0 {
		t.Fatalf("paid %v: a decision for 5,000 was performed on 50,000", got)
	}
	fresh := pendingOnBoard(t, bt, 1)[0]
	if fresh.GetDigest() != res.Pending.Digest || fresh.GetId() == a.GetId() || shownOf(t, fresh)["amount"] != 50000.0 {
		t.Fatalf("pending now %v; want the 50,000 raised", fresh)
	}
}

// The agent is killed while it waits; the decision is made while it is
// down; when it comes back the decision is delivered once and the run
// completes.
func TestDecidedWhileTheAgentWasDown(t *testing.T) {
	t.Parallel()
	bt := boardtest.Start(t, boardtest.Options{OfflineGrace: 50 * time.Millisecond})
	governAll(t, bt, 0)
	b := &bank{}
	dir := t.TempDir()
	d := openDesk(t, deskOptions{board: bt, bank: b, dir: dir})
	d.invoke("t1", 5000)
	a := pendingOnBoard(t, bt, 1)[0]
	d.stop()

	decide(t, bt, a, "yes")
	d = openDesk(t, deskOptions{board: bt, bank: b, dir: dir})
	r := d.result()
	if r.err != nil || !r.res.Finished() {
		t.Fatalf("after coming back: %+v", r)
	}
	d.noResult(300 * time.Millisecond)
	if got := b.payments(); len(got) != 1 || got[0] != 5000 {
		t.Fatalf("payments %v, want [5000] once", got)
	}
	got, err := admin(bt).GetApproval(t.Context(), &boardv1.GetApprovalRequest{Id: a.GetId()})
	if err != nil || got.GetApproval().GetState() != boardv1.ApprovalState_APPROVAL_STATE_APPROVED {
		t.Fatalf("the approval on the board: %v, %v", got, err)
	}
}
