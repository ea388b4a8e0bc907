package node_test

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/symphonix/symphonix/agentlink"
	boardv1 "github.com/symphonix/symphonix/api/symphonix/board/v1"
	"github.com/symphonix/symphonix/governed"
	"github.com/symphonix/symphonix/internal/boardtest"
	"github.com/symphonix/symphonix/internal/exampletest"
	"github.com/symphonix/symphonix/lock"
	"github.com/symphonix/symphonix/node"
	"github.com/symphonix/symphonix/subscription"
)

// TestServeWithBoard: the served desk's hello reaches the board with its
// build; it holds the folder's lock at the address it serves on; the
// board's switches reach its tools; the refund's approval is the board's
// (the chat's yes refused), and the board's yes finishes the run, said on
// a line, journaled under the thread and pointed to on the board. A board
// that goes away is said; Serve's context ending stops it and releases the
// lock.
func TestServeWithBoard(t *testing.T) {
	t.Parallel()
	g := startGovernance(t)
	dir := deskDir(t)
	s := startServe(t, node.Config{Dir: dir, BoardURL: g.bt.URL, Token: g.bt.AgentToken("refund-desk")})
	s.out.wait(t, regexp.MustCompile(`^agent refund-desk: linked to `+regexp.QuoteMeta(g.bt.URL)+` \(session \w+\)$`), 60*time.Second)

	id, err := agentlink.ReadIdentity(dir)
	if err != nil {
		t.Fatal(err)
	}
	res, err := g.agents.GetAgent(t.Context(), &boardv1.GetAgentRequest{Name: "refund-desk"})
	if a := res.GetAgent(); err != nil || a.GetState() != boardv1.AgentState_AGENT_STATE_ONLINE || a.GetBuild() != id.Build || len(a.GetTools()) != 2 {
		t.Fatalf("the board's refund-desk = %v, %v; want it online, of build %s, with its two tools", a, err, id.Build)
	}

	h, held, err := lock.HeldBy(dir)
	if err != nil || !held || h.PID != os.Getpid() || h.URL != s.url {
		t.Errorf("lock.HeldBy = %+v, %v, %v; want this process, at %s", h, held, err, s.url)
	}

	on := []string{"orders.lookup_order", "orders.refund"}
	if _, err := g.tools.ReplaceSwitches(t.Context(), &boardv1.ReplaceSwitchesRequest{Agent: "refund-desk", On: on}); err != nil {
		t.Fatalf("ReplaceSwitches: %v", err)
	}
	s.out.wait(t, regexp.MustCompile(`^agent refund-desk: tools: the board switched on 2: orders.lookup_order, orders.refund$`), 60*time.Second)

	const thread = "board-decides"
	var first turn
	if status := call(t, "POST", s.url+"/api/threads/"+thread+"/messages", askForRefund, &first); status != 200 ||
		first.Pending == nil || first.Pending.Node != "pay" || first.Decides == nil || first.Decides.Who != governed.Organisation {
		t.Fatalf("message = %d %+v, want the refund's approval, decided on the board", status, first)
	}
	var refused turn
	if status := call(t, "POST", s.url+"/api/threads/"+thread+"/answer", `{"answer": "yes"}`, &refused); status != 409 {
		t.Errorf("the chat's yes = %d %+v, want 409", status, refused)
	}
	a := g.approvalOf(t, thread)
	if a.GetDigest() != first.Pending.Digest {
		t.Errorf("the board's approval has digest %s, want the one the chat was shown, %s", a.GetDigest(), first.Pending.Digest)
	}
	if got := exampletest.Refunds(t, dir); len(got) != 0 {
		t.Fatalf("refunds before the board decided: %v", got)
	}
	g.approve(t, a)
	s.out.wait(t, regexp.MustCompile(`^thread `+thread+`: the board decided; the run finished$`), 60*time.Second)
	var th turn
	call(t, "GET", s.url+"/api/threads/"+thread, "", &th)
	if th.Waiting || th.Decided == nil || th.Decided.Reply == "" {
		t.Errorf("thread after the board's yes = %+v, want it finished, with what the decision came to", th)
	}
	exampletest.CheckRefundedOnce(t, dir)
	if got, want := strings.Join(exampletest.JournalCalls(t, dir, thread), ","), "tool orders.lookup_order,llm decide,tool orders.refund,llm answer"; got != want {
		t.Errorf("journal calls for the thread = %s, want %s", got, want)
	}

	boardtest.Eventually(t, time.Minute, "the thread's pointer on the board", func() bool {
		res, err := g.convs.ListConversations(t.Context(), &boardv1.ListConversationsRequest{Agent: "refund-desk"})
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range res.GetConversations() {
			if c.GetThread() == thread && !c.GetWaiting() {
				return true
			}
		}
		return false
	})

	g.bt.Stop()
	s.out.wait(t, regexp.MustCompile(`^agent refund-desk: link down: `), 60*time.Second)
	if err := s.shutdown(t); err != nil {
		t.Errorf("Serve after its context ended = %v, want nil", err)
	}
	if _, err := lock.Read(dir); !errors.Is(err, lock.ErrNotFound) {
		t.Errorf("lock.Read after Serve returned = %v, want ErrNotFound", err)
	}
}

