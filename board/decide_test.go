package board_test

import (
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"connectrpc.com/connect/v2"
	"google.golang.org/protobuf/types/known/durationpb"

	boardv1 "github.com/symphonix/symphonix/api/symphonix/board/v1"
	"github.com/symphonix/symphonix/api/symphonix/board/v1/boardv1connect"
	"github.com/symphonix/symphonix/audit"
	"github.com/symphonix/symphonix/board"
	"github.com/symphonix/symphonix/identity"
	"github.com/symphonix/symphonix/internal/boardtest"
)

// decideBoard is a board with one rule, put by an admin.
func decideBoard(t *testing.T, r *boardv1.Rule, opts boardtest.Options) (*boardtest.Board, boardv1connect.ApprovalServiceClient) {
	t.Helper()
	bt := boardtest.Start(t, opts)
	admin := approvalsClient(bt, bt.OperatorToken("root", identity.RoleAdmin))
	if r != nil {
		putRule(t, admin, r)
	}
	return bt, admin
}

func approver(bt *boardtest.Board, name string) boardv1connect.ApprovalServiceClient {
	return approvalsClient(bt, bt.OperatorToken(name, identity.RoleApprover))
}

// raisedAmid raises r, setting aside any decisions that arrive first.
func (l *rawLink) raisedAmid(r *boardv1.Raise, decisions *[]*boardv1.ApprovalDecision) *boardv1.Raised {
	l.t.Helper()
	r.RequestId = l.requestID()
	l.send(&boardv1.LinkRequest{Kind: &boardv1.LinkRequest_Raise{Raise: r}})
	for {
		m := l.next()
		if d := m.GetDecision(); d != nil {
			*decisions = append(*decisions, d)
			continue
		}
		if m.GetRaised() == nil || m.GetRaised().GetRequestId() != r.RequestId {
			l.t.Fatalf("raise(%v) = %v, want raised", r, m)
		}
		return m.GetRaised()
	}
}

// decisionsUntilPong pings and returns the decisions that arrive before
// the pong.
func (l *rawLink) decisionsUntilPong(seq uint64) []*boardv1.ApprovalDecision {
	l.t.Helper()
	l.send(&boardv1.LinkRequest{Kind: &boardv1.LinkRequest_Ping{Ping: &boardv1.Ping{Seq: seq}}})
	var out []*boardv1.ApprovalDecision
	for {
		m := l.next()
		switch {
		case m.GetDecision() != nil:
			out = append(out, m.GetDecision())
		case m.GetPong().GetSeq() == seq:
			return out
		default:
			l.t.Fatalf("waiting for pong %d: got %v", seq, m)
		}
	}
}

func (l *rawLink) hangUp() {
	l.t.Helper()
	_ = l.s.CloseSend()
	for {
		if _, err := l.s.Receive(); err != nil {
			break
		}
	}
	_ = l.s.Close()
}

// decide says "yes" or "no" (or, to be refused, anything else) to id.
func decide(c boardv1connect.ApprovalServiceClient, t *testing.T, id, say, digest, reason string) (*boardv1.Approval, error) {
	s := boardv1.Say(boardv1.Say_value["SAY_"+strings.ToUpper(say)])
	if s == boardv1.Say_SAY_UNSPECIFIED && say != "" {
		s = 42 // a say no value of the enum has
	}
	res, err := c.Decide(t.Context(), &boardv1.DecideRequest{Id: id, Say: s, Digest: digest, Reason: reason})
	return res.GetApproval(), err
}

func stateOf(t *testing.T, c boardv1connect.ApprovalServiceClient, id string) *boardv1.Approval {
	t.Helper()
	res, err := c.GetApproval(t.Context(), &boardv1.GetApprovalRequest{Id: id})
	if err != nil {
		t.Fatalf("GetApproval(%s): %v", id, err)
	}
	return res.GetApproval()
}

func countSubject(entries []string, id string) int {
	n := 0
	for _, e := range entries {
		if strings.HasPrefix(e, id+" ") {
			n++
		}
	}
	return n
}

