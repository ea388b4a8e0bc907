package board

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"

	boardv1 "github.com/symphonix/symphonix/api/symphonix/board/v1"
	"github.com/symphonix/symphonix/ent"
)

// TestServerPages: a fleet several times MaxListBytes, whose agents declare
// servers in no order, read page after page as ListServers reads it, for
// several page sizes: every page within MaxListBytes, and the pages merged
// by server name are exactly the fleet's servers, each agent and each
// tool's agent once.
func TestServerPages(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	var fleet []*ent.Agent
	want := map[string][]string{} // server → "agent tool on" in (agent, tool) order
	for i := range 300 {
		a := &ent.Agent{Name: fmt.Sprintf("agent-%03d-%s", i, strings.Repeat("n", 40)), Online: r.IntN(2) == 0}
		for _, s := range r.Perm(9)[:1+r.IntN(5)] {
			server := fmt.Sprintf("srv-%d", (s*7)%9) // declared in no particular order
			for k := range 60 + r.IntN(60) {
				tool := fmt.Sprintf("%s.tool-%03d-%s", server, k, strings.Repeat("t", 90))
				a.Tools = append(a.Tools, tool)
				if r.IntN(3) == 0 {
					a.ToolsOn = append(a.ToolsOn, tool)
				}
			}
		}
		fleet = append(fleet, a)
	}
	for _, a := range fleet {
		on := onSet(a)
		for _, name := range a.Tools {
			server, tool, _ := strings.Cut(name, ".")
			want[server] = append(want[server], fmt.Sprint(a.Name, " ", tool, " ", on[name]))
		}
	}
	for _, server := range want {
		slices.Sort(server)
	}
	for _, size := range []int{1, 2, 4, 1000} {
		got := map[string][]string{}
		var after serverPos
		pages, cut := 0, 0
		for more := true; more; pages++ {
			l := serverPage{size: size, after: after}
			for _, a := range fleet {
				l.add(a)
			}
			servers := l.servers()
			if n := proto.Size(&boardv1.ListServersResponse{Servers: servers}); n > MaxListBytes {
				t.Fatalf("page size %d, page %d: %d bytes, want at most %d", size, pages, n, MaxListBytes)
			}
			if len(servers) > size || len(servers) == 0 {
				t.Fatalf("page size %d, page %d: %d servers", size, pages, len(servers))
			}
			for _, s := range servers {
				for _, tool := range s.GetTools() {
					for _, a := range tool.GetAgents() {
						got[s.GetName()] = append(got[s.GetName()], fmt.Sprint(a, " ", tool.GetName(), " ", slices.Contains(tool.GetOn(), a)))
					}
				}
			}
			after, more = l.end()
			if more && after.agent != "" {
				cut++ // the page ended in the middle of a server
			}
			if pages > 1000 {
				t.Fatalf("page size %d: more than 1000 pages", size)
			}
		}
		for _, server := range got {
			slices.Sort(server)
		}
		if len(got) != len(want) {
			t.Errorf("page size %d: %d servers over %d pages, want %d", size, len(got), pages, len(want))
		}
		for server, entries := range want {
			if !slices.Equal(got[server], entries) {
				t.Errorf("page size %d: server %s over %d pages has %d entries, want %d, each once", size, server, pages, len(got[server]), len(entries))
			}
		}
		if size == 1000 && (pages < 2 || cut == 0) {
			t.Errorf("page size %d: %d pages, %d ending in a server; want the fleet past MaxListBytes, and a server cut", size, pages, cut)
		}
	}
}
