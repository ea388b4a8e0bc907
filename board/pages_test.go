package board_test

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"connectrpc.com/connect/v2"
	"google.golang.org/protobuf/proto"

	boardv1 "github.com/symphonix/symphonix/api/symphonix/board/v1"
	"github.com/symphonix/symphonix/api/symphonix/board/v1/boardv1connect"
	"github.com/symphonix/symphonix/audit"
	"github.com/symphonix/symphonix/board"
	"github.com/symphonix/symphonix/ent"
	"github.com/symphonix/symphonix/identity"
	"github.com/symphonix/symphonix/internal/boardtest"
)

// pages reads a list page after page, each with the token of the one
// before, and returns every item and how many pages there were. Each page
// is within board.MaxListBytes.
func pages[R interface {
	proto.Message
	GetNextPageToken() string
}, I any](t *testing.T, what string, list func(token string) (R, error), items func(R) []I) ([]I, int) {
	t.Helper()
	var all []I
	token := ""
	for n := 1; ; n++ {
		res, err := list(token)
		if err != nil {
			t.Fatalf("%s, page %d: %v", what, n, err)
		}
		if size := proto.Size(res); size > board.MaxListBytes {
			t.Fatalf("%s, page %d: %d bytes, want at most %d", what, n, size, board.MaxListBytes)
		}
		all = append(all, items(res)...)
		if token = res.GetNextPageToken(); token == "" {
			return all, n
		}
		if n == 10000 {
			t.Fatalf("%s: 10,000 pages and still a next one", what)
		}
	}
}

// names is what each item is called, in order.
func names[I any](items []I, name func(I) string) []string {
	out := make([]string, len(items))
	for i, it := range items {
		out[i] = name(it)
	}
	return out
}

// wantOnce fails unless got is want, in order: every item exactly once.
func wantOnce(t *testing.T, what string, got, want []string) {
	t.Helper()
	if !slices.Equal(got, want) {
		t.Errorf("%s over the pages = %q, want %q", what, got, want)
	}
}

// addAgents stores agents the board has seen, without linking them.
func addAgents(t *testing.T, bt *boardtest.Board, tools func(name string) []string, names ...string) {
	t.Helper()
	now := time.Now()
	var rows []*ent.AgentCreate
	for _, n := range names {
		rows = append(rows, bt.Store.Agent.Create().SetName(n).SetTools(tools(n)).SetFirstSeen(now).SetLastSeen(now))
	}
	if err := bt.Store.Agent.CreateBulk(rows...).Exec(t.Context()); err != nil {
		t.Fatal(err)
	}
}

func noTools(string) []string { return nil }

// TestListAgentsPages: ListAgents pages by name; an agent that appears
// between two pages before the place the first stopped is not on the next
// (it is before it), one after it is, and nothing is read twice or missed.
func TestListAgentsPages(t *testing.T) {
	t.Parallel()
	bt := boardtest.Start(t, boardtest.Options{})
	addAgents(t, bt, noTools, "a00", "a01", "a02", "a03", "a04", "a05", "a06", "a07", "a08", "a09")
	c := bt.Agents(bt.OperatorToken("vic", identity.RoleViewer))
	list := func(token string) (*boardv1.ListAgentsResponse, error) {
		return c.ListAgents(t.Context(), &boardv1.ListAgentsRequest{PageSize: 3, PageToken: token})
	}
	got, n := pages(t, "ListAgents", list, (*boardv1.ListAgentsResponse).GetAgents)
	wantOnce(t, "ListAgents", names(got, (*boardv1.Agent).GetName), []string{"a00", "a01", "a02", "a03", "a04", "a05", "a06", "a07", "a08", "a09"})
	if n != 4 {
		t.Errorf("ListAgents of 10 by 3: %d pages, want 4", n)
	}
	first, err := list("")
	if err != nil {
		t.Fatal(err)
	}
	addAgents(t, bt, noTools, "a01b", "a05b")
	rest, _ := pages(t, "ListAgents after the first page", func(token string) (*boardv1.ListAgentsResponse, error) {
		if token == "" {
			token = first.GetNextPageToken()
		}
		return list(token)
	}, (*boardv1.ListAgentsResponse).GetAgents)
	wantOnce(t, "ListAgents after the first page", names(rest, (*boardv1.Agent).GetName), []string{"a03", "a04", "a05", "a05b", "a06", "a07", "a08", "a09"})
}