func TestDecideYes(t *testing.T) {
	t.Parallel()
	bt, admin := decideBoard(t, &boardv1.Rule{Agent: "*", Node: "*", Role: boardv1.Role_ROLE_APPROVER}, boardtest.Options{})
	l := openLink(t, bt, "desk")
	a := l.raised(refund("run-1", 1))
	ann := approver(bt, "ann")

	// Another digest: the operator saw another operation; nothing changes.
	if _, err := decide(ann, t, a.GetApprovalId(), "yes", digestOf(2), ""); connect.CodeOf(err) != connect.CodeFailedPrecondition ||
		!strings.Contains(err.Error(), "another operation") {
		t.Fatalf("Decide with another digest = %v, want failed_precondition", err)
	}
	if got := stateOf(t, admin, a.GetApprovalId()); got.GetState() != boardv1.ApprovalState_APPROVAL_STATE_PENDING || got.GetDecision() != nil || len(got.GetVotes()) != 0 {
		t.Fatalf("after a refused decide: %v, want pending and untouched", got)
	}
	// A viewer may not decide.
	if _, err := decide(approvalsClient(bt, bt.OperatorToken("vic", identity.RoleViewer)), t, a.GetApprovalId(), "yes", digestOf(1), ""); connect.CodeOf(err) != connect.CodePermissionDenied {
		t.Fatalf("viewer Decide = %v, want permission_denied", err)
	}
	// A bad say.
	if _, err := decide(ann, t, a.GetApprovalId(), "maybe", digestOf(1), ""); connect.CodeOf(err) != connect.CodeInvalidArgument {
		t.Fatalf("Decide say maybe = %v, want invalid_argument", err)
	}
	// An agent token.
	if _, err := decide(approvalsClient(bt, bt.AgentToken("desk")), t, a.GetApprovalId(), "yes", digestOf(1), ""); connect.CodeOf(err) != connect.CodeUnauthenticated {
		t.Fatalf("agent Decide = %v, want unauthenticated", err)
	}

	got, err := decide(ann, t, a.GetApprovalId(), "yes", digestOf(1), "fine")
	if err != nil || got.GetState() != boardv1.ApprovalState_APPROVAL_STATE_APPROVED || got.GetDecision().GetSay() != boardv1.Say_SAY_YES || got.GetDecision().GetDigest() != digestOf(1) {
		t.Fatalf("Decide yes = %v, %v; want approved", got, err)
	}
	ds := l.decisionsUntilPong(1)
	if len(ds) != 1 || ds[0].GetApprovalId() != a.GetApprovalId() || ds[0].GetSay() != boardv1.Say_SAY_YES || ds[0].GetDigest() != digestOf(1) ||
		ds[0].GetReason() != "fine" || len(ds[0].GetWho()) != 1 || ds[0].GetWho()[0] != "ann" {
		t.Fatalf("decisions on the link: %v, want the one yes for %s", ds, digestOf(1))
	}
	// Decided: a second decision is refused.
	if _, err := decide(approver(bt, "bob"), t, a.GetApprovalId(), "no", digestOf(1), ""); connect.CodeOf(err) != connect.CodeFailedPrecondition {
		t.Fatalf("second Decide = %v, want failed_precondition", err)
	}
	// A raise of the decided approval returns the decision, and nothing
	// more goes out on the link.
	again := l.raised(refund("run-1", 1))
	if again.GetState() != boardv1.ApprovalState_APPROVAL_STATE_APPROVED || again.GetDecision().GetSay() != boardv1.Say_SAY_YES {
		t.Fatalf("re-raise = %v, want approved with its decision", again)
	}
	if ds := l.decisionsUntilPong(2); len(ds) != 0 {
		t.Fatalf("decisions after re-raise: %v, want none", ds)
	}
	acts := auditActions(t, bt)
	if n := countSubject(acts["approval.decide"], a.GetApprovalId()); n != 1 {
		t.Errorf("approval.decide entries %v, want one", acts["approval.decide"])
	}
	// The viewer and the agent token are refused by the token policy,
	// before the approval is looked at: logged, not in the audit log.
	if n := countSubject(acts["approval.refuse"], a.GetApprovalId()); n != 3 {
		t.Errorf("approval.refuse entries %v, want 3 (digest, say, decided)", acts["approval.refuse"])
	}
}

func TestDecideNoAndReason(t *testing.T) {
	t.Parallel()
	bt, admin := decideBoard(t, &boardv1.Rule{Agent: "*", Node: "*", Role: boardv1.Role_ROLE_APPROVER, Quorum: quorum(2), RequireReason: true}, boardtest.Options{})
	l := openLink(t, bt, "desk")
	a := l.raised(refund("run-1", 1))
	ann := approver(bt, "ann")
	if _, err := decide(ann, t, a.GetApprovalId(), "no", digestOf(1), ""); connect.CodeOf(err) != connect.CodeInvalidArgument || !strings.Contains(err.Error(), "reason") {
		t.Fatalf("Decide without a required reason = %v, want invalid_argument naming reason", err)
	}
	if _, err := decide(ann, t, a.GetApprovalId(), "yes", digestOf(1), "ok"); err != nil {
		t.Fatal(err)
	}
	// A no from anyone allowed decides no at once, whatever the yeses.
	got, err := decide(approver(bt, "bob"), t, a.GetApprovalId(), "no", digestOf(1), "too much")
	if err != nil || got.GetState() != boardv1.ApprovalState_APPROVAL_STATE_REJECTED || got.GetDecision().GetSay() != boardv1.Say_SAY_NO {
		t.Fatalf("Decide no = %v, %v; want rejected", got, err)
	}
	if ds := l.decisionsUntilPong(1); len(ds) != 1 || ds[0].GetSay() != boardv1.Say_SAY_NO || ds[0].GetReason() != "too much" {
		t.Fatalf("decisions on the link: %v, want one no", ds)
	}
	if s := stateOf(t, admin, a.GetApprovalId()).GetState(); s != boardv1.ApprovalState_APPROVAL_STATE_REJECTED {
		t.Fatalf("state %s, want rejected", s)
	}
}

