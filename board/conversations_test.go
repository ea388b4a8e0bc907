package board_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"connectrpc.com/connect/v2"
	"google.golang.org/protobuf/types/known/timestamppb"

	boardv1 "github.com/symphonix/symphonix/api/symphonix/board/v1"
	"github.com/symphonix/symphonix/api/symphonix/board/v1/boardv1connect"
	"github.com/symphonix/symphonix/board"
	"github.com/symphonix/symphonix/identity"
	"github.com/symphonix/symphonix/internal/boardtest"
)

// convAt is a fixed time from which pointers are dated, a minute apart.
var convAt = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

func pointer(thread string, minute int, waiting bool, people ...string) *boardv1.ConversationPointer {
	return &boardv1.ConversationPointer{
		Thread:     thread,
		UpdateTime: timestamppb.New(convAt.Add(time.Duration(minute) * time.Minute)),
		Waiting:    waiting,
		People:     people,
	}
}

// report sends a Conversations report, then a ping, and waits for its
// pong: the link handles messages in order, so the report is kept by then.
func (l *rawLink) report(full bool, ps ...*boardv1.ConversationPointer) {
	l.t.Helper()
	l.send(&boardv1.LinkRequest{Kind: &boardv1.LinkRequest_Conversations{Conversations: &boardv1.Conversations{
		Conversations: ps, Full: full,
	}}})
	l.n++
	l.ping(uint64(1000 + l.n))
}

// listConversations is every pointer c may see, over as many pages as
// they take.
func listConversations(t *testing.T, c boardv1connect.ConversationServiceClient, agent string) []*boardv1.ConversationPointer {
	t.Helper()
	all, _ := pages(t, fmt.Sprintf("ListConversations(%q)", agent), func(token string) (*boardv1.ListConversationsResponse, error) {
		return c.ListConversations(t.Context(), &boardv1.ListConversationsRequest{Agent: agent, PageToken: token})
	}, (*boardv1.ListConversationsResponse).GetConversations)
	return all
}

// threads is "agent/thread" of each pointer, in order.
func threads(ps []*boardv1.ConversationPointer) []string {
	out := []string{}
	for _, p := range ps {
		out = append(out, p.GetAgent()+"/"+p.GetThread())
	}
	return out
}

func conversationsAs(bt *boardtest.Board, token string) boardv1connect.ConversationServiceClient {
	return boardv1connect.NewConversationServiceClient(bt.Client(token))
}

// TestConversationReports: a full report, then a delta that changes one
// pointer and adds one; a later full report drops what it does not name;
// the agent field in a pointer is ignored; another agent's pointers are
// untouched; every pointer survives a restart.
func TestConversationReports(t *testing.T) {
	t.Parallel()
	testConversationReports(t, boardtest.Options{})
}

func TestConversationReportsPostgres(t *testing.T) {
	t.Parallel()
	testConversationReports(t, boardtest.Options{DSN: boardtest.PostgresDSN(t)})
}

