package ui_test

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"google.golang.org/protobuf/types/known/durationpb"
	"google.golang.org/protobuf/types/known/timestamppb"

	boardv1 "github.com/symphonix/symphonix/api/symphonix/board/v1"
	"github.com/symphonix/symphonix/api/symphonix/board/v1/boardv1connect"
	"github.com/symphonix/symphonix/approvals"
	"github.com/symphonix/symphonix/board"
	"github.com/symphonix/symphonix/internal/boardtest"
	"github.com/symphonix/symphonix/internal/browsertest"
)

// rawLink is an agent's link the test speaks itself, message by message,
// as an agent written from the published API would: its health reports and
// its answers to a pause are sent when the test says, so the page can be
// seen between them.
type rawLink struct {
	t  *testing.T
	s  boardv1connect.AgentLinkServiceLinkClientStream
	in chan *boardv1.LinkResponse // what the board sent after the welcome, in order
	// held: what settle read past on its way to the pong, for next.
	held []*boardv1.LinkResponse
	seq  uint64
	// runSeq is the seq of each run's last event or summary sent.
	runSeq map[string]uint32
	// request counts the requests sent that the board answers.
	request int
}

// openRawLink links the agent name, announcing caps, and returns once the
// board has welcomed it. The board's messages are read as they come, so
// that it never waits on the test.
func openRawLink(t *testing.T, bt *boardtest.Board, name string, caps ...string) *rawLink {
	t.Helper()
	return openRawHello(t, bt, &boardv1.Hello{Name: name, Capabilities: caps})
}

// openRawHello links the agent hello names with hello (its protocol filled
// in), and returns once the board has welcomed it.
func openRawHello(t *testing.T, bt *boardtest.Board, hello *boardv1.Hello) *rawLink {
	t.Helper()
	name := hello.GetName()
	hello.Protocol = board.Protocol
	ctx, cancel := context.WithCancel(t.Context())
	s, err := boardv1connect.NewAgentLinkServiceClient(bt.Client(bt.AgentToken(name))).Link(ctx)
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	if err := s.Send(&boardv1.LinkRequest{Kind: &boardv1.LinkRequest_Hello{Hello: hello}}); err != nil {
		cancel()
		t.Fatalf("%s: hello: %v", name, err)
	}
	if m, err := s.Receive(); err != nil || m.GetWelcome() == nil {
		cancel()
		t.Fatalf("%s: hello answered %v, %v; want a welcome", name, m, err)
	}
	l := &rawLink{t: t, s: s, in: make(chan *boardv1.LinkResponse, 64), runSeq: map[string]uint32{}}
	done := make(chan struct{})
	go func() {
		defer close(done)
		defer close(l.in)
		for {
			m, err := s.Receive()
			if err != nil {
				return
			}
			select {
			case l.in <- m:
			case <-ctx.Done():
				return
			}
		}
	}()
	t.Cleanup(func() {
		cancel()
		_ = s.Close()
		<-done
	})
	return l
}

func (l *rawLink) send(r *boardv1.LinkRequest) {
	l.t.Helper()
	if err := l.s.Send(r); err != nil {
		l.t.Fatalf("send %v: %v", r, err)
	}
}

// next is the next message from the board.
func (l *rawLink) next() *boardv1.LinkResponse {
	l.t.Helper()
	if len(l.held) > 0 {
		m := l.held[0]
		l.held = l.held[1:]
		return m
	}
	return l.receive()
}

// receive is the next message from the board that nobody has read yet.
func (l *rawLink) receive() *boardv1.LinkResponse {
	l.t.Helper()
	select {
	case m, ok := <-l.in:
		if !ok {
			l.t.Fatal("the link ended")
		}
		return m
	case <-time.After(browsertest.Ceiling):
		l.t.Fatalf("no message from the board within %s", browsertest.Ceiling)
		return nil
	}
}

// settle pings the board and waits for the pong: the board handles a link's
// messages in order, so what was sent before has been kept, or refused.
// A refusal fails the test.
func (l *rawLink) settle() {
	l.t.Helper()
	l.seq++
	l.send(&boardv1.LinkRequest{Kind: &boardv1.LinkRequest_Ping{Ping: &boardv1.Ping{Seq: l.seq}}})
	for {
		m := l.receive()
		if e := m.GetError(); e != nil {
			l.t.Fatalf("the board refused: %v", e)
		}
		if m.GetPong() != nil {
			if m.GetPong().GetSeq() == l.seq {
				return
			}
			continue
		}
		l.held = append(l.held, m)
	}
}

// report sends a round of health checks that started at started, and
// waits until the board has kept it.
func (l *rawLink) report(started time.Time, checks ...*boardv1.HealthCheck) {
	l.t.Helper()
	l.send(&boardv1.LinkRequest{Kind: &boardv1.LinkRequest_Health{Health: &boardv1.HealthReport{
		Status: boardv1.HealthStatus_HEALTH_STATUS_UNSPECIFIED, Checks: checks, StartTime: timestamppb.New(started),
	}}})
	l.settle()
}

// pauseNext is the next Pause the board sends.
func (l *rawLink) pauseNext() *boardv1.Pause {
	l.t.Helper()
	for {
		m := l.next()
		if p := m.GetPause(); p != nil {
			return p
		}
	}
}

// state tells the board whether the agent takes work, and waits until the
// board has kept it.
func (l *rawLink) state(paused bool, origin boardv1.PauseOrigin, reason, by string) {
	l.t.Helper()
	l.send(&boardv1.LinkRequest{Kind: &boardv1.LinkRequest_PauseState{PauseState: &boardv1.PauseState{
		Paused: paused, Reason: reason, By: by, Time: timestamppb.Now(), Origin: origin,
	}}})
	l.settle()
}