func TestDecidePeopleAndQuorum(t *testing.T) {
	t.Parallel()
	bt, admin := decideBoard(t, &boardv1.Rule{Agent: "*", Node: "*", People: []string{"ann", "bob"}, Quorum: quorum(2)}, boardtest.Options{})
	l := openLink(t, bt, "desk")
	a := l.raised(refund("run-1", 1))
	id := a.GetApprovalId()
	// Someone the rule does not name, even an admin.
	if _, err := decide(approver(bt, "cat"), t, id, "yes", digestOf(1), ""); connect.CodeOf(err) != connect.CodePermissionDenied {
		t.Fatalf("cat Decide = %v, want permission_denied", err)
	}
	if _, err := decide(admin, t, id, "yes", digestOf(1), ""); connect.CodeOf(err) != connect.CodePermissionDenied {
		t.Fatalf("admin not named Decide = %v, want permission_denied", err)
	}
	ann := approver(bt, "ann")
	for i := range 2 {
		got, err := decide(ann, t, id, "yes", digestOf(1), "")
		if err != nil || got.GetState() != boardv1.ApprovalState_APPROVAL_STATE_PENDING || len(got.GetVotes()) != 1 || got.GetVotes()[0] != "ann" {
			t.Fatalf("ann's yes #%d = %v, %v; want still pending with one vote", i+1, got, err)
		}
	}
	if ds := l.decisionsUntilPong(1); len(ds) != 0 {
		t.Fatalf("decisions before the quorum: %v", ds)
	}
	got, err := decide(approver(bt, "bob"), t, id, "yes", digestOf(1), "")
	if err != nil || got.GetState() != boardv1.ApprovalState_APPROVAL_STATE_APPROVED || strings.Join(got.GetDecision().GetWho(), ",") != "ann,bob" {
		t.Fatalf("bob's yes = %v, %v; want approved by ann and bob", got, err)
	}
	if ds := l.decisionsUntilPong(2); len(ds) != 1 || ds[0].GetSay() != boardv1.Say_SAY_YES {
		t.Fatalf("decisions on the link: %v, want one yes", ds)
	}
	acts := auditActions(t, bt)
	if len(acts["approval.vote"]) != 2 || len(acts["approval.decide"]) != 1 {
		t.Errorf("votes %v, decisions %v; want 2 and 1", acts["approval.vote"], acts["approval.decide"])
	}
}

func TestDecideNotGoverned(t *testing.T) {
	t.Parallel()
	bt, admin := decideBoard(t, nil, boardtest.Options{})
	a := openLink(t, bt, "desk").raised(refund("run-1", 1))
	if _, err := decide(admin, t, a.GetApprovalId(), "yes", digestOf(1), ""); connect.CodeOf(err) != connect.CodeFailedPrecondition || !strings.Contains(err.Error(), "not governed") {
		t.Fatalf("Decide not governed = %v, want failed_precondition", err)
	}
	if _, err := decide(admin, t, "apr-none", "yes", digestOf(1), ""); connect.CodeOf(err) != connect.CodeNotFound {
		t.Fatalf("Decide unknown = %v, want not_found", err)
	}
}

