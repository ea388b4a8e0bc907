package board_test

import (
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"connectrpc.com/connect/v2"

	boardv1 "github.com/symphonix/symphonix/api/symphonix/board/v1"
	"github.com/symphonix/symphonix/api/symphonix/board/v1/boardv1connect"
	"github.com/symphonix/symphonix/board"
	"github.com/symphonix/symphonix/ent/agentbuild"
	"github.com/symphonix/symphonix/identity"
	"github.com/symphonix/symphonix/internal/boardtest"
)

// buildN is a build digest of its own for each n.
func buildN(n int) string { return fmt.Sprintf("sha256:%064x", n) }

// listBuilds reads every build of name, a page of size at a time.
func listBuilds(t *testing.T, c boardv1connect.AgentServiceClient, name string, size int32) []*boardv1.AgentBuild {
	t.Helper()
	var all []*boardv1.AgentBuild
	token := ""
	for range 100 {
		res, err := c.ListAgentBuilds(t.Context(), &boardv1.ListAgentBuildsRequest{Name: name, PageSize: size, PageToken: token})
		if err != nil {
			t.Fatalf("ListAgentBuilds %s: %v", name, err)
		}
		all = append(all, res.GetBuilds()...)
		if token = res.GetNextPageToken(); token == "" {
			return all
		}
	}
	t.Fatal("ListAgentBuilds: more than 100 pages")
	return nil
}

// TestAgentBuilds: an agent that links with build A, then B, then A again
// has two builds, A current and first, each with when it was first and
// last seen; a page at a time reads the same; a hello with the package
// names it.
func TestAgentBuilds(t *testing.T) {
	t.Parallel()
	var ahead atomic.Int64
	base := time.Now().Add(time.Minute) // ahead of every token minted here: none is from the board's future
	bt := boardtest.Start(t, boardtest.Options{
		Now: func() time.Time { return base.Add(time.Duration(ahead.Load())) },
	})
	viewer := bt.Agents(bt.OperatorToken("vic", identity.RoleViewer))
	a, b := buildN(0xa), buildN(0xb)
	link := func(build string, minutes int, pkg *boardv1.InstalledPackage) {
		t.Helper()
		ahead.Store(int64(time.Duration(minutes) * time.Minute))
		l, _ := openLinkWith(t, bt, &boardv1.Hello{Name: "desk", Protocol: board.Protocol, Build: build, Package: pkg})
		_ = l.s.CloseSend()
	}
	link(a, 0, nil)
	link(b, 1, &boardv1.InstalledPackage{Name: "acme/desk", Version: "1.2.0", Digest: buildN(0xd)})
	link(a, 2, nil)

	at := func(minutes int) time.Time {
		return base.Add(time.Duration(minutes) * time.Minute).Truncate(time.Microsecond)
	}
	check := func(what string, got []*boardv1.AgentBuild) {
		t.Helper()
		if len(got) != 2 {
			t.Fatalf("%s: %d builds, want 2: %v", what, len(got), got)
		}
		want := []struct {
			build       string
			pkg, ver    string
			first, last int
			current     bool
		}{{a, "", "", 0, 2, true}, {b, "acme/desk", "1.2.0", 1, 1, false}}
		for i, w := range want {
			g := got[i]
			if g.GetBuild() != w.build || g.GetPackageName() != w.pkg || g.GetPackageVersion() != w.ver || g.GetCurrent() != w.current ||
				!g.GetFirstSeenTime().AsTime().Equal(at(w.first)) || !g.GetLastSeenTime().AsTime().Equal(at(w.last)) {
				t.Errorf("%s: build %d is %v, want %s %s@%s first seen at +%dm, last at +%dm, current %v",
					what, i, g, w.build, w.pkg, w.ver, w.first, w.last, w.current)
			}
		}
	}
	check("one page", listBuilds(t, viewer, "desk", 0))
	check("a page at a time", listBuilds(t, viewer, "desk", 1))
}

// TestAgentBuildsCapped: the board keeps an agent's 50 builds last seen
// most recently; a build seen again stays.
func TestAgentBuildsCapped(t *testing.T) {
	t.Parallel()
	var ahead atomic.Int64
	base := time.Now().Add(time.Minute) // ahead of every token minted here: none is from the board's future
	bt := boardtest.Start(t, boardtest.Options{
		Now: func() time.Time { return base.Add(time.Duration(ahead.Load())) },
	})
	viewer := bt.Agents(bt.OperatorToken("vic", identity.RoleViewer))
	step := 0
	link := func(n int) {
		t.Helper()
		step++
		ahead.Store(int64(time.Duration(step) * time.Second))
		l, _ := openLinkWith(t, bt, &boardv1.Hello{Name: "desk", Protocol: board.Protocol, Build: buildN(n)})
		_ = l.s.CloseSend()
	}
	for n := range 50 {
		link(n)
	}
	link(0)  // seen again: now the newest
	link(50) // the 51st: build 1, seen longest ago, goes
	got := listBuilds(t, viewer, "desk", 7)
	if len(got) != 50 {
		t.Fatalf("%d builds, want 50", len(got))
	}
	if got[0].GetBuild() != buildN(50) || !got[0].GetCurrent() || got[1].GetBuild() != buildN(0) {
		t.Errorf("newest: %s (current %v), %s; want builds 50 (current) and 0", got[0].GetBuild(), got[0].GetCurrent(), got[1].GetBuild())
	}
	for _, g := range got {
		if g.GetBuild() == buildN(1) {
			t.Errorf("build 1, seen longest ago, was kept")
		}
	}
	if n := bt.Store.AgentBuild.Query().Where(agentbuild.Agent("desk")).CountX(t.Context()); n != 50 {
		t.Errorf("the store holds %d builds of desk, want 50", n)
	}
}

