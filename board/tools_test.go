package board_test

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"connectrpc.com/connect/v2"
	"connectrpc.com/connect/v2/connecthttp"
	"github.com/google/go-cmp/cmp"
	"google.golang.org/protobuf/testing/protocmp"

	"github.com/symphonix/symphonix/agentlink"
	boardv1 "github.com/symphonix/symphonix/api/symphonix/board/v1"
	"github.com/symphonix/symphonix/api/symphonix/board/v1/boardv1connect"
	"github.com/symphonix/symphonix/audit"
	"github.com/symphonix/symphonix/board"
	"github.com/symphonix/symphonix/identity"
	"github.com/symphonix/symphonix/internal/boardtest"
)

// deskTools is what the agent "desk" declares in most tests, in the order
// its hello gives them.
var deskTools = []string{"orders.lookup_order", "orders.refund", "mail.send"}

func toolsClient(bt *boardtest.Board, token string, opts ...connecthttp.Option) boardv1connect.ToolServiceClient {
	return boardv1connect.NewToolServiceClient(bt.Client(token, opts...))
}

// toolLink is openLink for an agent that declares tools.
func toolLink(t *testing.T, bt *boardtest.Board, name string, tools ...string) *rawLink {
	t.Helper()
	link := boardv1connect.NewAgentLinkServiceClient(bt.Client(bt.AgentToken(name)))
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	t.Cleanup(cancel)
	s, err := link.Link(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	if err := s.Send(hello(&boardv1.Hello{Name: name, Protocol: board.Protocol, Tools: tools})); err != nil {
		t.Fatal(err)
	}
	if m, err := s.Receive(); err != nil || m.GetWelcome() == nil {
		t.Fatalf("hello: %v %v, want a welcome", m, err)
	}
	return &rawLink{t: t, s: s}
}

// switchesUntilPong pings and returns the tool switches the board sent
// before the pong, including any set aside earlier by next.
func (l *rawLink) switchesUntilPong(seq uint64) []*boardv1.ToolSwitches {
	l.t.Helper()
	l.send(&boardv1.LinkRequest{Kind: &boardv1.LinkRequest_Ping{Ping: &boardv1.Ping{Seq: seq}}})
	if m := l.next(); m.GetPong().GetSeq() != seq {
		l.t.Fatalf("waiting for pong %d: got %v", seq, m)
	}
	out := l.switches
	l.switches = nil
	return out
}

// wantSwitches fails unless got is exactly one ToolSwitches{on, spoken}.
func wantSwitches(t *testing.T, what string, got []*boardv1.ToolSwitches, spoken bool, on ...string) {
	t.Helper()
	want := []*boardv1.ToolSwitches{{On: on, Spoken: spoken}}
	if diff := cmp.Diff(want, got, protocmp.Transform()); diff != "" {
		t.Errorf("%s: switches sent (-want +got):\n%s", what, diff)
	}
}

func getSwitches(t *testing.T, c boardv1connect.ToolServiceClient, agent string) *boardv1.Switches {
	t.Helper()
	res, err := c.GetSwitches(t.Context(), &boardv1.GetSwitchesRequest{Agent: agent})
	if err != nil {
		t.Fatalf("GetSwitches(%s): %v", agent, err)
	}
	return res.GetSwitches()
}

func setSwitches(t *testing.T, c boardv1connect.ToolServiceClient, agent string, on ...string) *boardv1.ReplaceSwitchesResponse {
	t.Helper()
	res, err := c.ReplaceSwitches(t.Context(), &boardv1.ReplaceSwitchesRequest{Agent: agent, On: on})
	if err != nil {
		t.Fatalf("ReplaceSwitches(%s, %q): %v", agent, on, err)
	}
	return res
}

// ignoreSetAt compares Switches without when they were set.
var ignoreSetAt = protocmp.IgnoreFields(&boardv1.Switches{}, "set_time")

// toolsSet is the detail of a "tools.set" audit entry.
type toolsSet struct {
	Actor, Subject string
	Agent          string   `json:"agent"`
	On             []string `json:"on"`
	Was            []string `json:"was"`
	WasSpoken      bool     `json:"was_spoken"`
}

// toolsAudit is every "tools.set" entry, in order; it checks the chain.
func toolsAudit(t *testing.T, bt *boardtest.Board) []toolsSet {
	t.Helper()
	trail := audit.New(bt.Store)
	entries, err := trail.List(t.Context(), 0, 1000)
	if err != nil {
		t.Fatal(err)
	}
	var out []toolsSet
	for _, e := range entries {
		if e.Action != "tools.set" {
			continue
		}
		var d toolsSet
		if err := json.Unmarshal(e.Detail, &d); err != nil {
			t.Fatalf("tools.set detail %s: %v", e.Detail, err)
		}
		d.Actor, d.Subject = e.Actor, e.Subject
		out = append(out, d)
	}
	if v, err := trail.Verify(t.Context()); err != nil || !v.OK() {
		t.Errorf("audit Verify = %+v, %v; want OK", v, err)
	}
	return out
}

func TestSwitchesAfterWelcome(t *testing.T) {
	t.Parallel()
	bt := boardtest.Start(t, boardtest.Options{})
	l := toolLink(t, bt, "desk", deskTools...)
	// Never spoken for: nothing is on, and the agent is told so.
	wantSwitches(t, "after the welcome", l.switchesUntilPong(1), false)
	got := getSwitches(t, toolsClient(bt, bt.OperatorToken("vic", identity.RoleViewer)), "desk")
	want := &boardv1.Switches{Agent: "desk", Declared: deskTools}
	if diff := cmp.Diff(want, got, protocmp.Transform()); diff != "" {
		t.Errorf("GetSwitches(desk) (-want +got):\n%s", diff)
	}
	// Nothing more is sent unasked.
	if got := l.switchesUntilPong(2); len(got) != 0 {
		t.Errorf("second ping: switches %v, want none", got)
	}
}

func TestSetSwitches(t *testing.T) {
	t.Parallel()
	bt := boardtest.Start(t, boardtest.Options{})
	admin := toolsClient(bt, bt.OperatorToken("root", identity.RoleAdmin))
	viewer := toolsClient(bt, bt.OperatorToken("vic", identity.RoleViewer))
	l := toolLink(t, bt, "desk", deskTools...)
	l.switchesUntilPong(1)

	before := time.Now().Add(-time.Second)
	res := setSwitches(t, admin, "desk", "orders.lookup_order")
	want := &boardv1.Switches{Agent: "desk", Declared: deskTools, On: []string{"orders.lookup_order"}, Spoken: true, SetBy: "root"}
	if diff := cmp.Diff(want, res.GetSwitches(), protocmp.Transform(), ignoreSetAt); diff != "" {
		t.Errorf("ReplaceSwitches (-want +got):\n%s", diff)
	}
	if !res.GetPushed() {
		t.Error("ReplaceSwitches to a linked agent: pushed false, want true")
	}
	if at := res.GetSwitches().GetSetTime(); at == nil || at.AsTime().Before(before) || at.AsTime().After(time.Now().Add(time.Second)) {
		t.Errorf("ReplaceSwitches set_time = %v, want about now", at)
	}
	wantSwitches(t, "after ReplaceSwitches", l.switchesUntilPong(2), true, "orders.lookup_order")
	if diff := cmp.Diff(res.GetSwitches(), getSwitches(t, viewer, "desk"), protocmp.Transform()); diff != "" {
		t.Errorf("GetSwitches after ReplaceSwitches (-set +get):\n%s", diff)
	}

	// Repeats are dropped and the names sorted.
	res = setSwitches(t, admin, "desk", "orders.refund", "orders.lookup_order", "orders.refund")
	if diff := cmp.Diff([]string{"orders.lookup_order", "orders.refund"}, res.GetSwitches().GetOn()); diff != "" {
		t.Errorf("ReplaceSwitches(refund, lookup_order, refund) on (-want +got):\n%s", diff)
	}
	wantSwitches(t, "after the second ReplaceSwitches", l.switchesUntilPong(3), true, "orders.lookup_order", "orders.refund")

	// Empty: everything off, and still spoken.
	res = setSwitches(t, admin, "desk")
	want = &boardv1.Switches{Agent: "desk", Declared: deskTools, Spoken: true, SetBy: "root"}
	if diff := cmp.Diff(want, res.GetSwitches(), protocmp.Transform(), ignoreSetAt); diff != "" || !res.GetPushed() {
		t.Errorf("ReplaceSwitches(none) pushed %v (-want +got):\n%s", res.GetPushed(), diff)
	}
	wantSwitches(t, "after switching all off", l.switchesUntilPong(4), true)
	if diff := cmp.Diff(want, getSwitches(t, viewer, "desk"), protocmp.Transform(), ignoreSetAt); diff != "" {
		t.Errorf("GetSwitches after switching all off (-want +got):\n%s", diff)
	}

	wantAudit := []toolsSet{
		{Actor: "root", Subject: "desk", Agent: "desk", On: []string{"orders.lookup_order"}, Was: []string{}, WasSpoken: false},
		{Actor: "root", Subject: "desk", Agent: "desk", On: []string{"orders.lookup_order", "orders.refund"}, Was: []string{"orders.lookup_order"}, WasSpoken: true},
		{Actor: "root", Subject: "desk", Agent: "desk", On: []string{}, Was: []string{"orders.lookup_order", "orders.refund"}, WasSpoken: true},
	}
	if diff := cmp.Diff(wantAudit, toolsAudit(t, bt)); diff != "" {
		t.Errorf("tools.set audit entries (-want +got):\n%s", diff)
	}
}

func TestSetSwitchesRefused(t *testing.T) {
	t.Parallel()
	bt := boardtest.Start(t, boardtest.Options{})
	admin := toolsClient(bt, bt.OperatorToken("root", identity.RoleAdmin))
	l := toolLink(t, bt, "desk", deskTools...)
	l.switchesUntilPong(1)
	before := setSwitches(t, admin, "desk", "orders.lookup_order").GetSwitches()
	l.switchesUntilPong(2)

	tooMany := make([]string, 1025)
	for i := range tooMany {
		tooMany[i] = "orders.lookup_order"
	}
	for _, tc := range []struct {
		name  string
		agent string
		on    []string
		code  connect.Code
		names []string // what the message must name
	}{
		{"undeclared tool", "desk", []string{"orders.delete_all"}, connect.CodeInvalidArgument, []string{"on[0]", `"orders.delete_all"`}},
		{"undeclared after a declared one", "desk", []string{"orders.lookup_order", "orders.delete_all"}, connect.CodeInvalidArgument, []string{"on[1]", `"orders.delete_all"`}},
		{"tool of another server", "desk", []string{"search.web"}, connect.CodeInvalidArgument, []string{"on[0]", `"search.web"`}},
		{"empty name", "desk", []string{""}, connect.CodeInvalidArgument, []string{"on[0]"}},
		{"empty name after a good one", "desk", []string{"mail.send", ""}, connect.CodeInvalidArgument, []string{"on[1]"}},
		{"too many names", "desk", tooMany, connect.CodeInvalidArgument, []string{"on:"}},
		{"no agent", "", []string{"orders.lookup_order"}, connect.CodeInvalidArgument, []string{"agent"}},
		{"agent with a leading space", " desk", nil, connect.CodeInvalidArgument, []string{"agent"}},
		{"unknown agent", "ghost", nil, connect.CodeNotFound, []string{`"ghost"`}},
		{"unknown agent with a tool", "ghost", []string{"orders.lookup_order"}, connect.CodeNotFound, []string{`"ghost"`}},
	} {
		_, err := admin.ReplaceSwitches(t.Context(), &boardv1.ReplaceSwitchesRequest{Agent: tc.agent, On: tc.on})
		if connect.CodeOf(err) != tc.code {
			t.Errorf("%s: ReplaceSwitches = %v, want %s", tc.name, err, tc.code)
			continue
		}
		var ce *connect.Error
		if !errors.As(err, &ce) {
			t.Errorf("%s: ReplaceSwitches error %T is not a connect error", tc.name, err)
			continue
		}
		for _, n := range tc.names {
			if !strings.Contains(ce.Message(), n) {
				t.Errorf("%s: ReplaceSwitches message %q does not name %s", tc.name, ce.Message(), n)
			}
		}
	}
	for _, tc := range []struct {
		name  string
		agent string
		code  connect.Code
	}{
		{"no agent", "", connect.CodeInvalidArgument},
		{"unknown agent", "ghost", connect.CodeNotFound},
	} {
		if _, err := admin.GetSwitches(t.Context(), &boardv1.GetSwitchesRequest{Agent: tc.agent}); connect.CodeOf(err) != tc.code {
			t.Errorf("%s: GetSwitches = %v, want %s", tc.name, err, tc.code)
		}
	}

	// Nothing changed, nothing was sent, nothing was audited.
	if diff := cmp.Diff(before, getSwitches(t, admin, "desk"), protocmp.Transform()); diff != "" {
		t.Errorf("GetSwitches after refusals (-before +after):\n%s", diff)
	}
	if got := l.switchesUntilPong(3); len(got) != 0 {
		t.Errorf("after refusals the link got switches %v, want none", got)
	}
	if got := toolsAudit(t, bt); len(got) != 1 {
		t.Errorf("tools.set audit entries %+v, want only the one that succeeded", got)
	}
}

func TestToolsAccess(t *testing.T) {
	t.Parallel()
	bt := boardtest.Start(t, boardtest.Options{})
	l := toolLink(t, bt, "desk", deskTools...)
	l.switchesUntilPong(1)
	set := &boardv1.ReplaceSwitchesRequest{Agent: "desk", On: []string{"orders.lookup_order"}}
	get := &boardv1.GetSwitchesRequest{Agent: "desk"}
	list := &boardv1.ListServersRequest{}

	for _, tc := range []struct {
		name  string
		token string
	}{
		{"no token", ""},
		{"agent token", bt.AgentToken("desk")},
		{"forged token", "not-a-token"},
	} {
		c := toolsClient(bt, tc.token)
		if _, err := c.ListServers(t.Context(), list); connect.CodeOf(err) != connect.CodeUnauthenticated {
			t.Errorf("%s: ListServers = %v, want unauthenticated", tc.name, err)
		}
		if _, err := c.GetSwitches(t.Context(), get); connect.CodeOf(err) != connect.CodeUnauthenticated {
			t.Errorf("%s: GetSwitches = %v, want unauthenticated", tc.name, err)
		}
		if _, err := c.ReplaceSwitches(t.Context(), set); connect.CodeOf(err) != connect.CodeUnauthenticated {
			t.Errorf("%s: ReplaceSwitches = %v, want unauthenticated", tc.name, err)
		}
	}
	for _, role := range []identity.Role{identity.RoleViewer, identity.RoleApprover} {
		for name, c := range map[string]boardv1connect.ToolServiceClient{
			"connect": toolsClient(bt, bt.OperatorToken("op", role)),
			"grpc":    toolsClient(bt, bt.OperatorToken("op", role), connecthttp.WithGRPC()),
		} {
			if _, err := c.ReplaceSwitches(t.Context(), set); connect.CodeOf(err) != connect.CodePermissionDenied {
				t.Errorf("%s %s: ReplaceSwitches = %v, want permission_denied", name, role, err)
			}
			if res, err := c.GetSwitches(t.Context(), get); err != nil || res.GetSwitches().GetAgent() != "desk" {
				t.Errorf("%s %s: GetSwitches = %v, %v; want desk's switches", name, role, res, err)
			}
			if res, err := c.ListServers(t.Context(), list); err != nil || len(res.GetServers()) != 2 {
				t.Errorf("%s %s: ListServers = %v, %v; want orders and mail", name, role, res, err)
			}
		}
	}
	// Refused calls changed nothing and told the agent nothing.
	if got := getSwitches(t, toolsClient(bt, bt.OperatorToken("vic", identity.RoleViewer)), "desk"); got.GetSpoken() || len(got.GetOn()) != 0 {
		t.Errorf("after refused ReplaceSwitches: %v, want never spoken", got)
	}
	if got := l.switchesUntilPong(2); len(got) != 0 {
		t.Errorf("after refused ReplaceSwitches the link got %v", got)
	}
	if got := toolsAudit(t, bt); len(got) != 0 {
		t.Errorf("refused ReplaceSwitches audited %+v", got)
	}
	// An admin may, over either protocol.
	for name, c := range map[string]boardv1connect.ToolServiceClient{
		"connect": toolsClient(bt, bt.OperatorToken("root", identity.RoleAdmin)),
		"grpc":    toolsClient(bt, bt.OperatorToken("root", identity.RoleAdmin), connecthttp.WithGRPC()),
	} {
		if res, err := c.ReplaceSwitches(t.Context(), set); err != nil || !res.GetPushed() {
			t.Errorf("%s admin: ReplaceSwitches = %v, %v; want pushed", name, res, err)
		}
	}
}

func TestSwitchesSurviveRestart(t *testing.T) {
	t.Parallel()
	bt := boardtest.Start(t, boardtest.Options{})
	l := toolLink(t, bt, "desk", deskTools...)
	l.switchesUntilPong(1)
	set := setSwitches(t, toolsClient(bt, bt.OperatorToken("root", identity.RoleAdmin)), "desk", "orders.lookup_order").GetSwitches()
	bt.Restart()
	got := getSwitches(t, toolsClient(bt, bt.OperatorToken("vic", identity.RoleViewer)), "desk")
	if diff := cmp.Diff(set, got, protocmp.Transform()); diff != "" {
		t.Errorf("GetSwitches after restart (-before +after):\n%s", diff)
	}
	l = toolLink(t, bt, "desk", deskTools...)
	wantSwitches(t, "welcome after restart", l.switchesUntilPong(1), true, "orders.lookup_order")
}

func TestSetSwitchesOffline(t *testing.T) {
	t.Parallel()
	bt := boardtest.Start(t, boardtest.Options{})
	admin := toolsClient(bt, bt.OperatorToken("root", identity.RoleAdmin))
	l := toolLink(t, bt, "desk", deskTools...)
	l.switchesUntilPong(1)
	l.hangUp() // a goodbye: offline at once

	res := setSwitches(t, admin, "desk", "mail.send", "orders.refund")
	if res.GetPushed() {
		t.Error("ReplaceSwitches to an agent with no link: pushed true, want false")
	}
	if diff := cmp.Diff([]string{"mail.send", "orders.refund"}, res.GetSwitches().GetOn()); diff != "" || !res.GetSwitches().GetSpoken() {
		t.Errorf("ReplaceSwitches offline: spoken %v, on (-want +got):\n%s", res.GetSwitches().GetSpoken(), diff)
	}
	l = toolLink(t, bt, "desk", deskTools...)
	wantSwitches(t, "welcome after being set offline", l.switchesUntilPong(1), true, "mail.send", "orders.refund")
}

func TestListServers(t *testing.T) {
	t.Parallel()
	bt := boardtest.Start(t, boardtest.Options{})
	admin := toolsClient(bt, bt.OperatorToken("root", identity.RoleAdmin))
	viewer := toolsClient(bt, bt.OperatorToken("vic", identity.RoleViewer))

	if res, err := viewer.ListServers(t.Context(), &boardv1.ListServersRequest{}); err != nil || len(res.GetServers()) != 0 {
		t.Fatalf("ListServers with no agents = %v, %v; want none", res, err)
	}
	c := toolLink(t, bt, "c", "search.web")
	c.switchesUntilPong(1)
	setSwitches(t, admin, "c", "search.web")
	c.hangUp()
	a := toolLink(t, bt, "a", "orders.refund", "orders.lookup_order")
	b := toolLink(t, bt, "b", "orders.lookup_order", "mail.send")
	a.switchesUntilPong(1)
	b.switchesUntilPong(1)
	setSwitches(t, admin, "a", "orders.lookup_order")
	setSwitches(t, admin, "b", "orders.lookup_order", "mail.send")

	res, err := viewer.ListServers(t.Context(), &boardv1.ListServersRequest{})
	if err != nil {
		t.Fatal(err)
	}
	// c has left: its server and tools are listed as its last hello
	// declared them, with c not online.
	want := []*boardv1.Server{
		{Name: "mail", Agents: []string{"b"}, Online: []string{"b"}, Tools: []*boardv1.ServerTool{
			{Name: "send", Agents: []string{"b"}, On: []string{"b"}},
		}},
		{Name: "orders", Agents: []string{"a", "b"}, Online: []string{"a", "b"}, Tools: []*boardv1.ServerTool{
			{Name: "lookup_order", Agents: []string{"a", "b"}, On: []string{"a", "b"}},
			{Name: "refund", Agents: []string{"a"}},
		}},
		{Name: "search", Agents: []string{"c"}, Tools: []*boardv1.ServerTool{
			{Name: "web", Agents: []string{"c"}, On: []string{"c"}},
		}},
	}
	if diff := cmp.Diff(want, res.GetServers(), protocmp.Transform()); diff != "" {
		t.Errorf("ListServers (-want +got):\n%s", diff)
	}

	// Switching b off is seen at once.
	setSwitches(t, admin, "b")
	res, err = viewer.ListServers(t.Context(), &boardv1.ListServersRequest{})
	if err != nil {
		t.Fatal(err)
	}
	want[0].Tools[0].On = nil
	want[1].Tools[0].On = []string{"a"}
	if diff := cmp.Diff(want, res.GetServers(), protocmp.Transform()); diff != "" {
		t.Errorf("ListServers after switching b off (-want +got):\n%s", diff)
	}
}

func TestSwitchesNewBuild(t *testing.T) {
	t.Parallel()
	bt := boardtest.Start(t, boardtest.Options{})
	admin := toolsClient(bt, bt.OperatorToken("root", identity.RoleAdmin))
	l := toolLink(t, bt, "desk", deskTools...)
	l.switchesUntilPong(1)
	setSwitches(t, admin, "desk", "orders.lookup_order", "orders.refund")
	l.hangUp()

	// The new build no longer declares lookup_order.
	l = toolLink(t, bt, "desk", "orders.refund", "mail.send")
	wantSwitches(t, "welcome of the new build", l.switchesUntilPong(1), true, "orders.refund")
	got := getSwitches(t, admin, "desk")
	want := &boardv1.Switches{Agent: "desk", Declared: []string{"orders.refund", "mail.send"}, On: []string{"orders.refund"}, Spoken: true, SetBy: "root"}
	if diff := cmp.Diff(want, got, protocmp.Transform(), ignoreSetAt); diff != "" {
		t.Errorf("GetSwitches after a new build (-want +got):\n%s", diff)
	}
	res, err := admin.ListServers(t.Context(), &boardv1.ListServersRequest{})
	if err != nil {
		t.Fatal(err)
	}
	wantServers := []*boardv1.Server{
		{Name: "mail", Agents: []string{"desk"}, Online: []string{"desk"}, Tools: []*boardv1.ServerTool{{Name: "send", Agents: []string{"desk"}}}},
		{Name: "orders", Agents: []string{"desk"}, Online: []string{"desk"}, Tools: []*boardv1.ServerTool{{Name: "refund", Agents: []string{"desk"}, On: []string{"desk"}}}},
	}
	if diff := cmp.Diff(wantServers, res.GetServers(), protocmp.Transform()); diff != "" {
		t.Errorf("ListServers after a new build (-want +got):\n%s", diff)
	}
	// And it can no longer be switched on.
	if _, err := admin.ReplaceSwitches(t.Context(), &boardv1.ReplaceSwitchesRequest{Agent: "desk", On: []string{"orders.lookup_order"}}); connect.CodeOf(err) != connect.CodeInvalidArgument {
		t.Errorf("ReplaceSwitches(no longer declared) = %v, want invalid_argument", err)
	}
	// The old build linking again does not bring it back on by itself:
	// the operator saw it go off.
	l.hangUp()
	l = toolLink(t, bt, "desk", deskTools...)
	wantSwitches(t, "welcome of the old build again", l.switchesUntilPong(1), true, "orders.refund")
	if got := getSwitches(t, admin, "desk").GetOn(); !slices.Equal(got, []string{"orders.refund"}) {
		t.Errorf("GetSwitches after the old build came back: on %v, want only orders.refund", got)
	}
	entries, err := audit.New(bt.Store).List(t.Context(), 0, 1000)
	if err != nil {
		t.Fatal(err)
	}
	var pruned []string
	for _, e := range entries {
		if e.Action == "tools.prune" {
			pruned = append(pruned, e.Subject+" by "+e.Actor+": "+string(e.Detail))
		}
	}
	if len(pruned) != 1 || !strings.Contains(pruned[0], "desk by board") || !strings.Contains(pruned[0], `"on":["orders.refund"]`) {
		t.Errorf("tools.prune entries %v, want one, by the board, leaving orders.refund on", pruned)
	}
}

// TestHelloToolShape: a declared tool is "<server>.<tool>".
func TestHelloToolShape(t *testing.T) {
	t.Parallel()
	bt := boardtest.Start(t, boardtest.Options{})
	for _, bad := range []string{"plain", "orders.", ".refund"} {
		link := boardv1connect.NewAgentLinkServiceClient(bt.Client(bt.AgentToken("desk")))
		s, err := link.Link(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		if err := s.Send(hello(&boardv1.Hello{Name: "desk", Protocol: board.Protocol, Tools: []string{bad}})); err != nil {
			t.Fatal(err)
		}
		if _, err := s.Receive(); connect.CodeOf(err) != connect.CodeInvalidArgument || !strings.Contains(err.Error(), "tools[0]") {
			t.Errorf("hello declaring %q = %v, want invalid_argument naming tools[0]", bad, err)
		}
		_ = s.Close()
	}
}

// TestListServersRepeatedTool: a hello may name a tool twice; the agent
// still declares it once.
func TestListServersRepeatedTool(t *testing.T) {
	t.Parallel()
	bt := boardtest.Start(t, boardtest.Options{})
	l := toolLink(t, bt, "desk", "orders.refund", "orders.refund")
	l.switchesUntilPong(1)
	res, err := toolsClient(bt, bt.OperatorToken("vic", identity.RoleViewer)).ListServers(t.Context(), &boardv1.ListServersRequest{})
	if err != nil {
		t.Fatal(err)
	}
	want := []*boardv1.Server{
		{Name: "orders", Agents: []string{"desk"}, Online: []string{"desk"}, Tools: []*boardv1.ServerTool{{Name: "refund", Agents: []string{"desk"}}}},
	}
	if diff := cmp.Diff(want, res.GetServers(), protocmp.Transform()); diff != "" {
		t.Errorf("ListServers (-want +got):\n%s", diff)
	}
}

// TestSetSwitch: one tool at a time. Two admins flipping different tools
// of one agent at the same moment both keep their change; off leaves the
// others on; the live link hears each; an undeclared tool is refused,
// naming it; only admins may.
func TestSetSwitch(t *testing.T) {
	t.Parallel()
	testSetSwitch(t, boardtest.Options{})
}

// TestSetSwitchPostgres: the same on PostgreSQL, where the agent's row is
// locked for the change.
func TestSetSwitchPostgres(t *testing.T) {
	t.Parallel()
	testSetSwitch(t, boardtest.Options{DSN: boardtest.PostgresDSN(t)})
}

func testSetSwitch(t *testing.T, opts boardtest.Options) {
	bt := boardtest.Start(t, opts)
	admin := toolsClient(bt, bt.OperatorToken("root", identity.RoleAdmin))
	other := toolsClient(bt, bt.OperatorToken("rita", identity.RoleAdmin))
	l := toolLink(t, bt, "desk", deskTools...)
	l.switchesUntilPong(1)

	for round := range 20 {
		var wg sync.WaitGroup
		for i, c := range []boardv1connect.ToolServiceClient{admin, other} {
			wg.Add(1)
			go func() {
				defer wg.Done()
				tool := []string{"orders.lookup_order", "mail.send"}[i]
				if _, err := c.SetToolSwitch(t.Context(), &boardv1.SetToolSwitchRequest{Agent: "desk", Tool: tool, On: round%2 == 0}); err != nil {
					t.Errorf("SetToolSwitch(%s): %v", tool, err)
				}
			}()
		}
		wg.Wait()
		want := []string{"mail.send", "orders.lookup_order"}
		if round%2 == 1 {
			want = []string{}
		}
		if got := getSwitches(t, admin, "desk").GetOn(); !slices.Equal(got, want) {
			t.Fatalf("round %d: on %v, want %v: one flip lost the other", round, got, want)
		}
	}
	res, err := admin.SetToolSwitch(t.Context(), &boardv1.SetToolSwitchRequest{Agent: "desk", Tool: "orders.refund", On: true})
	if err != nil || !res.GetPushed() || !slices.Equal(res.GetSwitches().GetOn(), []string{"orders.refund"}) {
		t.Fatalf("SetToolSwitch(refund on) = %v, %v", res, err)
	}
	sent := l.switchesUntilPong(2)
	if last := sent[len(sent)-1]; !slices.Equal(last.GetOn(), []string{"orders.refund"}) || !last.GetSpoken() {
		t.Errorf("the link's last switches = %v, want only orders.refund", last)
	}
	_, err = admin.SetToolSwitch(t.Context(), &boardv1.SetToolSwitchRequest{Agent: "desk", Tool: "orders.delete_all", On: true})
	if connect.CodeOf(err) != connect.CodeInvalidArgument || !strings.Contains(err.Error(), `"orders.delete_all"`) {
		t.Errorf("SetToolSwitch(undeclared) = %v, want invalid_argument naming it", err)
	}
	viewer := toolsClient(bt, bt.OperatorToken("vic", identity.RoleViewer))
	if _, err := viewer.SetToolSwitch(t.Context(), &boardv1.SetToolSwitchRequest{Agent: "desk", Tool: "mail.send", On: true}); connect.CodeOf(err) != connect.CodePermissionDenied {
		t.Errorf("SetToolSwitch by a viewer = %v, want permission_denied", err)
	}
	if got := getSwitches(t, admin, "desk").GetOn(); !slices.Equal(got, []string{"orders.refund"}) {
		t.Errorf("after the refusals: on %v, want only orders.refund", got)
	}
}

// TestListSwitches: every agent's switches in one call, for any operator.
func TestListSwitches(t *testing.T) {
	t.Parallel()
	bt := boardtest.Start(t, boardtest.Options{})
	admin := toolsClient(bt, bt.OperatorToken("root", identity.RoleAdmin))
	toolLink(t, bt, "b-desk", "mail.send").switchesUntilPong(1)
	toolLink(t, bt, "a-desk", deskTools...).switchesUntilPong(1)
	setSwitches(t, admin, "a-desk", "orders.refund")
	res, err := toolsClient(bt, bt.OperatorToken("vic", identity.RoleViewer)).ListSwitches(t.Context(), &boardv1.ListSwitchesRequest{})
	if err != nil {
		t.Fatal(err)
	}
	want := []*boardv1.Switches{
		{Agent: "a-desk", Declared: deskTools, On: []string{"orders.refund"}, Spoken: true, SetBy: "root"},
		{Agent: "b-desk", Declared: []string{"mail.send"}, On: []string{}},
	}
	if diff := cmp.Diff(want, res.GetSwitches(), protocmp.Transform(), ignoreSetAt); diff != "" {
		t.Errorf("ListSwitches (-want +got):\n%s", diff)
	}
}

// TestSwitchOfflineAgent: an agent that is not connected is listed with
// the tools its last hello declared, marked not online, and can be
// switched; the switch reaches it when it links again.
func TestSwitchOfflineAgent(t *testing.T) {
	t.Parallel()
	for proto, opts := range boardtest.Protocols {
		t.Run(proto, func(t *testing.T) {
			t.Parallel()
			bt := boardtest.Start(t, boardtest.Options{})
			admin := toolsClient(bt, bt.OperatorToken("root", identity.RoleAdmin), opts...)
			viewer := toolsClient(bt, bt.OperatorToken("vic", identity.RoleViewer), opts...)

			// desk declares its tools and leaves; clerk stays, sharing one of them.
			words := make(chan *boardv1.ToolSwitches, 16)
			link := func() func() {
				id := agentlink.Identity{Name: "desk", Tools: deskTools}
				states, stop := runAgent(t, bt.URL, bt.AgentToken("desk"), id, func(c *agentlink.Config) {
					c.OnSwitches = func(on []string, spoken bool) {
						words <- &boardv1.ToolSwitches{On: slices.Clone(on), Spoken: spoken}
					}
				})
				if s := await(t, states, 5*time.Second); !s.Up {
					t.Fatalf("desk: first state %+v, want up", s)
				}
				return stop
			}
			stop := link()
			wantWord(t, "desk's first word", words, false)
			stop() // a goodbye: offline at once
			toolLink(t, bt, "clerk", "orders.lookup_order").switchesUntilPong(1)

			want := []*boardv1.Server{
				{Name: "mail", Agents: []string{"desk"}, Tools: []*boardv1.ServerTool{
					{Name: "send", Agents: []string{"desk"}},
				}},
				{Name: "orders", Agents: []string{"clerk", "desk"}, Online: []string{"clerk"}, Tools: []*boardv1.ServerTool{
					{Name: "lookup_order", Agents: []string{"clerk", "desk"}},
					{Name: "refund", Agents: []string{"desk"}},
				}},
			}
			listServers := func(what string) {
				t.Helper()
				res, err := viewer.ListServers(t.Context(), &boardv1.ListServersRequest{})
				if err != nil {
					t.Fatalf("%s: ListServers: %v", what, err)
				}
				if diff := cmp.Diff(want, res.GetServers(), protocmp.Transform()); diff != "" {
					t.Errorf("%s: ListServers (-want +got):\n%s", what, diff)
				}
			}
			listServers("desk offline")

			for _, tool := range []string{"orders.refund", "mail.send"} {
				res, err := admin.SetToolSwitch(t.Context(), &boardv1.SetToolSwitchRequest{Agent: "desk", Tool: tool, On: true})
				if err != nil {
					t.Fatalf("SetToolSwitch(desk, %s, on): %v", tool, err)
				}
				if res.GetPushed() {
					t.Errorf("SetToolSwitch(desk, %s) to an agent with no link: pushed true, want false", tool)
				}
			}
			want[0].Tools[0].On = []string{"desk"}
			want[1].Tools[1].On = []string{"desk"}
			listServers("desk switched while offline")

			// It hears the switches as the board has them the moment it links.
			link()
			wantWord(t, "desk's word on linking again", words, true, "mail.send", "orders.refund")
			want[0].Online = []string{"desk"}
			want[1].Online = []string{"clerk", "desk"}
			listServers("desk back")
		})
	}
}

// wantWord fails unless the next word an agent hears is {on, spoken}.
func wantWord(t *testing.T, what string, words <-chan *boardv1.ToolSwitches, spoken bool, on ...string) {
	t.Helper()
	select {
	case got := <-words:
		if diff := cmp.Diff(&boardv1.ToolSwitches{On: on, Spoken: spoken}, got, protocmp.Transform()); diff != "" {
			t.Errorf("%s (-want +got):\n%s", what, diff)
		}
	case <-time.After(10 * time.Second):
		t.Fatalf("%s: nothing heard within 10s", what)
	}
}

// TestSwitchesBeforeDecisions: on a relink, the board's word on the tools
// comes before the decisions made while the agent was away, so a run a
// decision resumes calls its tools under the board's current word, not a
// stale one the agent kept.
func TestSwitchesBeforeDecisions(t *testing.T) {
	t.Parallel()
	bt, _ := decideBoard(t, &boardv1.Rule{Agent: "*", Node: "*", Role: boardv1.Role_ROLE_APPROVER}, boardtest.Options{})
	l := toolLink(t, bt, "desk", deskTools...)
	a := l.raised(refund("run-1", 1))
	l.hangUp()
	setSwitches(t, toolsClient(bt, bt.OperatorToken("root", identity.RoleAdmin)), "desk", deskTools[0])
	if _, err := decide(approver(bt, "ann"), t, a.GetApprovalId(), "yes", digestOf(1), ""); err != nil {
		t.Fatal(err)
	}
	l = toolLink(t, bt, "desk", deskTools...)
	l.send(&boardv1.LinkRequest{Kind: &boardv1.LinkRequest_Ping{Ping: &boardv1.Ping{Seq: 1}}})
	var kinds []string
	for {
		m, err := l.s.Receive()
		if err != nil {
			t.Fatalf("receive: %v", err)
		}
		switch {
		case m.GetSwitches() != nil:
			kinds = append(kinds, "switches")
		case m.GetDecision() != nil:
			kinds = append(kinds, "decision")
		}
		if m.GetPong() != nil {
			break
		}
	}
	if got := strings.Join(kinds, ","); got != "switches,decision" {
		t.Errorf("after the welcome: %s, want switches,decision", got)
	}
}