// TestDecideRace: yes and no from two operators at the same moment,
// repeated 1,000 times (50 with -short): exactly one wins each time, with
// exactly one decision entry.
func TestDecideRace(t *testing.T) {
	t.Parallel()
	// A thousand raises and refusals as fast as they go: past the audit
	// limit of one agent and one operator, which is not what this is about.
	bt, _ := decideBoard(t, &boardv1.Rule{Agent: "*", Node: "*", Role: boardv1.Role_ROLE_APPROVER},
		boardtest.Options{Limits: board.Limits{AuditBurst: 10000}})
	l := openLink(t, bt, "desk")
	ann, bob := approver(bt, "ann"), approver(bt, "bob")
	rounds := 1000
	if testing.Short() {
		rounds = 50
	}
	var pushed []*boardv1.ApprovalDecision
	ids := make([]string, rounds)
	for i := range rounds {
		a := l.raisedAmid(refund(fmt.Sprint("run-", i), 1), &pushed)
		ids[i] = a.GetApprovalId()
		var wg sync.WaitGroup
		var errs [2]error
		var states [2]boardv1.ApprovalState
		for j, c := range []boardv1connect.ApprovalServiceClient{ann, bob} {
			wg.Go(func() {
				got, err := decide(c, t, a.GetApprovalId(), []string{"yes", "no"}[j], digestOf(1), "")
				errs[j], states[j] = err, got.GetState()
			})
		}
		wg.Wait()
		wins := 0
		for j := range 2 {
			switch {
			case errs[j] == nil:
				wins++
			case connect.CodeOf(errs[j]) != connect.CodeFailedPrecondition:
				t.Fatalf("round %d: %v, want failed_precondition for the loser", i, errs[j])
			}
		}
		if wins != 1 {
			t.Fatalf("round %d: %d won (%v), want exactly one", i, wins, errs)
		}
	}
	pushed = append(pushed, l.decisionsUntilPong(1)...)
	if len(pushed) != rounds {
		t.Errorf("%d decisions on the link, want %d", len(pushed), rounds)
	}
	acts := auditActions(t, bt)
	for i, id := range ids {
		if n := countSubject(acts["approval.decide"], id); n != 1 {
			t.Fatalf("round %d: %d approval.decide entries, want 1", i, n)
		}
	}
}

// TestDecideSameTwice: the same Decide sent twice at once: one decision,
// one audit entry, one delivery.
func TestDecideSameTwice(t *testing.T) {
	t.Parallel()
	bt, _ := decideBoard(t, &boardv1.Rule{Agent: "*", Node: "*", Role: boardv1.Role_ROLE_APPROVER}, boardtest.Options{})
	l := openLink(t, bt, "desk")
	// Two clients for ann: concurrent calls on one h2c client connection
	// met an HTTP/2 COMPRESSION_ERROR from the test transport (see report).
	anns := []boardv1connect.ApprovalServiceClient{approver(bt, "ann"), approver(bt, "ann")}
	const rounds = 10
	var pushed []*boardv1.ApprovalDecision
	for i := range rounds {
		a := l.raisedAmid(refund(fmt.Sprint("run-", i), 1), &pushed)
		var wg sync.WaitGroup
		var errs [2]error
		for j := range 2 {
			wg.Go(func() { _, errs[j] = decide(anns[j], t, a.GetApprovalId(), "yes", digestOf(1), "") })
		}
		wg.Wait()
		if (errs[0] == nil) == (errs[1] == nil) {
			t.Fatalf("round %d: %v; want exactly one to succeed", i, errs)
		}
	}
	pushed = append(pushed, l.decisionsUntilPong(1)...)
	seen := map[string]int{}
	for _, d := range pushed {
		seen[d.GetApprovalId()]++
	}
	if len(pushed) != rounds || len(seen) != rounds {
		t.Errorf("decisions on the link %v, want one each for %d approvals", seen, rounds)
	}
	acts := auditActions(t, bt)
	if len(acts["approval.decide"]) != rounds || len(acts["approval.vote"]) != 0 {
		t.Errorf("decide entries %d, vote entries %d; want %d and 0", len(acts["approval.decide"]), len(acts["approval.vote"]), rounds)
	}
}

// TestDecisionWhileAway: a decision made while the agent is not linked
// reaches it exactly once, on its next link.
func TestDecisionWhileAway(t *testing.T) {
	t.Parallel()
	bt, _ := decideBoard(t, &boardv1.Rule{Agent: "*", Node: "*", Role: boardv1.Role_ROLE_APPROVER}, boardtest.Options{})
	l := openLink(t, bt, "desk")
	a1 := l.raised(refund("run-1", 1))
	a2 := l.raised(refund("run-2", 2))
	l.hangUp()
	if _, err := decide(approver(bt, "ann"), t, a2.GetApprovalId(), "no", digestOf(2), ""); err != nil {
		t.Fatal(err)
	}
	if _, err := decide(approver(bt, "ann"), t, a1.GetApprovalId(), "yes", digestOf(1), ""); err != nil {
		t.Fatal(err)
	}
	l = openLink(t, bt, "desk")
	ds := l.decisionsUntilPong(1)
	if len(ds) != 2 || ds[0].GetApprovalId() != a2.GetApprovalId() || ds[1].GetApprovalId() != a1.GetApprovalId() {
		t.Fatalf("decisions on relink: %v, want %s then %s", ds, a2.GetApprovalId(), a1.GetApprovalId())
	}
	l.hangUp()
	l = openLink(t, bt, "desk")
	if ds := l.decisionsUntilPong(1); len(ds) != 0 {
		t.Fatalf("decisions on the second relink: %v, want none", ds)
	}
	// And across a board restart.
	a3 := l.raised(refund("run-3", 3))
	l.hangUp()
	if _, err := decide(approver(bt, "ann"), t, a3.GetApprovalId(), "yes", digestOf(3), ""); err != nil {
		t.Fatal(err)
	}
	bt.Restart()
	l = openLink(t, bt, "desk")
	if ds := l.decisionsUntilPong(1); len(ds) != 1 || ds[0].GetApprovalId() != a3.GetApprovalId() {
		t.Fatalf("decisions after restart: %v, want %s", ds, a3.GetApprovalId())
	}
	auditActions(t, bt)
}

