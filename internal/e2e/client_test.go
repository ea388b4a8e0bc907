package e2e

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	boardv1 "github.com/symphonix/symphonix/api/symphonix/board/v1"
	"github.com/symphonix/symphonix/api/symphonix/board/v1/boardv1connect"
	"github.com/symphonix/symphonix/board"
	"github.com/symphonix/symphonix/identity"
	"github.com/symphonix/symphonix/internal/boardtest"
)

// TestExampleClient: examples/client, built as the module of its own it
// is, lists every agent and every pending approval of a real board, a page
// of one at a time, and none of the approvals no longer pending; without a
// token, or with one the board refuses, it fails saying why.
func TestExampleClient(t *testing.T) {
	t.Parallel()
	client := filepath.Join(t.TempDir(), "client")
	build := exec.Command("go", "build", "-o", client, ".")
	build.Dir = filepath.Join("..", "..", "examples", "client")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("build examples/client: %v\n%s", err, out)
	}

	bt := boardtest.Start(t, boardtest.Options{})
	ctx, cancel := context.WithTimeout(t.Context(), ceiling)
	defer cancel()
	agents := []string{"billing", "refund-desk", "triage"}
	var links []boardv1connect.AgentLinkServiceLinkClientStream
	for _, name := range agents {
		s, err := boardv1connect.NewAgentLinkServiceClient(bt.Client(bt.AgentToken(name))).Link(ctx)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = s.Close() })
		if err := s.Send(&boardv1.LinkRequest{Kind: &boardv1.LinkRequest_Hello{Hello: &boardv1.Hello{Name: name, Protocol: board.Protocol}}}); err != nil {
			t.Fatal(err)
		}
		links = append(links, s)
	}
	// raise raises an approval from refund-desk and returns its id.
	raise := func(run string, n int) string {
		t.Helper()
		l := links[1]
		id := fmt.Sprintf("r%d", n)
		err := l.Send(&boardv1.LinkRequest{Kind: &boardv1.LinkRequest_Raise{Raise: &boardv1.Raise{
			RequestId: id, Run: run, Node: "pay", Ask: "Refund?", Show: `{"amount": 5}`,
			Digest: fmt.Sprintf("sha256:%064x", n),
		}}})
		if err != nil {
			t.Fatal(err)
		}
		for {
			m, err := l.Receive()
			if err != nil {
				t.Fatalf("raise %s: %v", id, err)
			}
			if r := m.GetRaised(); r.GetRequestId() == id {
				return r.GetApprovalId()
			}
			if e := m.GetError(); e != nil {
				t.Fatalf("raise %s: %v", id, e)
			}
		}
	}
	superseded := raise("run-1", 1)
	pending := []string{raise("run-1", 2), raise("run-2", 3)} // the first supersedes run-1's
	viewer := bt.Agents(bt.OperatorToken("ops", identity.RoleViewer))
	boardtest.Eventually(t, ceiling, "three agents", func() bool {
		res, err := viewer.ListAgents(ctx, &boardv1.ListAgentsRequest{})
		return err == nil && len(res.GetAgents()) == len(agents)
	})

	run := func(token string, args ...string) (string, error) {
		cmd := exec.CommandContext(ctx, client, append([]string{"-board", bt.URL}, args...)...)
		cmd.Env = append(os.Environ(), "SYMPHONIX_TOKEN="+token)
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	out, err := run(bt.OperatorToken("reader", identity.RoleViewer), "-page-size", "1")
	if err != nil {
		t.Fatalf("client: %v\n%s", err, out)
	}
	var listedAgents, listedApprovals []string
	section := ""
	for _, line := range strings.Split(out, "\n") {
		f := strings.Fields(line)
		switch {
		case len(f) == 0:
		case f[0] == "AGENT" || f[0] == "PENDING":
			section = f[0]
		case section == "AGENT":
			listedAgents = append(listedAgents, f[0])
			if f[1] != "online" {
				t.Errorf("agent %s listed %s, want online", f[0], f[1])
			}
		case section == "PENDING":
			listedApprovals = append(listedApprovals, f[0])
		}
	}
	if !slices.Equal(listedAgents, agents) {
		t.Errorf("client listed agents %v, want %v\n%s", listedAgents, agents, out)
	}
	slices.Sort(listedApprovals)
	slices.Sort(pending)
	if !slices.Equal(listedApprovals, pending) || slices.Contains(listedApprovals, superseded) {
		t.Errorf("client listed pending %v, want %v (not %s, superseded)\n%s", listedApprovals, pending, superseded, out)
	}

	for _, tc := range []struct{ name, token, says string }{
		{"no token", "", "SYMPHONIX_TOKEN"},
		{"an agent's token", bt.AgentToken("billing"), "unauthenticated"},
	} {
		out, err := run(tc.token)
		if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 1 || !strings.Contains(out, tc.says) {
			t.Errorf("%s: client = %v\n%s\nwant exit 1 saying %q", tc.name, err, out, tc.says)
		}
	}
	if _, err := run("x", "-board", "ftp://board"); err == nil {
		t.Errorf("client -board ftp://board: no error")
	}
}