// TestListSwitchesPages: ListSwitches pages by agent name.
func TestListSwitchesPages(t *testing.T) {
	t.Parallel()
	bt := boardtest.Start(t, boardtest.Options{})
	var want []string
	for i := range 11 {
		want = append(want, fmt.Sprintf("a%02d", i))
	}
	addAgents(t, bt, func(n string) []string { return []string{"srv." + n} }, want...)
	c := boardv1connect.NewToolServiceClient(bt.Client(bt.OperatorToken("vic", identity.RoleViewer)))
	got, n := pages(t, "ListSwitches", func(token string) (*boardv1.ListSwitchesResponse, error) {
		return c.ListSwitches(t.Context(), &boardv1.ListSwitchesRequest{PageSize: 4, PageToken: token})
	}, (*boardv1.ListSwitchesResponse).GetSwitches)
	wantOnce(t, "ListSwitches", names(got, (*boardv1.Switches).GetAgent), want)
	if n != 3 {
		t.Errorf("ListSwitches of 11 by 4: %d pages, want 3", n)
	}
}

// TestListServersPages: ListServers pages by server name, each server on
// its page with all its agents, and the pages together are the list in one
// page.
func TestListServersPages(t *testing.T) {
	t.Parallel()
	bt := boardtest.Start(t, boardtest.Options{})
	// Agent aNN declares the servers sK for every K dividing NN+1.
	var agents []string
	for i := range 12 {
		agents = append(agents, fmt.Sprintf("a%02d", i))
	}
	addAgents(t, bt, func(n string) []string {
		var i int
		_, _ = fmt.Sscanf(n, "a%02d", &i)
		var tools []string
		for k := 1; k <= i+1; k++ {
			if (i+1)%k == 0 {
				tools = append(tools, fmt.Sprintf("s%02d.read", k), fmt.Sprintf("s%02d.write", k))
			}
		}
		return tools
	}, agents...)
	c := boardv1connect.NewToolServiceClient(bt.Client(bt.OperatorToken("vic", identity.RoleViewer)))
	whole, err := c.ListServers(t.Context(), &boardv1.ListServersRequest{PageSize: 1000})
	if err != nil || whole.GetNextPageToken() != "" || len(whole.GetServers()) != 12 {
		t.Fatalf("ListServers in one page = %d servers, %v, next %q; want 12, no next page", len(whole.GetServers()), err, whole.GetNextPageToken())
	}
	if s := whole.GetServers()[1]; s.GetName() != "s02" || !slices.Equal(s.GetAgents(), []string{"a01", "a03", "a05", "a07", "a09", "a11"}) {
		t.Errorf("server s02 = %v, want the agents with an even number", s)
	}
	got, n := pages(t, "ListServers", func(token string) (*boardv1.ListServersResponse, error) {
		return c.ListServers(t.Context(), &boardv1.ListServersRequest{PageSize: 5, PageToken: token})
	}, (*boardv1.ListServersResponse).GetServers)
	if n != 3 || !proto.Equal(&boardv1.ListServersResponse{Servers: got}, &boardv1.ListServersResponse{Servers: whole.GetServers()}) {
		t.Errorf("ListServers by 5 in %d pages = %v\nwant the one page in 3: %v", n, got, whole.GetServers())
	}
}