func TestCancel(t *testing.T) {
	t.Parallel()
	bt, admin := decideBoard(t, &boardv1.Rule{Agent: "*", Node: "*", People: []string{"ann"}}, boardtest.Options{})
	l := openLink(t, bt, "desk")
	a := l.raised(refund("run-1", 1))
	if _, err := approver(bt, "bob").Cancel(t.Context(), &boardv1.CancelRequest{Id: a.GetApprovalId()}); connect.CodeOf(err) != connect.CodePermissionDenied {
		t.Fatalf("bob Cancel = %v, want permission_denied", err)
	}
	res, err := approver(bt, "ann").Cancel(t.Context(), &boardv1.CancelRequest{Id: a.GetApprovalId(), Reason: "customer withdrew"})
	if err != nil || res.GetApproval().GetState() != boardv1.ApprovalState_APPROVAL_STATE_CANCELLED {
		t.Fatalf("Cancel = %v, %v; want cancelled", res, err)
	}
	if ds := l.decisionsUntilPong(1); len(ds) != 1 || ds[0].GetSay() != boardv1.Say_SAY_CANCELLED || ds[0].GetDigest() != digestOf(1) {
		t.Fatalf("decisions on the link: %v, want one cancelled", ds)
	}
	if _, err := admin.Cancel(t.Context(), &boardv1.CancelRequest{Id: a.GetApprovalId()}); connect.CodeOf(err) != connect.CodeFailedPrecondition {
		t.Fatalf("Cancel again = %v, want failed_precondition", err)
	}
	if _, err := decide(approver(bt, "ann"), t, a.GetApprovalId(), "yes", digestOf(1), ""); connect.CodeOf(err) != connect.CodeFailedPrecondition {
		t.Fatalf("Decide cancelled = %v, want failed_precondition", err)
	}
	// An admin may cancel what the rule does not let them decide.
	b := l.raised(refund("run-2", 2))
	if res, err := admin.Cancel(t.Context(), &boardv1.CancelRequest{Id: b.GetApprovalId()}); err != nil || res.GetApproval().GetState() != boardv1.ApprovalState_APPROVAL_STATE_CANCELLED {
		t.Fatalf("admin Cancel = %v, %v", res, err)
	}
	acts := auditActions(t, bt)
	if len(acts["approval.cancel"]) != 2 {
		t.Errorf("approval.cancel entries %v, want 2", acts["approval.cancel"])
	}
}

func TestExpiry(t *testing.T) {
	t.Parallel()
	bt, admin := decideBoard(t, &boardv1.Rule{Agent: "*", Node: "*", Role: boardv1.Role_ROLE_APPROVER, TimeLimit: durationpb.New(100 * time.Millisecond)},
		boardtest.Options{RevocationPoll: 20 * time.Millisecond})
	l := openLink(t, bt, "desk")
	var ds []*boardv1.ApprovalDecision
	a := l.raisedAmid(refund("run-1", 1), &ds)
	// The board expires it by itself, and pushes that to the live agent as
	// "expired" (never a no), for the digest raised, once it has stored it.
	if len(ds) == 0 {
		ds = append(ds, l.next().GetDecision())
	}
	ds = append(ds, l.decisionsUntilPong(1)...)
	if len(ds) != 1 || ds[0].GetSay() != boardv1.Say_SAY_EXPIRED ||
		ds[0].GetApprovalId() != a.GetApprovalId() || ds[0].GetDigest() != digestOf(1) ||
		ds[0].GetRun() != "run-1" || ds[0].GetNode() != "pay" {
		t.Fatalf("decisions on the link: %v, want one saying expired", ds)
	}
	if got := stateOf(t, admin, a.GetApprovalId()).GetState(); got != boardv1.ApprovalState_APPROVAL_STATE_EXPIRED {
		t.Fatalf("approval after its expiry was pushed: %s, want expired", got)
	}
	if _, err := decide(approver(bt, "ann"), t, a.GetApprovalId(), "yes", digestOf(1), ""); connect.CodeOf(err) != connect.CodeFailedPrecondition {
		t.Fatalf("Decide expired = %v, want failed_precondition", err)
	}
	// A re-ask says expired, with no decision.
	if r := l.raised(refund("run-1", 1)); r.GetState() != boardv1.ApprovalState_APPROVAL_STATE_EXPIRED || r.GetDecision() != nil {
		t.Fatalf("re-raise = %v, want expired without a decision", r)
	}
	acts := auditActions(t, bt)
	if len(acts["approval.expire"]) != 1 {
		t.Errorf("approval.expire entries %v, want one", acts["approval.expire"])
	}
}

