package board_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"connectrpc.com/connect/v2"
	"google.golang.org/protobuf/types/known/durationpb"

	boardv1 "github.com/symphonix/symphonix/api/symphonix/board/v1"
	"github.com/symphonix/symphonix/api/symphonix/board/v1/boardv1connect"
	"github.com/symphonix/symphonix/board"
	"github.com/symphonix/symphonix/identity"
	"github.com/symphonix/symphonix/internal/boardtest"
)

// watcher reads a WatchApprovals stream on a goroutine of its own.
type watcher struct {
	t    *testing.T
	msgs chan *boardv1.WatchApprovalsResponse
	err  chan error // the error the stream ended with
}

func watchApprovals(t *testing.T, c boardv1connect.ApprovalServiceClient, req *boardv1.WatchApprovalsRequest) *watcher {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	t.Cleanup(cancel)
	s, err := c.WatchApprovals(ctx, req)
	if err != nil {
		t.Fatalf("WatchApprovals(%v): %v", req, err)
	}
	t.Cleanup(func() { _ = s.Close() })
	w := &watcher{t: t, msgs: make(chan *boardv1.WatchApprovalsResponse, 4096), err: make(chan error, 1)}
	go func() {
		for {
			m, err := s.Receive()
			if err != nil {
				w.err <- err
				close(w.msgs)
				return
			}
			w.msgs <- m
		}
	}()
	return w
}

// next is the next message that is not a heartbeat.
func (w *watcher) next() *boardv1.WatchApprovalsResponse {
	w.t.Helper()
	for {
		select {
		case m, ok := <-w.msgs:
			if !ok {
				w.t.Fatalf("watch ended: %v", <-w.err)
			}
			if m.GetEvent() != boardv1.ApprovalEvent_APPROVAL_EVENT_HEARTBEAT {
				return m
			}
		case <-time.After(10 * time.Second):
			w.t.Fatal("no message from the watch within 10 s")
		}
	}
}

// want reads the next message and wants event about the approval id in
// state.
func (w *watcher) want(event, id, state string) *boardv1.Approval {
	w.t.Helper()
	m := w.next()
	if eventWord(m.GetEvent()) != event || m.GetApproval().GetId() != id || stateWord(m.GetApproval().GetState()) != state {
		w.t.Fatalf("watch sent %s %s %s, want %s %s %s", m.GetEvent(), m.GetApproval().GetId(), m.GetApproval().GetState(), event, id, state)
	}
	return m.GetApproval()
}

// eventWord is an event as the tests write it: "raised" for
// APPROVAL_EVENT_RAISED.
func eventWord(e boardv1.ApprovalEvent) string {
	return strings.ToLower(strings.TrimPrefix(e.String(), "APPROVAL_EVENT_"))
}

// stateWord is a state as the tests write it: "pending" for
// APPROVAL_STATE_PENDING, "" for unspecified.
func stateWord(s boardv1.ApprovalState) string {
	if s == boardv1.ApprovalState_APPROVAL_STATE_UNSPECIFIED {
		return ""
	}
	return strings.ToLower(strings.TrimPrefix(s.String(), "APPROVAL_STATE_"))
}

// quiet wants no message but heartbeats for a moment.
func (w *watcher) quiet() {
	w.t.Helper()
	deadline := time.After(200 * time.Millisecond)
	for {
		select {
		case m, ok := <-w.msgs:
			if !ok {
				w.t.Fatalf("watch ended: %v", <-w.err)
			}
			if m.GetEvent() != boardv1.ApprovalEvent_APPROVAL_EVENT_HEARTBEAT {
				w.t.Fatalf("watch sent %s %s, want nothing", m.GetEvent(), m.GetApproval().GetId())
			}
		case <-deadline:
			return
		}
	}
}