// TestServeWithoutBoard: the start lines say what the agent uses, where it
// serves, and that there is no board; the chat decides the approval; a
// second Serve of the folder fails on its lock, naming the first.
func TestServeWithoutBoard(t *testing.T) {
	t.Parallel()
	dir := deskDir(t)
	s := startServe(t, node.Config{Dir: dir})
	s.out.wait(t, regexp.MustCompile(`^agent refund-desk: no board configured \(--monitor or MONITOR_URL\): running without a board$`), 60*time.Second)
	id, err := agentlink.ReadIdentity(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"agent refund-desk: build " + id.Build,
		"tools: no board configured: every tool the flow declares may be called",
		"journal: " + filepath.Join(dir, ".symphonix", "journal.jsonl") + ", without payloads, rotated past 10485760 bytes",
		"serving " + dir + " on " + s.url,
	} {
		if s.out.find(regexp.MustCompile(`^`+regexp.QuoteMeta(want)+`$`)) == nil {
			t.Errorf("no line %q; the lines:\n%s", want, s.out)
		}
	}

	err = node.Serve(t.Context(), node.Config{Dir: dir})
	var held *lock.HeldError
	if !errors.As(err, &held) || held.Holder.URL != s.url {
		t.Errorf("a second Serve of the folder = %v, want a *lock.HeldError naming %s", err, s.url)
	}

	const thread = "chat-decides"
	var first turn
	if status := call(t, "POST", s.url+"/api/threads/"+thread+"/messages", askForRefund, &first); status != 200 ||
		first.Pending == nil || first.Decides == nil || first.Decides.Who != governed.Chat {
		t.Fatalf("message = %d %+v, want the refund's approval, decided in the chat", status, first)
	}
	var done turn
	if status := call(t, "POST", s.url+"/api/threads/"+thread+"/answer", `{"answer": "yes"}`, &done); status != 200 || done.Pending != nil || done.Reply == "" {
		t.Fatalf("the chat's yes = %d %+v, want the run finished with a reply", status, done)
	}
	exampletest.CheckRefundedOnce(t, dir)
	if err := s.shutdown(t); err != nil {
		t.Errorf("Serve after its context ended = %v, want nil", err)
	}
	if _, err := lock.Read(dir); !errors.Is(err, lock.ErrNotFound) {
		t.Errorf("lock.Read after Serve returned = %v, want ErrNotFound", err)
	}
}

// TestServeUnservable: a flow naming a handler nothing in its folder
// provides (no handlers/greet, no handlers.json) is not served. Serve fails on it, leaving the folder unlocked; with
// LinkUnservable it says so and links to the board all the same.
func TestServeUnservable(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "greeter")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	greeter := `{"version": "0.17", "name": "greeter", "description": "Greets, with a handler a generated program has.",
	  "start": "greet", "nodes": [{"id": "greet", "handler": "greet"}], "edges": [{"from": "greet", "to": "END"}]}`
	if err := os.WriteFile(filepath.Join(dir, "flow.json"), []byte(greeter), 0o644); err != nil {
		t.Fatal(err)
	}

	var out lines
	if err := node.Serve(t.Context(), node.Config{Dir: dir, Stdout: &out}); err == nil {
		t.Fatal("Serve of a flow it cannot assemble = nil, want an error")
	}
	if m := out.find(regexp.MustCompile(`^serving `)); m != nil {
		t.Errorf("Serve said %q of a flow it cannot assemble", m[0])
	}
	if _, err := lock.Read(dir); !errors.Is(err, lock.ErrNotFound) {
		t.Errorf("lock.Read after the failed Serve = %v, want ErrNotFound", err)
	}

	g := startGovernance(t)
	done := make(chan error, 1)
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	linked := &lines{}
	go func() {
		done <- node.Serve(ctx, node.Config{Dir: dir, BoardURL: g.bt.URL, Token: g.bt.AgentToken("greeter"), Stdout: linked, LinkUnservable: true})
	}()
	linked.wait(t, regexp.MustCompile(`^agent greeter: not served: `), 60*time.Second)
	linked.wait(t, regexp.MustCompile(`^agent greeter: linked to `), 60*time.Second)
	res, err := g.agents.GetAgent(t.Context(), &boardv1.GetAgentRequest{Name: "greeter"})
	if err != nil || res.GetAgent().GetState() != boardv1.AgentState_AGENT_STATE_ONLINE {
		t.Errorf("the board's greeter = %v, %v; want it online", res.GetAgent(), err)
	}
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("Serve after its context ended = %v, want nil", err)
		}
	case <-time.After(time.Minute):
		t.Fatal("Serve did not return within 10 s of its context ending")
	}
}

