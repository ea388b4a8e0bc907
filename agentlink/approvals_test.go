package agentlink_test

import (
	"context"
	"crypto/ed25519"
	"errors"
	"fmt"
	"net"
	"net/http"
	"sync"
	"testing"
	"time"

	"connectrpc.com/connect/v2"
	"connectrpc.com/connect/v2/connecthttp"

	"github.com/symphonix/symphonix/agentlink"
	"github.com/symphonix/symphonix/ent"
	"github.com/symphonix/symphonix/ent/receiptkey"
	"github.com/symphonix/symphonix/identity"
	"github.com/symphonix/symphonix/receipts"

	boardv1 "github.com/symphonix/symphonix/api/symphonix/board/v1"
	"github.com/symphonix/symphonix/api/symphonix/board/v1/boardv1connect"
	"github.com/symphonix/symphonix/approvals"
	"github.com/symphonix/symphonix/internal/boardtest"
)

// agent is an agentlink.Link running against a board under test.
type agent struct {
	link      *agentlink.Link
	states    chan agentlink.State
	decisions chan agentlink.Decision
	reAsks    chan agentlink.ReAskResult
}

func startAgent(t *testing.T, bt *boardtest.Board, name string, tune func(*agentlink.Config)) *agent {
	t.Helper()
	return startAgentCtx(t, context.Background(), bt, name, tune)
}

// startAgentCtx is startAgent whose link also stops when ctx ends.
func startAgentCtx(t *testing.T, parent context.Context, bt *boardtest.Board, name string, tune func(*agentlink.Config)) *agent {
	t.Helper()
	a := &agent{
		states:    make(chan agentlink.State, 64),
		decisions: make(chan agentlink.Decision, 64),
		reAsks:    make(chan agentlink.ReAskResult, 64),
	}
	cfg := agentlink.Config{
		BoardURL:     bt.URL,
		Token:        bt.AgentToken(name),
		Identity:     agentlink.Identity{Name: name},
		MinBackoff:   20 * time.Millisecond,
		MaxBackoff:   200 * time.Millisecond,
		AnswerWithin: 5 * time.Second,
		OnState:      func(s agentlink.State) { a.states <- s },
		OnDecision:   func(d agentlink.Decision) { a.decisions <- d },
		OnReAsk:      func(r agentlink.ReAskResult) { a.reAsks <- r },
	}
	if tune != nil {
		tune(&cfg)
	}
	link, err := agentlink.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	a.link = link
	ctx, cancel := context.WithCancel(parent)
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = link.Run(ctx)
	}()
	t.Cleanup(func() {
		cancel()
		<-done
	})
	return a
}

// awaitState waits for the link to come up (up=true) or go down.
func (a *agent) awaitState(t *testing.T, up bool) {
	t.Helper()
	deadline := time.After(15 * time.Second)
	for {
		select {
		case s := <-a.states:
			if s.Up == up {
				return
			}
		case <-deadline:
			t.Fatalf("link up=%v: not within 15s", up)
		}
	}
}

func (a *agent) awaitReAsk(t *testing.T) agentlink.ReAskResult {
	t.Helper()
	select {
	case r := <-a.reAsks:
		return r
	case <-time.After(15 * time.Second):
		t.Fatal("no re-ask within 15s")
	}
	return agentlink.ReAskResult{}
}

func approvalsAPI(bt *boardtest.Board) boardv1connect.ApprovalServiceClient {
	return boardv1connect.NewApprovalServiceClient(bt.Client(bt.OperatorToken("ops", identity.RoleAdmin)))
}

// governAll puts the catch-all rule through the board's API.
func governAll(t *testing.T, bt *boardtest.Board) *boardv1.Rule {
	t.Helper()
	q := int32(1)
	res, err := approvalsAPI(bt).PutRule(t.Context(), &boardv1.PutRuleRequest{Rule: &boardv1.Rule{
		Agent: "*", Node: "*", Role: boardv1.Role_ROLE_APPROVER, Quorum: &q,
	}})
	if err != nil {
		t.Fatalf("PutRule: %v", err)
	}
	return res.GetRule()
}

func refund(t *testing.T, run string, amount int) agentlink.Raise {
	t.Helper()
	show := map[string]any{"amount": amount, "currency": "EUR"}
	account := "the order arrived broken"
	d, err := approvals.Digest(show, account)
	if err != nil {
		t.Fatal(err)
	}
	return agentlink.Raise{Run: run, Thread: "t1", Node: "pay", Ask: fmt.Sprintf("Refund %d?", amount),
		Show: show, Account: account, Digest: d}
}

