package board_test

import (
	"testing"
	"time"

	"github.com/symphonix/symphonix/agentlink"
	boardv1 "github.com/symphonix/symphonix/api/symphonix/board/v1"
	"github.com/symphonix/symphonix/identity"
	"github.com/symphonix/symphonix/internal/boardtest"
)

// TestTLS: over HTTPS an agent links and an operator reads the fleet, over
// both protocols; an agent that does not trust the certificate cannot link.
func TestTLS(t *testing.T) {
	t.Parallel()
	bt := boardtest.Start(t, boardtest.Options{TLS: true})
	states, _ := runAgent(t, bt.URL, bt.AgentToken("secure"), agentlink.Identity{Name: "secure"}, func(c *agentlink.Config) {
		c.TLS = bt.TLSConfig()
	})
	up := await(t, states, 5*time.Second)
	if !up.Up {
		t.Fatalf("state = %+v, want up", up)
	}
	for proto, opts := range boardtest.Protocols {
		res, err := bt.Agents(bt.OperatorToken("ops", identity.RoleViewer), opts...).GetAgent(t.Context(), &boardv1.GetAgentRequest{Name: "secure"})
		if err != nil || res.GetAgent().GetState() != boardv1.AgentState_AGENT_STATE_ONLINE || res.GetAgent().GetSession() != up.Session {
			t.Errorf("%s: GetAgent = %v, %v; want online in %s", proto, res, err, up.Session)
		}
	}

	var refused agentlink.State
	untrusting, _ := runAgent(t, bt.URL, bt.AgentToken("naive"), agentlink.Identity{Name: "naive"}, nil)
	select {
	case refused = <-untrusting:
		t.Fatalf("an agent that does not trust the certificate linked: %+v", refused)
	case <-time.After(500 * time.Millisecond):
	}
}