// TestWatchApprovals: a watcher gets the pending approvals and the
// history, then every change as one message, in order, each carrying the
// approval as GetApproval returns it; a watcher for one agent only that
// agent's.
func TestWatchApprovals(t *testing.T) {
	t.Parallel()
	bt, admin := decideBoard(t, &boardv1.Rule{Agent: "*", Node: "*", Role: boardv1.Role_ROLE_APPROVER, Quorum: quorum(2)},
		boardtest.Options{RevocationPoll: 20 * time.Millisecond})
	putRule(t, admin, &boardv1.Rule{Agent: "timer", Node: "*", Role: boardv1.Role_ROLE_APPROVER, TimeLimit: durationpb.New(300 * time.Millisecond)})
	desk := openLink(t, bt, "desk")
	ann, bob := approver(bt, "ann"), approver(bt, "bob")
	var decisions []*boardv1.ApprovalDecision // pushed to the agents; not what this test is about
	raise := func(l *rawLink, r *boardv1.Raise) *boardv1.Raised {
		t.Helper()
		return l.raisedAmid(r, &decisions)
	}

	// Before the watch: one decided, one pending.
	old := raise(desk, refund("run-0", 100))
	if _, err := decide(ann, t, old.GetApprovalId(), "no", digestOf(100), ""); err != nil {
		t.Fatal(err)
	}
	waiting := raise(desk, refund("run-1", 1))

	viewer := approvalsClient(bt, bt.OperatorToken("vic", identity.RoleViewer))
	all := watchApprovals(t, viewer, &boardv1.WatchApprovalsRequest{})
	timerOnly := watchApprovals(t, viewer, &boardv1.WatchApprovalsRequest{Agent: "timer"})
	noHistory := watchApprovals(t, viewer, &boardv1.WatchApprovalsRequest{History: ptr(int32(0))})

	got := all.want("snapshot", waiting.GetApprovalId(), "pending")
	want := stateOf(t, admin, waiting.GetApprovalId())
	//lint:ignore SA1019 the deprecated show is still sent, and this checks it
	if got.GetShowJson() != want.GetShowJson() || got.GetDigest() != want.GetDigest() || got.GetShow() == nil {
		t.Errorf("snapshot = %v, want as GetApproval: %v", got, want)
	}
	if d := all.want("snapshot", old.GetApprovalId(), "rejected").GetDecision(); d.GetSay() != boardv1.Say_SAY_NO || strings.Join(d.GetWho(), ",") != "ann" {
		t.Errorf("history decision = %v, want no by ann", d)
	}
	all.want("synced", "", "")
	timerOnly.want("synced", "", "")
	noHistory.want("snapshot", waiting.GetApprovalId(), "pending")
	noHistory.want("synced", "", "")

	// Vote, then decide.
	id := waiting.GetApprovalId()
	if _, err := decide(ann, t, id, "yes", digestOf(1), ""); err != nil {
		t.Fatal(err)
	}
	if v := all.want("voted", id, "pending").GetVotes(); strings.Join(v, ",") != "ann" {
		t.Errorf("votes = %v, want ann", v)
	}
	// The same yes again changes nothing and is not sent.
	if _, err := decide(ann, t, id, "yes", digestOf(1), ""); err != nil {
		t.Fatal(err)
	}
	if _, err := decide(bob, t, id, "yes", digestOf(1), "fine"); err != nil {
		t.Fatal(err)
	}
	if d := all.want("decided", id, "approved").GetDecision(); d.GetSay() != boardv1.Say_SAY_YES || strings.Join(d.GetWho(), ",") != "ann,bob" || d.GetReason() != "fine" {
		t.Errorf("decision = %v, want yes by ann,bob for fine", d)
	}

	// Raise, then cancel.
	b := raise(desk, refund("run-2", 2))
	all.want("raised", b.GetApprovalId(), "pending")
	if _, err := admin.Cancel(t.Context(), &boardv1.CancelRequest{Id: b.GetApprovalId()}); err != nil {
		t.Fatal(err)
	}
	all.want("cancelled", b.GetApprovalId(), "cancelled")

	// Raise, then raise the same run and node about something else.
	c := raise(desk, refund("run-3", 3))
	all.want("raised", c.GetApprovalId(), "pending")
	raise(desk, refund("run-3", 3)) // the same again: nothing changes
	c2 := raise(desk, refund("run-3", 4))
	all.want("superseded", c.GetApprovalId(), "superseded")
	all.want("raised", c2.GetApprovalId(), "pending")

	// Another agent's, which expires.
	timer := openLink(t, bt, "timer")
	e := raise(timer, refund("run-4", 5))
	for _, w := range []*watcher{all, timerOnly} {
		w.want("raised", e.GetApprovalId(), "pending")
		w.want("expired", e.GetApprovalId(), "expired")
	}
	timerOnly.quiet()
	all.quiet()

	// The watcher without history saw the same changes.
	for _, want := range []string{"voted", "decided", "raised", "cancelled", "raised", "superseded", "raised", "raised", "expired"} {
		if m := noHistory.next(); eventWord(m.GetEvent()) != want {
			t.Fatalf("watcher without history: %s %s, want %s", m.GetEvent(), m.GetApproval().GetId(), want)
		}
	}
}