func listApprovals(t *testing.T, bt *boardtest.Board, agent string) []*boardv1.Approval {
	t.Helper()
	res, err := approvalsAPI(bt).ListApprovals(t.Context(), &boardv1.ListApprovalsRequest{Agent: agent})
	if err != nil {
		t.Fatalf("ListApprovals: %v", err)
	}
	return res.GetApprovals()
}

func TestWhoDecides(t *testing.T) {
	t.Parallel()
	bt := boardtest.Start(t, boardtest.Options{})
	a := startAgent(t, bt, "desk", nil)
	a.awaitState(t, true)

	ruling, info, err := a.link.WhoDecides(t.Context(), "pay")
	if err != nil || ruling != approvals.NotGoverned || info.ID != "" {
		t.Fatalf("no rules: WhoDecides = %q, %+v, %v; want not-governed", ruling, info, err)
	}
	if approvals.WhatToDo(ruling) != approvals.Card {
		t.Fatalf("not-governed: WhatToDo = %s, want card", approvals.WhatToDo(ruling))
	}

	rule := governAll(t, bt)
	ruling, info, err = a.link.WhoDecides(t.Context(), "pay")
	if err != nil || ruling != approvals.Governed || info.ID != rule.GetId() || info.Role != "approver" || info.Quorum != 1 {
		t.Fatalf("catch-all rule: WhoDecides = %q, %+v, %v; want governed by %s", ruling, info, err, rule.GetId())
	}

	// A request the board refuses fails alone, with the board's words.
	_, _, err = a.link.WhoDecides(t.Context(), "")
	var be *agentlink.BoardError
	if !errors.As(err, &be) || be.Code != "invalid_argument" {
		t.Fatalf("WhoDecides(\"\") = %v, want a BoardError invalid_argument", err)
	}
	if ruling, _, err := a.link.WhoDecides(t.Context(), "pay"); err != nil || ruling != approvals.Governed {
		t.Fatalf("after a refusal: WhoDecides = %q, %v; want the link still up and governed", ruling, err)
	}

	bt.Stop()
	a.awaitState(t, false)
	ruling, _, err = a.link.WhoDecides(t.Context(), "pay")
	if ruling != "" || err == nil {
		t.Fatalf("board stopped: WhoDecides = %q, %v; want \"\" and an error", ruling, err)
	}
	if approvals.WhatToDo(ruling) != approvals.Wait {
		t.Fatalf("board stopped: WhatToDo = %s, want wait", approvals.WhatToDo(ruling))
	}
	if _, err := a.link.Raise(t.Context(), refund(t, "run-1", 5000)); !errors.Is(err, agentlink.ErrNoLink) {
		t.Fatalf("board stopped: Raise = %v, want ErrNoLink", err)
	}
}

func TestRaise(t *testing.T) {
	t.Parallel()
	bt := boardtest.Start(t, boardtest.Options{})
	governAll(t, bt)
	a := startAgent(t, bt, "desk", nil)
	a.awaitState(t, true)

	r := refund(t, "run-1", 5000)
	first, err := a.link.Raise(t.Context(), r)
	if err != nil || first.State != "pending" || first.ApprovalID == "" || first.Decision != nil {
		t.Fatalf("Raise = %+v, %v; want pending with an id", first, err)
	}
	again, err := a.link.Raise(t.Context(), r)
	if err != nil || again.ApprovalID != first.ApprovalID || again.State != "pending" {
		t.Fatalf("Raise again = %+v, %v; want the same approval %s", again, err, first.ApprovalID)
	}
	if got := listApprovals(t, bt, "desk"); len(got) != 1 || got[0].GetId() != first.ApprovalID {
		t.Fatalf("ListApprovals = %v, want only %s", got, first.ApprovalID)
	}

	bad := r
	bad.Digest = ""
	_, err = a.link.Raise(t.Context(), bad)
	var be *agentlink.BoardError
	if !errors.As(err, &be) || be.Code != "invalid_argument" {
		t.Fatalf("Raise without a digest = %v, want a BoardError invalid_argument", err)
	}
}

