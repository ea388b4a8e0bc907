package board_test

import (
	"testing"
	"time"

	"github.com/symphonix/symphonix/agentlink"
	boardv1 "github.com/symphonix/symphonix/api/symphonix/board/v1"
	"github.com/symphonix/symphonix/identity"
	"github.com/symphonix/symphonix/internal/boardtest"
)

// TestPostgres: the same board on PostgreSQL: an agent links, is online,
// survives a restart of the board, and its token is refused once revoked.
func TestPostgres(t *testing.T) {
	t.Parallel()
	bt := boardtest.Start(t, boardtest.Options{DSN: boardtest.PostgresDSN(t), RevocationPoll: 50 * time.Millisecond})
	m := bt.Mint(identity.MintOptions{Kind: identity.KindAgent, Name: "pg"})
	states, _ := runAgent(t, bt.URL, m.Token, agentlink.Identity{Name: "pg"}, nil)
	first := await(t, states, 5*time.Second)
	agents := bt.Agents(bt.OperatorToken("ops", identity.RoleViewer))
	if a := getAgent(t, agents, "pg"); a.GetState() != boardv1.AgentState_AGENT_STATE_ONLINE || a.GetSession() != first.Session {
		t.Fatalf("pg = %v, want online in %s", a, first.Session)
	}
	bt.Restart()
	await(t, states, 5*time.Second) // down
	back := await(t, states, 10*time.Second)
	agents = bt.Agents(bt.OperatorToken("ops", identity.RoleViewer))
	if a := getAgent(t, agents, "pg"); !back.Up || a.GetState() != boardv1.AgentState_AGENT_STATE_ONLINE || a.GetSession() != back.Session {
		t.Fatalf("after restart: %+v, stored %v", back, a)
	}
	if err := bt.Board.Tokens().Revoke(t.Context(), m.ID, time.Now()); err != nil {
		t.Fatal(err)
	}
	if s := await(t, states, 3*time.Second); s.Up {
		t.Fatalf("state after revoke = %+v, want down", s)
	}
}