// TestListUsersPages: ListUsers pages by email.
func TestListUsersPages(t *testing.T) {
	t.Parallel()
	bt := boardtest.Start(t, boardtest.Options{})
	var want []string
	for i := range 10 {
		e := fmt.Sprintf("u%02d@example.com", 9-i)
		bt.AddUser(e, identity.RoleViewer, "")
		want = append([]string{e}, want...)
	}
	c := bt.Users(bt.OperatorToken("root", identity.RoleAdmin))
	got, n := pages(t, "ListUsers", func(token string) (*boardv1.ListUsersResponse, error) {
		return c.ListUsers(t.Context(), &boardv1.ListUsersRequest{PageSize: 3, PageToken: token})
	}, (*boardv1.ListUsersResponse).GetUsers)
	wantOnce(t, "ListUsers", names(got, (*boardv1.User).GetEmail), want)
	if n != 4 {
		t.Errorf("ListUsers of 10 by 3: %d pages, want 4", n)
	}
}

// TestListRulesPages: ListRules pages in match order; a rule put between
// two pages that matches before where the first stopped is not on the
// next.
func TestListRulesPages(t *testing.T) {
	t.Parallel()
	bt := boardtest.Start(t, boardtest.Options{})
	c := approvalsClient(bt, bt.OperatorToken("root", identity.RoleAdmin))
	for i := range 9 {
		agent := []string{"*", fmt.Sprintf("desk-%d*", i), fmt.Sprintf("desk-%d", i)}[i%3]
		putRule(t, c, &boardv1.Rule{Id: fmt.Sprint("r", i), Agent: agent, Node: fmt.Sprint("n", i), Role: boardv1.Role_ROLE_APPROVER})
	}
	whole := names(listRules(t, c), (*boardv1.Rule).GetId)
	if len(whole) != 9 || whole[0] != "r2" || whole[8] != "r6" {
		t.Fatalf("ListRules = %q, want the nine, exact agents first", whole)
	}
	list := func(token string) (*boardv1.ListRulesResponse, error) {
		return c.ListRules(t.Context(), &boardv1.ListRulesRequest{PageSize: 2, PageToken: token})
	}
	got, n := pages(t, "ListRules", list, (*boardv1.ListRulesResponse).GetRules)
	wantOnce(t, "ListRules", names(got, (*boardv1.Rule).GetId), whole)
	if n != 5 {
		t.Errorf("ListRules of 9 by 2: %d pages, want 5", n)
	}
	first, err := list("")
	if err != nil {
		t.Fatal(err)
	}
	putRule(t, c, &boardv1.Rule{Id: "exact", Agent: "desk-long-name", Node: "pay", Role: boardv1.Role_ROLE_ADMIN}) // matched first of all
	putRule(t, c, &boardv1.Rule{Id: "last", Agent: "*", Node: "*", Role: boardv1.Role_ROLE_ADMIN})                 // matched last of all
	rest, _ := pages(t, "ListRules after the first page", func(token string) (*boardv1.ListRulesResponse, error) {
		if token == "" {
			token = first.GetNextPageToken()
		}
		return list(token)
	}, (*boardv1.ListRulesResponse).GetRules)
	wantOnce(t, "ListRules after the first page", names(rest, (*boardv1.Rule).GetId), append(slices.Clone(whole[2:]), "last"))
}

