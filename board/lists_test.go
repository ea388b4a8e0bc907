package board_test

import (
	"fmt"
	"strings"
	"testing"

	"connectrpc.com/connect/v2"
	"connectrpc.com/connect/v2/connecthttp"
	"google.golang.org/protobuf/proto"

	boardv1 "github.com/symphonix/symphonix/api/symphonix/board/v1"
	"github.com/symphonix/symphonix/api/symphonix/board/v1/boardv1connect"
	"github.com/symphonix/symphonix/audit"
	"github.com/symphonix/symphonix/board"
	"github.com/symphonix/symphonix/identity"
	"github.com/symphonix/symphonix/internal/boardtest"
)

// largest is a raise as large as the board takes: ask, show and account
// at their limits.
func largest(run string, d int) *boardv1.Raise {
	return &boardv1.Raise{
		Run: run, Node: "pay", Ask: strings.Repeat("a", 16<<10),
		Show:    `{"pad":"` + strings.Repeat("s", 64<<10-10) + `"}`,
		Account: strings.Repeat("c", 64<<10), Digest: digestOf(d),
	}
}

// TestListApprovalsBounded: a page of ListApprovals stops before 4 MiB,
// newest first, with a token for the next; a gRPC client, which takes at
// most 4 MiB in a message by default, reads every page, and the pages
// carry every approval once.
func TestListApprovalsBounded(t *testing.T) {
	t.Parallel()
	bt := boardtest.Start(t, boardtest.Options{})
	l := openLink(t, bt, "desk")
	const n = 25 // about 200 KiB each in a list: past 4 MiB
	var ids []string
	for i := range n {
		ids = append(ids, l.raised(largest(fmt.Sprint("run-", i), i)).GetApprovalId())
	}
	viewer := bt.OperatorToken("vic", identity.RoleViewer)
	for name, c := range map[string]boardv1connect.ApprovalServiceClient{
		"connect": approvalsClient(bt, viewer),
		"grpc":    approvalsClient(bt, viewer, connecthttp.WithGRPC(), connecthttp.WithReadMaxBytes(4<<20)),
	} {
		res, err := c.ListApprovals(t.Context(), &boardv1.ListApprovalsRequest{})
		if err != nil {
			t.Fatalf("%s: ListApprovals: %v", name, err)
		}
		if size, got := proto.Size(res), res.GetApprovals(); size > board.MaxListBytes || res.GetNextPageToken() == "" || len(got) < 10 || len(got) >= n {
			t.Fatalf("%s: ListApprovals = %d approvals in %d bytes, next page %q; want under %d bytes, at least 10, and a next page",
				name, len(got), size, res.GetNextPageToken(), board.MaxListBytes)
		}
		got, _ := pages(t, name+": ListApprovals", func(token string) (*boardv1.ListApprovalsResponse, error) {
			return c.ListApprovals(t.Context(), &boardv1.ListApprovalsRequest{PageToken: token})
		}, (*boardv1.ListApprovalsResponse).GetApprovals)
		if len(got) != n {
			t.Fatalf("%s: %d approvals over the pages, want %d", name, len(got), n)
		}
		for i, a := range got {
			if want := ids[n-1-i]; a.GetId() != want {
				t.Fatalf("%s: approval %d is %s, want %s: newest first", name, i, a.GetId(), want)
			}
		}
	}
	// What fits is one page.
	res, err := approvalsClient(bt, viewer).ListApprovals(t.Context(), &boardv1.ListApprovalsRequest{Agent: "nobody"})
	if err != nil || res.GetNextPageToken() != "" || len(res.GetApprovals()) != 0 {
		t.Fatalf("ListApprovals(nobody) = %v, %v; want none, and no next page", res, err)
	}
}