func TestReAskAfterRestart(t *testing.T) {
	t.Parallel()
	bt := boardtest.Start(t, boardtest.Options{})
	governAll(t, bt)
	held := &agentlink.HeldInMemory{}
	r := refund(t, "run-1", 5000)
	held.Hold(r)
	a := startAgent(t, bt, "desk", func(c *agentlink.Config) { c.Holding = held })
	a.awaitState(t, true)
	if got := a.awaitReAsk(t); got != (agentlink.ReAskResult{Held: 1, Asked: 1}) {
		t.Fatalf("first re-ask = %+v, want one held and asked", got)
	}
	before := listApprovals(t, bt, "desk")
	if len(before) != 1 || before[0].GetState() != boardv1.ApprovalState_APPROVAL_STATE_PENDING || before[0].GetRun() != "run-1" {
		t.Fatalf("after the first link: %v, want one pending approval for run-1", before)
	}

	bt.Restart()
	a.awaitState(t, false)
	a.awaitState(t, true)
	if got := a.awaitReAsk(t); got != (agentlink.ReAskResult{Held: 1, Asked: 1}) {
		t.Fatalf("re-ask after restart = %+v, want one held and asked", got)
	}
	after := listApprovals(t, bt, "desk")
	if len(after) != 1 || after[0].GetId() != before[0].GetId() || after[0].GetState() != boardv1.ApprovalState_APPROVAL_STATE_PENDING {
		t.Fatalf("after restart: %v, want the same one pending approval %s", after, before[0].GetId())
	}

	// Decided without a push (as if while the agent was away): the next
	// re-ask finds the decision and delivers it, once.
	if _, err := bt.Store.Approval.UpdateOneID(before[0].GetId()).
		SetState("approved").SetSay("yes").SetDecisionDigest(r.Digest).
		SetDecidedBy([]string{"ann"}).SetDecidedAt(time.Now()).
		SetReceipt(boardReceipt(t, bt, receipts.Receipt{Approval: before[0].GetId(), Agent: "desk", Run: "run-1", Node: "pay", Digest: r.Digest, Say: "yes", Audit: "x"})).
		Save(t.Context()); err != nil {
		t.Fatal(err)
	}
	for round := range 2 {
		bt.Restart()
		a.awaitState(t, false)
		a.awaitState(t, true)
		if got := a.awaitReAsk(t); got != (agentlink.ReAskResult{Held: 1, Asked: 1, Decided: 1}) {
			t.Fatalf("re-ask %d after the decision = %+v, want one held, asked and decided", round, got)
		}
		select {
		case d := <-a.decisions:
			if round > 0 {
				t.Fatalf("decision delivered again after restart %d: %+v", round, d)
			}
			if d.ApprovalID != before[0].GetId() || d.Say != "yes" || d.Run != "run-1" || d.Node != "pay" ||
				!approvals.StillTheSameThing(d.Digest, r.Digest) {
				t.Fatalf("OnDecision got %+v", d)
			}
		case <-time.After(200 * time.Millisecond):
			if round == 0 {
				t.Fatal("the decision found by the re-ask was not delivered")
			}
		}
	}
	if got := listApprovals(t, bt, "desk"); len(got) != 1 {
		t.Fatalf("after all: %v, want one approval", got)
	}
}

// TestDecisionDeliveredOnce: a decision the board sends again (a board
// that crashed before it marked the decision delivered sends it again when
// the agent links) is not acted on twice.
func TestDecisionDeliveredOnce(t *testing.T) {
	t.Parallel()
	bt := boardtest.Start(t, boardtest.Options{})
	governAll(t, bt)
	ops := boardv1connect.NewApprovalServiceClient(bt.Client(bt.OperatorToken("ann", identity.RoleApprover)))
	a := startAgent(t, bt, "desk", nil)
	a.awaitState(t, true)
	r := refund(t, "run-7", 5000)
	raised, err := a.link.Raise(t.Context(), r)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ops.Decide(t.Context(), &boardv1.DecideRequest{Id: raised.ApprovalID, Say: boardv1.Say_SAY_YES, Digest: r.Digest, Reason: "fine"}); err != nil {
		t.Fatalf("Decide: %v", err)
	}
	select {
	case got := <-a.decisions:
		if got.ApprovalID != raised.ApprovalID || got.Say != "yes" || got.Digest != r.Digest || got.Reason != "fine" ||
			len(got.Who) != 1 || got.Who[0] != "ann" || got.Run != "run-7" || got.Node != "pay" {
			t.Fatalf("OnDecision got %+v", got)
		}
		if !approvals.StillTheSameThing(got.Digest, r.Digest) {
			t.Fatal("the decision is not about the operation held")
		}
	case <-time.After(10 * time.Second):
		t.Fatal("no decision within 10s")
	}

	// The board marks the decision delivered; the mark is lost, as when the
	// board crashes before writing it, and the board comes back: it sends
	// the decision again on the agent's new link.
	delivered := func() bool {
		row, err := bt.Store.Approval.Get(t.Context(), raised.ApprovalID)
		if err != nil {
			t.Fatal(err)
		}
		return row.DeliveredAt != nil
	}
	boardtest.Eventually(t, 5*time.Second, "the decision marked delivered", delivered)
	if err := bt.Store.Approval.UpdateOneID(raised.ApprovalID).ClearDeliveredAt().Exec(t.Context()); err != nil {
		t.Fatal(err)
	}
	bt.Restart()
	a.awaitState(t, false)
	a.awaitState(t, true)
	// The board sends what is undelivered, and marks it, before it answers
	// anything on the new link: after a round trip, the decision was read,
	// and marked again means sent again.
	if _, _, err := a.link.WhoDecides(t.Context(), "pay"); err != nil {
		t.Fatal(err)
	}
	if !delivered() {
		t.Fatal("the board did not send the decision again on the new link")
	}
	select {
	case got := <-a.decisions:
		t.Fatalf("decision delivered twice: %+v", got)
	default:
	}
}

