package board_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"connectrpc.com/connect/v2/connecthttp"

	boardv1 "github.com/symphonix/symphonix/api/symphonix/board/v1"
	"github.com/symphonix/symphonix/api/symphonix/board/v1/boardv1connect"
	"github.com/symphonix/symphonix/board"
	"github.com/symphonix/symphonix/ent"
	"github.com/symphonix/symphonix/identity"
	"github.com/symphonix/symphonix/internal/boardtest"
)

// linkWithTools links an agent that declares tools, and leaves it linked
// until the test ends.
func linkWithTools(t *testing.T, bt *boardtest.Board, name string, tools []string) {
	t.Helper()
	s, err := boardv1connect.NewAgentLinkServiceClient(bt.Client(bt.AgentToken(name))).Link(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	if err := s.Send(hello(&boardv1.Hello{Name: name, Protocol: board.Protocol, Tools: tools})); err != nil {
		t.Fatal(err)
	}
	if m, err := s.Receive(); err != nil || m.GetWelcome() == nil {
		t.Fatalf("hello %s: %v %v, want a welcome", name, m, err)
	}
}

// mergeServers is the servers of every page, a server that went on across
// pages merged into one: its agents and each tool's agents and on, in
// order. A list that is not in (server, agent) order fails the test.
func mergeServers(t *testing.T, pages []*boardv1.Server) []*boardv1.Server {
	t.Helper()
	var out []*boardv1.Server
	for _, s := range pages {
		if n := len(out); n > 0 && out[n-1].GetName() == s.GetName() {
			m := out[n-1]
			if last := m.GetAgents()[len(m.GetAgents())-1]; len(s.GetAgents()) == 0 || s.GetAgents()[0] <= last {
				t.Fatalf("server %s goes on with agents %.20q after %.20q: want later agents only", s.GetName(), s.GetAgents(), last)
			}
			m.Agents = append(m.Agents, s.GetAgents()...)
			m.Online = append(m.Online, s.GetOnline()...)
			tools := map[string]*boardv1.ServerTool{}
			for _, tool := range m.GetTools() {
				tools[tool.GetName()] = tool
			}
			for _, tool := range s.GetTools() {
				if had := tools[tool.GetName()]; had != nil {
					had.Agents = append(had.Agents, tool.GetAgents()...)
					had.On = append(had.On, tool.GetOn()...)
				} else {
					m.Tools = append(m.Tools, tool)
				}
			}
			slices.SortFunc(m.Tools, func(a, b *boardv1.ServerTool) int { return strings.Compare(a.GetName(), b.GetName()) })
			continue
		}
		if n := len(out); n > 0 && out[n-1].GetName() > s.GetName() {
			t.Fatalf("server %s after %s: want them by name", s.GetName(), out[n-1].GetName())
		}
		out = append(out, s)
	}
	return out
}

// TestToolListsBounded: a page of ListServers or ListSwitches stops
// before 4 MiB, with a token for the next; a gRPC client, which takes at
// most 4 MiB in a message by default, reads every page, and the pages
// carry everything once. A server too large for one page goes on over the
// next, by agent name.
func TestToolListsBounded(t *testing.T) {
	t.Parallel()
	bt := boardtest.Start(t, boardtest.Options{})
	// Names and tools as long as a hello may make them: each agent is
	// about 260 KiB of switches and 390 KiB of servers.
	name := func(i int) string { return fmt.Sprintf("agent-%02d-%s", i, strings.Repeat("n", identity.MaxNameLen-9)) }
	tools := func(i int) []string {
		out := make([]string, 1024)
		for j := range out {
			out[j] = fmt.Sprintf("srv.%02d-%0249d", i, j) // 256 bytes
		}
		return out
	}
	viewer := bt.OperatorToken("vic", identity.RoleViewer)
	clients := map[string]boardv1connect.ToolServiceClient{
		"connect": boardv1connect.NewToolServiceClient(bt.Client(viewer)),
		"grpc":    boardv1connect.NewToolServiceClient(bt.Client(viewer, connecthttp.WithGRPC(), connecthttp.WithReadMaxBytes(4<<20))),
	}
	check := func(t *testing.T, linked int, onePage bool) {
		t.Helper()
		for proto_, c := range clients {
			switches, n := pages(t, proto_+": ListSwitches", func(token string) (*boardv1.ListSwitchesResponse, error) {
				return c.ListSwitches(t.Context(), &boardv1.ListSwitchesRequest{PageToken: token})
			}, (*boardv1.ListSwitchesResponse).GetSwitches)
			if (n == 1) != onePage || len(switches) != linked {
				t.Fatalf("%s: ListSwitches = %d agents of %d in %d pages; want them all, in one page: %v", proto_, len(switches), linked, n, onePage)
			}
			for i, s := range switches {
				if s.GetAgent() != name(i) || len(s.GetDeclared()) != 1024 {
					t.Fatalf("%s: ListSwitches[%d] = %.12s… with %d tools, want %.12s… with 1024: by name", proto_, i, s.GetAgent(), len(s.GetDeclared()), name(i))
				}
			}
			servers, n := pages(t, proto_+": ListServers", func(token string) (*boardv1.ListServersResponse, error) {
				return c.ListServers(t.Context(), &boardv1.ListServersRequest{PageToken: token})
			}, (*boardv1.ListServersResponse).GetServers)
			if (n == 1) != onePage {
				t.Fatalf("%s: ListServers in %d pages, want one page: %v", proto_, n, onePage)
			}
			merged := mergeServers(t, servers)
			if len(merged) != 1 {
				t.Fatalf("%s: ListServers = %d servers, want 1", proto_, len(merged))
			}
			s := merged[0]
			if len(s.GetAgents()) != linked || len(s.GetOnline()) != linked || len(s.GetTools()) != 1024*linked {
				t.Fatalf("%s: ListServers: %d agents (%d online), %d tools; want %d, and 1,024 tools each", proto_, len(s.GetAgents()), len(s.GetOnline()), len(s.GetTools()), linked)
			}
			for i, a := range s.GetAgents() {
				if a != name(i) {
					t.Fatalf("%s: ListServers: agent %d is %.12s…, want %.12s…", proto_, i, a, name(i))
				}
			}
			for _, tool := range s.GetTools() {
				if len(tool.GetAgents()) != 1 || !strings.HasPrefix(tool.GetAgents()[0], "agent-"+tool.GetName()[:2]) {
					t.Fatalf("%s: ListServers: tool %.12s… declared by %.20q, want only the agent that declares it", proto_, tool.GetName(), tool.GetAgents())
				}
			}
		}
	}
	for i := range 2 {
		linkWithTools(t, bt, name(i), tools(i))
	}
	check(t, 2, true)
	const n = 20
	for i := 2; i < n; i++ {
		linkWithTools(t, bt, name(i), tools(i))
	}
	check(t, n, false)
}

// TestToolListsPageSize: a page of ListSwitches holds 100 agents unless
// asked for another number, and 1,000 at most; ListServers counts servers,
// not agents, and a server's agents are all on its page while it fits.
func TestToolListsPageSize(t *testing.T) {
	t.Parallel()
	bt := boardtest.Start(t, boardtest.Options{})
	const n = 1001
	now := time.Now()
	for from := 0; from < n; from += 500 {
		var rows []*ent.AgentCreate
		for i := from; i < min(from+500, n); i++ {
			rows = append(rows, bt.Store.Agent.Create().SetName(fmt.Sprintf("a%05d", i)).
				SetTools([]string{"srv.t", fmt.Sprintf("own%05d.t", i)}).SetFirstSeen(now).SetLastSeen(now))
		}
		if err := bt.Store.Agent.CreateBulk(rows...).Exec(t.Context()); err != nil {
			t.Fatal(err)
		}
	}
	c := boardv1connect.NewToolServiceClient(bt.Client(bt.OperatorToken("vic", identity.RoleViewer)))
	for _, tt := range []struct {
		size int32
		want int
	}{{0, 100}, {7, 7}, {1000, 1000}, {5000, 1000}} {
		sw, err := c.ListSwitches(t.Context(), &boardv1.ListSwitchesRequest{PageSize: tt.size})
		if err != nil || len(sw.GetSwitches()) != tt.want || sw.GetNextPageToken() == "" {
			t.Errorf("ListSwitches(page_size %d) = %d agents, %v; want %d and a next page", tt.size, len(sw.GetSwitches()), err, tt.want)
		}
		srv, err := c.ListServers(t.Context(), &boardv1.ListServersRequest{PageSize: tt.size})
		if err != nil || len(srv.GetServers()) != tt.want || srv.GetNextPageToken() == "" {
			t.Fatalf("ListServers(page_size %d) = %d servers, %v; want %d and a next page", tt.size, len(srv.GetServers()), err, tt.want)
		}
		if i := len(srv.GetServers()) - 1; tt.want > 1 && srv.GetServers()[i].GetName() != fmt.Sprintf("own%05d", i) {
			t.Errorf("ListServers(page_size %d): the last is %s, want own%05d", tt.size, srv.GetServers()[i].GetName(), i)
		}
	}
	servers, _ := pages(t, "ListServers", func(token string) (*boardv1.ListServersResponse, error) {
		return c.ListServers(t.Context(), &boardv1.ListServersRequest{PageSize: 1000, PageToken: token})
	}, (*boardv1.ListServersResponse).GetServers)
	merged := mergeServers(t, servers)
	if len(merged) != n+1 || merged[n].GetName() != "srv" || len(merged[n].GetAgents()) != n || len(merged[n].GetTools()[0].GetAgents()) != n {
		t.Errorf("ListServers over the pages = %d servers, the last %s with %d agents; want %d, srv last with all", len(merged), merged[len(merged)-1].GetName(), len(merged[len(merged)-1].GetAgents()), n+1)
	}
}
