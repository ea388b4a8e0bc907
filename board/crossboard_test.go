package board_test

import (
	"context"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"connectrpc.com/connect/v2"
	boardv1 "github.com/symphonix/symphonix/api/symphonix/board/v1"
	"github.com/symphonix/symphonix/api/symphonix/board/v1/boardv1connect"
	"github.com/symphonix/symphonix/board"
	"github.com/symphonix/symphonix/ent/agent"
	"github.com/symphonix/symphonix/ent/boardlease"
	"github.com/symphonix/symphonix/identity"
	"github.com/symphonix/symphonix/internal/boardtest"
	"github.com/symphonix/symphonix/store"
	"google.golang.org/protobuf/types/known/durationpb"
)

// boardsOnOneStore starts n boards on one PostgreSQL store, the first with
// rule r put (every board reads it from the store).
func boardsOnOneStore(t *testing.T, n int, r *boardv1.Rule) []*boardtest.Board {
	t.Helper()
	dsn := boardtest.PostgresDSN(t)
	boards := make([]*boardtest.Board, n)
	for i := range boards {
		boards[i] = boardtest.Start(t, boardtest.Options{DSN: dsn})
	}
	if r != nil {
		putRule(t, approvalsClient(boards[0], boards[0].OperatorToken("root", identity.RoleAdmin)), r)
	}
	return boards
}

// nextDecision waits for the link's next decision, within d.
func (l *rawLink) nextDecision(d time.Duration) (*boardv1.ApprovalDecision, time.Duration) {
	l.t.Helper()
	start := time.Now()
	got := make(chan *boardv1.ApprovalDecision, 1)
	go func() {
		for {
			m, err := l.s.Receive()
			if err != nil {
				close(got)
				return
			}
			if dec := m.GetDecision(); dec != nil {
				got <- dec
				return
			}
		}
	}()
	select {
	case dec, ok := <-got:
		if !ok {
			l.t.Fatal("the link ended before a decision")
		}
		return dec, time.Since(start)
	case <-time.After(d):
		l.t.Fatalf("no decision within %v", d)
		return nil, 0
	}
}