// TestListApprovalsPages: ListApprovals pages newest first, with its
// filters; an approval raised between two pages, newer than all, is not on
// the next.
func TestListApprovalsPages(t *testing.T) {
	t.Parallel()
	bt := boardtest.Start(t, boardtest.Options{})
	desk, till := openLink(t, bt, "desk"), openLink(t, bt, "till")
	var deskIDs []string
	for i := range 10 {
		deskIDs = append([]string{desk.raised(refund(fmt.Sprint("run-", i), i)).GetApprovalId()}, deskIDs...)
		till.raised(refund(fmt.Sprint("run-", i), i))
	}
	c := approvalsClient(bt, bt.OperatorToken("vic", identity.RoleViewer))
	list := func(token string) (*boardv1.ListApprovalsResponse, error) {
		return c.ListApprovals(t.Context(), &boardv1.ListApprovalsRequest{
			Agent: "desk", State: boardv1.ApprovalState_APPROVAL_STATE_PENDING, PageSize: 3, PageToken: token,
		})
	}
	got, n := pages(t, "ListApprovals", list, (*boardv1.ListApprovalsResponse).GetApprovals)
	wantOnce(t, "ListApprovals of desk", names(got, (*boardv1.Approval).GetId), deskIDs)
	if n != 4 {
		t.Errorf("ListApprovals of 10 by 3: %d pages, want 4", n)
	}
	all, _ := pages(t, "ListApprovals", func(token string) (*boardv1.ListApprovalsResponse, error) {
		return c.ListApprovals(t.Context(), &boardv1.ListApprovalsRequest{PageSize: 7, PageToken: token})
	}, (*boardv1.ListApprovalsResponse).GetApprovals)
	if len(all) != 20 {
		t.Errorf("ListApprovals of everyone's = %d, want 20", len(all))
	}
	first, err := list("")
	if err != nil {
		t.Fatal(err)
	}
	desk.raised(refund("run-new", 99))
	rest, _ := pages(t, "ListApprovals after the first page", func(token string) (*boardv1.ListApprovalsResponse, error) {
		if token == "" {
			token = first.GetNextPageToken()
		}
		return list(token)
	}, (*boardv1.ListApprovalsResponse).GetApprovals)
	wantOnce(t, "ListApprovals after the first page", names(rest, (*boardv1.Approval).GetId), deskIDs[3:])
}

// TestListConversationsPages: ListConversations pages most recently
// updated first.
func TestListConversationsPages(t *testing.T) {
	t.Parallel()
	bt := boardtest.Start(t, boardtest.Options{})
	l := openLink(t, bt, "desk")
	var ps []*boardv1.ConversationPointer
	var want []string
	for i := range 10 {
		ps = append(ps, pointer(fmt.Sprintf("t%02d", i), i/2, false)) // two at a time: ties go by thread
	}
	l.report(true, ps...)
	for i := range 10 {
		want = append(want, fmt.Sprintf("desk/t%02d", []int{8, 9, 6, 7, 4, 5, 2, 3, 0, 1}[i]))
	}
	c := conversationsAs(bt, bt.OperatorToken("root", identity.RoleAdmin))
	got, n := pages(t, "ListConversations", func(token string) (*boardv1.ListConversationsResponse, error) {
		return c.ListConversations(t.Context(), &boardv1.ListConversationsRequest{Agent: "desk", PageSize: 3, PageToken: token})
	}, (*boardv1.ListConversationsResponse).GetConversations)
	wantOnce(t, "ListConversations", threads(got), want)
	if n != 4 {
		t.Errorf("ListConversations of 10 by 3: %d pages, want 4", n)
	}
}

// TestListAuditPages: ListAudit pages from after_seq, oldest first.
func TestListAuditPages(t *testing.T) {
	t.Parallel()
	bt := boardtest.Start(t, boardtest.Options{})
	c := boardv1connect.NewAuditServiceClient(bt.Client(bt.OperatorToken("root", identity.RoleAdmin))) // its token.mint first
	trail := audit.New(bt.Store)
	for i := range 12 {
		if err := trail.AppendNow(t.Context(), audit.Record{Actor: "test", Action: "test.page", Subject: fmt.Sprint(i)}); err != nil {
			t.Fatal(err)
		}
	}
	after, err := trail.List(t.Context(), 0, 1000)
	if err != nil {
		t.Fatal(err)
	}
	var from int64 // the seq of the second test entry
	var want []string
	for _, e := range after {
		if e.Action != "test.page" {
			continue
		}
		if e.Subject == "1" {
			from = e.Seq
		}
		if from != 0 && e.Subject != "1" {
			want = append(want, fmt.Sprint(e.Seq))
		}
	}
	got, n := pages(t, "ListAudit", func(token string) (*boardv1.ListAuditResponse, error) {
		return c.ListAudit(t.Context(), &boardv1.ListAuditRequest{AfterSeq: from, PageSize: 4, PageToken: token})
	}, (*boardv1.ListAuditResponse).GetEntries)
	wantOnce(t, "ListAudit", names(got, func(e *boardv1.AuditEntry) string { return fmt.Sprint(e.GetSeq()) }), want)
	if n != 3 {
		t.Errorf("ListAudit of 10 by 4: %d pages, want 3", n)
	}
}