func TestConcurrentRequests(t *testing.T) {
	t.Parallel()
	bt := boardtest.Start(t, boardtest.Options{})
	governAll(t, bt)
	a := startAgent(t, bt, "desk", func(c *agentlink.Config) { c.PingInterval = 20 * time.Millisecond })
	a.awaitState(t, true)

	const n = 10
	var wg sync.WaitGroup
	ids := make([]string, n)
	errs := make([]error, 2*n)
	for i := range n {
		wg.Add(2)
		go func() {
			defer wg.Done()
			raised, err := a.link.Raise(t.Context(), refund(t, fmt.Sprintf("run-%d", i), 100*(i+1)))
			if err == nil && (raised.State != "pending" || raised.ApprovalID == "") {
				err = fmt.Errorf("raised %+v, want pending with an id", raised)
			}
			ids[i], errs[i] = raised.ApprovalID, err
		}()
		go func() {
			defer wg.Done()
			ruling, _, err := a.link.WhoDecides(t.Context(), fmt.Sprintf("node-%d", i))
			if err == nil && ruling != approvals.Governed {
				err = fmt.Errorf("ruling %q, want governed", ruling)
			}
			errs[n+i] = err
		}()
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Errorf("request %d: %v", i, err)
		}
	}
	seen := map[string]bool{}
	for _, id := range ids {
		if seen[id] {
			t.Errorf("approval %s answered to two raises", id)
		}
		seen[id] = true
	}
	if got := listApprovals(t, bt, "desk"); len(got) != n {
		t.Fatalf("ListApprovals: %d approvals, want %d", len(got), n)
	}
}

func TestHeldInMemory(t *testing.T) {
	t.Parallel()
	var h agentlink.HeldInMemory
	var wg sync.WaitGroup
	for i := range 20 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			h.Hold(agentlink.Raise{Run: fmt.Sprintf("run-%02d", i), Node: "pay"})
		}()
	}
	wg.Wait()
	h.Hold(agentlink.Raise{Run: "run-00", Node: "pay", Digest: "newer"})
	h.Release("run-01", "pay")
	all, err := h.All(t.Context())
	if err != nil || len(all) != 19 || all[0].Run != "run-00" || all[0].Digest != "newer" || all[1].Run != "run-02" {
		t.Fatalf("All = %+v, %v", all, err)
	}
}

// silentBoard welcomes agents and answers their pings, and never answers
// anything else.
type silentBoard struct{}

func (silentBoard) Link(ctx context.Context, s boardv1connect.AgentLinkServiceLinkServerStream) error {
	if _, err := s.Receive(); err != nil {
		return err
	}
	if err := s.Send(&boardv1.LinkResponse{Kind: &boardv1.LinkResponse_Welcome{Welcome: &boardv1.Welcome{
		Session: "silent", Protocol: agentlink.Protocol,
	}}}); err != nil {
		return err
	}
	for {
		m, err := s.Receive()
		if err != nil {
			return nil
		}
		if p := m.GetPing(); p != nil {
			if err := s.Send(&boardv1.LinkResponse{Kind: &boardv1.LinkResponse_Pong{Pong: &boardv1.Pong{Seq: p.GetSeq()}}}); err != nil {
				return err
			}
		}
	}
}