// TestWatchApprovalsAccess: a viewer may watch; an agent token may not,
// nor a bad history.
func TestWatchApprovalsAccess(t *testing.T) {
	t.Parallel()
	bt := boardtest.Start(t, boardtest.Options{})
	for proto, opts := range boardtest.Protocols {
		t.Run(proto, func(t *testing.T) {
			w := watchApprovals(t, approvalsClient(bt, bt.OperatorToken("vic", identity.RoleViewer), opts...), &boardv1.WatchApprovalsRequest{})
			w.want("synced", "", "")
			for _, tc := range []struct {
				name  string
				token string
				req   *boardv1.WatchApprovalsRequest
				code  connect.Code
			}{
				{"agent token", bt.AgentToken("desk"), &boardv1.WatchApprovalsRequest{}, connect.CodeUnauthenticated},
				{"negative history", bt.OperatorToken("vic", identity.RoleViewer), &boardv1.WatchApprovalsRequest{History: ptr(int32(-1))}, connect.CodeInvalidArgument},
			} {
				w := watchApprovals(t, approvalsClient(bt, tc.token, opts...), tc.req)
				select {
				case m := <-w.msgs:
					if m != nil {
						t.Errorf("%s: watch sent %v, want %v", tc.name, m, tc.code)
					}
				case <-time.After(10 * time.Second):
					t.Fatalf("%s: no answer within 10 s", tc.name)
				}
				if err := <-w.err; connect.CodeOf(err) != tc.code {
					t.Errorf("%s: WatchApprovals = %v, want %v", tc.name, err, tc.code)
				}
			}
		})
	}
}

// TestWatchApprovalsHeartbeat: a quiet watch still hears from the board.
func TestWatchApprovalsHeartbeat(t *testing.T) {
	t.Parallel()
	bt := boardtest.Start(t, boardtest.Options{WatchHeartbeat: 20 * time.Millisecond})
	w := watchApprovals(t, approvalsClient(bt, bt.OperatorToken("vic", identity.RoleViewer)), &boardv1.WatchApprovalsRequest{})
	w.want("synced", "", "")
	for range 2 {
		select {
		case m := <-w.msgs:
			if m.GetEvent() != boardv1.ApprovalEvent_APPROVAL_EVENT_HEARTBEAT || m.GetApproval() != nil {
				t.Fatalf("watch sent %v, want a heartbeat", m)
			}
		case <-time.After(5 * time.Second):
			t.Fatal("no heartbeat within 5 s")
		}
	}
}

