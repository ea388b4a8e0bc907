package e2e

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"regexp"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/symphonix/symphonix/agentlink"
	boardv1 "github.com/symphonix/symphonix/api/symphonix/board/v1"
	"github.com/symphonix/symphonix/api/symphonix/board/v1/boardv1connect"
	"github.com/symphonix/symphonix/approvals"
	"github.com/symphonix/symphonix/identity"
	"github.com/symphonix/symphonix/internal/boardtest"
	"github.com/symphonix/symphonix/internal/exampletest"
	"github.com/symphonix/symphonix/receipts"
	"github.com/symphonix/symphonix/store"
)

// The tests of this file run three board processes on one PostgreSQL
// database, as an operator runs them behind a load balancer.

// freeAddr is a loopback address nothing listens on now, for a board the
// test starts later but names to its agents first.
func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

// startPostgresBoard starts the board command on the store dsn, listening
// on listen, with a folder of its own for what it keeps outside the store.
func startPostgresBoard(t *testing.T, dsn, listen string) (*proc, string) {
	t.Helper()
	p := start(t, "board", "--database", dsn, "--data", t.TempDir(), "--listen", listen)
	return p, p.waitLine(t, listening)[1]
}

// minter mints tokens in the boards' store, as `board token` does: the
// boards share its signing key, so a token is good on each of them.
func minter(t *testing.T, dsn string) func(o identity.MintOptions) string {
	t.Helper()
	db, err := store.Open(t.Context(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	tokens, err := identity.OpenTokens(t.Context(), db)
	if err != nil {
		t.Fatal(err)
	}
	return func(o identity.MintOptions) string {
		t.Helper()
		m, err := tokens.Mint(t.Context(), o)
		if err != nil {
			t.Fatal(err)
		}
		return m.Token
	}
}

// fleet is agents linked with the agent's link code, each counting the
// decisions it is told of.
type fleet struct {
	mu        sync.Mutex
	links     map[string]*agentlink.Link
	sessions  map[string][]string // by agent: the sessions its link came up in
	decisions map[string][]agentlink.Decision
	told      map[string]time.Time // by approval: when the first decision arrived
}

func newFleet() *fleet {
	return &fleet{links: map[string]*agentlink.Link{}, sessions: map[string][]string{},
		decisions: map[string][]agentlink.Decision{}, told: map[string]time.Time{}}
}

// link starts name's link to boards (comma-separated) and waits until it
// is up.
func (f *fleet) link(t *testing.T, name, boards, token string, held *agentlink.HeldInMemory) *agentlink.Link {
	t.Helper()
	link, up := f.start(t, name, boards, token, held)
	select {
	case <-up:
	case <-time.After(ceiling):
		t.Fatalf("%s did not link within %s", name, ceiling)
	}
	return link
}

// start starts name's link to boards; up is ready once it is up.
func (f *fleet) start(t *testing.T, name, boards, token string, held *agentlink.HeldInMemory) (*agentlink.Link, <-chan struct{}) {
	t.Helper()
	up := make(chan struct{}, 1)
	link, err := agentlink.New(agentlink.Config{
		BoardURL: boards,
		Token:    token,
		Identity: agentlink.Identity{Name: name},
		Holding:  held,
		OnState: func(s agentlink.State) {
			if !s.Up {
				return
			}
			f.mu.Lock()
			f.sessions[name] = append(f.sessions[name], s.Session)
			f.mu.Unlock()
			select {
			case up <- struct{}{}:
			default:
			}
		},
		OnDecision: func(d agentlink.Decision) {
			f.mu.Lock()
			defer f.mu.Unlock()
			f.decisions[d.ApprovalID] = append(f.decisions[d.ApprovalID], d)
			if _, ok := f.told[d.ApprovalID]; !ok {
				f.told[d.ApprovalID] = time.Now()
			}
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	ctx, stop := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); _ = link.Run(ctx) }()
	t.Cleanup(func() { stop(); <-done })
	f.mu.Lock()
	f.links[name] = link
	f.mu.Unlock()
	return link, up
}

// toldAt is when the agents were first told of approval id's decision.
func (f *fleet) toldAt(id string) (time.Time, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	at, ok := f.told[id]
	return at, ok
}

// raisedRefund is an approval raised, as the test decides it.
type raisedRefund struct{ ApprovalID, Digest string }

// raiseRefund raises one refund approval through link and holds it.
func raiseRefund(t *testing.T, link *agentlink.Link, held *agentlink.HeldInMemory, run string, amount int) raisedRefund {
	t.Helper()
	show := map[string]any{"order": run, "amount": amount}
	digest, err := approvals.Digest(show, "")
	if err != nil {
		t.Fatal(err)
	}
	r := agentlink.Raise{Run: run, Node: "pay", Ask: "Refund?", Show: show, Digest: digest}
	raised, err := link.Raise(context.Background(), r)
	if err != nil || raised.State != "pending" {
		t.Fatalf("raise %s: %+v, %v", run, raised, err)
	}
	held.Hold(r)
	return raisedRefund{ApprovalID: raised.ApprovalID, Digest: digest}
}

// TestGovernedAcrossBoardProcesses: the refund desk, served by the agent
// command, is linked to board A; an admin switches its tools on through
// board C and an approver says yes through board B. The switches and the
// decision reach the agent on A, and the refund is made once.
func TestGovernedAcrossBoardProcesses(t *testing.T) {
	t.Parallel()
	dsn := boardtest.PostgresDSN(t)
	var urls [3]string
	for i := range urls {
		_, urls[i] = startPostgresBoard(t, dsn, "127.0.0.1:0")
	}
	mint := minter(t, dsn)
	adminTok := mint(identity.MintOptions{Kind: identity.KindOperator, Name: "root", Role: identity.RoleAdmin})
	put, err := boardv1connect.NewApprovalServiceClient(boardtest.NewClient(urls[2], adminTok)).
		PutRule(t.Context(), &boardv1.PutRuleRequest{Rule: &boardv1.Rule{Agent: "*", Node: "*", Role: boardv1.Role_ROLE_APPROVER}})
	if err != nil {
		t.Fatal(err)
	}
	g := &governance{
		url:       urls[0],
		rule:      put.GetRule().GetId(),
		tools:     boardv1connect.NewToolServiceClient(boardtest.NewClient(urls[2], adminTok)),
		approver:  boardv1connect.NewApprovalServiceClient(boardtest.NewClient(urls[1], mint(identity.MintOptions{Kind: identity.KindOperator, Name: "ada", Role: identity.RoleApprover}))),
		deskToken: mint(identity.MintOptions{Kind: identity.KindAgent, Name: "refund-desk"}),
	}
	desk := governedDesk(t)
	agent, api := g.serveDesk(t, desk) // the switches, made on C, reach it on A
	thread := threadName(t)
	turn := askForRefund(t, api, thread, g.rule)
	a := g.approvalOf(t, thread) // read on B
	if a.GetDigest() != turn.Pending.Digest || a.GetState() != boardv1.ApprovalState_APPROVAL_STATE_PENDING {
		t.Fatalf("approval on board B = %v, want pending with digest %s", a, turn.Pending.Digest)
	}
	res, err := g.approver.Decide(t.Context(), &boardv1.DecideRequest{Id: a.GetId(), Say: boardv1.Say_SAY_YES, Digest: a.GetDigest(), Reason: "the mug was broken"})
	if err != nil || res.GetApproval().GetState() != boardv1.ApprovalState_APPROVAL_STATE_APPROVED {
		t.Fatalf("Decide(yes) on board B = %v, %v; want approved", res, err)
	}
	agent.waitLine(t, regexp.MustCompile(`^thread `+regexp.QuoteMeta(thread)+`: the board decided; the run finished$`))
	checkFinishedByTheBoard(t, api, thread)
	exampletest.CheckRefundedOnce(t, desk)
	// The receipt the run kept verifies with the keys board C publishes.
	resp, err := http.Get(urls[2] + "/.well-known/receipt-keys.json")
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	keys, err := receipts.ParseKeySet(raw)
	if err != nil {
		t.Fatal(err)
	}
	r, err := receipts.Verify(threadState(t, api, thread).Decided.Receipt, keys)
	if err != nil || r.Binds(a.GetId(), a.GetRun(), "pay", a.GetDigest(), "yes") != nil || len(r.Who) != 1 || r.Who[0] != "ada" {
		t.Errorf("the run's receipt: %+v, %v; want ada's yes on %s", r, err, a.GetId())
	}
}

// TestDecisionsAcrossBoardProcesses: twenty agents linked to board A raise
// 200 approvals; an approver decides them through board B, eight at a
// time. Each decision reaches its agent once, and the time from the
// Decide call to the agent being told is at most a second at the 99th
// percentile.
func TestDecisionsAcrossBoardProcesses(t *testing.T) {
	t.Parallel()
	const agents, runs, inFlight = 20, 10, 8
	dsn := boardtest.PostgresDSN(t)
	var urls [3]string
	for i := range urls {
		_, urls[i] = startPostgresBoard(t, dsn, "127.0.0.1:0")
	}
	mint := minter(t, dsn)
	admin := boardv1connect.NewApprovalServiceClient(boardtest.NewClient(urls[1], mint(identity.MintOptions{Kind: identity.KindOperator, Name: "root", Role: identity.RoleAdmin})))
	if _, err := admin.PutRule(t.Context(), &boardv1.PutRuleRequest{Rule: &boardv1.Rule{Agent: "*", Node: "*", Role: boardv1.Role_ROLE_APPROVER}}); err != nil {
		t.Fatal(err)
	}
	f := newFleet()
	var pending []raisedRefund
	for i := range agents {
		name := fmt.Sprintf("desk-%02d", i)
		held := &agentlink.HeldInMemory{}
		link := f.link(t, name, urls[0], mint(identity.MintOptions{Kind: identity.KindAgent, Name: name}), held)
		for r := range runs {
			pending = append(pending, raiseRefund(t, link, held, fmt.Sprintf("%s-run-%d", name, r), 10*(r+1)))
		}
	}

	approver := boardv1connect.NewApprovalServiceClient(boardtest.NewClient(urls[1], mint(identity.MintOptions{Kind: identity.KindOperator, Name: "ada", Role: identity.RoleApprover})))
	took := make([]time.Duration, len(pending))
	work := make(chan int)
	var wg sync.WaitGroup
	for range inFlight {
		wg.Go(func() {
			for i := range work {
				r := pending[i]
				start := time.Now()
				if _, err := approver.Decide(context.Background(), &boardv1.DecideRequest{Id: r.ApprovalID, Say: boardv1.Say_SAY_YES, Digest: r.Digest}); err != nil {
					t.Errorf("Decide %s on board B: %v", r.ApprovalID, err)
					continue
				}
				deadline := time.Now().Add(ceiling)
				for {
					if at, ok := f.toldAt(r.ApprovalID); ok {
						took[i] = at.Sub(start)
						break
					}
					if time.Now().After(deadline) {
						t.Errorf("approval %s: its agent on board A was not told within %s", r.ApprovalID, ceiling)
						break
					}
					time.Sleep(2 * time.Millisecond)
				}
			}
		})
	}
	for i := range pending {
		work <- i
	}
	close(work)
	wg.Wait()
	if t.Failed() {
		return
	}
	slices.Sort(took)
	p50, p99 := took[len(took)/2], took[len(took)*99/100]
	t.Logf("decided on B, told on A: p50 %v, p99 %v, max %v over %d approvals", p50, p99, took[len(took)-1], len(took))
	if p99 > time.Second {
		t.Errorf("p99 %v from Decide on board B to the agent on board A, want at most 1 s", p99)
	}
	time.Sleep(200 * time.Millisecond) // a second delivery would be on its way
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, r := range pending {
		if ds := f.decisions[r.ApprovalID]; len(ds) != 1 || ds[0].Say != "yes" {
			t.Errorf("approval %s: the agent was told %v, want one yes", r.ApprovalID, ds)
		}
	}
}

// TestBoardProcessKilled: 200 agents, given all three boards, are linked
// to board A (the only one up when they start) and hold 100 pending
// approvals. Board A is killed with SIGKILL. Every agent is linked to B or
// C within 30 s and shown online once; the 100 approvals are still
// pending, each once; decided through C, each is told to its agent once.
func TestBoardProcessKilled(t *testing.T) {
	t.Parallel()
	const agents, approvalsHeld = 200, 100
	dsn := boardtest.PostgresDSN(t)
	addrs := [3]string{"127.0.0.1:0", freeAddr(t), freeAddr(t)}
	boardA, urlA := startPostgresBoard(t, dsn, addrs[0])
	urls := []string{urlA, "http://" + addrs[1], "http://" + addrs[2]}
	all := strings.Join(urls, ",")
	mint := minter(t, dsn)
	admin := boardv1connect.NewApprovalServiceClient(boardtest.NewClient(urlA, mint(identity.MintOptions{Kind: identity.KindOperator, Name: "root", Role: identity.RoleAdmin})))
	if _, err := admin.PutRule(t.Context(), &boardv1.PutRuleRequest{Rule: &boardv1.Rule{Agent: "*", Node: "*", Role: boardv1.Role_ROLE_APPROVER}}); err != nil {
		t.Fatal(err)
	}
	// Started together, as after a deploy: each starts at one of the three
	// at random and moves on from the two that are not up.
	f := newFleet()
	links := make([]*agentlink.Link, agents)
	helds := make([]*agentlink.HeldInMemory, agents)
	ups := make([]<-chan struct{}, agents)
	for i := range agents {
		name := fmt.Sprintf("agent-%03d", i)
		helds[i] = &agentlink.HeldInMemory{}
		links[i], ups[i] = f.start(t, name, all, mint(identity.MintOptions{Kind: identity.KindAgent, Name: name}), helds[i])
	}
	var raised []raisedRefund
	for i, up := range ups {
		select {
		case <-up:
		case <-time.After(ceiling):
			t.Fatalf("agent %d did not link within %s", i, ceiling)
		}
		if links[i].Board() != urlA {
			t.Fatalf("agent %d linked to %s, want board A, the only one up", i, links[i].Board())
		}
		if i < approvalsHeld {
			raised = append(raised, raiseRefund(t, links[i], helds[i], fmt.Sprintf("agent-%03d-run", i), 10+i))
		}
	}
	for _, addr := range addrs[1:] {
		startPostgresBoard(t, dsn, addr)
	}

	killed := time.Now()
	if err := boardA.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = boardA.cmd.Wait()
	boardtest.Eventually(t, 30*time.Second, "every agent linked to board B or C", func() bool {
		f.mu.Lock()
		defer f.mu.Unlock()
		for name, link := range f.links {
			if s := f.sessions[name]; len(s) < 2 || link.Session() != s[len(s)-1] || link.Board() == urlA {
				return false
			}
		}
		return true
	})
	back := time.Since(killed)
	t.Logf("all %d agents linked to B or C %v after A was killed", agents, back)

	viewer := boardtest.NewClient(urls[1], mint(identity.MintOptions{Kind: identity.KindOperator, Name: "viewer", Role: identity.RoleViewer}))
	agentsB := boardv1connect.NewAgentServiceClient(viewer)
	// A's agents linked again elsewhere name their new boards: the sweep of
	// A's lapsed lease leaves them online.
	db, err := store.Open(t.Context(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	boardtest.Eventually(t, ceiling, "board A's lease swept", func() bool {
		n, err := db.BoardLease.Query().Count(t.Context())
		return err == nil && n == 2
	})
	online := 0
	res, err := agentsB.ListAgents(t.Context(), &boardv1.ListAgentsRequest{PageSize: 1000})
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range res.GetAgents() {
		if a.GetState() == boardv1.AgentState_AGENT_STATE_ONLINE {
			online++
		}
	}
	if len(res.GetAgents()) != agents || online != agents {
		t.Errorf("board B lists %d agents, %d online, after A's lease lapsed; want %d, all online", len(res.GetAgents()), online, agents)
	}

	approverC := boardv1connect.NewApprovalServiceClient(boardtest.NewClient(urls[2], mint(identity.MintOptions{Kind: identity.KindOperator, Name: "ada", Role: identity.RoleApprover})))
	after := listApprovals(t, approverC)
	ids := map[string]int{}
	for _, a := range after {
		ids[a.GetId()]++
		if a.GetState() != boardv1.ApprovalState_APPROVAL_STATE_PENDING {
			t.Errorf("approval %s after the kill: %s, want pending", a.GetId(), a.GetState())
		}
	}
	if len(after) != approvalsHeld || len(ids) != approvalsHeld {
		t.Fatalf("%d approvals (%d distinct) after the kill, want %d, each once", len(after), len(ids), approvalsHeld)
	}
	for _, r := range raised {
		if ids[r.ApprovalID] != 1 {
			t.Errorf("approval %s raised before the kill: listed %d times after it", r.ApprovalID, ids[r.ApprovalID])
		}
		if _, err := approverC.Decide(t.Context(), &boardv1.DecideRequest{Id: r.ApprovalID, Say: boardv1.Say_SAY_YES, Digest: r.Digest}); err != nil {
			t.Errorf("Decide %s on board C: %v", r.ApprovalID, err)
		}
	}
	boardtest.Eventually(t, ceiling, "every decision told to its agent", func() bool {
		f.mu.Lock()
		defer f.mu.Unlock()
		return len(f.told) == approvalsHeld
	})
	time.Sleep(500 * time.Millisecond) // a second delivery would be on its way
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, r := range raised {
		if ds := f.decisions[r.ApprovalID]; len(ds) != 1 || ds[0].Say != "yes" {
			t.Errorf("approval %s: its agent was told %v, want one yes", r.ApprovalID, ds)
		}
	}
}