func testConversationReports(t *testing.T, opts boardtest.Options) {
	bt := boardtest.Start(t, opts)
	admin := conversationsAs(bt, bt.OperatorToken("root", identity.RoleAdmin))
	a := openLink(t, bt, "support")
	b := openLink(t, bt, "sales")
	for _, who := range []string{"ann@example.com", "bob@example.com", "cy@example.com"} {
		bt.Verified("support", who)
	}

	a.report(true,
		pointer("t1", 1, false, "ann@example.com"),
		pointer("t2", 2, true, "Bob@Example.com", "ann@example.com", "bob@example.com"),
	)
	b.report(true, pointer("s1", 0, false))
	got := listConversations(t, admin, "")
	if want := []string{"support/t2", "support/t1", "sales/s1"}; !slices.Equal(threads(got), want) {
		t.Fatalf("after full reports: %v, want %v", threads(got), want)
	}
	if p := got[0]; !p.GetWaiting() || !slices.Equal(p.GetPeople(), []string{"ann@example.com", "bob@example.com"}) ||
		!p.GetUpdateTime().AsTime().Equal(convAt.Add(2*time.Minute)) {
		t.Fatalf("support/t2 = %v, want waiting, people canonical without repeats, updated at +2m", p)
	}

	// A delta: t1 changes, t3 is new, t2 is untouched. The agent field is
	// the link's agent whatever the pointer says.
	t1 := pointer("t1", 5, true, "cy@example.com")
	t1.Agent = "sales"
	a.report(false, t1, pointer("t3", 3, false))
	got = listConversations(t, admin, "support")
	if want := []string{"support/t1", "support/t3", "support/t2"}; !slices.Equal(threads(got), want) {
		t.Fatalf("after a delta: %v, want %v", threads(got), want)
	}
	if p := got[0]; !p.GetWaiting() || !slices.Equal(p.GetPeople(), []string{"cy@example.com"}) {
		t.Fatalf("support/t1 after a delta = %v, want waiting, with cy only", p)
	}
	if got := threads(listConversations(t, admin, "sales")); !slices.Equal(got, []string{"sales/s1"}) {
		t.Fatalf("sales after support's delta: %v, want only its own", got)
	}

	// A full report drops the ones it does not name.
	a.report(true, pointer("t3", 6, false), pointer("t4", 4, false))
	if got, want := threads(listConversations(t, admin, "support")), []string{"support/t3", "support/t4"}; !slices.Equal(got, want) {
		t.Fatalf("after a second full report: %v, want %v", got, want)
	}
	// An empty full report: the agent holds no conversations.
	b.report(true)
	if got := listConversations(t, admin, "sales"); len(got) != 0 {
		t.Fatalf("after an empty full report: %v, want none", threads(got))
	}

	bt.Restart()
	admin = conversationsAs(bt, bt.OperatorToken("root", identity.RoleAdmin))
	if got, want := threads(listConversations(t, admin, "")), []string{"support/t3", "support/t4"}; !slices.Equal(got, want) {
		t.Fatalf("after a restart: %v, want %v", got, want)
	}
}

// TestConversationBadReports: a bad report is refused in a LinkError
// naming the field, nothing of it is kept, and the link stays up.
func TestConversationBadReports(t *testing.T) {
	t.Parallel()
	bt := boardtest.Start(t, boardtest.Options{})
	admin := conversationsAs(bt, bt.OperatorToken("root", identity.RoleAdmin))
	l := openLink(t, bt, "support")
	bt.Verified("support", "ann@example.com")
	l.report(true, pointer("kept", 0, false, "ann@example.com"))

	many := func(n int, f func(i int) *boardv1.ConversationPointer) []*boardv1.ConversationPointer {
		out := make([]*boardv1.ConversationPointer, n)
		for i := range out {
			out[i] = f(i)
		}
		return out
	}
	crowd := make([]string, 101)
	for i := range crowd {
		crowd[i] = fmt.Sprintf("p%d@example.com", i)
	}
	noTime := pointer("t", 0, false)
	noTime.UpdateTime = nil
	tests := []struct {
		name  string
		ps    []*boardv1.ConversationPointer
		field string
	}{
		{"no thread", []*boardv1.ConversationPointer{pointer("", 0, false)}, "conversations.conversations[0].thread"},
		{"long thread", []*boardv1.ConversationPointer{pointer("ok", 0, false), pointer(strings.Repeat("x", 257), 0, false)}, "conversations.conversations[1].thread"},
		{"control character", []*boardv1.ConversationPointer{pointer("a\nb", 0, false)}, "conversations.conversations[0].thread"},
		{"repeated thread", []*boardv1.ConversationPointer{pointer("t", 0, false), pointer("t", 1, false)}, "conversations.conversations[1].thread"},
		{"no update_time", []*boardv1.ConversationPointer{noTime}, "conversations.conversations[0].update_time"},
		{"not an email", []*boardv1.ConversationPointer{pointer("t", 0, false, "ann@example.com", "Ann <ann@example.com>")}, "conversations.conversations[0].people[1]"},
		{"empty person", []*boardv1.ConversationPointer{pointer("t", 0, false, "")}, "conversations.conversations[0].people[0]"},
		{"too many people", []*boardv1.ConversationPointer{pointer("t", 0, false, crowd...)}, "conversations.conversations[0].people"},
		{"a huge person", []*boardv1.ConversationPointer{pointer("t", 0, false, strings.Repeat("x", 900<<10)+"@example.com")}, `conversations.conversations[0].people[0]: "xxxxxxxx`},
		{"too many pointers", many(1001, func(i int) *boardv1.ConversationPointer { return pointer(fmt.Sprint("t", i), 0, false) }), "conversations.conversations:"},
	}
	for _, tt := range tests {
		l.send(&boardv1.LinkRequest{Kind: &boardv1.LinkRequest_Conversations{Conversations: &boardv1.Conversations{
			Conversations: tt.ps, Full: true,
		}}})
		m := l.next()
		e := m.GetError()
		if e == nil || e.GetCode() != boardv1.LinkErrorCode_LINK_ERROR_CODE_INVALID_ARGUMENT || !strings.HasPrefix(e.GetMessage(), tt.field) || len(e.GetMessage()) > 200 {
			t.Errorf("%s: board answered %.300v, want invalid_argument naming %s, in under 200 bytes", tt.name, m, tt.field)
		}
		l.ping(uint64(len(tt.name))) // the link is still up
	}
	// Nothing of a refused full report was kept, nor dropped.
	if got, want := threads(listConversations(t, admin, "")), []string{"support/kept"}; !slices.Equal(got, want) {
		t.Fatalf("after refused reports: %v, want %v", got, want)
	}
	// As many pointers as a report may carry, and as many people as one
	// pointer may, are kept. (A report of 1000 pointers of 100 people each
	// would be larger than the board reads in one message.)
	for _, who := range crowd[:100] {
		bt.Verified("support", who)
	}
	l.report(true, many(1000, func(i int) *boardv1.ConversationPointer {
		if i == 0 {
			return pointer("t0000", i, false, crowd[:100]...)
		}
		return pointer(fmt.Sprintf("t%04d", i), i, false, "ann@example.com")
	})...)
	got := listConversations(t, admin, "")
	if len(got) != 1000 || got[0].GetThread() != "t0999" || len(got[999].GetPeople()) != 100 {
		t.Fatalf("after the largest report: %d pointers, want 1000, newest t0999 first, t0000 with 100 people", len(got))
	}
}

