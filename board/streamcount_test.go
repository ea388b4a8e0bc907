package board_test

import (
	"context"
	"testing"
	"time"

	"connectrpc.com/connect/v2"

	boardv1 "github.com/symphonix/symphonix/api/symphonix/board/v1"
	"github.com/symphonix/symphonix/api/symphonix/board/v1/boardv1connect"
	"github.com/symphonix/symphonix/board"
	"github.com/symphonix/symphonix/identity"
	"github.com/symphonix/symphonix/internal/boardtest"
)

// TestStreamsPerCaller: one token holds at most Limits.StreamsPerCaller
// watches open at once, WatchApprovals, WatchAgents and WatchRuns together; the next
// is refused with resource_exhausted, another token is not affected, and a
// watch closed makes room for a new one.
func TestStreamsPerCaller(t *testing.T) {
	t.Parallel()
	bt := boardtest.Start(t, boardtest.Options{})
	openLink(t, bt, "desk") // so that WatchAgents has something to send
	token := bt.OperatorToken("vic", identity.RoleViewer)
	approvals, agents := approvalsClient(bt, token), bt.Agents(token)

	// watch opens one watch of the kind i picks and reads its first
	// message; cancel closes it.
	watch := func(i int, c watchClients) (cancel context.CancelFunc, err error) {
		ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
		if i%3 == 2 {
			s, err := c.runs.WatchRuns(ctx, &boardv1.WatchRunsRequest{})
			if err == nil {
				_, err = s.Receive()
			}
			return cancel, err
		}
		if i%3 == 0 {
			s, err := c.approvals.WatchApprovals(ctx, &boardv1.WatchApprovalsRequest{})
			if err == nil {
				_, err = s.Receive()
			}
			return cancel, err
		}
		s, err := c.agents.WatchAgents(ctx, &boardv1.WatchAgentsRequest{})
		if err == nil {
			_, err = s.Receive()
		}
		return cancel, err
	}
	mine := watchClients{approvals, agents, runsClient(bt, token)}
	var open []context.CancelFunc
	for i := range board.DefaultStreamsPerCaller {
		cancel, err := watch(i, mine)
		if err != nil {
			t.Fatalf("watch %d of %d: %v", i+1, board.DefaultStreamsPerCaller, err)
		}
		open = append(open, cancel)
	}
	for i := range 2 {
		cancel, err := watch(i, mine)
		cancel()
		if connect.CodeOf(err) != connect.CodeResourceExhausted {
			t.Fatalf("watch %d past the limit: %v, want resource_exhausted", i+1, err)
		}
	}
	other := bt.OperatorToken("ann", identity.RoleViewer)
	cancel, err := watch(0, watchClients{approvalsClient(bt, other), bt.Agents(other), runsClient(bt, other)})
	if err != nil {
		t.Fatalf("another token's watch: %v", err)
	}
	cancel()

	open[0]()
	boardtest.Eventually(t, 10*time.Second, "a watch closed makes room", func() bool {
		cancel, err := watch(0, mine)
		if err == nil {
			open[0] = cancel
			return true
		}
		cancel()
		return false
	})
	for _, cancel := range open {
		cancel()
	}
}

// watchClients are the two services a caller watches.
type watchClients struct {
	approvals boardv1connect.ApprovalServiceClient
	agents    boardv1connect.AgentServiceClient
	runs      boardv1connect.RunServiceClient
}