// TestPageRefusals: a negative page_size, and a page_token that is not
// the board's, another list's or another request's, are invalid_argument
// naming the field, on every list.
func TestPageRefusals(t *testing.T) {
	t.Parallel()
	bt := boardtest.Start(t, boardtest.Options{})
	root := bt.OperatorToken("root", identity.RoleAdmin)
	addAgents(t, bt, func(n string) []string { return []string{n + ".t"} }, "a", "b", "c")
	agents := bt.Agents(root)
	approvals := approvalsClient(bt, root)
	tools := boardv1connect.NewToolServiceClient(bt.Client(root))
	users := bt.Users(root)
	auditLog := boardv1connect.NewAuditServiceClient(bt.Client(root))
	convs := conversationsAs(bt, root)
	agentsPage, err := agents.ListAgents(t.Context(), &boardv1.ListAgentsRequest{PageSize: 1})
	if err != nil || agentsPage.GetNextPageToken() == "" {
		t.Fatalf("ListAgents(page_size 1) = %v, %v; want a next page", agentsPage, err)
	}
	other := agentsPage.GetNextPageToken() // a token of ListAgents
	calls := map[string]func(size int32, token string) error{
		"ListAgents": func(size int32, token string) error {
			_, err := agents.ListAgents(t.Context(), &boardv1.ListAgentsRequest{PageSize: size, PageToken: token})
			return err
		},
		"ListApprovals": func(size int32, token string) error {
			_, err := approvals.ListApprovals(t.Context(), &boardv1.ListApprovalsRequest{PageSize: size, PageToken: token})
			return err
		},
		"ListRules": func(size int32, token string) error {
			_, err := approvals.ListRules(t.Context(), &boardv1.ListRulesRequest{PageSize: size, PageToken: token})
			return err
		},
		"ListServers": func(size int32, token string) error {
			_, err := tools.ListServers(t.Context(), &boardv1.ListServersRequest{PageSize: size, PageToken: token})
			return err
		},
		"ListSwitches": func(size int32, token string) error {
			_, err := tools.ListSwitches(t.Context(), &boardv1.ListSwitchesRequest{PageSize: size, PageToken: token})
			return err
		},
		"ListUsers": func(size int32, token string) error {
			_, err := users.ListUsers(t.Context(), &boardv1.ListUsersRequest{PageSize: size, PageToken: token})
			return err
		},
		"ListAudit": func(size int32, token string) error {
			_, err := auditLog.ListAudit(t.Context(), &boardv1.ListAuditRequest{PageSize: size, PageToken: token})
			return err
		},
		"ListConversations": func(size int32, token string) error {
			_, err := convs.ListConversations(t.Context(), &boardv1.ListConversationsRequest{PageSize: size, PageToken: token})
			return err
		},
	}
	for list, call := range calls {
		tests := []struct {
			name  string
			size  int32
			token string
			want  string // the message begins with it
		}{
			{"a negative page size", -1, "", "page_size: -1, must not be negative"},
			{"a made-up token", 0, "bm90IGEgdG9rZW4", "page_token: not a page token"},
			{"not base64", 0, "a token!", "page_token: not a page token"},
			{"a huge token", 0, strings.Repeat("A", 5000), "page_token: 5000 bytes, at most 2048"},
		}
		if list != "ListAgents" {
			tests = append(tests, struct {
				name  string
				size  int32
				token string
				want  string
			}{"ListAgents' token", 0, other, "page_token: made for ListAgents, not for this list"})
		}
		for _, tt := range tests {
			var ce *connect.Error
			if err := call(tt.size, tt.token); !errors.As(err, &ce) || ce.Code() != connect.CodeInvalidArgument || !strings.HasPrefix(ce.Message(), tt.want) {
				t.Errorf("%s with %s: %v, want invalid_argument %q…", list, tt.name, err, tt.want)
			}
		}
	}
	// Another request's filters: the same list, asked for something else.
	l := openLink(t, bt, "desk")
	for i := range 3 {
		l.raised(refund(fmt.Sprint("run-", i), i))
	}
	res, err := approvals.ListApprovals(t.Context(), &boardv1.ListApprovalsRequest{Agent: "desk", PageSize: 1})
	if err != nil || res.GetNextPageToken() == "" {
		t.Fatalf("ListApprovals(desk, page_size 1) = %v, %v; want a next page", res, err)
	}
	for name, req := range map[string]*boardv1.ListApprovalsRequest{
		"another agent": {Agent: "till", PageToken: res.GetNextPageToken()},
		"no agent":      {PageToken: res.GetNextPageToken()},
		"a state":       {Agent: "desk", State: boardv1.ApprovalState_APPROVAL_STATE_PENDING, PageToken: res.GetNextPageToken()},
	} {
		var ce *connect.Error
		if _, err := approvals.ListApprovals(t.Context(), req); !errors.As(err, &ce) || ce.Code() != connect.CodeInvalidArgument ||
			!strings.HasPrefix(ce.Message(), "page_token: made for other filters") {
			t.Errorf("ListApprovals with %s and desk's token: %v, want invalid_argument naming page_token", name, err)
		}
	}
	if _, err := approvals.ListApprovals(t.Context(), &boardv1.ListApprovalsRequest{Agent: "desk", PageSize: 2, PageToken: res.GetNextPageToken()}); err != nil {
		t.Errorf("ListApprovals with desk's token and another page size: %v, want the next page", err)
	}
	auditPage, err := auditLog.ListAudit(t.Context(), &boardv1.ListAuditRequest{AfterSeq: 1, PageSize: 1})
	if err != nil || auditPage.GetNextPageToken() == "" {
		t.Fatalf("ListAudit(after_seq 1, page_size 1) = %v, %v; want a next page", auditPage, err)
	}
	var ce *connect.Error
	if _, err := auditLog.ListAudit(t.Context(), &boardv1.ListAuditRequest{AfterSeq: 2, PageToken: auditPage.GetNextPageToken()}); !errors.As(err, &ce) ||
		!strings.HasPrefix(ce.Message(), "page_token: made for other filters") {
		t.Errorf("ListAudit with another after_seq: %v, want invalid_argument naming page_token", err)
	}
}