// TestServeWaitsForTheBoardsWordOnTools: a message sent the moment a
// linked agent serves, in a folder that keeps no word of the board's,
// waits for the board's first word on the tools, so the run's first tool
// call is answered by it rather than refused for nobody having decided.
func TestServeWaitsForTheBoardsWordOnTools(t *testing.T) {
	t.Parallel()
	g := startGovernance(t)
	dir := deskDir(t)
	g.switchOn(t, dir, "orders.lookup_order", "orders.refund")
	if _, err := os.Stat(subscription.MemoryPath(dir)); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("the folder keeps a word of the board's already (%v); want none", err)
	}
	s := startServe(t, node.Config{Dir: dir, BoardURL: g.bt.URL, Token: g.bt.AgentToken("refund-desk")})
	var first turn
	if status := call(t, "POST", s.url+"/api/threads/first/messages", askForRefund, &first); status != 200 ||
		first.Pending == nil || first.Pending.Node != "pay" {
		t.Fatalf("the first message = %d %+v, want the refund's approval, the order looked up", status, first)
	}
	s.out.wait(t, regexp.MustCompile(`^agent refund-desk: tools: the board switched on 2: orders.lookup_order, orders.refund$`), 0)
}

// TestServeWithASilentBoard: a board that never speaks holds the first
// message for Config.SwitchesWithin, after which the agent says what runs
// start with, and the run starts with it: nothing on, so its first tool
// call is refused.
func TestServeWithASilentBoard(t *testing.T) {
	t.Parallel()
	const within = 500 * time.Millisecond
	dir := deskDir(t)
	s := startServe(t, node.Config{Dir: dir, BoardURL: silentBoard(t), Token: "a-token", SwitchesWithin: within})
	start := time.Now()
	var first turn
	status := call(t, "POST", s.url+"/api/threads/first/messages", askForRefund, &first)
	if took := time.Since(start); took < within/2 {
		t.Errorf("the first message was answered after %s, want it held for the board's word, about %s", took, within)
	}
	if status == 200 && first.Pending != nil {
		t.Errorf("the first message = %d %+v, want its tool refused: nothing is on", status, first)
	}
	s.out.wait(t, regexp.MustCompile(`^agent refund-desk: tools: the board has not said which are on within 500ms, and no word of its is kept in this folder: none are on until it says$`), 0)
}

// TestServeRefusesABadTranscriptDays: TRANSCRIPT_DAYS that is not a whole
// number of days in range stops Serve at start, naming it, before the
// folder's lock is taken.
func TestServeRefusesABadTranscriptDays(t *testing.T) {
	t.Parallel()
	dir := deskDir(t)
	for _, v := range []string{"thirty", "0", "3651"} {
		err := node.Serve(t.Context(), node.Config{Dir: dir, Getenv: func(k string) string {
			if k == "TRANSCRIPT_DAYS" {
				return v
			}
			return ""
		}})
		if err == nil || !strings.HasPrefix(err.Error(), "TRANSCRIPT_DAYS: ") {
			t.Errorf("Serve with TRANSCRIPT_DAYS=%s = %v, want it refused naming the variable", v, err)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, ".symphonix", "agent.lock")); !os.IsNotExist(err) {
		t.Errorf("the lock: %v, want none taken", err)
	}
}
