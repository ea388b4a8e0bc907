package board_test

import (
	"strings"
	"testing"
	"time"

	"github.com/symphonix/symphonix/agentlink"
	boardv1 "github.com/symphonix/symphonix/api/symphonix/board/v1"
	"github.com/symphonix/symphonix/identity"
	"github.com/symphonix/symphonix/internal/boardtest"
)

// TestHalfOpenDrill: a proxy between agent and board stops forwarding
// without closing anything. Both sides must notice within twice the ping
// timeout and hang up, and the agent must redial through a healthy path.
func TestHalfOpenDrill(t *testing.T) {
	t.Parallel()
	const (
		interval = 250 * time.Millisecond
		timeout  = time.Second
	)
	bt := boardtest.Start(t, boardtest.Options{PingInterval: interval, PingTimeout: timeout})
	proxy := boardtest.NewProxy(t, bt.Addr)
	url, messages := countMessages(t, strings.TrimPrefix(proxy.URL(), "http://"))
	states, _ := runAgent(t, url, bt.AgentToken("drilled"), agentlink.Identity{Name: "drilled"}, nil)
	first := await(t, states, 5*time.Second)
	if !first.Up {
		t.Fatalf("state = %+v, want up", first)
	}
	// A few pings through the healthy path first. After its hello the link
	// sends only pings, and each only once the one before has had its
	// pong: a hello and three pings are two round trips.
	for i := range 4 {
		select {
		case <-messages:
		case <-time.After(30 * time.Second):
			t.Fatalf("the agent sent %d messages, want its hello and three pings", i)
		}
	}

	frozenAt := time.Now()
	pairs := proxy.Freeze()
	if len(pairs) != 1 {
		t.Fatalf("proxy held %d connections, want 1", len(pairs))
	}
	limit := 2 * timeout
	for side, gone := range map[string]chan struct{}{"agent": pairs[0].ClientGone, "board": pairs[0].ServerGone} {
		select {
		case <-gone:
		case <-time.After(limit - time.Since(frozenAt)):
			t.Fatalf("%s did not hang up within %s of the freeze", side, limit)
		}
	}
	t.Logf("agent hung up %s, board %s after the freeze",
		pairs[0].ClientGoneAt.Sub(frozenAt).Round(time.Millisecond), pairs[0].ServerGoneAt.Sub(frozenAt).Round(time.Millisecond))
	down := await(t, states, limit)
	if down.Up {
		t.Fatalf("state = %+v, want down", down)
	}
	back := await(t, states, 5*time.Second)
	if !back.Up || back.Session == first.Session {
		t.Fatalf("state = %+v, want up again in a new session", back)
	}
	boardtest.Eventually(t, 2*time.Second, "board sees the new session", func() bool {
		a := getAgent(t, bt.Agents(bt.OperatorToken("ops", identity.RoleViewer)), "drilled")
		return a.GetState() == boardv1.AgentState_AGENT_STATE_ONLINE && a.GetSession() == back.Session
	})
}
