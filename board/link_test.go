package board_test

import (
	"context"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"connectrpc.com/connect/v2"
	"github.com/google/go-cmp/cmp"

	"github.com/symphonix/symphonix/agentlink"
	boardv1 "github.com/symphonix/symphonix/api/symphonix/board/v1"
	"github.com/symphonix/symphonix/api/symphonix/board/v1/boardv1connect"
	"github.com/symphonix/symphonix/board"
	"github.com/symphonix/symphonix/identity"
	"github.com/symphonix/symphonix/internal/boardtest"
)

// runAgent links an agent named name to bt until the returned stop is
// called; states receives every up and down.
func runAgent(t *testing.T, url, token string, id agentlink.Identity, tune func(*agentlink.Config)) (states <-chan agentlink.State, stop func()) {
	t.Helper()
	ch := make(chan agentlink.State, 64)
	cfg := agentlink.Config{
		BoardURL:   url,
		Token:      token,
		Identity:   id,
		MinBackoff: 20 * time.Millisecond,
		MaxBackoff: 200 * time.Millisecond,
		OnState:    func(s agentlink.State) { ch <- s },
	}
	if tune != nil {
		tune(&cfg)
	}
	link, err := agentlink.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = link.Run(ctx)
	}()
	var once sync.Once
	stop = func() {
		once.Do(func() {
			cancel()
			<-done
		})
	}
	t.Cleanup(stop)
	return ch, stop
}

// await returns the next state, failing the test after within.
func await(t *testing.T, states <-chan agentlink.State, within time.Duration) agentlink.State {
	t.Helper()
	select {
	case s := <-states:
		return s
	case <-time.After(within):
		t.Fatalf("no link state within %s", within)
		return agentlink.State{}
	}
}

func getAgent(t *testing.T, agents boardv1connect.AgentServiceClient, name string) *boardv1.Agent {
	t.Helper()
	res, err := agents.GetAgent(t.Context(), &boardv1.GetAgentRequest{Name: name})
	if err != nil {
		t.Fatalf("GetAgent(%s): %v", name, err)
	}
	return res.GetAgent()
}

func TestAgentAppearsAndLeaves(t *testing.T) {
	t.Parallel()
	bt := boardtest.Start(t, boardtest.Options{})
	id := agentlink.Identity{
		Name:        "refund-desk",
		Description: "Refunds what it is asked to.",
		Build:       "sha256:" + strings.Repeat("ab", 32),
		Tools:       []string{"payments.refund"},
	}
	states, stop := runAgent(t, bt.URL, bt.AgentToken(id.Name), id, func(c *agentlink.Config) {
		c.Capabilities = []string{"users", "health"}
	})
	up := await(t, states, 5*time.Second)
	if !up.Up || up.Session == "" {
		t.Fatalf("first state = %+v, want up with a session", up)
	}
	for proto, opts := range boardtest.Protocols {
		agents := bt.Agents(bt.OperatorToken("ops", identity.RoleViewer), opts...)
		a := getAgent(t, agents, id.Name)
		want := &boardv1.Agent{
			Name:         id.Name,
			Description:  id.Description,
			State:        boardv1.AgentState_AGENT_STATE_ONLINE,
			Capabilities: []string{"health", "users"},
			Protocol:     agentlink.Protocol,
			Build:        id.Build,
			Tools:        id.Tools,
			Session:      up.Session,
		}
		got := &boardv1.Agent{Name: a.Name, Description: a.Description, State: a.State, Capabilities: a.Capabilities,
			Protocol: a.Protocol, Build: a.Build, Tools: a.Tools, Session: a.Session}
		if diff := cmp.Diff(want, got, cmpProto); diff != "" {
			t.Errorf("%s: GetAgent mismatch (-want +got):\n%s", proto, diff)
		}
		if a.GetFirstSeenTime().AsTime().IsZero() || a.GetLastSeenTime().AsTime().Before(a.GetFirstSeenTime().AsTime()) {
			t.Errorf("%s: first seen %v, last seen %v", proto, a.GetFirstSeenTime().AsTime(), a.GetLastSeenTime().AsTime())
		}
	}

	// Leaving on purpose is a goodbye: offline at once, without the grace.
	agents := bt.Agents(bt.OperatorToken("ops", identity.RoleViewer))
	left := time.Now()
	stop()
	boardtest.Eventually(t, 2*time.Second, "agent offline", func() bool {
		return getAgent(t, agents, id.Name).GetState() != boardv1.AgentState_AGENT_STATE_ONLINE
	})
	t.Logf("offline %s after leaving", time.Since(left))

	res, err := agents.ListAgents(t.Context(), &boardv1.ListAgentsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.GetAgents()) != 1 || res.GetAgents()[0].GetName() != id.Name || res.GetAgents()[0].GetState() == boardv1.AgentState_AGENT_STATE_ONLINE {
		t.Errorf("ListAgents = %v, want refund-desk offline", res.GetAgents())
	}
	if _, err := agents.GetAgent(t.Context(), &boardv1.GetAgentRequest{Name: "nobody"}); connect.CodeOf(err) != connect.CodeNotFound {
		t.Errorf("GetAgent(nobody) = %v, want not_found", err)
	}
	if _, err := agents.GetAgent(t.Context(), &boardv1.GetAgentRequest{}); connect.CodeOf(err) != connect.CodeInvalidArgument {
		t.Errorf("GetAgent() = %v, want invalid_argument", err)
	}
}

