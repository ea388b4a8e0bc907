package board_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"connectrpc.com/connect/v2"

	boardv1 "github.com/symphonix/symphonix/api/symphonix/board/v1"
	"github.com/symphonix/symphonix/api/symphonix/board/v1/boardv1connect"
	"github.com/symphonix/symphonix/board"
	"github.com/symphonix/symphonix/ent/agent"
	"github.com/symphonix/symphonix/internal/boardtest"
	"github.com/symphonix/symphonix/store"
)

// within is the ceiling on waiting for anything in these tests: the
// machine may be slow, never this slow.
const within = 45 * time.Second

// TestArrivalsDoNotWaitForEachOther: an agent's arrival is not held up by
// another agent's arrival still writing to the store, so that the store
// sees many at once (and commits them together); a second arrival of the
// same agent waits for the first.
func TestArrivalsDoNotWaitForEachOther(t *testing.T) {
	t.Parallel()
	bt := boardtest.Start(t, boardtest.Options{})
	ctx := t.Context()

	gate := make(chan struct{})
	release := sync.OnceFunc(func() { close(gate) })
	t.Cleanup(release) // before the board stops, should the test fail
	writing := make(chan struct{})
	first := make(chan error, 1)
	go func() {
		_, err := bt.Board.ArriveForTest(ctx, "slow", func() { close(writing); <-gate })
		first <- err
	}()
	<-writing

	other := make(chan error, 1)
	go func() {
		_, err := bt.Board.ArriveForTest(ctx, "quick", func() {})
		other <- err
	}()
	select {
	case err := <-other:
		if err != nil {
			t.Fatalf("quick's arrival: %v", err)
		}
	case <-time.After(within):
		t.Fatal("quick's arrival waited for slow's store write")
	}

	again := make(chan error, 1)
	var againAt time.Time
	go func() {
		_, err := bt.Board.ArriveForTest(ctx, "slow", func() { againAt = time.Now() })
		again <- err
	}()
	select {
	case err := <-again:
		t.Fatalf("slow's second arrival = %v before its first had written", err)
	case <-time.After(200 * time.Millisecond):
	}
	released := time.Now()
	release()
	for _, c := range []chan error{first, again} {
		select {
		case err := <-c:
			if err != nil {
				t.Fatalf("slow's arrival: %v", err)
			}
		case <-time.After(within):
			t.Fatal("slow's arrivals did not finish")
		}
	}
	if againAt.Before(released) {
		t.Errorf("slow's second arrival wrote at %v, before its first was let go at %v", againAt, released)
	}
}

// TestStoreFailureIsNotARefusal: a board that cannot read its store
// answers an agent's link unavailable (come back), never unauthenticated
// (which an agent takes as a refusal, and waits long after).
func TestStoreFailureIsNotARefusal(t *testing.T) {
	t.Parallel()
	bt := boardtest.Start(t, boardtest.Options{})
	tok := bt.AgentToken("patient")
	if err := bt.Store.Close(); err != nil {
		t.Fatal(err)
	}
	for proto, opts := range boardtest.Protocols {
		t.Run(proto, func(t *testing.T) {
			got := helloEnd(t, bt.Client(tok, opts...), "patient")
			if connect.CodeOf(got) != connect.CodeUnavailable {
				t.Fatalf("link with the store gone: %v, want unavailable", got)
			}
		})
	}
}

