package agent_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/symphonix/symphonix/agent"
	"github.com/symphonix/symphonix/flow"
	"github.com/symphonix/symphonix/internal/exampletest"
	"github.com/symphonix/symphonix/subscription"
)

// refundDesk is the example the tests open, each in a copy of its own
// (exampletest): what an agent writes beside its flow stays out of the
// repository.
const refundDesk = "../examples/refund-desk"

// seen records the calls that passed through the wrappers.
type seen struct {
	mu    sync.Mutex
	calls []string
}

func (s *seen) add(c string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.calls = append(s.calls, c)
}

func (s *seen) list() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.calls)
}

type countingModel struct {
	m    flow.Model
	seen *seen
}

func (c countingModel) Complete(ctx context.Context, req flow.ModelRequest) (flow.ModelReply, error) {
	c.seen.add("model " + req.Node)
	return c.m.Complete(ctx, req)
}

// TestWrapHooks: WrapModel and WrapTools see every model and tool call of
// a run, and the run goes on as without them; the paused run is among
// WaitingThreads.
func TestWrapHooks(t *testing.T) {
	t.Parallel()
	var s seen
	a, err := agent.Open(t.Context(), exampletest.Copy(t, refundDesk), agent.Config{
		WrapModel: func(m flow.Model) flow.Model { return countingModel{m: m, seen: &s} },
		WrapTools: func(call flow.ToolCaller) flow.ToolCaller {
			return func(ctx context.Context, name string, args map[string]any) (any, error) {
				s.add("tool " + name)
				return call(ctx, name, args)
			}
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	thread := fmt.Sprintf("%s-%d", t.Name(), time.Now().UnixNano())
	res, err := a.Graph.Invoke(t.Context(), thread, map[string]any{"order_id": "A-1001", "request": "broken"})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Graph.Cancel(context.Background(), thread)
	if res.Pending == nil || res.Pending.Node != "pay" {
		t.Fatalf("Invoke = %+v, want the approval at pay", res)
	}
	if got, want := s.list(), []string{"tool orders.lookup_order", "model decide"}; !slices.Equal(got, want) {
		t.Errorf("wrapped calls = %q, want %q", got, want)
	}
	threads, err := a.WaitingThreads(t.Context())
	if err != nil || !slices.Contains(threads, thread) {
		t.Errorf("WaitingThreads = %q, %v; want %s among them", threads, err, thread)
	}
	res, err = a.Graph.Resume(t.Context(), thread, "yes")
	if err != nil || res.Pending != nil {
		t.Fatalf("Resume = %+v, %v; want the run ended", res, err)
	}
	if got, want := s.list(), []string{"tool orders.lookup_order", "model decide", "tool orders.refund", "model answer"}; !slices.Equal(got, want) {
		t.Errorf("wrapped calls = %q, want %q", got, want)
	}
}

// TestWaitingThreadsOfAFlowThatNeverWaits: none, and no error; with no
// MCP servers WrapTools is not called, and WrapModel still is.
func TestWaitingThreadsOfAFlowThatNeverWaits(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	echo := `{"version": "0.17", "name": "echo", "description": "Answers once.",
	  "inputs": ["q"], "outputs": ["a"],
	  "state": {"q": {"type": "string", "description": "The question."}, "a": {"type": "string", "description": "The answer."}},
	  "start": "ask",
	  "nodes": [{"id": "ask", "type": "llm", "prompt": "Answer: {{q}}", "output": "a"}],
	  "edges": [{"from": "ask", "to": "END"}]}`
	if err := os.WriteFile(filepath.Join(dir, "flow.json"), []byte(echo), 0o644); err != nil {
		t.Fatal(err)
	}
	var s seen
	a, err := agent.Open(t.Context(), dir, agent.Config{
		WrapModel: func(m flow.Model) flow.Model { return countingModel{m: m, seen: &s} },
		WrapTools: func(flow.ToolCaller) flow.ToolCaller {
			t.Error("WrapTools called for a flow with no tools")
			return nil
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	if threads, err := a.WaitingThreads(t.Context()); threads != nil || err != nil {
		t.Errorf("WaitingThreads = %q, %v; want none", threads, err)
	}
	res, err := a.Graph.Invoke(t.Context(), "", map[string]any{"q": "why?"})
	if err != nil || res.State["a"] == "" {
		t.Fatalf("Invoke = %+v, %v; want an answer", res, err)
	}
	if got := s.list(); !slices.Equal(got, []string{"model ask"}) {
		t.Errorf("wrapped calls = %q, want the one model call", got)
	}
}

// TestToolsSwitchedByTheBoard: with a board configured, a tool is called
// only once the board has switched it on; a refused call is that call's
// error, seen by WrapTools (so journaled), and never reaches the server.
func TestToolsSwitchedByTheBoard(t *testing.T) {
	t.Parallel()
	var s seen
	a, err := agent.Open(t.Context(), exampletest.Copy(t, refundDesk), agent.Config{
		Monitored: true,
		WrapTools: func(call flow.ToolCaller) flow.ToolCaller {
			return func(ctx context.Context, name string, args map[string]any) (any, error) {
				res, err := call(ctx, name, args)
				if errors.Is(err, subscription.ErrRefused) {
					s.add("refused " + name)
				} else {
					s.add("tool " + name)
				}
				return res, err
			}
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { a.Close() })
	if on, src := a.Subscription.On(); len(on) != 0 || src != subscription.NobodyDecided {
		t.Fatalf("before the board spoke: %v from %s, want nothing, nobody decided", on, src)
	}
	in := map[string]any{"order_id": "A-1001", "request": "broken"}
	thread := fmt.Sprintf("switched-%d", time.Now().UnixNano())
	_, err = a.Graph.Invoke(t.Context(), thread+"-a", in)
	if !errors.Is(err, subscription.ErrRefused) {
		t.Fatalf("Invoke before the board spoke = %v, want the lookup refused", err)
	}
	if got := s.list(); !slices.Equal(got, []string{"refused orders.lookup_order"}) {
		t.Fatalf("calls %v, want only the refused lookup", got)
	}

	// The board switches lookup on, mid-life: the next call goes through.
	if _, err := a.Subscription.Set([]string{"orders.lookup_order"}); err != nil {
		t.Fatal(err)
	}
	res, err := a.Graph.Invoke(t.Context(), thread+"-b", in)
	if err != nil || res.Pending == nil || res.Pending.Node != "pay" {
		t.Fatalf("Invoke after the switch = %+v, %v; want paused at pay", res, err)
	}
	_, err = a.Graph.Resume(t.Context(), thread+"-b", "yes")
	if !errors.Is(err, subscription.ErrRefused) || !strings.Contains(err.Error(), "orders.refund") {
		t.Fatalf("Resume yes with refund off = %v, want the refund refused, named", err)
	}
	want := []string{"refused orders.lookup_order", "tool orders.lookup_order", "refused orders.refund"}
	if got := s.list(); !slices.Equal(got, want) {
		t.Fatalf("calls %v, want %v", got, want)
	}
}

// TestRealServerSwitched: a real MCP server process (testdata, in Go) says
// what it serves, which differs from the declaration; with the board's
// word, the switched-on tool is called and the switched-off one is refused
// without reaching the server.
func TestRealServerSwitched(t *testing.T) {
	t.Parallel()
	a, called := openVault(t, "testdata/vault-flow.json")

	lines := a.ToolMismatches(t.Context(), time.Minute)
	if len(lines) != 1 || !strings.Contains(lines[0], "declared but not served: sweep") || !strings.Contains(lines[0], "served but not declared: audit") {
		t.Fatalf("ToolMismatches = %q, want sweep declared but not served and audit served but not declared", lines)
	}

	if _, err := a.Subscription.Set([]string{"vault.peek"}); err != nil {
		t.Fatal(err)
	}
	_, err := a.Graph.Invoke(t.Context(), "", map[string]any{"why": "count it"})
	if !errors.Is(err, subscription.ErrRefused) || !strings.Contains(err.Error(), `"vault.empty"`) {
		t.Fatalf("Invoke with empty switched off = %v, want vault.empty refused", err)
	}
	if got := called(); got != "peek" {
		t.Fatalf("the server received %q, want only peek", got)
	}

	if _, err := a.Subscription.Set([]string{"vault.peek", "vault.empty"}); err != nil {
		t.Fatal(err)
	}
	res, err := a.Graph.Invoke(t.Context(), "", map[string]any{"why": "count it"})
	if err != nil || !res.Finished() {
		t.Fatalf("Invoke with both on = %+v, %v", res, err)
	}
	if got := called(); got != "peek,peek,empty" {
		t.Fatalf("the server received %q, want peek,peek,empty", got)
	}
}

// openVault opens the flow in file (its vault server replaced by a build
// of testdata/mcp-vault) with a board configured, and returns the agent
// and what reads the calls the server received ("peek,empty").
func openVault(t *testing.T, file string) (*agent.Agent, func() string) {
	t.Helper()
	return openVaultWith(t, file, nil)
}

// openVaultWith is openVault with more files written into the folder
// first, by name.
func openVaultWith(t *testing.T, file string, files map[string]string) (*agent.Agent, func() string) {
	t.Helper()
	return openVaultConfig(t, file, files, agent.Config{Monitored: true})
}

// openVaultConfig is openVaultWith opening the folder with cfg.
func openVaultConfig(t *testing.T, file string, files map[string]string, cfg agent.Config) (*agent.Agent, func() string) {
	t.Helper()
	dir := t.TempDir()
	for name, content := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	calls := filepath.Join(dir, "calls.txt")
	vault := filepath.Join(dir, "mcp-vault")
	if out, err := exec.Command("go", "build", "-o", vault, "./testdata/mcp-vault").CombinedOutput(); err != nil {
		t.Fatalf("build mcp-vault: %v\n%s", err, out)
	}
	f, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	f = bytes.Replace(f, []byte(`"command": "go",
        "args": ["run", "./mcp-vault"],`), fmt.Appendf(nil, `"command": %q, "env": {"VAULT_CALLS": %q},`, vault, calls), 1)
	if err := os.WriteFile(filepath.Join(dir, "flow.json"), f, 0o644); err != nil {
		t.Fatal(err)
	}
	a, err := agent.Open(t.Context(), dir, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { a.Close() })
	return a, func() string {
		b, err := os.ReadFile(calls)
		if err != nil && !errors.Is(err, os.ErrNotExist) {
			t.Fatal(err)
		}
		return strings.ReplaceAll(strings.TrimSpace(string(b)), "\n", ",")
	}
}

// TestToolsNodeReportsARefusal: a tools node runs the calls queued for it;
// a refused one is reported in its own result, for the model to read, the
// others run, and the run finishes.
func TestToolsNodeReportsARefusal(t *testing.T) {
	t.Parallel()
	a, called := openVault(t, "testdata/vault-tools-flow.json")
	if _, err := a.Subscription.Set([]string{"vault.peek"}); err != nil {
		t.Fatal(err)
	}
	res, err := a.Graph.Invoke(t.Context(), "", map[string]any{"calls": []any{
		map[string]any{"id": "1", "name": "vault.peek", "args": map[string]any{}},
		map[string]any{"id": "2", "name": "vault.empty", "args": map[string]any{}},
	}})
	if err != nil || !res.Finished() {
		t.Fatalf("Invoke = %+v, %v; want the run finished", res, err)
	}
	results, _ := res.State["results"].([]any)
	if len(results) != 2 {
		t.Fatalf("results = %v, want two", res.State["results"])
	}
	peek, _ := results[0].(map[string]any)
	empty, _ := results[1].(map[string]any)
	if peek["error"] != nil && peek["error"] != "" || peek["name"] != "vault.peek" {
		t.Errorf("peek's result = %v, want it ran", peek)
	}
	if why, _ := empty["error"].(string); !strings.Contains(why, `"vault.empty"`) || !strings.Contains(why, "vault.peek") {
		t.Errorf("empty's result = %v, want the refusal naming it and what is on instead", empty)
	}
	if got := called(); got != "peek" {
		t.Errorf("the server received %q, want only peek", got)
	}
}

// TestHealthChecks: the built-in checks of an agent are one per MCP server
// and the model when the environment names one with a key; each passes
// against a server and a provider that answer.
func TestHealthChecks(t *testing.T) {
	t.Parallel()
	a, _ := openVault(t, "testdata/vault-flow.json")
	var names []string
	for _, c := range a.HealthChecks() {
		names = append(names, c.Name)
		if err := c.Run(t.Context()); err != nil {
			t.Errorf("check %s = %v", c.Name, err)
		}
	}
	if got := strings.Join(names, ","); got != "mcp:vault" {
		t.Errorf("checks without a model key = %s, want mcp:vault", got)
	}

	provider := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, `{"object": "list", "data": []}`)
	}))
	t.Cleanup(provider.Close)
	desk, err := agent.Open(t.Context(), exampletest.Copy(t, refundDesk), agent.Config{Getenv: func(name string) string {
		return map[string]string{"OPENAI_API_KEY": "sk-test-0123456789abcdef", "OPENAI_BASE_URL": provider.URL}[name]
	}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { desk.Close() })
	names = nil
	for _, c := range desk.HealthChecks() {
		names = append(names, c.Name)
		if c.Name != "mcp:orders" { // the example's server is started with go run: not here
			if err := c.Run(t.Context()); err != nil {
				t.Errorf("check %s = %v", c.Name, err)
			}
		}
	}
	if got := strings.Join(names, ","); got != "mcp:orders,model,waiting" {
		t.Errorf("the refund desk's checks = %s, want mcp:orders,model,waiting", got)
	}
}

// TestMemorySurvivesReopening: a conversation's history and its remembered
// channels are kept in the folder's store, not in the process: an agent
// opened again on the folder goes on with them, although the flow never
// waits.
func TestMemorySurvivesReopening(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	data, err := os.ReadFile("testdata/chat-flow.json")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "flow.json"), data, 0o600); err != nil {
		t.Fatal(err)
	}
	a, err := agent.Open(t.Context(), dir, agent.Config{})
	if err != nil {
		t.Fatal(err)
	}
	if a.Waiting != "" || !strings.HasPrefix(a.Memory, "what threads remember is kept in ") || !strings.HasSuffix(a.Memory, "waiting.db") {
		t.Errorf("Waiting %q, Memory %q; want no waiting store said, and the memory kept in the folder's", a.Waiting, a.Memory)
	}
	if _, err := a.Graph.Invoke(t.Context(), "t1", map[string]any{"question": "hello", "name": "Ada"}); err != nil {
		t.Fatal(err)
	}
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}

	a, err = agent.Open(t.Context(), dir, agent.Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	res, err := a.Graph.Invoke(t.Context(), "t1", map[string]any{"question": "and again"})
	if err != nil {
		t.Fatal(err)
	}
	if res.State["name"] != "Ada" {
		t.Errorf("name after reopening = %v, want Ada, remembered", res.State["name"])
	}
	h, _ := res.State["history"].([]any)
	if len(h) != 2 {
		t.Fatalf("history after reopening holds %d turns, want 2: %v", len(h), h)
	}
	if first, _ := h[0].(map[string]any); first["asked"] != "hello" {
		t.Errorf("first turn = %v, want the one asked before reopening", h[0])
	}
}

// TestGivenModelAndTools: with Config.Model, Tools and InMemory the folder
// opens without starting its MCP servers (here one that cannot start),
// every call reaches what was given, and nothing is written in the folder.
func TestGivenModelAndTools(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	b, err := os.ReadFile(filepath.Join(refundDesk, "flow.json"))
	if err != nil {
		t.Fatal(err)
	}
	b = bytes.Replace(b, []byte(`"command": "go"`), []byte(`"command": "/nonexistent/orders"`), 1)
	if err := os.WriteFile(filepath.Join(dir, "flow.json"), b, 0o644); err != nil {
		t.Fatal(err)
	}
	var s seen
	a, err := agent.Open(t.Context(), dir, agent.Config{
		Model: modelFunc(func(req flow.ModelRequest) string {
			s.add("model " + req.Node)
			return `{"action": "refund", "reason": "delivered broken"}`
		}),
		Tools: func(ctx context.Context, name string, args map[string]any) (any, error) {
			s.add("tool " + name)
			return map[string]any{"amount": 1}, nil
		},
		InMemory: true,
	})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	res, err := a.Graph.Invoke(t.Context(), "t", map[string]any{"order_id": "A-1001", "request": "broken"})
	if err != nil || res.Pending == nil {
		t.Fatalf("Invoke = %+v, %v; want the approval at pay", res, err)
	}
	if _, err := a.Graph.Resume(t.Context(), "t", "yes"); err != nil {
		t.Fatal(err)
	}
	if got, want := s.list(), []string{"tool orders.lookup_order", "model decide", "tool orders.refund", "model answer"}; !slices.Equal(got, want) {
		t.Errorf("calls = %q, want %q", got, want)
	}
	entries, err := os.ReadDir(dir)
	if err != nil || len(entries) != 1 {
		t.Errorf("the folder holds %v, %v; want flow.json alone", entries, err)
	}
}

// modelFunc is a flow.Model answering with f's text.
type modelFunc func(req flow.ModelRequest) string

func (f modelFunc) Complete(ctx context.Context, req flow.ModelRequest) (flow.ModelReply, error) {
	return flow.ModelReply{Text: f(req)}, nil
}

// TestWithinToolsNarrowsTheRun: a run started on agent.WithinTools may call
// only the tools named, within the board's switches: both tools are on,
// the run allows peek, so empty is refused in its own result and never
// reaches the server; the same agent's next run, on a plain context, calls
// both.
func TestWithinToolsNarrowsTheRun(t *testing.T) {
	t.Parallel()
	a, called := openVault(t, "testdata/vault-tools-flow.json")
	if _, err := a.Subscription.Set([]string{"vault.peek", "vault.empty"}); err != nil {
		t.Fatal(err)
	}
	queue := map[string]any{"calls": []any{
		map[string]any{"id": "1", "name": "vault.peek", "args": map[string]any{}},
		map[string]any{"id": "2", "name": "vault.empty", "args": map[string]any{}},
	}}
	res, err := a.Graph.Invoke(agent.WithinTools(t.Context(), []string{"vault.peek"}), "", queue)
	if err != nil || !res.Finished() {
		t.Fatalf("Invoke = %+v, %v; want the run finished", res, err)
	}
	results, _ := res.State["results"].([]any)
	if len(results) != 2 {
		t.Fatalf("results = %v, want two", res.State["results"])
	}
	empty, _ := results[1].(map[string]any)
	if why, _ := empty["error"].(string); !strings.Contains(why, `"vault.empty" cannot be called: this run was started allowing only vault.peek`) {
		t.Errorf("empty's result = %v, want the run's refusal", empty)
	}
	if got := called(); got != "peek" {
		t.Errorf("the server received %q, want only peek", got)
	}
	if _, err := a.Graph.Invoke(t.Context(), "", queue); err != nil {
		t.Fatal(err)
	}
	if got := called(); got != "peek,peek,empty" && got != "peek,empty,peek" {
		t.Errorf("the server received %q, want both called by the plain run", got)
	}
}

// TestGivenSubscription: an agent opened with a subscription of the
// caller's (one declaring more than its flow, as a workflow's declares
// the tools of every agent it calls) asks it before every call, through
// the same gate: nothing on refuses both tools without reaching the
// server, the word switching peek on applies to the next run, and
// nothing of it is kept in the agent's folder. DeclaredTools reads the
// same declaration from the folder without opening it.
func TestGivenSubscription(t *testing.T) {
	t.Parallel()
	sub, err := subscription.New(subscription.Config{Board: true, Declared: map[string][]string{
		"vault": {"peek", "empty"}, "mail": {"send"}}})
	if err != nil {
		t.Fatal(err)
	}
	a, called := openVaultConfig(t, "testdata/vault-tools-flow.json", nil, agent.Config{Subscription: sub})
	if a.Subscription != sub {
		t.Fatal("Agent.Subscription is not the one given")
	}
	queue := map[string]any{"calls": []any{
		map[string]any{"id": "1", "name": "vault.peek", "args": map[string]any{}},
		map[string]any{"id": "2", "name": "vault.empty", "args": map[string]any{}},
	}}
	errsOf := func() []string {
		t.Helper()
		res, err := a.Graph.Invoke(t.Context(), "", queue)
		if err != nil || !res.Finished() {
			t.Fatalf("Invoke = %+v, %v; want the run finished", res, err)
		}
		results, _ := res.State["results"].([]any)
		var errs []string
		for _, r := range results {
			m, _ := r.(map[string]any)
			why, _ := m["error"].(string)
			errs = append(errs, why)
		}
		return errs
	}
	if errs := errsOf(); len(errs) != 2 || !strings.Contains(errs[0], `"vault.peek"`) || !strings.Contains(errs[1], `"vault.empty"`) {
		t.Errorf("nothing on: errors %q; want both refused", errs)
	}
	if got := called(); got != "" {
		t.Errorf("nothing on: the server received %q; want nothing", got)
	}
	if _, err := sub.Set([]string{"vault.peek"}); err != nil {
		t.Fatal(err)
	}
	if errs := errsOf(); len(errs) != 2 || errs[0] != "" || !strings.Contains(errs[1], `"vault.empty"`) {
		t.Errorf("peek on: errors %q; want peek called and empty refused", errs)
	}
	if got := called(); got != "peek" {
		t.Errorf("peek on: the server received %q; want peek", got)
	}
	if _, err := os.Stat(subscription.MemoryPath(a.Dir)); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the folder's memory of the board's word: %v; want none written", err)
	}
	tools, err := agent.DeclaredTools(a.Dir)
	if err != nil || strings.Join(tools, ",") != "vault.empty,vault.peek" {
		t.Errorf("DeclaredTools = %q, %v; want vault.empty, vault.peek", tools, err)
	}
}