// TestAgentBuildsForgotten: forgetting an agent removes its builds, and
// only its own.
func TestAgentBuildsForgotten(t *testing.T) {
	t.Parallel()
	var ahead atomic.Int64
	bt := boardtest.Start(t, boardtest.Options{
		OfflineGrace: -1, ForgetAfter: time.Hour,
		Now: func() time.Time { return time.Now().Add(time.Duration(ahead.Load())) },
	})
	admin := bt.Agents(bt.OperatorToken("ops", identity.RoleAdmin))
	for _, name := range []string{"desk", "till"} {
		l, _ := openLinkWith(t, bt, &boardv1.Hello{Name: name, Protocol: board.Protocol, Build: buildN(1)})
		_ = l.s.CloseSend()
	}
	boardtest.Eventually(t, time.Minute, "desk offline", func() bool {
		return getAgent(t, admin, "desk").GetState() == boardv1.AgentState_AGENT_STATE_OFFLINE
	})
	ahead.Store(int64(2 * time.Hour))
	if _, err := admin.ForgetAgent(t.Context(), &boardv1.ForgetAgentRequest{Name: "desk", Reason: "retired"}); err != nil {
		t.Fatal(err)
	}
	if n := bt.Store.AgentBuild.Query().Where(agentbuild.Agent("desk")).CountX(t.Context()); n != 0 {
		t.Errorf("%d builds of desk kept after forgetting it, want none", n)
	}
	if _, err := admin.ListAgentBuilds(t.Context(), &boardv1.ListAgentBuildsRequest{Name: "desk"}); connect.CodeOf(err) != connect.CodeNotFound {
		t.Errorf("ListAgentBuilds of a forgotten agent: %v, want not_found", err)
	}
	if got := listBuilds(t, admin, "till", 0); len(got) != 1 {
		t.Errorf("till has %d builds after desk was forgotten, want 1", len(got))
	}
}

// TestAgentBuildsInvalid: ListAgentBuilds names the field it refuses, and
// the board's words for an agent it does not know.
func TestAgentBuildsInvalid(t *testing.T) {
	t.Parallel()
	bt := boardtest.Start(t, boardtest.Options{})
	viewer := bt.Agents(bt.OperatorToken("vic", identity.RoleViewer))
	for _, name := range []string{"desk", "till"} {
		openLinkWith(t, bt, &boardv1.Hello{Name: name, Protocol: board.Protocol, Build: buildN(1)})
	}
	other, err := viewer.ListAgents(t.Context(), &boardv1.ListAgentsRequest{PageSize: 1})
	if err != nil || other.GetNextPageToken() == "" {
		t.Fatalf("ListAgents: %v %v, want a next page", other, err)
	}
	for _, c := range []struct {
		what  string
		req   *boardv1.ListAgentBuildsRequest
		code  connect.Code
		words string
	}{
		{"no name", &boardv1.ListAgentBuildsRequest{}, connect.CodeInvalidArgument, "name: required"},
		{"a bad name", &boardv1.ListAgentBuildsRequest{Name: "desk\x00"}, connect.CodeInvalidArgument, "name:"},
		{"a negative page size", &boardv1.ListAgentBuildsRequest{Name: "desk", PageSize: -1}, connect.CodeInvalidArgument, "page_size"},
		{"not a token", &boardv1.ListAgentBuildsRequest{Name: "desk", PageToken: "nope!"}, connect.CodeInvalidArgument, "page_token"},
		{"another list's token", &boardv1.ListAgentBuildsRequest{Name: "desk", PageToken: other.GetNextPageToken()}, connect.CodeInvalidArgument, "page_token"},
		{"an unknown agent", &boardv1.ListAgentBuildsRequest{Name: "nobody"}, connect.CodeNotFound, `agent "nobody": not found`},
	} {
		_, err := viewer.ListAgentBuilds(t.Context(), c.req)
		if connect.CodeOf(err) != c.code || !strings.Contains(err.Error(), c.words) {
			t.Errorf("%s: %v, want %s saying %q", c.what, err, c.code, c.words)
		}
	}
}
