package board_test

import (
	"sync"
	"testing"

	boardv1 "github.com/symphonix/symphonix/api/symphonix/board/v1"
	"github.com/symphonix/symphonix/identity"
	"github.com/symphonix/symphonix/internal/boardtest"
)

// TestConcurrentCallsOnANewConnection: many calls at once on one new
// client (one new HTTP/2 connection) all succeed, over both protocols.
func TestConcurrentCallsOnANewConnection(t *testing.T) {
	t.Parallel()
	bt := boardtest.Start(t, boardtest.Options{})
	tok := bt.OperatorToken("ops", identity.RoleViewer)
	for proto, opts := range boardtest.Protocols {
		for round := range 5 {
			agents := bt.Agents(tok, opts...)
			var wg sync.WaitGroup
			errs := make([]error, 16)
			for i := range errs {
				wg.Go(func() {
					_, errs[i] = agents.ListAgents(t.Context(), &boardv1.ListAgentsRequest{})
				})
			}
			wg.Wait()
			for i, err := range errs {
				if err != nil {
					t.Fatalf("%s round %d call %d: %v", proto, round, i, err)
				}
			}
		}
	}
}
