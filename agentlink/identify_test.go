package agentlink_test

import (
	"context"
	"errors"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"connectrpc.com/connect/v2"
	"connectrpc.com/connect/v2/connecthttp"
	"google.golang.org/protobuf/types/known/timestamppb"

	"github.com/symphonix/symphonix/agentlink"
	boardv1 "github.com/symphonix/symphonix/api/symphonix/board/v1"
	"github.com/symphonix/symphonix/api/symphonix/board/v1/boardv1connect"
	"github.com/symphonix/symphonix/internal/boardtest"
)

// serveLink serves h as the link on loopback until the test ends, and
// returns its URL.
func serveLink(t *testing.T, h boardv1connect.AgentLinkServiceHandler) string {
	t.Helper()
	srv := connect.NewServer()
	boardv1connect.RegisterAgentLinkServiceHandler(srv, h)
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
	return "http://" + ln.Addr().String()
}

func TestHowToIdentifyAndPair(t *testing.T) {
	t.Parallel()
	bt := boardtest.Start(t, boardtest.Options{})
	a := startAgent(t, bt, "desk", nil)
	a.awaitState(t, true)
	door, err := a.link.HowToIdentify(t.Context())
	if err != nil || door != agentlink.DoorPairing {
		t.Fatalf("HowToIdentify = %q, %v; want %q", door, err, agentlink.DoorPairing)
	}
	code, expires, err := a.link.Pair(t.Context(), "thread-1")
	if err != nil || len(code) != 8 || time.Until(expires) < 9*time.Minute {
		t.Fatalf("Pair = %q, %s, %v; want 8 symbols for 10 minutes", code, expires, err)
	}
	_, _, err = a.link.Pair(t.Context(), "")
	var be *agentlink.BoardError
	if !errors.As(err, &be) || be.Code != "invalid_argument" || !strings.Contains(be.Message, "pair.thread") {
		t.Fatalf("Pair without a thread: %v, want invalid_argument naming pair.thread", err)
	}

	var none *agentlink.Link
	if _, err := none.HowToIdentify(t.Context()); !errors.Is(err, agentlink.ErrNoLink) {
		t.Fatalf("no board: HowToIdentify = %v, want ErrNoLink", err)
	}
	if _, _, err := none.Pair(t.Context(), "t"); !errors.Is(err, agentlink.ErrNoLink) {
		t.Fatalf("no board: Pair = %v, want ErrNoLink", err)
	}
}

// TestVerifyNeverPassesWithoutTheBoard: no board configured, a board that
// cannot be reached, a board that went away, a board that never answers,
// and a link frozen half-open are each a refusal.
func TestVerifyNeverPassesWithoutTheBoard(t *testing.T) {
	t.Parallel()
	noBoard := agentlink.VerifyResult{Why: agentlink.WhyNoBoard}
	noAnswer := agentlink.VerifyResult{Why: agentlink.WhyNoAnswer}

	t.Run("not configured", func(t *testing.T) {
		t.Parallel()
		var l *agentlink.Link
		if got := l.Verify(t.Context(), "ann@example.com", "secret", time.Second); got != noBoard {
			t.Fatalf("Verify = %+v, want %+v", got, noBoard)
		}
	})

	t.Run("unreachable", func(t *testing.T) {
		t.Parallel()
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		url := "http://" + ln.Addr().String()
		ln.Close()
		l, err := agentlink.New(agentlink.Config{BoardURL: url, Token: "t", Identity: agentlink.Identity{Name: "desk"}})
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancel(t.Context())
		done := make(chan struct{})
		go func() { defer close(done); _ = l.Run(ctx) }()
		t.Cleanup(func() { cancel(); <-done })
		if got := l.Verify(t.Context(), "ann@example.com", "secret", time.Second); got != noBoard {
			t.Fatalf("Verify = %+v, want %+v", got, noBoard)
		}
	})

	t.Run("board gone", func(t *testing.T) {
		t.Parallel()
		bt := boardtest.Start(t, boardtest.Options{})
		a := startAgent(t, bt, "desk", nil)
		a.awaitState(t, true)
		bt.Stop()
		a.awaitState(t, false)
		if got := a.link.Verify(t.Context(), "ann@example.com", "secret", time.Second); got != noBoard {
			t.Fatalf("Verify = %+v, want %+v", got, noBoard)
		}
	})

	t.Run("silent", func(t *testing.T) {
		t.Parallel()
		url := serveLink(t, silentBoard{})
		states := make(chan agentlink.State, 8)
		l, err := agentlink.New(agentlink.Config{
			BoardURL: url, Token: "t", Identity: agentlink.Identity{Name: "desk"},
			OnState: func(s agentlink.State) { states <- s },
		})
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancel(t.Context())
		done := make(chan struct{})
		go func() { defer close(done); _ = l.Run(ctx) }()
		t.Cleanup(func() { cancel(); <-done })
		if s := <-states; !s.Up {
			t.Fatalf("state %+v, want up", s)
		}
		start := time.Now()
		if got := l.Verify(t.Context(), "ann@example.com", "secret", 200*time.Millisecond); got != noAnswer {
			t.Fatalf("Verify = %+v, want %+v", got, noAnswer)
		}
		if took := time.Since(start); took > 3*time.Second {
			t.Fatalf("Verify took %s, want about its 200ms", took)
		}
	})

	t.Run("frozen", func(t *testing.T) {
		t.Parallel()
		bt := boardtest.Start(t, boardtest.Options{})
		proxy := boardtest.NewProxy(t, bt.Addr)
		a := startAgent(t, bt, "desk", func(c *agentlink.Config) { c.BoardURL = proxy.URL() })
		a.awaitState(t, true)
		proxy.Freeze()
		if got := a.link.Verify(t.Context(), "ann@example.com", "secret", 300*time.Millisecond); got != noAnswer {
			t.Fatalf("Verify = %+v, want %+v", got, noAnswer)
		}
	})
}

