package board_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"connectrpc.com/connect/v2"
	"connectrpc.com/connect/v2/connecthttp"
	"google.golang.org/protobuf/types/known/durationpb"

	boardv1 "github.com/symphonix/symphonix/api/symphonix/board/v1"
	"github.com/symphonix/symphonix/api/symphonix/board/v1/boardv1connect"
	"github.com/symphonix/symphonix/audit"
	"github.com/symphonix/symphonix/board"
	"github.com/symphonix/symphonix/identity"
	"github.com/symphonix/symphonix/internal/boardtest"
)

// rawLink is a link opened by hand: hello sent, welcome received.
type rawLink struct {
	t *testing.T
	s boardv1connect.AgentLinkServiceLinkClientStream
	n int
	// switches: the tool switches the board sent, in order.
	switches []*boardv1.ToolSwitches
}

func openLink(t *testing.T, bt *boardtest.Board, name string) *rawLink {
	t.Helper()
	l, _ := openLinkWith(t, bt, &boardv1.Hello{Name: name, Protocol: board.Protocol})
	return l
}

// openLinkWith opens a link with hello h and returns it with its welcome.
func openLinkWith(t *testing.T, bt *boardtest.Board, h *boardv1.Hello) (*rawLink, *boardv1.Welcome) {
	t.Helper()
	name := h.GetName()
	link := boardv1connect.NewAgentLinkServiceClient(bt.Client(bt.AgentToken(name)))
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	t.Cleanup(cancel)
	s, err := link.Link(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	if err := s.Send(hello(h)); err != nil {
		t.Fatal(err)
	}
	m, err := s.Receive()
	if err != nil || m.GetWelcome() == nil {
		t.Fatalf("hello: %v %v, want a welcome", m, err)
	}
	return &rawLink{t: t, s: s}, m.GetWelcome()
}

// next is the next message from the board that is not a ping.
func (l *rawLink) next() *boardv1.LinkResponse {
	l.t.Helper()
	for {
		m, err := l.s.Receive()
		if err != nil {
			l.t.Fatalf("receive: %v", err)
		}
		if sw := m.GetSwitches(); sw != nil {
			l.switches = append(l.switches, sw) // read with switchesUntilPong
			continue
		}
		if m.GetPing() == nil {
			return m
		}
	}
}

func (l *rawLink) send(r *boardv1.LinkRequest) {
	l.t.Helper()
	if err := l.s.Send(r); err != nil {
		l.t.Fatalf("send: %v", err)
	}
}

func (l *rawLink) requestID() string {
	l.n++
	return fmt.Sprintf("r%d", l.n)
}

func (l *rawLink) whoDecides(node string) *boardv1.LinkResponse {
	l.t.Helper()
	id := l.requestID()
	l.send(&boardv1.LinkRequest{Kind: &boardv1.LinkRequest_WhoDecides{WhoDecides: &boardv1.WhoDecides{RequestId: id, Node: node}}})
	m := l.next()
	if got := requestIDOf(m); got != id {
		l.t.Fatalf("answer %v echoes request_id %q, want %q", m, got, id)
	}
	return m
}

func (l *rawLink) raise(r *boardv1.Raise) *boardv1.LinkResponse {
	l.t.Helper()
	r.RequestId = l.requestID()
	l.send(&boardv1.LinkRequest{Kind: &boardv1.LinkRequest_Raise{Raise: r}})
	m := l.next()
	if got := requestIDOf(m); got != r.RequestId {
		l.t.Fatalf("answer %v echoes request_id %q, want %q", m, got, r.RequestId)
	}
	return m
}

// raised raises r and wants a Raised.
func (l *rawLink) raised(r *boardv1.Raise) *boardv1.Raised {
	l.t.Helper()
	m := l.raise(r)
	if m.GetRaised() == nil {
		l.t.Fatalf("raise(%v) = %v, want raised", r, m)
	}
	return m.GetRaised()
}

func (l *rawLink) ping(seq uint64) {
	l.t.Helper()
	l.send(&boardv1.LinkRequest{Kind: &boardv1.LinkRequest_Ping{Ping: &boardv1.Ping{Seq: seq}}})
	if m := l.next(); m.GetPong().GetSeq() != seq {
		l.t.Fatalf("ping %d: got %v, want its pong", seq, m)
	}
}

func requestIDOf(m *boardv1.LinkResponse) string {
	switch {
	case m.GetWhoDecidesAnswer() != nil:
		return m.GetWhoDecidesAnswer().GetRequestId()
	case m.GetRaised() != nil:
		return m.GetRaised().GetRequestId()
	case m.GetError() != nil:
		return m.GetError().GetRequestId()
	}
	return ""
}

func digestOf(n int) string {
	return fmt.Sprintf("sha256:%064x", n)
}

func refund(run string, d int) *boardv1.Raise {
	return &boardv1.Raise{
		Run: run, Thread: "t1", Node: "pay", Ask: "Refund 5,000?",
		Show: `{"amount": 5000, "currency": "EUR", "to": {"name": "Ann"}}`, Account: "the order arrived broken",
		Digest: digestOf(d),
	}
}

func auditActions(t *testing.T, bt *boardtest.Board) map[string][]string {
	t.Helper()
	trail := audit.New(bt.Store)
	var entries []audit.Entry
	for {
		var after int64
		if len(entries) > 0 {
			after = entries[len(entries)-1].Seq
		}
		page, err := trail.List(t.Context(), after, 1000) // List pages at most 1,000
		if err != nil {
			t.Fatal(err)
		}
		entries = append(entries, page...)
		if len(page) < 1000 {
			break
		}
	}
	out := map[string][]string{}
	for _, e := range entries {
		if strings.HasPrefix(e.Action, "approval.") {
			out[e.Action] = append(out[e.Action], e.Subject+" by "+e.Actor)
		}
	}
	v, err := trail.Verify(t.Context())
	if err != nil || !v.OK() || v.Entries != int64(len(entries)) {
		t.Errorf("audit Verify = %+v, %v; want OK over %d entries", v, err, len(entries))
	}
	return out
}

func TestWhoDecides(t *testing.T) {
	t.Parallel()
	bt := boardtest.Start(t, boardtest.Options{})
	l := openLink(t, bt, "desk")
	a := l.whoDecides("pay").GetWhoDecidesAnswer()
	if a.GetRuling() != boardv1.Ruling_RULING_NOT_GOVERNED || a.GetRuleId() != "" {
		t.Fatalf("no rules: %v, want not-governed", a)
	}
	r := putRule(t, approvalsClient(bt, bt.OperatorToken("root", identity.RoleAdmin)),
		&boardv1.Rule{Agent: "*", Node: "*", Role: boardv1.Role_ROLE_APPROVER, Quorum: ptr(int32(1))})
	a = l.whoDecides("pay").GetWhoDecidesAnswer()
	if a.GetRuling() != boardv1.Ruling_RULING_GOVERNED || a.GetRuleId() != r.GetId() || a.GetRole() != boardv1.Role_ROLE_APPROVER || a.GetQuorum() != 1 {
		t.Fatalf("catch-all rule: %v, want governed by %s", a, r.GetId())
	}
	if e := l.whoDecides("").GetError(); e.GetCode() != boardv1.LinkErrorCode_LINK_ERROR_CODE_INVALID_ARGUMENT || !strings.Contains(e.GetMessage(), "node") {
		t.Fatalf("who_decides without node: %v, want invalid_argument naming node", e)
	}
	l.ping(1)
}

func ptr[T any](v T) *T { return &v }

func TestRaise(t *testing.T) {
	t.Parallel()
	bt := boardtest.Start(t, boardtest.Options{})
	rule := putRule(t, approvalsClient(bt, bt.OperatorToken("root", identity.RoleAdmin)),
		&boardv1.Rule{Agent: "*", Node: "*", Role: boardv1.Role_ROLE_APPROVER, TimeLimit: durationpb.New(time.Hour)})
	viewer := bt.OperatorToken("vic", identity.RoleViewer)
	l := openLink(t, bt, "desk")

	first := l.raised(refund("run-1", 1))
	if first.GetState() != boardv1.ApprovalState_APPROVAL_STATE_PENDING || first.GetApprovalId() == "" || first.GetDecision() != nil {
		t.Fatalf("raise = %v, want pending with an id", first)
	}
	for name, c := range map[string]boardv1connect.ApprovalServiceClient{
		"connect": approvalsClient(bt, viewer),
		"grpc":    approvalsClient(bt, viewer, connecthttp.WithGRPC()),
	} {
		list, err := c.ListApprovals(t.Context(), &boardv1.ListApprovalsRequest{State: boardv1.ApprovalState_APPROVAL_STATE_PENDING, Agent: "desk"})
		if err != nil || len(list.GetApprovals()) != 1 || list.GetApprovals()[0].GetId() != first.GetApprovalId() {
			t.Fatalf("%s: ListApprovals = %v, %v; want the one raised", name, list, err)
		}
		got, err := c.GetApproval(t.Context(), &boardv1.GetApprovalRequest{Id: first.GetApprovalId()})
		if err != nil {
			t.Fatalf("%s: GetApproval: %v", name, err)
		}
		a := got.GetApproval()
		//lint:ignore SA1019 the deprecated show is still sent, and this checks it
		show := a.GetShow().GetFields()
		if a.GetAgent() != "desk" || a.GetRun() != "run-1" || a.GetThread() != "t1" || a.GetNode() != "pay" ||
			a.GetAsk() != "Refund 5,000?" || a.GetAccount() != "the order arrived broken" || a.GetDigest() != digestOf(1) ||
			a.GetState() != boardv1.ApprovalState_APPROVAL_STATE_PENDING || a.GetRuleId() != rule.GetId() ||
			show["amount"].GetNumberValue() != 5000 ||
			show["to"].GetStructValue().GetFields()["name"].GetStringValue() != "Ann" {
			t.Errorf("%s: GetApproval = %v", name, a)
		}
		if d := a.GetExpireTime().AsTime().Sub(a.GetCreateTime().AsTime()); d != time.Hour {
			t.Errorf("%s: expires %s after it was raised, want the rule's hour", name, d)
		}
		if _, err := c.GetApproval(t.Context(), &boardv1.GetApprovalRequest{Id: "apr-none"}); connect.CodeOf(err) != connect.CodeNotFound {
			t.Errorf("%s: GetApproval(unknown) = %v, want not_found", name, err)
		}
		if _, err := c.ListApprovals(t.Context(), &boardv1.ListApprovalsRequest{State: 42}); connect.CodeOf(err) != connect.CodeInvalidArgument || !strings.Contains(err.Error(), "state: unknown value 42") {
			t.Errorf("%s: ListApprovals(state 42) = %v, want invalid_argument naming state", name, err)
		}
	}

	// The same raise again: the same approval, nothing written.
	again := l.raised(refund("run-1", 1))
	if again.GetApprovalId() != first.GetApprovalId() || again.GetState() != boardv1.ApprovalState_APPROVAL_STATE_PENDING {
		t.Fatalf("raise again = %v, want %s pending", again, first.GetApprovalId())
	}
	c := approvalsClient(bt, viewer)
	all, err := c.ListApprovals(t.Context(), &boardv1.ListApprovalsRequest{})
	if err != nil || len(all.GetApprovals()) != 1 {
		t.Fatalf("after raising twice ListApprovals = %v, %v; want one", all, err)
	}
	if got := auditActions(t, bt)["approval.raise"]; len(got) != 1 {
		t.Fatalf("approval.raise audit entries %v, want one", got)
	}

	// A different digest supersedes the pending one.
	newer := l.raised(refund("run-1", 2))
	if newer.GetApprovalId() == first.GetApprovalId() || newer.GetState() != boardv1.ApprovalState_APPROVAL_STATE_PENDING {
		t.Fatalf("raise with a new digest = %v, want a new pending approval", newer)
	}
	old, err := c.GetApproval(t.Context(), &boardv1.GetApprovalRequest{Id: first.GetApprovalId()})
	if err != nil || old.GetApproval().GetState() != boardv1.ApprovalState_APPROVAL_STATE_SUPERSEDED {
		t.Fatalf("old approval = %v, %v; want superseded", old, err)
	}
	pending, err := c.ListApprovals(t.Context(), &boardv1.ListApprovalsRequest{State: boardv1.ApprovalState_APPROVAL_STATE_PENDING})
	if err != nil || len(pending.GetApprovals()) != 1 || pending.GetApprovals()[0].GetId() != newer.GetApprovalId() {
		t.Fatalf("pending = %v, %v; want only %s", pending, err, newer.GetApprovalId())
	}
	// The old digest again is a new operation: it supersedes the newer one.
	back := l.raised(refund("run-1", 1))
	if back.GetApprovalId() == first.GetApprovalId() || back.GetApprovalId() == newer.GetApprovalId() {
		t.Fatalf("raising the first digest again = %v, want a new approval", back)
	}
	// Another run, and another agent, are other approvals.
	if o := l.raised(refund("run-2", 1)); o.GetApprovalId() == back.GetApprovalId() {
		t.Fatal("another run got the same approval")
	}
	if o := openLink(t, bt, "till").raised(refund("run-1", 1)); o.GetApprovalId() == back.GetApprovalId() {
		t.Fatal("another agent got the same approval")
	}
	acts := auditActions(t, bt)
	want := map[string][]string{
		"approval.raise":     {first.GetApprovalId() + " by desk", newer.GetApprovalId() + " by desk", back.GetApprovalId() + " by desk"},
		"approval.supersede": {first.GetApprovalId() + " by desk", newer.GetApprovalId() + " by desk"},
	}
	for k, w := range want {
		if got := acts[k]; len(got) < len(w) || strings.Join(got[:len(w)], ",") != strings.Join(w, ",") {
			t.Errorf("%s audit entries %v, want %v first", k, got, w)
		}
	}
	if len(acts["approval.raise"]) != 5 || len(acts["approval.supersede"]) != 2 {
		t.Errorf("audit %v, want 5 raises and 2 supersedes", acts)
	}
}

func TestRaiseNotGoverned(t *testing.T) {
	t.Parallel()
	bt := boardtest.Start(t, boardtest.Options{})
	l := openLink(t, bt, "desk")
	r := l.raised(refund("run-1", 1))
	got, err := approvalsClient(bt, bt.OperatorToken("vic", identity.RoleViewer)).GetApproval(t.Context(), &boardv1.GetApprovalRequest{Id: r.GetApprovalId()})
	if err != nil || got.GetApproval().GetRuleId() != "" || got.GetApproval().GetExpireTime() != nil || got.GetApproval().GetState() != boardv1.ApprovalState_APPROVAL_STATE_PENDING {
		t.Fatalf("ungoverned raise stored as %v, %v; want pending with no rule", got, err)
	}
}

// TestRaiseShowJSON: show_json is what the agent sent, byte for byte, so
// an integer beyond 2^53 and a price's trailing zero read as they were
// raised, where the show Struct would make doubles of them.
func TestRaiseShowJSON(t *testing.T) {
	t.Parallel()
	bt := boardtest.Start(t, boardtest.Options{})
	viewer := bt.OperatorToken("vic", identity.RoleViewer)
	const show = `{"amount": 12345678901234567890, "price": 49.90}`
	r := refund("run-1", 1)
	r.Show = show
	id := openLink(t, bt, "desk").raised(r).GetApprovalId()
	for name, c := range map[string]boardv1connect.ApprovalServiceClient{
		"connect": approvalsClient(bt, viewer),
		"grpc":    approvalsClient(bt, viewer, connecthttp.WithGRPC()),
	} {
		got, err := c.GetApproval(t.Context(), &boardv1.GetApprovalRequest{Id: id})
		if err != nil {
			t.Fatalf("%s: GetApproval: %v", name, err)
		}
		if s := got.GetApproval().GetShowJson(); s != show {
			t.Errorf("%s: GetApproval show_json = %q, want %q", name, s, show)
		}
		list, err := c.ListApprovals(t.Context(), &boardv1.ListApprovalsRequest{})
		if err != nil || len(list.GetApprovals()) != 1 {
			t.Fatalf("%s: ListApprovals = %v, %v; want the one raised", name, list, err)
		}
		if s := list.GetApprovals()[0].GetShowJson(); s != show {
			t.Errorf("%s: ListApprovals show_json = %q, want %q", name, s, show)
		}
	}
}

func TestBadRaises(t *testing.T) {
	t.Parallel()
	bt := boardtest.Start(t, boardtest.Options{})
	l := openLink(t, bt, "desk")
	for i, tc := range []struct {
		name  string
		edit  func(*boardv1.Raise)
		field string
	}{
		{"missing digest", func(r *boardv1.Raise) { r.Digest = "" }, "raise.digest"},
		{"upper-case digest", func(r *boardv1.Raise) { r.Digest = strings.ToUpper(digestOf(1)) }, "raise.digest"},
		{"short digest", func(r *boardv1.Raise) { r.Digest = "sha256:abc" }, "raise.digest"},
		{"md5 digest", func(r *boardv1.Raise) { r.Digest = "md5:" + strings.Repeat("a", 32) }, "raise.digest"},
		{"show an array", func(r *boardv1.Raise) { r.Show = `[1,2]` }, "raise.show"},
		{"show a string", func(r *boardv1.Raise) { r.Show = `"x"` }, "raise.show"},
		{"show missing", func(r *boardv1.Raise) { r.Show = "" }, "raise.show"},
		{"show not JSON", func(r *boardv1.Raise) { r.Show = `{"a":` }, "raise.show"},
		{"show too big", func(r *boardv1.Raise) { r.Show = `{"a":"` + strings.Repeat("x", 64<<10) + `"}` }, "raise.show"},
		{"show nested 17 deep", func(r *boardv1.Raise) { r.Show = nested(17) }, "raise.show: nested more than 16 deep"},
		{"show nested 4000 deep", func(r *boardv1.Raise) { r.Show = nested(4000) }, "raise.show: nested more than 16 deep"},
		{"show of 10,001 keys and values", func(r *boardv1.Raise) { r.Show = `{"a":[` + strings.Repeat("1,", 9997) + `1]}` }, "raise.show: more than 10000 keys and values"},
		{"missing node", func(r *boardv1.Raise) { r.Node = "" }, "raise.node"},
		{"missing run", func(r *boardv1.Raise) { r.Run = "" }, "raise.run"},
		{"run with a newline", func(r *boardv1.Raise) { r.Run = "a\nb" }, "raise.run"},
		{"account too big", func(r *boardv1.Raise) { r.Account = strings.Repeat("x", 64<<10+1) }, "raise.account"},
	} {
		r := refund("run-1", 1)
		tc.edit(r)
		m := l.raise(r)
		e := m.GetError()
		if e == nil || e.GetCode() != boardv1.LinkErrorCode_LINK_ERROR_CODE_INVALID_ARGUMENT || !strings.Contains(e.GetMessage(), tc.field) {
			t.Errorf("%s: answer %v, want invalid_argument naming %s", tc.name, m, tc.field)
		}
		// Only the request failed: the link is up.
		l.ping(uint64(i + 1))
	}
	// A raise without a request_id is refused too, and says so.
	l.send(&boardv1.LinkRequest{Kind: &boardv1.LinkRequest_Raise{Raise: refund("run-1", 1)}})
	if e := l.next().GetError(); e == nil || !strings.Contains(e.GetMessage(), "request_id") {
		t.Errorf("raise without request_id: %v, want an error naming request_id", e)
	}
	// One whose request_id is too long is refused, and the answer does not
	// carry it back.
	long := refund("run-1", 1)
	long.RequestId = strings.Repeat("r", 900<<10)
	l.send(&boardv1.LinkRequest{Kind: &boardv1.LinkRequest_Raise{Raise: long}})
	if e := l.next().GetError(); e.GetRequestId() != "" || e.GetMessage() != "raise.request_id: 921600 bytes, at most 128" {
		t.Errorf("raise with a long request_id: %.300v, want an error naming request_id and its limit, without it", e)
	}
	list, err := approvalsClient(bt, bt.OperatorToken("vic", identity.RoleViewer)).ListApprovals(t.Context(), &boardv1.ListApprovalsRequest{})
	if err != nil || len(list.GetApprovals()) != 0 {
		t.Fatalf("after bad raises ListApprovals = %v, %v; want none", list, err)
	}
	if got := auditActions(t, bt); len(got) != 0 {
		t.Errorf("bad raises wrote audit entries %v", got)
	}
	// And a good one still works.
	if r := l.raised(refund("run-1", 1)); r.GetState() != boardv1.ApprovalState_APPROVAL_STATE_PENDING {
		t.Fatalf("good raise after bad ones: %v", r)
	}
}

func TestRaiseSurvivesRestart(t *testing.T) {
	t.Parallel()
	bt := boardtest.Start(t, boardtest.Options{})
	first := openLink(t, bt, "desk").raised(refund("run-1", 1))
	bt.Restart()
	got, err := approvalsClient(bt, bt.OperatorToken("vic", identity.RoleViewer)).GetApproval(t.Context(), &boardv1.GetApprovalRequest{Id: first.GetApprovalId()})
	if err != nil || got.GetApproval().GetState() != boardv1.ApprovalState_APPROVAL_STATE_PENDING {
		t.Fatalf("after restart GetApproval = %v, %v; want pending", got, err)
	}
	// The agent re-asks when its link comes up, and gets the same request.
	again := openLink(t, bt, "desk").raised(refund("run-1", 1))
	if again.GetApprovalId() != first.GetApprovalId() || again.GetState() != boardv1.ApprovalState_APPROVAL_STATE_PENDING {
		t.Fatalf("re-ask after restart = %v, want %s pending", again, first.GetApprovalId())
	}
	if got := auditActions(t, bt)["approval.raise"]; len(got) != 1 {
		t.Errorf("approval.raise audit entries %v, want one", got)
	}
}

func TestApprovalsAccess(t *testing.T) {
	t.Parallel()
	bt := boardtest.Start(t, boardtest.Options{})
	if _, err := approvalsClient(bt, bt.AgentToken("desk")).ListApprovals(t.Context(), &boardv1.ListApprovalsRequest{}); connect.CodeOf(err) != connect.CodeUnauthenticated {
		t.Errorf("agent token on ListApprovals: %v, want unauthenticated", err)
	}
	if _, err := approvalsClient(bt, bt.AgentToken("desk")).GetApproval(t.Context(), &boardv1.GetApprovalRequest{Id: "x"}); connect.CodeOf(err) != connect.CodeUnauthenticated {
		t.Errorf("agent token on GetApproval: %v, want unauthenticated", err)
	}
	if _, err := approvalsClient(bt, "").ListApprovals(t.Context(), &boardv1.ListApprovalsRequest{}); connect.CodeOf(err) != connect.CodeUnauthenticated {
		t.Errorf("no token on ListApprovals: %v, want unauthenticated", err)
	}
	for _, role := range []identity.Role{identity.RoleViewer, identity.RoleApprover, identity.RoleAdmin} {
		if _, err := approvalsClient(bt, bt.OperatorToken("op", role)).ListApprovals(t.Context(), &boardv1.ListApprovalsRequest{}); err != nil {
			t.Errorf("%s on ListApprovals: %v", role, err)
		}
	}
}

// TestPushDecision: a decision can go to a live link from another
// goroutine while the link handler answers pings on the same stream.
func TestPushDecision(t *testing.T) {
	t.Parallel()
	bt := boardtest.Start(t, boardtest.Options{})
	if bt.Board.PushDecisionForTest("desk", &boardv1.ApprovalDecision{ApprovalId: "a"}) {
		t.Fatal("pushDecision to an agent with no link reported sent")
	}
	l := openLink(t, bt, "desk")
	const pushes, pings = 20, 20
	var wg sync.WaitGroup
	for i := range pushes {
		wg.Go(func() {
			if !bt.Board.PushDecisionForTest("desk", &boardv1.ApprovalDecision{ApprovalId: fmt.Sprint(i), Say: boardv1.Say_SAY_YES, Digest: digestOf(i)}) {
				t.Errorf("pushDecision %d: not sent to a live link", i)
			}
		})
	}
	for i := range pings {
		l.send(&boardv1.LinkRequest{Kind: &boardv1.LinkRequest_Ping{Ping: &boardv1.Ping{Seq: uint64(i)}}})
	}
	wg.Wait()
	decisions, pongs := map[string]bool{}, 0
	for len(decisions) < pushes || pongs < pings {
		m := l.next()
		switch {
		case m.GetDecision() != nil:
			decisions[m.GetDecision().GetApprovalId()] = true
		case m.GetPong() != nil:
			pongs++
		default:
			t.Fatalf("unexpected %v", m)
		}
	}
}

// TestPendingPerAgent: an agent has at most Limits.PendingPerAgent
// approvals pending; a raise past it is refused with resource_exhausted
// naming the limit, and writes nothing. Superseding a pending one, another
// agent, and a raise after one is decided are not refused.
func TestPendingPerAgent(t *testing.T) {
	t.Parallel()
	bt, admin := decideBoard(t, &boardv1.Rule{Agent: "*", Node: "*", Role: boardv1.Role_ROLE_APPROVER}, boardtest.Options{Limits: board.Limits{PendingPerAgent: 3}})
	l := openLink(t, bt, "desk")
	var ids []string
	for i := range 3 {
		ids = append(ids, l.raised(refund(fmt.Sprint("run-", i), i)).GetApprovalId())
	}
	e := l.raise(refund("run-3", 3)).GetError()
	if e.GetCode() != boardv1.LinkErrorCode_LINK_ERROR_CODE_RESOURCE_EXHAUSTED || e.GetMessage() != "raise: this agent has 3 approvals pending, at most 3: raise more once some are decided, cancelled or expired" {
		t.Fatalf("a fourth pending raise: %v, want resource_exhausted naming the limit", e)
	}
	l.ping(1) // only the request failed
	if got := auditActions(t, bt)["approval.raise"]; len(got) != 3 {
		t.Errorf("approval.raise entries %v, want the three raised", got)
	}
	// In the place of a pending one: not one more.
	if r := l.raised(refund("run-0", 100)); r.GetState() != boardv1.ApprovalState_APPROVAL_STATE_PENDING || r.GetApprovalId() == ids[0] {
		t.Fatalf("superseding at the limit: %v, want a new pending approval", r)
	}
	if r := openLink(t, bt, "till").raised(refund("run-3", 3)); r.GetState() != boardv1.ApprovalState_APPROVAL_STATE_PENDING {
		t.Fatalf("another agent's raise: %v, want pending", r)
	}
	if _, err := admin.Cancel(t.Context(), &boardv1.CancelRequest{Id: ids[1]}); err != nil {
		t.Fatal(err)
	}
	var decisions []*boardv1.ApprovalDecision // the cancel, pushed to the link
	if r := l.raisedAmid(refund("run-3", 3), &decisions); r.GetState() != boardv1.ApprovalState_APPROVAL_STATE_PENDING {
		t.Fatalf("a raise after one was cancelled: %v, want pending", r)
	}
}
