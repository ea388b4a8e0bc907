package e2e

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/symphonix/symphonix/agentlink"
	boardv1 "github.com/symphonix/symphonix/api/symphonix/board/v1"
	"github.com/symphonix/symphonix/api/symphonix/board/v1/boardv1connect"
	"github.com/symphonix/symphonix/approvals"
	"github.com/symphonix/symphonix/internal/boardtest"
)

// TestBoardKilledWithPendingApprovals: ten agents hold a hundred pending
// approvals; the board process is killed with SIGKILL and started again on
// the same store. After the restart all hundred are still pending, each
// agent re-asks about what it holds exactly once, and nothing is duplicated.
func TestBoardKilledWithPendingApprovals(t *testing.T) {
	t.Parallel()
	const agents, runs = 10, 10
	data := t.TempDir()
	boardProc, url := startBoard(t, data, "127.0.0.1:0")
	listen := strings.TrimPrefix(url, "http://")
	adminTok, _ := runCmd(t, "board", "token", "operator", "--data", data, "--name", "root", "--role", "admin")
	admin := boardv1connect.NewApprovalServiceClient(boardtest.NewClient(url, strings.TrimSpace(adminTok)))
	ctx := context.Background()
	if _, err := admin.PutRule(ctx, &boardv1.PutRuleRequest{Rule: &boardv1.Rule{Agent: "*", Node: "*", Role: boardv1.Role_ROLE_APPROVER}}); err != nil {
		t.Fatal(err)
	}

	// reAsks counts, per agent, the re-asks that found its approvals held;
	// ups, the sessions its link came up in.
	var mu sync.Mutex
	reAsks := map[string][]agentlink.ReAskResult{}
	ups := map[string][]string{}
	links := make([]*agentlink.Link, agents)
	for i := range agents {
		name := fmt.Sprintf("desk-%02d", i)
		tok, _ := runCmd(t, "board", "token", "agent", "--data", data, "--name", name)
		held := &agentlink.HeldInMemory{}
		up := make(chan struct{}, 1)
		link, err := agentlink.New(agentlink.Config{
			BoardURL:   url,
			Token:      strings.TrimSpace(tok),
			Identity:   agentlink.Identity{Name: name},
			Holding:    held,
			MinBackoff: 50 * time.Millisecond,
			MaxBackoff: 500 * time.Millisecond,
			OnState: func(s agentlink.State) {
				if s.Up {
					mu.Lock()
					ups[name] = append(ups[name], s.Session)
					mu.Unlock()
					select {
					case up <- struct{}{}:
					default:
					}
				}
			},
			OnReAsk: func(r agentlink.ReAskResult) {
				if r.Held == 0 {
					return // the first link, before anything was held
				}
				mu.Lock()
				reAsks[name] = append(reAsks[name], r)
				mu.Unlock()
			},
		})
		if err != nil {
			t.Fatal(err)
		}
		runCtx, stop := context.WithCancel(ctx)
		done := make(chan struct{})
		go func() { defer close(done); _ = link.Run(runCtx) }()
		t.Cleanup(func() { stop(); <-done })
		select {
		case <-up:
		case <-time.After(ceiling):
			t.Fatalf("%s did not link within %s", name, ceiling)
		}
		links[i] = link
		for r := range runs {
			show := map[string]any{"order": fmt.Sprintf("A-%d%d", i, r), "amount": 100 * (r + 1)}
			digest, err := approvals.Digest(show, "")
			if err != nil {
				t.Fatal(err)
			}
			raise := agentlink.Raise{Run: fmt.Sprintf("run-%d", r), Node: "pay", Ask: "Refund?", Show: show, Digest: digest}
			raised, err := link.Raise(ctx, raise)
			if err != nil || raised.State != "pending" {
				t.Fatalf("%s raise %d: %+v, %v", name, r, raised, err)
			}
			held.Hold(raise)
		}
	}
	before := listApprovals(t, admin)
	if len(before) != agents*runs {
		t.Fatalf("%d approvals before the kill, want %d", len(before), agents*runs)
	}

	if err := boardProc.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = boardProc.cmd.Wait()
	startBoard(t, data, listen)

	boardtest.Eventually(t, ceiling, "every agent re-asked after the restart", func() bool {
		mu.Lock()
		defer mu.Unlock()
		return len(reAsks) == agents
	})
	after := listApprovals(t, admin)
	if len(after) != len(before) {
		t.Fatalf("%d approvals after the restart, want %d (no duplicates)", len(after), len(before))
	}
	ids := map[string]bool{}
	for _, a := range before {
		ids[a.GetId()] = true
	}
	for _, a := range after {
		if !ids[a.GetId()] || a.GetState() != boardv1.ApprovalState_APPROVAL_STATE_PENDING {
			t.Errorf("after the restart: %s %s, want the same approvals, pending", a.GetId(), a.GetState())
		}
	}

	// A link re-asks once each time it comes up, so a second re-ask would
	// follow a second welcome. Each link came up once before the kill and
	// once after it, and is still in that session: no second re-ask came,
	// and none is on its way.
	mu.Lock()
	defer mu.Unlock()
	for i, link := range links {
		name := fmt.Sprintf("desk-%02d", i)
		if rs := reAsks[name]; len(rs) != 1 || rs[0].Held != runs || rs[0].Asked != runs || rs[0].Failed != 0 {
			t.Errorf("%s re-asked %+v, want once, %d held and asked, none failed", name, rs, runs)
		}
		if s := ups[name]; len(s) != 2 || link.Session() != s[1] {
			t.Errorf("%s came up in sessions %v and is in %q now, want one session before the kill and one after, still up", name, s, link.Session())
		}
	}
}

// listApprovals is every approval, over as many pages as they take.
func listApprovals(t *testing.T, c boardv1connect.ApprovalServiceClient) []*boardv1.Approval {
	t.Helper()
	var all []*boardv1.Approval
	req := &boardv1.ListApprovalsRequest{}
	for {
		res, err := c.ListApprovals(context.Background(), req)
		if err != nil {
			t.Fatal(err)
		}
		all = append(all, res.GetApprovals()...)
		if req.PageToken = res.GetNextPageToken(); req.PageToken == "" {
			return all
		}
	}
}