// helloEnd links as name over client, says hello, and returns the error
// the link ends with (within the test's ceiling).
func helloEnd(t *testing.T, client *connect.Client, name string) error {
	t.Helper()
	link := boardv1connect.NewAgentLinkServiceClient(client)
	ctx, cancel := context.WithTimeout(t.Context(), within)
	defer cancel()
	s, err := link.Link(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	_ = s.Send(hello(&boardv1.Hello{Name: name, Protocol: board.Protocol}))
	for {
		if _, err := s.Receive(); err != nil {
			return err
		}
	}
}

// openLinks links n agents, agent-000 and on, each on a link of its own,
// and returns them.
func openLinks(t *testing.T, bt *boardtest.Board, n int) []*rawLink {
	t.Helper()
	links := make([]*rawLink, n)
	var wg sync.WaitGroup
	sem := make(chan struct{}, 16)
	for i := range n {
		wg.Go(func() {
			sem <- struct{}{}
			defer func() { <-sem }()
			links[i] = openLink(t, bt, fmt.Sprintf("agent-%03d", i))
		})
	}
	wg.Wait()
	return links
}

// onlineIn counts the agents online in the store in dir, opened afresh.
func onlineIn(t *testing.T, dir string) int {
	t.Helper()
	db, err := store.Open(t.Context(), store.SQLiteDSN(dir))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	n, err := db.Agent.Query().Where(agent.Online(true)).Count(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// TestShutdownRecordsTheFleetOffline: a board that stops gracefully with
// agents linked leaves none of them online in its store, and records them
// offline in a few writes, not one each.
func TestShutdownRecordsTheFleetOffline(t *testing.T) {
	t.Parallel()
	const n = 200
	bt := boardtest.Start(t, boardtest.Options{})
	openLinks(t, bt, n)
	if got, err := bt.Store.Agent.Query().Where(agent.Online(true)).Count(t.Context()); err != nil || got != n {
		t.Fatalf("online before the shutdown: %d (%v), want %d", got, err, n)
	}
	bt.Stop()
	if got := onlineIn(t, bt.Dir); got != 0 {
		t.Errorf("online after a graceful shutdown: %d agents, want 0", got)
	}
	if w := bt.Board.OfflineWritesForTest(); w > 4 {
		t.Errorf("%d agents recorded offline in %d writes, want at most 4", n, w)
	}
}

// TestNoArrivalAfterShutdownBegan: once the board has begun ending its
// links, a hello is told to come back (unavailable) and its agent is not
// recorded online, where nothing would ever record it offline again.
func TestNoArrivalAfterShutdownBegan(t *testing.T) {
	t.Parallel()
	bt := boardtest.Start(t, boardtest.Options{})
	tok := bt.AgentToken("late")
	bt.Board.Close() // the server still serves, as it does while it shuts down
	if got := helloEnd(t, bt.Client(tok), "late"); connect.CodeOf(got) != connect.CodeUnavailable {
		t.Errorf("hello after the shutdown began: %v, want unavailable", got)
	}
	bt.Stop()
	if n := onlineIn(t, bt.Dir); n != 0 {
		t.Errorf("online after the shutdown: %d agents, want 0", n)
	}
}

// TestShutdownWaitsForArrivals: an arrival whose store write is under way
// when the board begins to shut down finishes first, and is recorded
// offline after it, not left online.
func TestShutdownWaitsForArrivals(t *testing.T) {
	t.Parallel()
	bt := boardtest.Start(t, boardtest.Options{})
	gate, writing := make(chan struct{}), make(chan struct{})
	release := sync.OnceFunc(func() { close(gate) })
	t.Cleanup(release)
	arrived := make(chan error, 1)
	go func() {
		_, err := bt.Board.ArriveForTest(t.Context(), "midway", func() { close(writing); <-gate })
		arrived <- err
	}()
	<-writing
	closed := make(chan struct{})
	go func() {
		bt.Board.Close()
		close(closed)
	}()
	boardtest.Eventually(t, within, "the shutdown to begin", bt.Board.ClosingForTest)
	release()
	if err := <-arrived; err != nil {
		t.Fatalf("arrival under way: %v", err)
	}
	select {
	case <-closed:
	case <-time.After(within):
		t.Fatal("Close did not return")
	}
	bt.Stop()
	if n := onlineIn(t, bt.Dir); n != 0 {
		t.Errorf("online after the shutdown: %d agents, want 0", n)
	}
}

// TestDepartingFleetInBatches: agents whose links drop together (the
// network went) are recorded offline after the grace in a few writes, and
// every one of them is offline.
func TestDepartingFleetInBatches(t *testing.T) {
	t.Parallel()
	const n = 200
	bt := boardtest.Start(t, boardtest.Options{OfflineGrace: 500 * time.Millisecond})
	openLinks(t, bt, n)
	bt.Board.DropLinksForTest()
	boardtest.Eventually(t, within, "every agent offline", func() bool {
		got, err := bt.Store.Agent.Query().Where(agent.Online(true)).Count(context.Background())
		return err == nil && got == 0
	})
	if w := bt.Board.OfflineWritesForTest(); w >= n/4 {
		t.Errorf("%d agents recorded offline in %d writes, want fewer than %d", n, w, n/4)
	}
	t.Logf("%d agents offline in %d writes", n, bt.Board.OfflineWritesForTest())
}

// TestWelcomeAndPongSayTheRedialWindow: the welcome and every pong tell
// the agent over how long a window to spread its first redial.
func TestWelcomeAndPongSayTheRedialWindow(t *testing.T) {
	t.Parallel()
	bt := boardtest.Start(t, boardtest.Options{})
	link := boardv1connect.NewAgentLinkServiceClient(bt.Client(bt.AgentToken("counted")))
	ctx, cancel := context.WithTimeout(t.Context(), within)
	defer cancel()
	s, err := link.Link(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if err := s.Send(hello(&boardv1.Hello{Name: "counted", Protocol: board.Protocol})); err != nil {
		t.Fatal(err)
	}
	m, err := s.Receive()
	if err != nil || m.GetWelcome() == nil {
		t.Fatalf("hello: %v %v, want a welcome", m, err)
	}
	if d := m.GetWelcome().GetRedialWithin().AsDuration(); d <= 0 || d > 2*time.Minute {
		t.Errorf("welcome's redial_within = %v, want within (0, 2m]", d)
	}
	if err := s.Send(&boardv1.LinkRequest{Kind: &boardv1.LinkRequest_Ping{Ping: &boardv1.Ping{Seq: 7}}}); err != nil {
		t.Fatal(err)
	}
	for {
		m, err := s.Receive()
		if err != nil {
			t.Fatal(err)
		}
		if p := m.GetPong(); p != nil {
			if d := p.GetRedialWithin().AsDuration(); p.GetSeq() != 7 || d <= 0 || d > 2*time.Minute {
				t.Errorf("pong = seq %d, redial_within %v; want seq 7 and a window within (0, 2m]", p.GetSeq(), d)
			}
			return
		}
	}
}