// TestConversationVisibility: an admin (token or signed in) sees every
// pointer; a signed-in person who is not an admin sees only those they are
// in; a token that is not an admin's sees none; an agent token may not ask.
func TestConversationVisibility(t *testing.T) {
	t.Parallel()
	testConversationVisibility(t, boardtest.Options{})
}

func TestConversationVisibilityPostgres(t *testing.T) {
	t.Parallel()
	testConversationVisibility(t, boardtest.Options{DSN: boardtest.PostgresDSN(t)})
}

func testConversationVisibility(t *testing.T, opts boardtest.Options) {
	bt := boardtest.Start(t, opts)
	bt.AddUser("ann@example.com", identity.RoleViewer, "ann's long password")
	bt.AddUser("boss@example.com", identity.RoleAdmin, "boss's long password")
	a := openLink(t, bt, "support")
	b := openLink(t, bt, "sales")
	bt.Verified("support", "ann@example.com")
	bt.Verified("support", "bob@example.com")
	bt.Verified("sales", "ann@example.com")
	bt.Verified("sales", "annette@example.com")
	a.report(true,
		pointer("with-ann", 3, false, "ann@example.com", "bob@example.com"),
		pointer("with-bob", 2, false, "bob@example.com"),
		pointer("nobody", 1, false),
	)
	b.report(true, pointer("ann-again", 4, true, "ANN@example.com"), pointer("annette", 5, false, "annette@example.com"))
	// An agent the board never paired nor verified Ann for says she is in
	// its conversation: she is not, and does not see it.
	openLink(t, bt, "rogue").report(true, pointer("claims-ann", 0, false, "ann@example.com"))

	session := func(email, password string) boardv1connect.ConversationServiceClient {
		cookie, csrf := bt.SignIn(email, password)
		return boardv1connect.NewConversationServiceClient(bt.SessionClient(cookie, csrf))
	}
	all := []string{"sales/annette", "sales/ann-again", "support/with-ann", "support/with-bob", "support/nobody", "rogue/claims-ann"}
	tests := []struct {
		name  string
		c     boardv1connect.ConversationServiceClient
		agent string
		want  []string
	}{
		{"admin token", conversationsAs(bt, bt.OperatorToken("root", identity.RoleAdmin)), "", all},
		{"admin token, one agent", conversationsAs(bt, bt.OperatorToken("root", identity.RoleAdmin)), "support", all[2:5]},
		{"approver token", conversationsAs(bt, bt.OperatorToken("ops", identity.RoleApprover)), "", nil},
		{"viewer token", conversationsAs(bt, bt.OperatorToken("ops", identity.RoleViewer)), "", nil},
		{"signed-in ann", session("ann@example.com", "ann's long password"), "", []string{"sales/ann-again", "support/with-ann"}},
		{"signed-in ann, one agent", session("ann@example.com", "ann's long password"), "support", []string{"support/with-ann"}},
		{"signed-in admin", session("boss@example.com", "boss's long password"), "", all},
	}
	for _, tt := range tests {
		got := threads(listConversations(t, tt.c, tt.agent))
		if want := tt.want; !slices.Equal(got, want) && !(len(got) == 0 && len(want) == 0) {
			t.Errorf("%s: sees %v, want %v", tt.name, got, want)
		}
	}

	_, err := conversationsAs(bt, bt.AgentToken("support")).ListConversations(t.Context(), &boardv1.ListConversationsRequest{})
	if connect.CodeOf(err) != connect.CodeUnauthenticated {
		t.Errorf("agent token: ListConversations = %v, want unauthenticated", err)
	}
	_, err = conversationsAs(bt, "").ListConversations(t.Context(), &boardv1.ListConversationsRequest{})
	if connect.CodeOf(err) != connect.CodeUnauthenticated {
		t.Errorf("no token: ListConversations = %v, want unauthenticated", err)
	}
	_, err = conversationsAs(bt, bt.OperatorToken("root", identity.RoleAdmin)).ListConversations(t.Context(), &boardv1.ListConversationsRequest{Agent: "bad\nname"})
	if connect.CodeOf(err) != connect.CodeInvalidArgument {
		t.Errorf("bad agent: ListConversations = %v, want invalid_argument", err)
	}
}