func TestNoAnswerIsWait(t *testing.T) {
	t.Parallel()
	srv := connect.NewServer()
	boardv1connect.RegisterAgentLinkServiceHandler(srv, silentBoard{})
	mux := http.NewServeMux()
	connecthttp.Mount(mux, srv)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := new(http.Protocols)
	p.SetUnencryptedHTTP2(true)
	hs := &http.Server{Handler: mux, Protocols: p}
	go func() { _ = hs.Serve(ln) }()
	t.Cleanup(func() { _ = hs.Close() })

	states := make(chan agentlink.State, 8)
	link, err := agentlink.New(agentlink.Config{
		BoardURL: "http://" + ln.Addr().String(), Token: "t", Identity: agentlink.Identity{Name: "desk"},
		AnswerWithin: 150 * time.Millisecond,
		OnState:      func(s agentlink.State) { states <- s },
	})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); _ = link.Run(ctx) }()
	t.Cleanup(func() { cancel(); <-done })
	select {
	case s := <-states:
		if !s.Up {
			t.Fatalf("state %+v, want up", s)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("no welcome")
	}
	start := time.Now()
	ruling, _, err := link.WhoDecides(t.Context(), "pay")
	if ruling != "" || !errors.Is(err, agentlink.ErrNoAnswer) || approvals.WhatToDo(ruling) != approvals.Wait {
		t.Fatalf("silent board: WhoDecides = %q, %v; want \"\", ErrNoAnswer, and wait", ruling, err)
	}
	if took := time.Since(start); took > 5*time.Second {
		t.Fatalf("WhoDecides took %s, want about AnswerWithin", took)
	}
	if _, err := link.Raise(t.Context(), refund(t, "run-1", 1)); !errors.Is(err, agentlink.ErrNoAnswer) {
		t.Fatalf("silent board: Raise = %v, want ErrNoAnswer", err)
	}
}

// TestDecideReachesAgentOnce decides through the operator API: once while
// the agent is linked, once while it is away.
func TestDecideReachesAgentOnce(t *testing.T) {
	t.Parallel()
	bt := boardtest.Start(t, boardtest.Options{})
	governAll(t, bt)
	ops := boardv1connect.NewApprovalServiceClient(bt.Client(bt.OperatorToken("ann", identity.RoleApprover)))
	held := &agentlink.HeldInMemory{}
	first, second := refund(t, "run-1", 5000), refund(t, "run-2", 700)
	held.Hold(first)
	held.Hold(second)

	awaitOne := func(a *agent, id, say string) {
		t.Helper()
		select {
		case d := <-a.decisions:
			if d.ApprovalID != id || d.Say != say {
				t.Fatalf("OnDecision got %+v, want %s on %s", d, say, id)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("no decision on %s within 10s", id)
		}
		// A round trip, then a moment: nothing more comes.
		if _, _, err := a.link.WhoDecides(t.Context(), "pay"); err != nil {
			t.Fatal(err)
		}
		select {
		case d := <-a.decisions:
			t.Fatalf("a second delivery: %+v", d)
		case <-time.After(300 * time.Millisecond):
		}
	}

	ctx, stop := context.WithCancel(t.Context())
	a := startAgentCtx(t, ctx, bt, "desk", func(c *agentlink.Config) { c.Holding = held })
	a.awaitState(t, true)
	if got := a.awaitReAsk(t); got.Asked != 2 {
		t.Fatalf("re-ask = %+v, want two asked", got)
	}
	ids := map[string]string{}
	for _, ap := range listApprovals(t, bt, "desk") {
		ids[ap.GetRun()] = ap.GetId()
	}
	if _, err := ops.Decide(t.Context(), &boardv1.DecideRequest{Id: ids["run-1"], Say: boardv1.Say_SAY_YES, Digest: first.Digest}); err != nil {
		t.Fatalf("Decide: %v", err)
	}
	awaitOne(a, ids["run-1"], "yes")
	held.Release("run-1", "pay")

	stop()
	a.awaitState(t, false)
	if _, err := ops.Decide(t.Context(), &boardv1.DecideRequest{Id: ids["run-2"], Say: boardv1.Say_SAY_NO, Digest: second.Digest, Reason: "too much"}); err != nil {
		t.Fatalf("Decide while away: %v", err)
	}
	b := startAgent(t, bt, "desk", func(c *agentlink.Config) { c.Holding = held })
	b.awaitState(t, true)
	awaitOne(b, ids["run-2"], "no")
}

// boardReceipt signs r with the board's receipt key, as the board would
// (for a decision the test writes to the store itself).
func boardReceipt(t *testing.T, bt *boardtest.Board, r receipts.Receipt) string {
	t.Helper()
	k, err := bt.Store.ReceiptKey.Query().Order(ent.Desc(receiptkey.FieldNotBefore)).First(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	raw, err := receipts.Sign(ed25519.NewKeyFromSeed(k.PrivateKey), k.ID, r, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	return raw
}