var cmpProto = cmp.Comparer(func(a, b *boardv1.Agent) bool {
	return a.String() == b.String()
})

func TestWatchAgents(t *testing.T) {
	t.Parallel()
	bt := boardtest.Start(t, boardtest.Options{})
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	for proto, opts := range boardtest.Protocols {
		t.Run(proto, func(t *testing.T) {
			name := "watched-" + proto
			w, err := bt.Agents(bt.OperatorToken("ops", identity.RoleViewer), opts...).WatchAgents(ctx, &boardv1.WatchAgentsRequest{})
			if err != nil {
				t.Fatal(err)
			}
			defer w.Close()
			changes := make(chan *boardv1.Agent, 16)
			go func() {
				for {
					m, err := w.Receive()
					if err != nil {
						close(changes)
						return
					}
					changes <- m.GetAgent()
				}
			}()
			waitFor := func(online bool) {
				t.Helper()
				for {
					select {
					case a, ok := <-changes:
						if !ok {
							t.Fatal("watch ended")
						}
						if a.GetName() == name && (a.GetState() == boardv1.AgentState_AGENT_STATE_ONLINE) == online {
							return
						}
					case <-time.After(time.Second):
						t.Fatalf("%s online=%v not seen within 1s", name, online)
					}
				}
			}
			states, stop := runAgent(t, bt.URL, bt.AgentToken(name), agentlink.Identity{Name: name}, nil)
			await(t, states, 5*time.Second)
			waitFor(true)
			stop()
			waitFor(false)
		})
	}
}