// TestConversationPeopleVouched: of the people an agent reports in a
// pointer, the board keeps only those it paired or verified for that
// agent; the same people reported by another agent are not kept.
func TestConversationPeopleVouched(t *testing.T) {
	t.Parallel()
	bt := boardtest.Start(t, boardtest.Options{})
	admin := conversationsAs(bt, bt.OperatorToken("root", identity.RoleAdmin))
	cy := addPerson(t, bt, "cy@example.com", "Cy", "", false)
	addPerson(t, bt, "ann@example.com", "Ann", board.HashSecretForTest(secret), false)
	l := openLink(t, bt, "desk")

	// Cy pairs with desk's thread t1 (the default door), then Ann is
	// verified (the verify door).
	id := l.requestID()
	l.send(&boardv1.LinkRequest{Kind: &boardv1.LinkRequest_Pair{Pair: &boardv1.Pair{RequestId: id, Thread: "t1"}}})
	code := l.next().GetPairCode().GetCode()
	if _, err := cy.enter(t, bt, code); err != nil {
		t.Fatalf("Cy enters the code: %v", err)
	}
	users := boardv1connect.NewUserServiceClient(bt.Client(bt.OperatorToken("root", identity.RoleAdmin)))
	if _, err := users.SetIdentify(t.Context(), &boardv1.SetIdentifyRequest{Door: boardv1.Door_DOOR_VERIFY}); err != nil {
		t.Fatal(err)
	}
	id = l.requestID()
	l.send(&boardv1.LinkRequest{Kind: &boardv1.LinkRequest_Verify{Verify: &boardv1.Verify{RequestId: id, Who: "ann@example.com", Secret: secret}}})
	for {
		m := l.next()
		if m.GetPaired() != nil {
			continue // Cy's pairing, told to the agent
		}
		if !m.GetVerified().GetOk() {
			t.Fatalf("verify Ann: %v, want ok", m)
		}
		break
	}

	l.report(true, pointer("t1", 1, false, "cy@example.com", "Ann@Example.com", "stranger@example.com"), pointer("t2", 2, false, "stranger@example.com"))
	openLink(t, bt, "till").report(true, pointer("t9", 3, false, "cy@example.com", "ann@example.com"))
	got := map[string][]string{}
	for _, p := range listConversations(t, admin, "") {
		got[p.GetAgent()+"/"+p.GetThread()] = p.GetPeople()
	}
	want := map[string][]string{
		"desk/t1": {"ann@example.com", "cy@example.com"},
		"desk/t2": {},
		"till/t9": {},
	}
	if len(got) != len(want) {
		t.Fatalf("pointers %v, want %v", got, want)
	}
	for k, w := range want {
		if !slices.Equal(got[k], w) {
			t.Errorf("%s: people %v, want %v: only those the board paired or verified for the agent", k, got[k], w)
		}
	}
}
