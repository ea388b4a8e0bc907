package board

import (
	"context"
	"maps"
	"slices"
	"strings"

	"google.golang.org/protobuf/encoding/protowire"

	boardv1 "github.com/symphonix/symphonix/api/symphonix/board/v1"
	"github.com/symphonix/symphonix/ent"
)

// ListServers is a page of MCP servers, by name: for each, the union of
// the tools the agents the board knows declared in their last hello,
// connected or not (an operator can switch an agent that is away, and it
// hears the switch when it next links), which agents declare each, which
// have it on, and which are online now, as the agent's row has it.
//
// The servers are made from the agents, so every page reads every agent's
// row, by name, a page of rows at a time: a page costs as much as the
// fleet is large. It keeps in memory only what goes on the page: at most
// page_size servers and MaxListBytes. The list is in the order of (server,
// agent): a page that fills up in the middle of a server sends the agents
// it has of it, by name, and the next page carries on with the same
// server's later agents; a client merges a server's entries by name.
// The token holds the last server and agent sent ("" for the agent when
// the page ended after a whole server).
func (s toolService) ListServers(ctx context.Context, req *boardv1.ListServersRequest) (*boardv1.ListServersResponse, error) {
	pg, err := s.b.page("ListServers", req.GetPageSize(), req.GetPageToken(), defaultPageSize, maxPageSize, 2)
	if err != nil {
		return nil, err
	}
	l := serverPage{size: pg.budget.max}
	if pg.after != nil {
		l.after = serverPos{server: pg.after[0], agent: pg.after[1]}
	}
	err = s.b.agentRows(ctx, "", func(a *ent.Agent) (bool, error) {
		l.add(a)
		return true, nil
	})
	if err != nil {
		return nil, err
	}
	out := &boardv1.ListServersResponse{Servers: l.servers()}
	if end, more := l.end(); more {
		pg.last, pg.more = []string{end.server, end.agent}, true
	}
	out.NextPageToken = pg.next()
	return out, nil
}

// serverPos is a place in the list of servers: after the agent of the
// server, or after the whole server when agent is "" (no agent has an
// empty name).
type serverPos struct{ server, agent string }

// before reports whether p comes before the entry of agent in server.
func (p serverPos) before(server, agent string) bool {
	return server > p.server || (server == p.server && p.agent != "" && agent > p.agent)
}

// serverPage is a page of ListServers as it is built, an agent at a time,
// the agents in name order.
type serverPage struct {
	size  int       // servers at most
	after serverPos // the page starts after it; zero: the first page
	list  []*serverAcc
	bytes int
	// byCount: servers named after it were left off, the page having size
	// servers before them; "" when none was.
	byCount string
	// byBytes: entries after it were left off, the page being full; nil
	// when none was.
	byBytes *serverPos
}

// serverAcc is one server of the page: its agents' entries, by agent name.
type serverAcc struct {
	name    string
	entries []serverEntry
	tools   map[string]bool // the tools of its entries
}

// serverEntry is what one agent declares of one server.
type serverEntry struct {
	agent  string
	online bool
	tools  []string // its tools on this server, and which are on
	on     []bool
	bytes  int // what it adds to the response, at most
}

// Sizes in a ListServersResponse, at most: a string in a repeated or
// singular field (its tag, length and bytes), and a message's tag and
// length (its fields are counted as they are added).
func stringBytes(s string) int { return 1 + protowire.SizeBytes(len(s)) }

const messageBytes = 1 + 5

// add adds what a declares, server by server, to the page, and leaves off
// what does not fit on it.
func (l *serverPage) add(a *ent.Agent) {
	on := onSet(a)
	byServer := map[string][]string{}
	for _, name := range a.Tools {
		server, tool, ok := strings.Cut(name, ".")
		if ok {
			byServer[server] = append(byServer[server], tool)
		}
	}
	for _, server := range slices.Sorted(maps.Keys(byServer)) {
		if !l.after.before(server, a.Name) || l.leftOff(server, a.Name) {
			continue
		}
		acc := l.server(server)
		if acc == nil {
			continue
		}
		e := serverEntry{agent: a.Name, online: a.Online}
		if len(acc.entries) == 0 {
			e.bytes += messageBytes + stringBytes(server)
		}
		e.bytes += stringBytes(a.Name)
		if a.Online {
			e.bytes += stringBytes(a.Name)
		}
		for _, tool := range byServer[server] {
			if !acc.tools[tool] {
				acc.tools[tool] = true
				e.bytes += messageBytes + stringBytes(tool)
			}
			e.tools = append(e.tools, tool)
			e.on = append(e.on, on[server+"."+tool])
			e.bytes += stringBytes(a.Name)
			if on[server+"."+tool] {
				e.bytes += stringBytes(a.Name)
			}
		}
		acc.entries = append(acc.entries, e)
		l.bytes += e.bytes
		if l.bytes > MaxListBytes {
			l.trim()
		}
	}
}