// TestListAgentsBounded: a page of ListAgents stops before 4 MiB with a
// token for the next, and the pages carry every agent once; WatchAgents
// sends every agent.
func TestListAgentsBounded(t *testing.T) {
	t.Parallel()
	bt := boardtest.Start(t, boardtest.Options{})
	tools := make([]string, 1024)
	for i := range tools {
		tools[i] = fmt.Sprintf("server.%0249d", i) // 256 bytes, the most a tool's name may be
	}
	const n = 20 // 1024 tools of 256 bytes each: past 4 MiB
	for i := range n {
		name := fmt.Sprintf("agent-%02d", i)
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
	agents := bt.Agents(bt.OperatorToken("vic", identity.RoleViewer))
	res, err := agents.ListAgents(t.Context(), &boardv1.ListAgentsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if size := proto.Size(res); size > board.MaxListBytes || res.GetNextPageToken() == "" || len(res.GetAgents()) >= n || res.GetAgents()[0].GetName() != "agent-00" {
		t.Fatalf("ListAgents = %d agents in %d bytes, next page %q; want under %d bytes, from agent-00, and a next page",
			len(res.GetAgents()), size, res.GetNextPageToken(), board.MaxListBytes)
	}
	all, _ := pages(t, "ListAgents", func(token string) (*boardv1.ListAgentsResponse, error) {
		return agents.ListAgents(t.Context(), &boardv1.ListAgentsRequest{PageToken: token})
	}, (*boardv1.ListAgentsResponse).GetAgents)
	for i, a := range all {
		if a.GetName() != fmt.Sprintf("agent-%02d", i) {
			t.Fatalf("ListAgents over the pages: agent %d is %s, want agent-%02d", i, a.GetName(), i)
		}
	}
	if len(all) != n {
		t.Fatalf("ListAgents over the pages: %d agents, want %d", len(all), n)
	}
	w, err := agents.WatchAgents(t.Context(), &boardv1.WatchAgentsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	for i := range n {
		m, err := w.Receive()
		if err != nil || m.GetAgent().GetName() != fmt.Sprintf("agent-%02d", i) {
			t.Fatalf("WatchAgents message %d: %v, %v; want agent-%02d", i, m.GetAgent().GetName(), err, i)
		}
	}
}

// TestListAuditBounded: a page of ListAudit stops before 4 MiB, and the
// next page, asked for with its token, starts after the last entry it
// sent.
func TestListAuditBounded(t *testing.T) {
	t.Parallel()
	bt := boardtest.Start(t, boardtest.Options{})
	trail := audit.New(bt.Store)
	const n = 100 // 64 KiB each: past 4 MiB
	for i := range n {
		if err := trail.AppendNow(t.Context(), audit.Record{Actor: "test", Action: "test.big", Subject: fmt.Sprint(i),
			Detail: map[string]any{"pad": strings.Repeat("x", 64<<10)}}); err != nil {
			t.Fatal(err)
		}
	}
	c := boardv1connect.NewAuditServiceClient(bt.Client(bt.OperatorToken("root", identity.RoleAdmin)))
	var seen int
	token := ""
	for page := 0; ; page++ {
		res, err := c.ListAudit(t.Context(), &boardv1.ListAuditRequest{PageToken: token, PageSize: 1000})
		if err != nil {
			t.Fatal(err)
		}
		if size := proto.Size(res); size > board.MaxListBytes {
			t.Fatalf("page %d: %d bytes, want at most %d", page, size, board.MaxListBytes)
		}
		for _, e := range res.GetEntries() {
			if e.GetAction() == "test.big" {
				if e.GetSubject() != fmt.Sprint(seen) {
					t.Fatalf("page %d: entry %s, want %d: none missed, none twice", page, e.GetSubject(), seen)
				}
				seen++
			}
		}
		if token = res.GetNextPageToken(); token == "" {
			break
		}
		if page == 0 && len(res.GetEntries()) >= n {
			t.Fatal("the first page carried every entry: want it to stop at 4 MiB")
		}
	}
	if seen != n {
		t.Fatalf("read %d entries over the pages, want %d", seen, n)
	}

}

// TestRulesBounded: a board holds at most 1,000 rules; one more is refused
// with resource_exhausted (one put in the place of another is not one
// more), and a page of ListRules stops before 4 MiB with a token for the
// next; the pages carry every rule once, in match order.
func TestRulesBounded(t *testing.T) {
	t.Parallel()
	bt := boardtest.Start(t, boardtest.Options{})
	c := approvalsClient(bt, bt.OperatorToken("root", identity.RoleAdmin))
	people := make([]string, 100)
	for i := range people {
		people[i] = fmt.Sprintf("operator-%03d-%s", i, strings.Repeat("x", 110)) // 124 bytes
	}
	big := func(i int) *boardv1.Rule {
		return &boardv1.Rule{Id: fmt.Sprint("r", i), Agent: fmt.Sprint("agent-", i), Node: "*", People: people,
			Description: strings.Repeat("d", 1000)}
	}
	for i := range 1000 {
		putRule(t, c, big(i))
	}
	_, err := c.PutRule(t.Context(), &boardv1.PutRuleRequest{Rule: big(1000)})
	var ce *connect.Error
	if connect.CodeOf(err) != connect.CodeResourceExhausted || !asConnect(err, &ce) ||
		ce.Message() != "rule: the board holds 1000 rules, at most 1000: put one in the place of another, or delete one" {
		t.Fatalf("the 1001st rule: %v, want resource_exhausted naming the limit", err)
	}
	again := big(7)
	again.Node = "pay"
	if got := putRule(t, c, again); got.GetNode() != "pay" {
		t.Fatalf("a rule put again at the limit: %v", got)
	}
	res, err := c.ListRules(t.Context(), &boardv1.ListRulesRequest{PageSize: 1000})
	if err != nil {
		t.Fatal(err)
	}
	if size := proto.Size(res); size > board.MaxListBytes || res.GetNextPageToken() == "" || len(res.GetRules()) < 100 {
		t.Fatalf("ListRules = %d rules in %d bytes, next page %q; want under %d bytes, and a next page", len(res.GetRules()), size, res.GetNextPageToken(), board.MaxListBytes)
	}
	all, _ := pages(t, "ListRules", func(token string) (*boardv1.ListRulesResponse, error) {
		return c.ListRules(t.Context(), &boardv1.ListRulesRequest{PageSize: 1000, PageToken: token})
	}, (*boardv1.ListRulesResponse).GetRules)
	seen := map[string]bool{}
	for _, r := range all {
		if seen[r.GetId()] {
			t.Fatalf("ListRules over the pages: %s twice", r.GetId())
		}
		seen[r.GetId()] = true
	}
	if len(seen) != 1000 {
		t.Fatalf("ListRules over the pages: %d rules, want 1000", len(seen))
	}
}

// TestListConversationsBounded: a page of ListConversations stops before
// 4 MiB with a token for the next, and the pages carry every pointer once,
// newest first.
func TestListConversationsBounded(t *testing.T) {
	t.Parallel()
	bt := boardtest.Start(t, boardtest.Options{})
	l := openLink(t, bt, "desk")
	domain := strings.TrimSuffix(strings.Repeat(strings.Repeat("d", 59)+".", 4), ".") // 239 bytes
	people := make([]string, 100)
	for i := range people {
		people[i] = fmt.Sprintf("p%03d@%s", i, domain)
		bt.Verified("desk", people[i])
	}
	const n, perReport = 210, 30 // 25 KiB a pointer: past 4 MiB; under 1 MiB a report
	for r := range n / perReport {
		var ps []*boardv1.ConversationPointer
		for i := range perReport {
			ps = append(ps, pointer(fmt.Sprintf("t%03d", r*perReport+i), r*perReport+i, false, people...))
		}
		l.report(false, ps...)
	}
	c := conversationsAs(bt, bt.OperatorToken("root", identity.RoleAdmin))
	res, err := c.ListConversations(t.Context(), &boardv1.ListConversationsRequest{PageSize: 1000})
	if err != nil {
		t.Fatal(err)
	}
	got := res.GetConversations()
	if size := proto.Size(res); size > board.MaxListBytes || res.GetNextPageToken() == "" || len(got) >= n || len(got) < 100 ||
		got[0].GetThread() != fmt.Sprintf("t%03d", n-1) || len(got[0].GetPeople()) != 100 {
		t.Fatalf("ListConversations = %d pointers in %d bytes, next page %q; want under %d bytes, newest first with its 100 people, and a next page",
			len(got), size, res.GetNextPageToken(), board.MaxListBytes)
	}
	got, _ = pages(t, "ListConversations", func(token string) (*boardv1.ListConversationsResponse, error) {
		return c.ListConversations(t.Context(), &boardv1.ListConversationsRequest{PageSize: 1000, PageToken: token})
	}, (*boardv1.ListConversationsResponse).GetConversations)
	if len(got) != n {
		t.Fatalf("ListConversations over the pages: %d pointers, want %d", len(got), n)
	}
	for i, p := range got {
		if want := fmt.Sprintf("t%03d", n-1-i); p.GetThread() != want {
			t.Fatalf("pointer %d is %s, want %s: newest first across the pages", i, p.GetThread(), want)
		}
	}
}