// TestPageTokensOfTheStore: a page token is good on the board that made
// it after a restart, since its key is the store's, and on no board with
// another store.
func TestPageTokensOfTheStore(t *testing.T) {
	t.Parallel()
	bt := boardtest.Start(t, boardtest.Options{})
	addAgents(t, bt, noTools, "a", "b", "c")
	root := bt.OperatorToken("root", identity.RoleAdmin)
	first, err := bt.Agents(root).ListAgents(t.Context(), &boardv1.ListAgentsRequest{PageSize: 2})
	if err != nil || first.GetNextPageToken() == "" {
		t.Fatalf("ListAgents(page_size 2) = %v, %v; want a next page", first, err)
	}
	bt.Restart()
	next, err := bt.Agents(root).ListAgents(t.Context(), &boardv1.ListAgentsRequest{PageSize: 2, PageToken: first.GetNextPageToken()})
	if err != nil || len(next.GetAgents()) != 1 || next.GetAgents()[0].GetName() != "c" || next.GetNextPageToken() != "" {
		t.Errorf("after a restart, the next page = %v, %v; want c and no more", next, err)
	}
	elsewhere := boardtest.Start(t, boardtest.Options{})
	addAgents(t, elsewhere, noTools, "a", "b", "c")
	var ce *connect.Error
	_, err = elsewhere.Agents(elsewhere.OperatorToken("root", identity.RoleAdmin)).ListAgents(t.Context(),
		&boardv1.ListAgentsRequest{PageSize: 2, PageToken: first.GetNextPageToken()})
	if !errors.As(err, &ce) || ce.Code() != connect.CodeInvalidArgument || !strings.HasPrefix(ce.Message(), "page_token: not a page token of this board") {
		t.Errorf("a board on another store, with the token: %v, want invalid_argument naming page_token", err)
	}
}