// TestWatchApprovalsSlowWatcher: a watcher that reads nothing never holds
// a decision up; the board drops it, and a watcher dropped over RPC is told
// resource_exhausted, to watch again.
func TestWatchApprovalsSlowWatcher(t *testing.T) {
	t.Parallel()
	bt, _ := decideBoard(t, &boardv1.Rule{Agent: "*", Node: "*", Role: boardv1.Role_ROLE_APPROVER}, boardtest.Options{})
	desk := openLink(t, bt, "desk")
	a := desk.raised(refund("run-1", 1))

	dropped := bt.Board.SlowApprovalWatcherForTest(t)
	bt.Board.PublishApprovalForTest(&boardv1.Approval{Id: "noise"}, board.WatcherBufferForTest) // its buffer is full
	if dropped() {
		t.Fatal("watcher dropped with room left in its buffer")
	}
	start := time.Now()
	if _, err := decide(approver(bt, "ann"), t, a.GetApprovalId(), "yes", digestOf(1), ""); err != nil {
		t.Fatal(err)
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("Decide took %v with a full watcher, want it not to wait", d)
	}
	if !dropped() {
		t.Error("a watcher whose buffer overflowed is still watching")
	}

	// Over RPC: a watcher that stops reading falls behind once the
	// transport's windows and its buffer are full.
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	s, err := approvalsClient(bt, bt.OperatorToken("vic", identity.RoleViewer)).WatchApprovals(ctx, &boardv1.WatchApprovalsRequest{History: ptr(int32(0))})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if m, err := s.Receive(); err != nil || m.GetEvent() != boardv1.ApprovalEvent_APPROVAL_EVENT_SYNCED {
		t.Fatalf("first message = %v, %v; want synced", m, err)
	}
	big := &boardv1.Approval{Id: "noise", ShowJson: `{"pad":"` + strings.Repeat("x", 60<<10) + `"}`}
	start = time.Now()
	bt.Board.PublishApprovalForTest(big, 1000) // 60 MB: far past any window
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("publishing to a stalled watcher took %v, want it not to wait", d)
	}
	n := 0
	for {
		_, err := s.Receive()
		if err != nil {
			if connect.CodeOf(err) != connect.CodeResourceExhausted {
				t.Fatalf("after %d messages: %v, want resource_exhausted", n, err)
			}
			break
		}
		n++
	}
	if n >= 1000 {
		t.Errorf("received all %d messages, want the watcher dropped before", n)
	}
}

// TestWatchApprovalsDroppedByBytes: a watcher is dropped when the changes
// it has not read pass its bytes, well before they pass its count; one
// that reads is not, however much goes through it.
func TestWatchApprovalsDroppedByBytes(t *testing.T) {
	t.Parallel()
	bt := boardtest.Start(t, boardtest.Options{})
	big := &boardv1.Approval{Id: "noise", ShowJson: `{"pad":"` + strings.Repeat("x", 60<<10) + `"}`}
	const half = board.DefaultWatcherBytes / 2 / (60 << 10) // changes of 60 KiB in half the bytes

	reading, readingDropped := bt.Board.ApprovalWatcherForTest(t)
	slowDropped := bt.Board.SlowApprovalWatcherForTest(t)
	for round := range 3 {
		bt.Board.PublishApprovalForTest(big, half)
		for range half {
			<-reading
		}
		if readingDropped() {
			t.Fatalf("round %d: a watcher that read every change was dropped", round)
		}
		if round == 0 && slowDropped() {
			t.Fatal("a watcher half its bytes behind was dropped")
		}
	}
	if !slowDropped() {
		t.Fatalf("a watcher %d changes (%d MiB) behind is still watching, want it dropped by bytes", 3*half, 3*half*60>>10)
	}
	if 3*half >= board.WatcherBufferForTest {
		t.Fatalf("%d changes: the test must stay under the count limit (%d) to test the bytes", 3*half, board.WatcherBufferForTest)
	}
}

// TestWatchApprovalsSnapshotPages: a snapshot read a page at a time sends
// every pending approval, oldest first, then the history, newest first,
// none missed and none twice across the pages.
func TestWatchApprovalsSnapshotPages(t *testing.T) {
	t.Parallel()
	bt, admin := decideBoard(t, nil, boardtest.Options{})
	l := openLink(t, bt, "desk")
	var decisions []*boardv1.ApprovalDecision // the cancels, pushed to the link
	var ids []string
	for i := range 70 {
		ids = append(ids, l.raisedAmid(refund(fmt.Sprint("run-", i), i), &decisions).GetApprovalId())
	}
	for _, id := range ids[:30] {
		if _, err := admin.Cancel(t.Context(), &boardv1.CancelRequest{Id: id}); err != nil {
			t.Fatal(err)
		}
	}
	w := watchApprovals(t, approvalsClient(bt, bt.OperatorToken("vic", identity.RoleViewer)), &boardv1.WatchApprovalsRequest{History: ptr(int32(25))})
	for _, id := range ids[30:] {
		w.want("snapshot", id, "pending")
	}
	for i := 29; i >= 5; i-- {
		w.want("snapshot", ids[i], "cancelled")
	}
	w.want("synced", "", "")
}