// TestSignedInPeopleDecideAndCancel: a signed-in approver decides as an
// approver token does, named by their address; a signed-in admin cancels an
// approval no rule governs, as an admin token may.
func TestSignedInPeopleDecideAndCancel(t *testing.T) {
	t.Parallel()
	bt, _ := decideBoard(t, &boardv1.Rule{Agent: "*", Node: "pay", Role: boardv1.Role_ROLE_APPROVER}, boardtest.Options{})
	l := openLink(t, bt, "desk")
	const password = "a long enough password"
	bt.AddUser("ann@example.com", identity.RoleApprover, password)
	bt.AddUser("ada@example.com", identity.RoleAdmin, password)
	annC := boardv1connect.NewApprovalServiceClient(bt.SessionClient(bt.SignIn("ann@example.com", password)))
	adaC := boardv1connect.NewApprovalServiceClient(bt.SessionClient(bt.SignIn("ada@example.com", password)))

	governed := l.raised(refund("run-1", 1))
	res, err := decide(annC, t, governed.GetApprovalId(), "yes", digestOf(1), "")
	if err != nil || res.GetState() != boardv1.ApprovalState_APPROVAL_STATE_APPROVED || !slices.Equal(res.GetDecision().GetWho(), []string{"ann@example.com"}) {
		t.Fatalf("signed-in approver's yes = %v, %v; want approved by ann@example.com", res, err)
	}

	r := refund("run-2", 2)
	r.Node = "ship"                        // no rule governs it
	var pushed []*boardv1.ApprovalDecision // ann's decision, pushed to the link
	loose := l.raisedAmid(r, &pushed)
	if _, err := adaC.Cancel(t.Context(), &boardv1.CancelRequest{Id: loose.GetApprovalId(), Reason: "stale"}); err != nil {
		t.Fatalf("signed-in admin cancelling an ungoverned approval: %v", err)
	}
}

// auditEntries is every entry of the board's audit log with action.
func auditEntries(t *testing.T, bt *boardtest.Board, action string) []audit.Entry {
	t.Helper()
	page, err := audit.New(bt.Store).List(t.Context(), 0, 1000)
	if err != nil {
		t.Fatal(err)
	}
	var out []audit.Entry
	for _, e := range page {
		if e.Action == action {
			out = append(out, e)
		}
	}
	return out
}