// leftOff reports whether the entry of agent in server falls after what
// the page holds.
func (l *serverPage) leftOff(server, agent string) bool {
	if l.byCount != "" && server > l.byCount {
		return true
	}
	if b := l.byBytes; b != nil && (server > b.server || (server == b.server && agent > b.agent)) {
		return true
	}
	return false
}

// server is the page's server named name, added when new; nil when it
// falls after the size servers the page holds.
func (l *serverPage) server(name string) *serverAcc {
	i, found := slices.BinarySearchFunc(l.list, name, func(s *serverAcc, name string) int { return strings.Compare(s.name, name) })
	if found {
		return l.list[i]
	}
	if len(l.list) == l.size {
		if i == len(l.list) {
			l.byCount = l.list[len(l.list)-1].name
			return nil
		}
		last := l.list[len(l.list)-1]
		for _, e := range last.entries {
			l.bytes -= e.bytes
		}
		if l.byBytes != nil && l.byBytes.server == last.name {
			l.byBytes = nil // the page now ends before it, by count
		}
		l.list = l.list[:len(l.list)-1]
		acc := &serverAcc{name: name, tools: map[string]bool{}}
		l.list = slices.Insert(l.list, i, acc)
		l.byCount = l.list[len(l.list)-1].name
		return acc
	}
	acc := &serverAcc{name: name, tools: map[string]bool{}}
	l.list = slices.Insert(l.list, i, acc)
	return acc
}

// trim leaves off the entries past MaxListBytes, in the page's order, but
// never the first.
func (l *serverPage) trim() {
	total := 0
	for i, s := range l.list {
		for j, e := range s.entries {
			if total+e.bytes <= MaxListBytes || (i == 0 && j == 0) {
				total += e.bytes
				continue
			}
			// Cut before this entry: the last kept is the one before it.
			if j == 0 {
				prev := l.list[i-1]
				l.byBytes = &serverPos{server: prev.name, agent: prev.entries[len(prev.entries)-1].agent}
				l.list = l.list[:i]
			} else {
				l.byBytes = &serverPos{server: s.name, agent: s.entries[j-1].agent}
				s.entries = s.entries[:j]
				s.retool()
				l.list = l.list[:i+1]
			}
			l.bytes = total
			return
		}
	}
}

// retool counts again the tools of s's entries.
func (s *serverAcc) retool() {
	s.tools = map[string]bool{}
	for _, e := range s.entries {
		for _, t := range e.tools {
			s.tools[t] = true
		}
	}
}

// end is where the page ended, and whether anything was left off after it.
func (l *serverPage) end() (serverPos, bool) {
	switch {
	case l.byBytes != nil:
		return *l.byBytes, true
	case l.byCount != "":
		return serverPos{server: l.list[len(l.list)-1].name}, true
	}
	return serverPos{}, false
}

// servers is the page's servers as the API says them: by name, each with
// its tools by name and its agents by name.
func (l *serverPage) servers() []*boardv1.Server {
	out := make([]*boardv1.Server, 0, len(l.list))
	for _, s := range l.list {
		srv := &boardv1.Server{Name: s.name}
		tools := map[string]*boardv1.ServerTool{}
		for _, e := range s.entries {
			srv.Agents = append(srv.Agents, e.agent)
			if e.online {
				srv.Online = append(srv.Online, e.agent)
			}
			for k, name := range e.tools {
				t := tools[name]
				if t == nil {
					t = &boardv1.ServerTool{Name: name}
					tools[name] = t
					srv.Tools = append(srv.Tools, t)
				}
				t.Agents = append(t.Agents, e.agent)
				if e.on[k] {
					t.On = append(t.On, e.agent)
				}
			}
		}
		slices.SortFunc(srv.Tools, func(a, b *boardv1.ServerTool) int { return strings.Compare(a.Name, b.Name) })
		out = append(out, srv)
	}
	return out
}