// TestDecisionAcrossBoards: an agent linked to board A raises an approval;
// an operator decides it on board B; the decision reaches the agent on A,
// once, within a second.
func TestDecisionAcrossBoards(t *testing.T) {
	t.Parallel()
	boards := boardsOnOneStore(t, 2, &boardv1.Rule{Agent: "*", Node: "*", Role: boardv1.Role_ROLE_APPROVER})
	a, b := boards[0], boards[1]
	l := openLink(t, a, "desk")
	raised := l.raised(refund("run-1", 1))
	// Notifications on the boards' channel that are not a board's wake
	// are ignored.
	for _, junk := range []string{"not json", `{"k":"other","id":"desk"}`, `{"k":"agent"}`, `{"b":"x","k":"agent","id":"nobody"}`} {
		if err := store.Notify(t.Context(), b.Store, "symphonix_wake", junk); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := decide(approver(b, "ann"), t, raised.GetApprovalId(), "yes", digestOf(1), ""); err != nil {
		t.Fatalf("Decide on board B: %v", err)
	}
	dec, took := l.nextDecision(within)
	if dec.GetApprovalId() != raised.GetApprovalId() || dec.GetSay() != boardv1.Say_SAY_YES {
		t.Fatalf("decision on the link = %v, want yes on %s", dec, raised.GetApprovalId())
	}
	if took > time.Second {
		t.Errorf("the decision reached the agent on A %v after B took it, want within 1s", took)
	}
	// Delivered once: marked, so neither board sends it again.
	boardtest.Eventually(t, within, "the decision marked delivered", func() bool {
		row, err := a.Store.Approval.Get(t.Context(), raised.GetApprovalId())
		return err == nil && row.DeliveredAt != nil
	})
	if ds := l.decisionsUntilPong(1); len(ds) != 0 {
		t.Errorf("after delivery the link got %v, want nothing more", ds)
	}
}

// TestLostWakeCaughtUp: a wake lost on its way (dropped by a test hook on
// the board that decided) is made up by the holding board's catch-up.
func TestLostWakeCaughtUp(t *testing.T) {
	t.Parallel()
	boards := boardsOnOneStore(t, 2, &boardv1.Rule{Agent: "*", Node: "*", Role: boardv1.Role_ROLE_APPROVER})
	a, b := boards[0], boards[1]
	b.Board.DropWakes(func(kind, id string) bool { return kind == "agent" })
	l := openLink(t, a, "desk")
	raised := l.raised(refund("run-1", 1))
	if _, err := decide(approver(b, "ann"), t, raised.GetApprovalId(), "no", digestOf(1), ""); err != nil {
		t.Fatalf("Decide on board B: %v", err)
	}
	dec, took := l.nextDecision(within)
	if dec.GetApprovalId() != raised.GetApprovalId() || dec.GetSay() != boardv1.Say_SAY_NO {
		t.Fatalf("decision on the link = %v, want no on %s", dec, raised.GetApprovalId())
	}
	t.Logf("caught up after %v", took.Round(time.Millisecond))
}

// TestWatchAcrossBoards: a watch of approvals on board B sees an approval
// raised through board A.
func TestWatchAcrossBoards(t *testing.T) {
	t.Parallel()
	boards := boardsOnOneStore(t, 2, &boardv1.Rule{Agent: "*", Node: "*", Role: boardv1.Role_ROLE_APPROVER})
	a, b := boards[0], boards[1]
	ctx, cancel := context.WithTimeout(t.Context(), within)
	defer cancel()
	w, err := approvalsClient(b, b.OperatorToken("vic", identity.RoleViewer)).WatchApprovals(ctx, &boardv1.WatchApprovalsRequest{History: ptr(int32(0))})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	if m, err := w.Receive(); err != nil || m.GetEvent() != boardv1.ApprovalEvent_APPROVAL_EVENT_SYNCED {
		t.Fatalf("first message = %v, %v; want synced", m, err)
	}
	l := openLink(t, a, "desk")
	raised := l.raised(refund("run-1", 1))
	for {
		m, err := w.Receive()
		if err != nil {
			t.Fatalf("the watch on B ended without the approval raised on A: %v", err)
		}
		if m.GetApproval().GetId() == raised.GetApprovalId() && m.GetEvent() == boardv1.ApprovalEvent_APPROVAL_EVENT_RAISED {
			return
		}
	}
}

// TestSwitchAcrossBoards: a tool switched on for an agent on board B
// reaches the agent's link on board A.
func TestSwitchAcrossBoards(t *testing.T) {
	t.Parallel()
	boards := boardsOnOneStore(t, 2, nil)
	a, b := boards[0], boards[1]
	l := toolLink(t, a, "desk", "orders.refund")
	if _, err := toolsClient(b, b.OperatorToken("root", identity.RoleAdmin)).SetToolSwitch(t.Context(), &boardv1.SetToolSwitchRequest{
		Agent: "desk", Tool: "orders.refund", On: true,
	}); err != nil {
		t.Fatalf("SetToolSwitch on board B: %v", err)
	}
	deadline := time.Now().Add(within)
	for time.Now().Before(deadline) {
		for _, sw := range l.switchesUntilPong(1) {
			if len(sw.GetOn()) == 1 && sw.GetOn()[0] == "orders.refund" {
				return
			}
		}
	}
	t.Fatal("the switch made on B never reached the agent on A")
}

// TestPresencePerBoard: a board joining a store leaves the agents linked
// to the others online; the agents of a board whose lease ran out (one
// killed) are marked offline by the boards left, and the lease is gone.
func TestPresencePerBoard(t *testing.T) {
	t.Parallel()
	dsn := boardtest.PostgresDSN(t)
	a := boardtest.Start(t, boardtest.Options{DSN: dsn})
	b := boardtest.Start(t, boardtest.Options{DSN: dsn})
	openLink(t, a, "on-a")
	openLink(t, b, "on-b")
	online := func(name string) bool {
		row, err := a.Store.Agent.Query().Where(agent.Name(name)).Only(t.Context())
		return err == nil && row.Online
	}
	boardtest.Eventually(t, within, "both agents online", func() bool { return online("on-a") && online("on-b") })
	boardtest.Start(t, boardtest.Options{DSN: dsn})
	if !online("on-a") || !online("on-b") {
		t.Fatalf("after a third board started: on-a online %v, on-b online %v; want both still online", online("on-a"), online("on-b"))
	}

	past := time.Now().Add(-time.Minute).UTC()
	if err := a.Store.BoardLease.Create().SetID("dead").SetStartedAt(past).SetExpiresAt(past.Add(time.Second)).Exec(t.Context()); err != nil {
		t.Fatal(err)
	}
	if err := a.Store.Agent.Create().SetName("orphan").SetOnline(true).SetBoard("dead").SetFirstSeen(past).SetLastSeen(past).Exec(t.Context()); err != nil {
		t.Fatal(err)
	}
	boardtest.Eventually(t, within, "the dead board's agent offline", func() bool { return !online("orphan") })
	if !online("on-a") || !online("on-b") {
		t.Errorf("after the sweep: on-a online %v, on-b online %v; want both still online", online("on-a"), online("on-b"))
	}
	// The sweep forgets the lease after it has marked the board's agents
	// offline, in a statement of its own: a sweep that fails between the
	// two finds them again at the next renewal.
	boardtest.Eventually(t, within, "the dead board's lease removed", func() bool {
		n, err := a.Store.BoardLease.Query().Where(boardlease.ID("dead")).Count(t.Context())
		return err == nil && n == 0
	})
}

// TestLimitsAcrossBoards: the boards of one store count a limit together:
// five wrong passwords for one account spread over two boards lock it on
// both, and one operator's refused Decides spread over two boards write
// one burst of audit entries between them.
func TestLimitsAcrossBoards(t *testing.T) {
	t.Parallel()
	const burst = 5
	dsn := boardtest.PostgresDSN(t)
	opts := boardtest.Options{DSN: dsn, Limits: board.Limits{AuditBurst: burst, AuditPerSecond: 0.001}}
	a, b := boardtest.Start(t, opts), boardtest.Start(t, opts)
	a.AddUser("alice@example.com", identity.RoleAdmin, password)
	for i := range 5 {
		on := []*boardtest.Board{a, b}[i%2]
		resp, _ := on.PostJSON("/auth/signin", map[string]string{"email": "alice@example.com", "password": "wrong password " + strconv.Itoa(i)}, "", "")
		if resp.StatusCode != http.StatusUnauthorized {
			t.Fatalf("attempt %d: %s, want 401", i+1, resp.Status)
		}
	}
	for _, on := range []*boardtest.Board{a, b} {
		resp, body := on.PostJSON("/auth/signin", map[string]string{"email": "alice@example.com", "password": password}, "", "")
		if resp.StatusCode != http.StatusTooManyRequests {
			t.Fatalf("the right password after five wrong on two boards: %s %s, want 429", resp.Status, body)
		}
	}

	putRule(t, approvalsClient(a, a.OperatorToken("root", identity.RoleAdmin)), &boardv1.Rule{Agent: "*", Node: "*", Role: boardv1.Role_ROLE_APPROVER})
	tokenA := a.OperatorToken("ann", identity.RoleApprover)
	for i := range 4 * burst {
		on := []*boardtest.Board{a, b}[i%2]
		if _, err := decide(approvalsClient(on, tokenA), t, "apr-none", "yes", digestOf(1), ""); connect.CodeOf(err) != connect.CodeNotFound {
			t.Fatalf("refused Decide %d: %v, want not_found", i+1, err)
		}
	}
	deadline := time.Now().Add(within)
	for auditCounts(t, a)["approval.refuse"] < burst && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	time.Sleep(100 * time.Millisecond)
	if n := auditCounts(t, a)["approval.refuse"]; n != burst {
		t.Fatalf("%d refusals audited for %d refused Decides on two boards, want the burst of %d", n, 4*burst, burst)
	}
}

// TestExpiryAcrossBoards: an approval raised through board A and expired
// by board B (A does not look for expired approvals in the test's time)
// reaches the agent on A as expired.
func TestExpiryAcrossBoards(t *testing.T) {
	t.Parallel()
	dsn := boardtest.PostgresDSN(t)
	a := boardtest.Start(t, boardtest.Options{DSN: dsn, RevocationPoll: time.Hour})
	b := boardtest.Start(t, boardtest.Options{DSN: dsn, RevocationPoll: 20 * time.Millisecond})
	putRule(t, approvalsClient(b, b.OperatorToken("root", identity.RoleAdmin)),
		&boardv1.Rule{Agent: "*", Node: "*", Role: boardv1.Role_ROLE_APPROVER, TimeLimit: durationpb.New(200 * time.Millisecond)})
	l := openLink(t, a, "desk")
	raised := l.raised(refund("run-1", 1))
	dec, took := l.nextDecision(within)
	if dec.GetSay() != boardv1.Say_SAY_EXPIRED || dec.GetApprovalId() != raised.GetApprovalId() || dec.GetDigest() != digestOf(1) || dec.GetDecideTime() == nil {
		t.Fatalf("decision on A's link: %v, want the approval expired", dec)
	}
	if took > 2*time.Second {
		t.Errorf("the expiry reached the agent on A %v after the raise, want about its 200 ms limit", took)
	}
}

// TestBoardCutOffFromStore: a board whose connections to the store are
// cut refuses a decision with unavailable, saying why, and decides
// nothing (the approval stays pending on the other board), and is not
// ready; once the store can be reached again it decides, and the
// decision reaches the agent on the other board once.
func TestBoardCutOffFromStore(t *testing.T) {
	t.Parallel()
	dsn := boardtest.PostgresDSN(t)
	proxy, cutDSN := boardtest.PostgresProxy(t, dsn)
	a := boardtest.Start(t, boardtest.Options{DSN: dsn})
	b := boardtest.Start(t, boardtest.Options{DSN: cutDSN})
	admin := approvalsClient(a, a.OperatorToken("root", identity.RoleAdmin))
	putRule(t, admin, &boardv1.Rule{Agent: "*", Node: "*", Role: boardv1.Role_ROLE_APPROVER})
	l := openLink(t, a, "desk")
	raised := l.raised(refund("run-1", 1))
	ann := approver(b, "ann")

	proxy.Cut()
	_, err := decide(ann, t, raised.GetApprovalId(), "yes", digestOf(1), "")
	if connect.CodeOf(err) != connect.CodeUnavailable || !strings.Contains(err.Error(), "the board cannot reach its store now; try again") {
		t.Fatalf("Decide on the board cut off from its store: %v, want unavailable saying it cannot reach its store", err)
	}
	if got := stateOf(t, admin, raised.GetApprovalId()).GetState(); got != boardv1.ApprovalState_APPROVAL_STATE_PENDING {
		t.Fatalf("approval after the refused Decide: %s, want pending", got)
	}
	resp, err := http.Get(b.URL + "/readyz")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusServiceUnavailable {
		t.Errorf("/readyz of the board cut off: %s, want 503", resp.Status)
	}

	proxy.Mend()
	boardtest.Eventually(t, within, "a Decide on the board joined to its store again", func() bool {
		_, err := decide(ann, t, raised.GetApprovalId(), "yes", digestOf(1), "")
		return err == nil
	})
	if dec, _ := l.nextDecision(within); dec.GetSay() != boardv1.Say_SAY_YES || dec.GetApprovalId() != raised.GetApprovalId() {
		t.Fatalf("decision on A's link: %v, want the yes", dec)
	}
	l.ping(1)
	if ds := l.decisionsUntilPong(1); len(ds) != 0 {
		t.Errorf("decisions after the first: %v, want none", ds)
	}
}

// TestStoreRestartUnderLoad: two boards reach PostgreSQL through a proxy
// that drops every connection for a moment (the database restarting)
// while an agent on one raises approvals and an operator on the other
// decides them. The link stays up; every raise the board acknowledged is
// in the store, once; every decision acknowledged is recorded and reaches
// the agent once.
func TestStoreRestartUnderLoad(t *testing.T) {
	t.Parallel()
	dsn := boardtest.PostgresDSN(t)
	proxy, through := boardtest.PostgresProxy(t, dsn)
	a := boardtest.Start(t, boardtest.Options{DSN: through})
	b := boardtest.Start(t, boardtest.Options{DSN: through})
	putRule(t, approvalsClient(a, a.OperatorToken("root", identity.RoleAdmin)), &boardv1.Rule{Agent: "*", Node: "*", Role: boardv1.Role_ROLE_APPROVER})
	l := openLink(t, a, "desk")
	ann := approver(b, "ann")

	var raised []string
	decided := map[string]bool{}
	delivered := map[string]int{}
	refused := 0
	start := time.Now()
	for i := 1; time.Since(start) < 2*time.Second; i++ {
		switch since := time.Since(start); {
		case since > 500*time.Millisecond && since < time.Second:
			proxy.Cut()
		default:
			proxy.Mend()
		}
		r := refund(fmt.Sprintf("run-%d", i), i)
		r.RequestId = l.requestID()
		l.send(&boardv1.LinkRequest{Kind: &boardv1.LinkRequest_Raise{Raise: r}})
		var answer *boardv1.LinkResponse
		for answer == nil {
			m := l.next()
			switch {
			case m.GetDecision() != nil:
				delivered[m.GetDecision().GetApprovalId()]++
			case m.GetRaised().GetRequestId() == r.RequestId || m.GetError().GetRequestId() == r.RequestId:
				answer = m
			}
		}
		if e := answer.GetError(); e != nil {
			if e.GetCode() != boardv1.LinkErrorCode_LINK_ERROR_CODE_UNAVAILABLE {
				t.Fatalf("raise %d: %v, want raised or unavailable", i, e)
			}
			refused++
			continue
		}
		id := answer.GetRaised().GetApprovalId()
		raised = append(raised, id)
		if _, err := decide(ann, t, id, "yes", digestOf(i), ""); err == nil {
			decided[id] = true
		} else if connect.CodeOf(err) != connect.CodeUnavailable {
			t.Fatalf("Decide %s: %v, want done or unavailable", id, err)
		}
	}
	proxy.Mend()
	t.Logf("%d raises acknowledged, %d refused while the store was away, %d decisions acknowledged", len(raised), refused, len(decided))
	if refused == 0 || len(decided) == 0 {
		t.Fatalf("%d raises refused and %d decided: the store was never away, or never back", refused, len(decided))
	}

	db, err := store.Open(t.Context(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for _, id := range raised {
		row, err := db.Approval.Get(t.Context(), id)
		if err != nil {
			t.Fatalf("approval %s, acknowledged: %v", id, err)
		}
		if decided[id] && row.State != board.StateApproved {
			t.Errorf("approval %s, its yes acknowledged: %s", id, row.State)
		}
	}
	// Decisions the link did not get at once are caught up.
	deadline := time.Now().Add(within + 10*time.Second)
	for seq := uint64(1); ; seq++ {
		for _, d := range l.decisionsUntilPong(seq) {
			delivered[d.GetApprovalId()]++
		}
		missing := 0
		for id := range decided {
			if delivered[id] == 0 {
				missing++
			}
		}
		if missing == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d acknowledged decisions never reached the agent", missing)
		}
		time.Sleep(100 * time.Millisecond)
	}
	for id, n := range delivered {
		if n != 1 {
			t.Errorf("approval %s: delivered %d times, want once", id, n)
		}
	}
}

// TestRevokedAcrossBoards: a token revoked through board A ends, within
// the revocation poll and a little, the watch it holds open on board B,
// and B refuses it from then on.
func TestRevokedAcrossBoards(t *testing.T) {
	t.Parallel()
	boards := boardsOnOneStore(t, 2, nil)
	a, b := boards[0], boards[1]
	m := b.Mint(identity.MintOptions{Kind: identity.KindOperator, Name: "vic", Role: identity.RoleViewer})
	ctx, cancel := context.WithTimeout(t.Context(), 2*within)
	defer cancel()
	w, err := approvalsClient(b, m.Token).WatchApprovals(ctx, &boardv1.WatchApprovalsRequest{History: ptr(int32(0))})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	if msg, err := w.Receive(); err != nil || msg.GetEvent() != boardv1.ApprovalEvent_APPROVAL_EVENT_SYNCED {
		t.Fatalf("first message = %v, %v; want synced", msg, err)
	}
	if err := a.Board.Tokens().Revoke(t.Context(), m.ID, time.Now()); err != nil {
		t.Fatal(err)
	}
	revoked := time.Now()
	var ended error
	for ended == nil {
		_, ended = w.Receive()
	}
	took := time.Since(revoked)
	if connect.CodeOf(ended) != connect.CodeUnauthenticated {
		t.Errorf("the watch on B ended with %v, want unauthenticated", ended)
	}
	if took > 2*time.Second {
		t.Errorf("the watch on B ended %v after the revocation on A, want within the 1 s poll", took)
	}
	if _, err := approvalsClient(b, m.Token).ListApprovals(t.Context(), &boardv1.ListApprovalsRequest{}); connect.CodeOf(err) != connect.CodeUnauthenticated {
		t.Errorf("ListApprovals on B with the revoked token: %v, want unauthenticated", err)
	}
}

// TestStartRunAcrossBoards: a run started through board B reaches the
// agent linked to board A, and B answers with the agent's answer, or its
// refusal with its code and words; a relay whose wake is lost is caught up.
func TestStartRunAcrossBoards(t *testing.T) {
	t.Parallel()
	boards := boardsOnOneStore(t, 2, nil)
	a, b := boards[0], boards[1]
	l, _ := openLinkWith(t, a, &boardv1.Hello{Name: "desk", Protocol: board.Protocol, Capabilities: []string{"fire", "runs"}})
	ops := runsClient(b, b.OperatorToken("root", identity.RoleAdmin))
	start := func() <-chan fireResult {
		ch := make(chan fireResult, 1)
		go func() {
			res, err := ops.StartRun(t.Context(), &boardv1.StartRunRequest{Agent: "desk", Thread: "t-1"})
			ch <- fireResult{res, err}
		}()
		return ch
	}
	begun := time.Now()
	done := start()
	fire := l.next().GetFire()
	if fire == nil || fire.GetBy() != "root" || fire.GetThread() != "t-1" {
		t.Fatalf("the agent on A got %v, want root's fire on t-1", fire)
	}
	l.send(&boardv1.LinkRequest{Kind: &boardv1.LinkRequest_Fired{Fired: &boardv1.Fired{RequestId: fire.GetRequestId(), RunId: "run-9", Thread: "t-1"}}})
	if r := <-done; r.err != nil || r.start.GetRunId() != "run-9" {
		t.Fatalf("StartRun on B: %v %v, want run-9", r.start, r.err)
	}
	t.Logf("started through B, answered from A, in %v", time.Since(begun).Round(time.Millisecond))

	done = start()
	fire = l.next().GetFire()
	l.send(&boardv1.LinkRequest{Kind: &boardv1.LinkRequest_Error{Error: &boardv1.LinkError{RequestId: fire.GetRequestId(),
		Code: boardv1.LinkErrorCode_LINK_ERROR_CODE_INVALID_ARGUMENT, Message: "input.amount: must be 5 or more"}}})
	if r := <-done; connect.CodeOf(r.err) != connect.CodeInvalidArgument || !strings.Contains(r.err.Error(), "the agent refused: input.amount: must be 5 or more") {
		t.Errorf("the agent's refusal through B: %v, want invalid_argument with its words", r.err)
	}

	b.Board.DropWakes(func(kind, id string) bool { return kind == "relay" })
	done = start()
	fire = l.next().GetFire()
	l.send(&boardv1.LinkRequest{Kind: &boardv1.LinkRequest_Fired{Fired: &boardv1.Fired{RequestId: fire.GetRequestId(), RunId: "run-10", Thread: "t-1"}}})
	if r := <-done; r.err != nil || r.start.GetRunId() != "run-10" {
		t.Fatalf("StartRun on B with its wake lost: %v %v, want run-10", r.start, r.err)
	}

	// An agent linked nowhere is refused on every board.
	if _, err := ops.StartRun(t.Context(), &boardv1.StartRunRequest{Agent: "nobody"}); connect.CodeOf(err) != connect.CodeNotFound {
		t.Errorf("StartRun of an agent never seen: %v, want not_found", err)
	}
}

// TestChatNotRelayed: the chat window of an agent linked to board A is
// refused on board B, saying why: what is said there never passes through
// the store.
func TestChatNotRelayed(t *testing.T) {
	t.Parallel()
	boards := boardsOnOneStore(t, 2, nil)
	a, b := boards[0], boards[1]
	openLinkWith(t, a, &boardv1.Hello{Name: "desk", Protocol: board.Protocol, Capabilities: []string{"chat"}})
	chat := boardv1connect.NewChatServiceClient(b.Client(b.OperatorToken("root", identity.RoleAdmin)))
	_, err := chat.DescribeAgent(t.Context(), &boardv1.DescribeAgentRequest{Agent: "desk"})
	if connect.CodeOf(err) != connect.CodeFailedPrecondition || !strings.Contains(err.Error(), "linked to another board of the store") {
		t.Errorf("DescribeAgent on B of an agent on A: %v, want failed_precondition saying it is linked to another board", err)
	}
}