// check is one line of a health round.
func check(name string, status boardv1.CheckStatus, detail string) *boardv1.HealthCheck {
	return &boardv1.HealthCheck{Name: name, Status: status, Duration: durationpb.New(3 * time.Millisecond), Detail: detail}
}

const (
	checkOK    = boardv1.CheckStatus_CHECK_STATUS_OK
	checkError = boardv1.CheckStatus_CHECK_STATUS_ERROR
)

// linkBoard is a board for tests of health and pause: reports may follow
// one another at once, and a raw link that says nothing for the length of
// a test is not given up.
func linkBoard(t *testing.T) *boardtest.Board {
	t.Helper()
	return boardtest.Start(t, boardtest.Options{
		OfflineGrace: 100 * time.Millisecond,
		PingInterval: 10 * time.Minute,
		Limits:       board.Limits{HealthEvery: time.Nanosecond},
	})
}

// runEvent sends ev as the run id's next event, at time at, and waits
// until the board has taken it.
func (l *rawLink) runEvent(id string, at time.Time, ev *boardv1.RunEvent) {
	l.t.Helper()
	l.runSeq[id]++
	ev.RunId = id
	ev.Seq = l.runSeq[id]
	ev.Time = timestamppb.New(at)
	l.send(&boardv1.LinkRequest{Kind: &boardv1.LinkRequest_RunEvent{RunEvent: ev}})
	l.settle()
}

// runStart sends the start of the run id.
func (l *rawLink) runStart(id string, at time.Time, start *boardv1.RunStart) {
	l.t.Helper()
	l.runEvent(id, at, &boardv1.RunEvent{Kind: &boardv1.RunEvent_Start{Start: start}})
}

// runStep sends a step of the run id: entered, or, with an outcome,
// finished.
func (l *rawLink) runStep(id string, step *boardv1.RunStep) {
	l.t.Helper()
	l.runEvent(id, step.GetStartTime().AsTime(), &boardv1.RunEvent{Kind: &boardv1.RunEvent_Step{Step: step}})
}

// runSummary sends run as its summary, the next in its order, saying the
// outbox dropped dropped others, and waits until the board has stored it.
func (l *rawLink) runSummary(run *boardv1.Run, dropped uint32) {
	l.t.Helper()
	id := run.GetId()
	l.runSeq[id]++
	seq := l.runSeq[id]
	l.send(&boardv1.LinkRequest{Kind: &boardv1.LinkRequest_RunSummary{RunSummary: &boardv1.RunSummary{
		Run: run, Seq: seq, Dropped: dropped,
	}}})
	for {
		m := l.next()
		if e := m.GetError(); e != nil {
			l.t.Fatalf("the summary of %s: the board refused: %v", id, e)
		}
		if st := m.GetRunStored(); st != nil && st.GetRunId() == id && st.GetSeq() >= seq {
			return
		}
	}
}

// runSummaries sends each of list as its run's next summary, all at once,
// and waits until the board has stored every one.
func (l *rawLink) runSummaries(list []*boardv1.Run) {
	l.t.Helper()
	want := map[string]uint32{}
	for _, r := range list {
		l.runSeq[r.GetId()]++
		want[r.GetId()] = l.runSeq[r.GetId()]
		l.send(&boardv1.LinkRequest{Kind: &boardv1.LinkRequest_RunSummary{RunSummary: &boardv1.RunSummary{
			Run: r, Seq: l.runSeq[r.GetId()],
		}}})
	}
	for len(want) > 0 {
		m := l.next()
		if e := m.GetError(); e != nil {
			l.t.Fatalf("the summaries: the board refused: %v", e)
		}
		if st := m.GetRunStored(); st != nil && st.GetSeq() >= want[st.GetRunId()] {
			delete(want, st.GetRunId())
		}
	}
}

// raise raises an approval at node for the run id, and returns the
// approval's id.
func (l *rawLink) raise(id, node, ask string) string {
	l.t.Helper()
	l.request++
	req := fmt.Sprintf("raise-%d", l.request)
	const show = `{"amount":5000}`
	var v map[string]any
	if err := json.Unmarshal([]byte(show), &v); err != nil {
		l.t.Fatal(err)
	}
	digest, err := approvals.Digest(v, "")
	if err != nil {
		l.t.Fatal(err)
	}
	l.send(&boardv1.LinkRequest{Kind: &boardv1.LinkRequest_Raise{Raise: &boardv1.Raise{
		RequestId: req, Run: id, Node: node, Ask: ask, Show: show, Digest: digest, RunId: id,
	}}})
	for {
		m := l.next()
		if e := m.GetError(); e != nil && e.GetRequestId() == req {
			l.t.Fatalf("raise: the board refused: %v", e)
		}
		if r := m.GetRaised(); r != nil && r.GetRequestId() == req {
			return r.GetApprovalId()
		}
	}
}

// fireNext is the next Fire the board sends.
func (l *rawLink) fireNext() *boardv1.Fire {
	l.t.Helper()
	for {
		if f := l.next().GetFire(); f != nil {
			return f
		}
	}
}

// stopNext is the next Stop the board sends.
func (l *rawLink) stopNext() *boardv1.Stop {
	l.t.Helper()
	for {
		if st := l.next().GetStop(); st != nil {
			return st
		}
	}
}