// pairingBoard welcomes an agent and tells it of pairings, one of them
// twice, as a board may after a mark was lost.
type pairingBoard struct{}

func (pairingBoard) Link(ctx context.Context, s boardv1connect.AgentLinkServiceLinkServerStream) error {
	if _, err := s.Receive(); err != nil {
		return err
	}
	at := timestamppb.New(time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC))
	for _, m := range []*boardv1.LinkResponse{
		{Kind: &boardv1.LinkResponse_Welcome{Welcome: &boardv1.Welcome{Session: "s", Protocol: agentlink.Protocol}}},
		{Kind: &boardv1.LinkResponse_Paired{Paired: &boardv1.Paired{Id: "pr-1", Thread: "t1", Who: "ann@example.com", Name: "Ann", PairTime: at}}},
		{Kind: &boardv1.LinkResponse_Paired{Paired: &boardv1.Paired{Id: "pr-1", Thread: "t1", Who: "ann@example.com", Name: "Ann", PairTime: at}}},
		{Kind: &boardv1.LinkResponse_Paired{Paired: &boardv1.Paired{Id: "pr-2", Thread: "t2", Who: "bob@example.com", PairTime: at}}},
	} {
		if err := s.Send(m); err != nil {
			return err
		}
	}
	for {
		if _, err := s.Receive(); err != nil {
			return nil
		}
	}
}

func TestOnPairedOncePerPairing(t *testing.T) {
	t.Parallel()
	url := serveLink(t, pairingBoard{})
	paired := make(chan agentlink.Paired, 8)
	l, err := agentlink.New(agentlink.Config{
		BoardURL: url, Token: "t", Identity: agentlink.Identity{Name: "desk"},
		MinBackoff: 10 * time.Millisecond, MaxBackoff: 20 * time.Millisecond,
		OnPaired: func(p agentlink.Paired) { paired <- p },
	})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan struct{})
	go func() { defer close(done); _ = l.Run(ctx) }()
	t.Cleanup(func() { cancel(); <-done })
	var got []agentlink.Paired
	for len(got) < 2 {
		select {
		case p := <-paired:
			got = append(got, p)
		case <-time.After(10 * time.Second):
			t.Fatalf("paired: %+v, want two", got)
		}
	}
	want := agentlink.Paired{ID: "pr-1", Thread: "t1", Who: "ann@example.com", Name: "Ann", At: time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC)}
	if got[0] != want || got[1].ID != "pr-2" {
		t.Fatalf("paired %+v, want %+v then pr-2", got, want)
	}
	// The repeat came before pr-2 on the stream, and was not passed on.
	select {
	case p := <-paired:
		t.Fatalf("paired again: %+v", p)
	default:
	}
}