func TestGraceKeepsAQuickRedialOnline(t *testing.T) {
	t.Parallel()
	bt := boardtest.Start(t, boardtest.Options{OfflineGrace: 3 * time.Second})
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()
	w, err := bt.Agents(bt.OperatorToken("ops", identity.RoleViewer)).WatchAgents(ctx, &boardv1.WatchAgentsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	var mu sync.Mutex
	var seen []*boardv1.Agent
	changed := make(chan struct{}, 1)
	go func() {
		for {
			m, err := w.Receive()
			if err != nil {
				return
			}
			mu.Lock()
			seen = append(seen, m.GetAgent())
			mu.Unlock()
			select {
			case changed <- struct{}{}:
			default:
			}
		}
	}()
	states, _ := runAgent(t, bt.URL, bt.AgentToken("flappy"), agentlink.Identity{Name: "flappy"}, nil)
	first := await(t, states, 5*time.Second)
	// Drop every link on the board side without a goodbye, as a crash of
	// the network would: the agent redials within the grace.
	bt.Board.DropLinksForTest()
	if s := await(t, states, 5*time.Second); s.Up {
		t.Fatalf("state after drop = %+v, want down", s)
	}
	second := await(t, states, 5*time.Second)
	if !second.Up || second.Session == first.Session {
		t.Fatalf("after redial: %+v, want up with a new session (first %s)", second, first.Session)
	}
	// The watch sends changes in the order the board made them: once it has
	// sent the new session's arrival, a flap before it has been sent too.
	for {
		mu.Lock()
		arrived := slices.ContainsFunc(seen, func(a *boardv1.Agent) bool {
			return a.GetState() == boardv1.AgentState_AGENT_STATE_ONLINE && a.GetSession() == second.Session
		})
		mu.Unlock()
		if arrived {
			break
		}
		select {
		case <-changed:
		case <-ctx.Done():
			t.Fatalf("the watch did not send flappy's new session %s: %v", second.Session, ctx.Err())
		}
	}
	mu.Lock()
	defer mu.Unlock()
	for i, a := range seen {
		if a.GetState() != boardv1.AgentState_AGENT_STATE_ONLINE {
			t.Fatalf("change %d of %v: offline, want no flap within the grace", i, seen)
		}
	}
}

func TestRevokedTokenClosesLiveLink(t *testing.T) {
	t.Parallel()
	bt := boardtest.Start(t, boardtest.Options{RevocationPoll: 50 * time.Millisecond})
	m := bt.Mint(identity.MintOptions{Kind: identity.KindAgent, Name: "revokee"})
	states, _ := runAgent(t, bt.URL, m.Token, agentlink.Identity{Name: "revokee"}, nil)
	if s := await(t, states, 5*time.Second); !s.Up {
		t.Fatalf("state = %+v, want up", s)
	}
	if err := bt.Board.Tokens().Revoke(t.Context(), m.ID, time.Now()); err != nil {
		t.Fatal(err)
	}
	down := await(t, states, 2*time.Second)
	if down.Up || connect.CodeOf(down.Err) != connect.CodeUnauthenticated {
		t.Fatalf("state after revoke = %+v, want down with unauthenticated", down)
	}
	// And it stays out: the redial is refused.
	select {
	case s := <-states:
		if s.Up {
			t.Fatalf("a revoked token linked again: %+v", s)
		}
	case <-time.After(500 * time.Millisecond):
	}
}

// TestBadHello: each bad hello is refused with a clear error, and only that
// link closes: a good agent linked beside it keeps its session.
func TestBadHello(t *testing.T) {
	t.Parallel()
	bt := boardtest.Start(t, boardtest.Options{})
	states, _ := runAgent(t, bt.URL, bt.AgentToken("steady"), agentlink.Identity{Name: "steady"}, nil)
	good := await(t, states, 5*time.Second)

	long := strings.Repeat("x", 5000)
	huge := strings.Repeat("x", 900<<10)
	cases := []struct {
		name  string
		token string
		first *boardv1.LinkRequest
		twice bool
		code  connect.Code
		says  string
	}{
		{name: "no name", token: "bad", first: hello(&boardv1.Hello{Protocol: board.Protocol}), code: connect.CodeInvalidArgument, says: "hello: name: required"},
		{name: "name not the token's", token: "bad", first: hello(&boardv1.Hello{Name: "steady", Protocol: board.Protocol}), code: connect.CodePermissionDenied, says: "not the name this token was issued for"},
		{name: "unknown protocol", token: "bad", first: hello(&boardv1.Hello{Name: "bad", Protocol: "0.6"}), code: connect.CodeFailedPrecondition, says: "hello: protocol: agent speaks 0.6, board speaks 2 to 3"},
		{name: "protocol 1", token: "bad", first: hello(&boardv1.Hello{Name: "bad", Protocol: "1"}), code: connect.CodeFailedPrecondition, says: "hello: protocol: agent speaks 1, board speaks 2 to 3"},
		{name: "protocol 4", token: "bad", first: hello(&boardv1.Hello{Name: "bad", Protocol: "4"}), code: connect.CodeFailedPrecondition, says: "hello: protocol: agent speaks 4, board speaks 2 to 3"},
		{name: "protocol 02", token: "bad", first: hello(&boardv1.Hello{Name: "bad", Protocol: "02"}), code: connect.CodeFailedPrecondition, says: "hello: protocol: agent speaks 02, board speaks 2 to 3"},
		{name: "no protocol", token: "bad", first: hello(&boardv1.Hello{Name: "bad"}), code: connect.CodeFailedPrecondition, says: "hello: protocol: agent speaks none (protocol is empty), board speaks 2 to 3"},
		{name: "oversized description", token: "bad", first: hello(&boardv1.Hello{Name: "bad", Protocol: board.Protocol, Description: long}), code: connect.CodeInvalidArgument, says: "hello: description: 5000 bytes, at most 4096"},
		{name: "oversized capability", token: "bad", first: hello(&boardv1.Hello{Name: "bad", Protocol: board.Protocol, Capabilities: []string{"runs", long}}), code: connect.CodeInvalidArgument, says: "hello: capabilities[1]"},
		{name: "too many tools", token: "bad", first: hello(&boardv1.Hello{Name: "bad", Protocol: board.Protocol, Tools: make([]string, 2000)}), code: connect.CodeInvalidArgument, says: "hello: tools: 2000, at most 1024"},
		{name: "bad build", token: "bad", first: hello(&boardv1.Hello{Name: "bad", Protocol: board.Protocol, Build: "md5:abc"}), code: connect.CodeInvalidArgument, says: "hello: build"},
		{name: "oversized message", token: "bad", first: hello(&boardv1.Hello{Name: "bad", Protocol: board.Protocol, Description: strings.Repeat("y", 2<<20)}), code: connect.CodeResourceExhausted},
		{name: "first message not a hello", token: "bad", first: &boardv1.LinkRequest{Kind: &boardv1.LinkRequest_Ping{Ping: &boardv1.Ping{Seq: 1}}}, code: connect.CodeInvalidArgument, says: "hello: the first message must be a hello"},
		{name: "second hello", token: "bad", first: hello(&boardv1.Hello{Name: "bad", Protocol: board.Protocol}), twice: true, code: connect.CodeInvalidArgument, says: "hello: sent twice"},
		{name: "huge name", token: "bad", first: hello(&boardv1.Hello{Name: huge, Protocol: board.Protocol}), code: connect.CodeInvalidArgument, says: "hello: name: 921600 bytes, at most 128"},
		{name: "huge protocol", token: "bad", first: hello(&boardv1.Hello{Name: "bad", Protocol: huge}), code: connect.CodeFailedPrecondition, says: `hello: protocol: agent speaks "xxxx`},
		{name: "package without digest", token: "bad", first: hello(&boardv1.Hello{Name: "bad", Protocol: board.Protocol, Package: &boardv1.InstalledPackage{Name: "acme/desk", Version: "1.0.0"}}), code: connect.CodeInvalidArgument, says: "hello: package.digest"},
		{name: "package with a bad name", token: "bad", first: hello(&boardv1.Hello{Name: "bad", Protocol: board.Protocol, Package: &boardv1.InstalledPackage{Name: "Desk", Version: "1.0.0", Digest: "sha256:" + strings.Repeat("a", 64)}}), code: connect.CodeInvalidArgument, says: "hello: package.name"},
		{name: "package with a bad version", token: "bad", first: hello(&boardv1.Hello{Name: "bad", Protocol: board.Protocol, Package: &boardv1.InstalledPackage{Name: "acme/desk", Version: "v1", Digest: "sha256:" + strings.Repeat("a", 64)}}), code: connect.CodeInvalidArgument, says: "hello: package.version"},
		{name: "huge build", token: "bad", first: hello(&boardv1.Hello{Name: "bad", Protocol: board.Protocol, Build: huge}), code: connect.CodeInvalidArgument, says: "hello: build: want sha256:"},
	}
	for _, tc := range cases {
		for proto, opts := range boardtest.Protocols {
			t.Run(tc.name+"/"+proto, func(t *testing.T) {
				link := boardv1connect.NewAgentLinkServiceClient(bt.Client(bt.AgentToken(tc.token), opts...))
				ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
				defer cancel()
				s, err := link.Link(ctx)
				if err != nil {
					t.Fatal(err)
				}
				defer s.Close()
				_ = s.Send(tc.first)
				if tc.twice {
					if m, err := s.Receive(); err != nil || m.GetWelcome() == nil {
						t.Fatalf("first hello: %v %v, want a welcome", m, err)
					}
					_ = s.Send(tc.first)
				}
				var got error
				for got == nil {
					_, got = s.Receive()
				}
				if connect.CodeOf(got) != tc.code {
					t.Fatalf("code %v (%v), want %v", connect.CodeOf(got), got, tc.code)
				}
				if !strings.Contains(got.Error(), tc.says) {
					t.Errorf("error %.300q does not say %q", got, tc.says)
				}
				if len(got.Error()) > 300 {
					t.Errorf("error of %d bytes (%.300q): want what was refused never sent back whole", len(got.Error()), got)
				}
			})
		}
	}
	// The good agent never noticed.
	select {
	case s := <-states:
		t.Fatalf("the good agent's link changed: %+v", s)
	default:
	}
	a := getAgent(t, bt.Agents(bt.OperatorToken("ops", identity.RoleViewer)), "steady")
	if a.GetState() != boardv1.AgentState_AGENT_STATE_ONLINE || a.GetSession() != good.Session {
		t.Errorf("steady = %v session %s, want online in session %s", a.GetState(), a.GetSession(), good.Session)
	}
}

func hello(h *boardv1.Hello) *boardv1.LinkRequest {
	return &boardv1.LinkRequest{Kind: &boardv1.LinkRequest_Hello{Hello: h}}
}

// TestRestartBringsAgentsBack: the board restarts on the same store and
// port; the agent, untouched, is back online under the same name.
func TestRestartBringsAgentsBack(t *testing.T) {
	t.Parallel()
	bt := boardtest.Start(t, boardtest.Options{})
	states, _ := runAgent(t, bt.URL, bt.AgentToken("survivor"), agentlink.Identity{Name: "survivor"}, nil)
	first := await(t, states, 5*time.Second)
	firstSeen := getAgent(t, bt.Agents(bt.OperatorToken("ops", identity.RoleViewer)), "survivor").GetFirstSeenTime().AsTime()
	bt.Restart()
	if s := await(t, states, 5*time.Second); s.Up {
		t.Fatalf("state = %+v, want down", s)
	}
	back := await(t, states, 10*time.Second)
	if !back.Up || back.Session == first.Session {
		t.Fatalf("after restart: %+v, want up in a new session", back)
	}
	a := getAgent(t, bt.Agents(bt.OperatorToken("ops", identity.RoleViewer)), "survivor")
	if a.GetState() != boardv1.AgentState_AGENT_STATE_ONLINE || a.GetSession() != back.Session || !a.GetFirstSeenTime().AsTime().Equal(firstSeen) {
		t.Errorf("after restart: %v session %s first seen %v; want online, %s, %v", a.GetState(), a.GetSession(), a.GetFirstSeenTime().AsTime(), back.Session, firstSeen)
	}
}

// TestExpiredTokenClosesLiveLink: a link lives no longer than its token.
func TestExpiredTokenClosesLiveLink(t *testing.T) {
	t.Parallel()
	bt := boardtest.Start(t, boardtest.Options{})
	m := bt.Mint(identity.MintOptions{Kind: identity.KindAgent, Name: "ephemeral", TTL: 2 * time.Second})
	states, _ := runAgent(t, bt.URL, m.Token, agentlink.Identity{Name: "ephemeral"}, nil)
	if s := await(t, states, 5*time.Second); !s.Up {
		t.Fatalf("state = %+v, want up", s)
	}
	down := await(t, states, time.Until(m.ExpiresAt)+time.Second)
	if down.Up || connect.CodeOf(down.Err) != connect.CodeUnauthenticated || time.Now().Before(m.ExpiresAt) {
		t.Fatalf("state = %+v at %v, want down with unauthenticated at or after %v", down, time.Now(), m.ExpiresAt)
	}
}

// TestNewerLinkTakesOver: a second link under one name takes over; the
// first is closed; the agent goes offline only when the newer one leaves.
func TestNewerLinkTakesOver(t *testing.T) {
	t.Parallel()
	bt := boardtest.Start(t, boardtest.Options{OfflineGrace: -1})
	tok := bt.AgentToken("twin")
	agents := bt.Agents(bt.OperatorToken("ops", identity.RoleViewer))

	link := boardv1connect.NewAgentLinkServiceClient(bt.Client(tok))
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	old, err := link.Link(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer old.Close()
	if err := old.Send(hello(&boardv1.Hello{Name: "twin", Protocol: board.Protocol})); err != nil {
		t.Fatal(err)
	}
	if m, err := old.Receive(); err != nil || m.GetWelcome() == nil {
		t.Fatalf("old link: %v %v, want a welcome", m, err)
	}

	states, stop := runAgent(t, bt.URL, tok, agentlink.Identity{Name: "twin"}, nil)
	newer := await(t, states, 5*time.Second)
	for {
		if _, err := old.Receive(); err != nil {
			break // closed by the board
		}
	}
	if a := getAgent(t, agents, "twin"); a.GetState() != boardv1.AgentState_AGENT_STATE_ONLINE || a.GetSession() != newer.Session {
		t.Fatalf("twin = %v session %s, want online in %s", a.GetState(), a.GetSession(), newer.Session)
	}
	stop()
	boardtest.Eventually(t, 2*time.Second, "twin offline after the newer link left", func() bool {
		return getAgent(t, agents, "twin").GetState() != boardv1.AgentState_AGENT_STATE_ONLINE
	})
}