// TestDecideBadInput: every field of Decide and Cancel is bounded before
// anything is written. Each refusal names the field and the limit, and
// its audit entry keeps the length of what was too long, never the value.
func TestDecideBadInput(t *testing.T) {
	t.Parallel()
	bt, _ := decideBoard(t, &boardv1.Rule{Agent: "*", Node: "*", Role: boardv1.Role_ROLE_APPROVER}, boardtest.Options{})
	id := openLink(t, bt, "desk").raised(refund("run-1", 1)).GetApprovalId()
	ann := approver(bt, "ann")
	huge := strings.Repeat("x", 900<<10)
	tests := []struct {
		name   string
		decide *boardv1.DecideRequest
		cancel *boardv1.CancelRequest
		want   string // the message begins with it
	}{
		{"no id", &boardv1.DecideRequest{Say: boardv1.Say_SAY_YES, Digest: digestOf(1)}, nil, "id: required"},
		{"a huge id", &boardv1.DecideRequest{Id: huge, Say: boardv1.Say_SAY_YES, Digest: digestOf(1)}, nil, "id: 921600 bytes, at most 64"},
		{"no say", &boardv1.DecideRequest{Id: id, Digest: digestOf(1)}, nil, "say: required"},
		{"say cancelled", &boardv1.DecideRequest{Id: id, Say: boardv1.Say_SAY_CANCELLED, Digest: digestOf(1)}, nil, "say: must be SAY_YES or SAY_NO"},
		{"say expired", &boardv1.DecideRequest{Id: id, Say: boardv1.Say_SAY_EXPIRED, Digest: digestOf(1)}, nil, "say: must be SAY_YES or SAY_NO"},
		{"an unknown say", &boardv1.DecideRequest{Id: id, Say: 42, Digest: digestOf(1)}, nil, "say: unknown value 42"},
		{"a huge digest", &boardv1.DecideRequest{Id: id, Say: boardv1.Say_SAY_YES, Digest: huge}, nil, "digest: want sha256: and 64 lower-case hex digits"},
		{"no digest", &boardv1.DecideRequest{Id: id, Say: boardv1.Say_SAY_YES}, nil, "digest: want sha256:"},
		{"a huge reason", &boardv1.DecideRequest{Id: id, Say: boardv1.Say_SAY_YES, Digest: digestOf(1), Reason: huge}, nil, "reason: 921600 bytes, at most 4096"},
		{"cancel: no id", nil, &boardv1.CancelRequest{}, "id: required"},
		{"cancel: a huge id", nil, &boardv1.CancelRequest{Id: huge}, "id: 921600 bytes, at most 64"},
		{"cancel: a huge reason", nil, &boardv1.CancelRequest{Id: id, Reason: huge}, "reason: 921600 bytes, at most 4096"},
	}
	for _, tt := range tests {
		var err error
		if tt.decide != nil {
			_, err = ann.Decide(t.Context(), tt.decide)
		} else {
			_, err = ann.Cancel(t.Context(), tt.cancel)
		}
		var ce *connect.Error
		if connect.CodeOf(err) != connect.CodeInvalidArgument || !asConnect(err, &ce) || !strings.HasPrefix(ce.Message(), tt.want) || len(ce.Message()) > 200 {
			t.Errorf("%s: %.300v, want invalid_argument %q… in under 200 bytes", tt.name, err, tt.want)
		}
	}
	refusals := auditEntries(t, bt, "approval.refuse")
	if len(refusals) != len(tests) {
		t.Fatalf("%d approval.refuse entries, want one a refusal (%d)", len(refusals), len(tests))
	}
	for _, e := range refusals {
		if n := len(e.Detail) + len(e.Subject); n > 1<<10 || strings.Contains(string(e.Detail), "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx") {
			t.Errorf("approval.refuse entry %d of %d bytes: %.300s; want the lengths of what was too long, never the value", e.Seq, n, e.Detail)
		}
	}
	if got := stateOf(t, ann, id); got.GetState() != boardv1.ApprovalState_APPROVAL_STATE_PENDING {
		t.Fatalf("after the refusals: %s, want pending", got.GetState())
	}
	if _, err := ann.GetApproval(t.Context(), &boardv1.GetApprovalRequest{Id: huge}); connect.CodeOf(err) != connect.CodeInvalidArgument || len(err.Error()) > 200 {
		t.Errorf("GetApproval with a huge id: %.300v, want invalid_argument in under 200 bytes", err)
	}
}

// TestRulePeopleCanonical: a rule naming a person's address in any case
// lets that person decide: PutRule keeps the address canonical, and a
// rule stored before it did is read canonically.
func TestRulePeopleCanonical(t *testing.T) {
	t.Parallel()
	bt, admin := decideBoard(t, nil, boardtest.Options{})
	r := putRule(t, admin, &boardv1.Rule{Agent: "*", Node: "pay", People: []string{"Ann@Example.com", "bob"}})
	if !slices.Equal(r.GetPeople(), []string{"ann@example.com", "bob"}) {
		t.Fatalf("PutRule kept people %v, want ann@example.com canonical and bob as given", r.GetPeople())
	}
	// As a board before canonical addresses stored it.
	if _, err := bt.Store.Rule.Create().SetID("old").SetAgent("*").SetNode("ship").SetPeople([]string{"Ann@EXAMPLE.com"}).
		SetCreatedAt(time.Now()).SetUpdatedAt(time.Now()).SetUpdatedBy("root").Save(t.Context()); err != nil {
		t.Fatal(err)
	}
	const password = "a long enough password"
	bt.AddUser("ann@example.com", identity.RoleApprover, password)
	annC := boardv1connect.NewApprovalServiceClient(bt.SessionClient(bt.SignIn("ann@example.com", password)))
	l := openLink(t, bt, "desk")
	var pushed []*boardv1.ApprovalDecision
	for i, node := range []string{"pay", "ship"} {
		rr := refund(fmt.Sprint("run-", i), i)
		rr.Node = node
		a := l.raisedAmid(rr, &pushed)
		res, err := decide(annC, t, a.GetApprovalId(), "yes", digestOf(i), "")
		if err != nil || res.GetState() != boardv1.ApprovalState_APPROVAL_STATE_APPROVED {
			t.Fatalf("%s: ann's yes = %v, %v; want approved", node, res, err)
		}
	}
}

