package node_test

import (
	"bytes"
	"strings"
	"sync"
	"testing"
	"time"

	boardv1 "github.com/symphonix/symphonix/api/symphonix/board/v1"
	"github.com/symphonix/symphonix/api/symphonix/board/v1/boardv1connect"
	"github.com/symphonix/symphonix/identity"
	"github.com/symphonix/symphonix/internal/boardtest"
	"github.com/symphonix/symphonix/node"
	"github.com/symphonix/symphonix/subscription"
)

// afLines is an Agent Flow run's standard error, written by its link and
// read by the test.
type afLines struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *afLines) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *afLines) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// TestAFSwitches: an Agent Flow run linked to a real board is switched by
// it for the workflow, as a flow run is. StartAF returns once the board
// has said (nothing, here: never spoken), saying so; a switch flipped on
// the board while the run goes on reaches its subscription at once. The
// next run, the board down, waits SwitchesWithin, says it starts with the
// board's last word kept in the folder, and has it on. Unlinked, there is
// no subscription of the workflow's: each flow agent keeps its own.
func TestAFSwitches(t *testing.T) {
	t.Parallel()
	bt := boardtest.Start(t, boardtest.Options{})
	dir := t.TempDir()
	src := []byte("workflow desk(input: any) -> any {\n  pipeline {\n    return 1\n  }\n}\n")
	token := bt.AgentToken("desk")
	cfg := func(out *afLines, within time.Duration) node.AFConfig {
		return node.AFConfig{
			Config: node.Config{Dir: dir, BoardURL: bt.URL, Token: token, Stderr: out, SwitchesWithin: within},
			Name:   "desk", Source: src, Tools: []string{"vault.empty", "vault.peek"},
		}
	}

	var out afLines
	r, ctx, err := node.StartAF(t.Context(), cfg(&out, time.Minute), map[string]any{})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "agent desk: tools: the board has not said which are on, so none are") {
		t.Errorf("stderr %q; want the board's first word said before the run starts", out.String())
	}
	sub := r.Subscription()
	if a := sub.MayCallTool("vault.peek"); a.Allowed || a.Source != subscription.NobodyDecided {
		t.Errorf("before any switch: %+v; want vault.peek refused, nobody having decided", a)
	}
	switches := boardv1connect.NewToolServiceClient(bt.Client(bt.OperatorToken("root", identity.RoleAdmin)))
	if _, err := switches.ReplaceSwitches(t.Context(), &boardv1.ReplaceSwitchesRequest{Agent: "desk", On: []string{"vault.peek"}}); err != nil {
		t.Fatalf("ReplaceSwitches: %v", err)
	}
	boardtest.Eventually(t, time.Minute, "vault.peek switched on during the run", func() bool {
		return sub.MayCallTool("vault.peek").Allowed
	})
	if a := sub.MayCallTool("vault.empty"); a.Allowed || !strings.Contains(a.Refusal, "switched off for this agent by the board") {
		t.Errorf("vault.empty: %+v; want it refused, switched off by the board", a)
	}
	if err := r.Finish(ctx, 1, nil); err != nil {
		t.Fatal(err)
	}

	bt.Stop()
	out = afLines{}
	began := time.Now()
	r, ctx, err = node.StartAF(t.Context(), cfg(&out, 300*time.Millisecond), map[string]any{})
	if err != nil {
		t.Fatal(err)
	}
	if took := time.Since(began); took < 300*time.Millisecond {
		t.Errorf("StartAF returned after %s; want it to wait 300ms for the board", took)
	}
	const want = "agent desk: tools: the board has not said which are on within 300ms: the run starts with its last word, kept in this folder: 1 on: vault.peek"
	if !strings.Contains(out.String(), want) {
		t.Errorf("stderr %q; want %q", out.String(), want)
	}
	if a := r.Subscription().MayCallTool("vault.peek"); !a.Allowed || a.Source != subscription.FromMemory {
		t.Errorf("the board down: %+v; want vault.peek on, from memory", a)
	}
	r.Finish(ctx, 1, nil)

	r, ctx, err = node.StartAF(t.Context(), node.AFConfig{Config: node.Config{Dir: dir}, Name: "desk", Source: src, Tools: []string{"vault.peek"}}, map[string]any{})
	if err != nil {
		t.Fatal(err)
	}
	if r.Subscription() != nil {
		t.Error("unlinked: a subscription of the workflow's; want none")
	}
	r.Finish(ctx, 1, nil)
}