// TestSelfApproval: a person in the conversation an approval came from —
// paired into its thread, or named in its pointer — may not decide it
// unless its rule allows self-approval; anyone else the rule allows may,
// and so may they, for another conversation's approval.
func TestSelfApproval(t *testing.T) {
	t.Parallel()
	bt, admin := decideBoard(t, &boardv1.Rule{Agent: "*", Node: "pay", Role: boardv1.Role_ROLE_APPROVER}, boardtest.Options{})
	allows := putRule(t, admin, &boardv1.Rule{Agent: "*", Node: "ship", Role: boardv1.Role_ROLE_APPROVER, AllowSelfApproval: true})
	if !allows.GetAllowSelfApproval() {
		t.Fatalf("PutRule = %v, want allow_self_approval kept", allows)
	}
	const password = "a long enough password"
	ann := bt.AddUser("ann@example.com", identity.RoleApprover, password)
	bt.AddUser("cy@example.com", identity.RoleApprover, password)
	bt.AddUser("bob@example.com", identity.RoleApprover, password)
	session := func(email string) boardv1connect.ApprovalServiceClient {
		return boardv1connect.NewApprovalServiceClient(bt.SessionClient(bt.SignIn(email, password)))
	}
	annC, cyC, bobC := session("ann@example.com"), session("cy@example.com"), session("bob@example.com")
	l := openLink(t, bt, "desk")

	// Ann pairs with thread t1; the agent says Cy, whom the board verified
	// for it, is in t1 too.
	l.send(&boardv1.LinkRequest{Kind: &boardv1.LinkRequest_Pair{Pair: &boardv1.Pair{RequestId: l.requestID(), Thread: "t1"}}})
	if _, err := bt.Board.EnterPairingCodeAsForTest(t.Context(), ann.ID, ann.Email, l.next().GetPairCode().GetCode()); err != nil {
		t.Fatal(err)
	}
	if p := l.next().GetPaired(); p.GetWho() != "ann@example.com" {
		t.Fatalf("after Ann entered the code the link got %v, want her pairing", p)
	}
	bt.Verified("desk", "cy@example.com")
	l.report(true, pointer("t1", 0, true, "cy@example.com"))

	var pushed []*boardv1.ApprovalDecision
	raise := func(run, thread, node string, d int) string {
		r := refund(run, d)
		r.Thread, r.Node = thread, node
		return l.raisedAmid(r, &pushed).GetApprovalId()
	}
	pay := raise("run-1", "t1", "pay", 1)
	for name, c := range map[string]boardv1connect.ApprovalServiceClient{"ann": annC, "cy": cyC} {
		for _, say := range []string{"yes", "no"} {
			_, err := decide(c, t, pay, say, digestOf(1), "")
			if connect.CodeOf(err) != connect.CodePermissionDenied || !strings.Contains(err.Error(), "does not allow self-approval") {
				t.Fatalf("%s says %s to an approval from a conversation they are in: %v, want permission_denied naming self-approval", name, say, err)
			}
		}
	}
	if got, err := decide(bobC, t, pay, "yes", digestOf(1), ""); err != nil || got.GetState() != boardv1.ApprovalState_APPROVAL_STATE_APPROVED {
		t.Fatalf("bob, not in it: %v, %v; want approved", got, err)
	}
	if got, err := decide(annC, t, raise("run-2", "t1", "ship", 2), "yes", digestOf(2), ""); err != nil || got.GetState() != boardv1.ApprovalState_APPROVAL_STATE_APPROVED {
		t.Fatalf("ann, under a rule that allows self-approval: %v, %v; want approved", got, err)
	}
	if got, err := decide(annC, t, raise("run-3", "t2", "pay", 3), "yes", digestOf(3), ""); err != nil || got.GetState() != boardv1.ApprovalState_APPROVAL_STATE_APPROVED {
		t.Fatalf("ann, for another conversation: %v, %v; want approved", got, err)
	}
	// Cancelling is not deciding: one in the conversation may stop it.
	if _, err := cyC.Cancel(t.Context(), &boardv1.CancelRequest{Id: raise("run-4", "t1", "pay", 4)}); err != nil {
		t.Fatalf("cy cancels an approval from her conversation: %v", err)
	}
}
