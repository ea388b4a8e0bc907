package agent_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/symphonix/symphonix/agent"
	"github.com/symphonix/symphonix/flow"
)

// handlerFlow is a flow with one handler node, "h", that reads in and
// writes out, and declares DECLARED_VAR in requires.env.
const handlerFlow = `{
  "version": "0.17",
  "name": "one-handler",
  "requires": { "env": ["DECLARED_VAR"] },
  "state": {
    "in": { "type": "string" },
    "out": { "type": "string" }
  },
  "nodes": [ { "id": "h", "handler": "h" %s } ],
  "edges": [ { "from": "h", "to": "END" } ],
  "start": "h"
}`

// The values of the agent's environment in these tests.
const (
	declaredValue   = "declared-value-1234"
	undeclaredValue = "undeclared-secret-5678"
)

func testGetenv(name string) string {
	switch name {
	case "DECLARED_VAR":
		return declaredValue
	case "UNDECLARED_SECRET":
		return undeclaredValue
	}
	return ""
}

// file is a file of a test folder: its text and its mode.
type file struct {
	text string
	mode os.FileMode
}

func script(body string) file { return file{"#!/bin/sh\n" + body + "\n", 0o755} }

// folder writes a flow folder: flow.json and files, by slash path.
func folder(t *testing.T, flowJSON string, files map[string]file) string {
	t.Helper()
	dir := t.TempDir()
	files["flow.json"] = file{flowJSON, 0o644}
	for name, f := range files {
		path := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(f.text), f.mode); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(path, f.mode); err != nil { // past the umask
			t.Fatal(err)
		}
	}
	return dir
}

// syncBuffer is a log destination safe for concurrent writes.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func openDir(t *testing.T, dir string, log *syncBuffer) *agent.Agent {
	t.Helper()
	cfg := agent.Config{Getenv: testGetenv}
	if log != nil {
		cfg.Logger = slog.New(slog.NewTextHandler(log, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	a, err := agent.Open(t.Context(), dir, cfg)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() { a.Close() })
	return a
}

// TestExecHandlerRuns: an executable handler gets the state on stdin and
// its stdout is the update; it runs in the folder, with the variables the
// flow declares and a fixed PATH, and nothing else of the agent's
// environment — not a secret the flow does not declare, not HOME.
func TestExecHandlerRuns(t *testing.T) {
	t.Parallel()
	dir := folder(t, fmt.Sprintf(handlerFlow, ""), map[string]file{
		"handlers/h": script(`read -r state
in=$(printf '%s' "$state" | sed -n 's/.*"in":"\([^"]*\)".*/\1/p')
printf '{"out":"in=%s;D=%s;U=%s;H=%s;P=%s;W=%s"}' "$in" "$DECLARED_VAR" "$UNDECLARED_SECRET" "$HOME" "$PATH" "$(pwd -P)"`),
	})
	a := openDir(t, dir, nil)
	res, err := a.Graph.Invoke(t.Context(), "", map[string]any{"in": "ann"})
	if err != nil {
		t.Fatalf("Invoke: %v", err)
	}
	real, err := filepath.EvalSymlinks(dir)
	if err != nil {
		t.Fatal(err)
	}
	want := "in=ann;D=" + declaredValue + ";U=;H=;P=" + agent.HandlerPath + ";W=" + real
	if res.State["out"] != want {
		t.Errorf("out = %q, want %q", res.State["out"], want)
	}
	if got := a.Provisions(); len(got) != 1 || got[0].By != agent.ByExec || got[0].Path != "handlers/h" || got[0].Timeout != agent.DefaultHandlerTimeout {
		t.Errorf("Provisions = %+v, want handlers/h, an executable with the default time limit", got)
	}
}

// TestExecHandlerFails: every way an executable can fail is the node's
// failure, saying which: the run ends with a *flow.NodeError naming it.
func TestExecHandlerFails(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name    string
		body    string
		timeout string
		want    string
	}{
		{"not JSON", `echo 'hello'`, "", "stdout is not JSON"},
		{"nothing", `exit 0`, "", "stdout is not JSON"},
		{"not an object", `echo '["out"]'`, "", "gave a list, want a JSON object"},
		{"undeclared channel", `echo '{"other": 1}'`, "", `wrote channel "other", which the flow does not declare`},
		{"exit status", `echo '{"out":"x"}'; exit 3`, "", "exited with status 3"},
		{"never exits", `sleep 30`, "200ms", "did not finish within 200ms: killed"},
		{"too much", `head -c 2000000 /dev/zero | tr '\0' a`, "", fmt.Sprintf("printed more than %d bytes on stdout", agent.MaxHandlerStdout)},
		{"too much, forever", `yes`, "", fmt.Sprintf("printed more than %d bytes on stdout", agent.MaxHandlerStdout)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			files := map[string]file{"handlers/h": script(tc.body)}
			if tc.timeout != "" {
				files["handlers.json"] = file{fmt.Sprintf(`{"handlers": {"h": {"run": "handlers/h", "timeout": %q}}}`, tc.timeout), 0o644}
			}
			a := openDir(t, folder(t, fmt.Sprintf(handlerFlow, ""), files), nil)
			began := time.Now()
			res, err := a.Graph.Invoke(t.Context(), "", map[string]any{"in": "x"})
			var ne *flow.NodeError
			if !errors.As(err, &ne) || ne.Node != "h" {
				t.Fatalf("Invoke = %+v, %v; want the node's failure", res, err)
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("Invoke: %v; want it to say %q", err, tc.want)
			}
			if d := time.Since(began); d > 20*time.Second {
				t.Errorf("the failure took %v", d)
			}
		})
	}
}

// TestExecHandlerRetried: a failing executable is the node's failure, so
// retry applies: the second attempt's update is the node's.
func TestExecHandlerRetried(t *testing.T) {
	t.Parallel()
	dir := folder(t, fmt.Sprintf(handlerFlow, `, "retry": { "maxAttempts": 2 }`), map[string]file{
		"handlers/h": script(`if [ -f tried ]; then echo '{"out":"second"}'; else touch tried; exit 1; fi`),
	})
	a := openDir(t, dir, nil)
	res, err := a.Graph.Invoke(t.Context(), "", map[string]any{"in": "x"})
	if err != nil || res.State["out"] != "second" {
		t.Fatalf("Invoke = %v, %v; want the second attempt's out", res.State, err)
	}
}

// TestExecHandlerGroupKilled: at the time limit the executable's whole
// process group is killed, what it started in the background too.
func TestExecHandlerGroupKilled(t *testing.T) {
	t.Parallel()
	dir := folder(t, fmt.Sprintf(handlerFlow, ""), map[string]file{
		"handlers/h":    script(`sleep 60 & echo $! > child.pid; sleep 60`),
		"handlers.json": {`{"handlers": {"h": {"run": "handlers/h", "timeout": "2s"}}}`, 0o644},
	})
	a := openDir(t, dir, nil)
	if _, err := a.Graph.Invoke(t.Context(), "", map[string]any{"in": "x"}); err == nil {
		t.Fatal("Invoke succeeded; want the time limit")
	}
	b, err := os.ReadFile(filepath.Join(dir, "child.pid"))
	if err != nil {
		t.Fatal(err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for !gone(pid) {
		if time.Now().After(deadline) {
			t.Fatalf("the background child %d still runs after the handler was killed", pid)
		}
		time.Sleep(10 * time.Millisecond) // polling a process that is not ours to wait for
	}
}

// gone reports whether pid no longer runs: there is no such process, or
// it is a zombie waiting for its new parent.
func gone(pid int) bool {
	if err := syscall.Kill(pid, 0); errors.Is(err, syscall.ESRCH) {
		return true
	}
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return errors.Is(err, os.ErrNotExist)
	}
	_, after, _ := strings.Cut(string(b), ") ")
	return strings.HasPrefix(after, "Z") || strings.HasPrefix(after, "X")
}

// TestExecHandlerStderr: what an executable prints on stderr goes to the
// agent's log, the values of the variables the flow declares and of the
// folder's .env removed, and not into the run.
func TestExecHandlerStderr(t *testing.T) {
	t.Parallel()
	dir := folder(t, fmt.Sprintf(handlerFlow, ""), map[string]file{
		"handlers/h": script(`echo "using key $DECLARED_VAR now" >&2; cat .env >&2; echo '{"out":"ok"}'`),
		".env":       {"FILE_SECRET=file-secret-value-42\n", 0o600},
	})
	var log syncBuffer
	a := openDir(t, dir, &log)
	res, err := a.Graph.Invoke(t.Context(), "", map[string]any{"in": "x"})
	if err != nil || res.State["out"] != "ok" {
		t.Fatalf("Invoke = %v, %v", res.State, err)
	}
	got := log.String()
	if !strings.Contains(got, "handler stderr") || !strings.Contains(got, "using key REDACTED now") || strings.Contains(got, declaredValue) ||
		!strings.Contains(got, "FILE_SECRET=REDACTED") || strings.Contains(got, "file-secret-value-42") {
		t.Errorf("log = %q, want the handler's stderr with the declared value and the .env's removed", got)
	}
}

// TestExecRouter: an executable router prints a JSON string naming the
// route; anything else ends the run with the router's error.
func TestExecRouter(t *testing.T) {
	t.Parallel()
	const routed = `{
  "version": "0.17",
  "state": { "in": { "type": "string" }, "out": { "type": "string" } },
  "nodes": [ { "id": "h", "handler": "h" }, { "id": "left", "handler": "left" } ],
  "edges": [ { "from": "h", "type": "conditional", "router": "pick", "routes": { "left": "left", "right": "END" } },
             { "from": "left", "to": "END" } ],
  "start": "h"
}`
	for _, tc := range []struct {
		name, router, out, err string
	}{
		{"left", `echo '"left"'`, "left", ""},
		{"right", `printf '"right"\n'`, "h", ""},
		{"an object", `echo '{"route":"left"}'`, "", "printed an object, want a JSON string naming a route"},
		{"bare text", `echo left`, "", "stdout is not JSON"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			dir := folder(t, routed, map[string]file{
				"handlers/h.sh":   script(`echo '{"out":"h"}'`),
				"handlers/left":   script(`echo '{"out":"left"}'`),
				"routers/pick.sh": script(tc.router),
			})
			a := openDir(t, dir, nil)
			res, err := a.Graph.Invoke(t.Context(), "", map[string]any{"in": "x"})
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("Invoke = %v, %v; want %q", res.State, err, tc.err)
				}
				return
			}
			if err != nil || res.State["out"] != tc.out {
				t.Fatalf("Invoke = %v, %v; want out %q", res.State, err, tc.out)
			}
		})
	}
}

// TestExecutableRefused: a handler file that leads out of the folder, is
// not executable, or may be written by everyone is refused when the agent
// opens, saying why; so is a name nothing provides.
func TestExecutableRefused(t *testing.T) {
	t.Parallel()
	outside := filepath.Join(t.TempDir(), "h")
	if err := os.WriteFile(outside, []byte("#!/bin/sh\necho '{}'\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name  string
		files map[string]file
		setup func(dir string) error
		want  string
	}{
		{"symlink out", map[string]file{}, func(dir string) error {
			if err := os.Mkdir(filepath.Join(dir, "handlers"), 0o755); err != nil {
				return err
			}
			return os.Symlink(outside, filepath.Join(dir, "handlers", "h"))
		}, "leads out of the folder"},
		{"not executable", map[string]file{"handlers/h": {"#!/bin/sh\n", 0o644}}, nil, "handlers/h is not executable"},
		{"not executable, with an extension", map[string]file{"handlers/h.sh": {"#!/bin/sh\n", 0o644}}, nil, "handlers/h.sh is not executable"},
		{"world-writable", map[string]file{"handlers/h": {"#!/bin/sh\n", 0o757}}, nil, "handlers/h is writable by everyone"},
		{"run out of the folder", map[string]file{"handlers.json": {`{"handlers": {"h": {"run": "../h"}}}`, 0o644}}, nil, `"../h" is not a path inside the folder`},
		{"missing", map[string]file{}, nil, "no handlers/h and no handlers/h.<ext>"},
		{"two candidates", map[string]file{"handlers/h.sh": script(""), "handlers/h.py": script("")}, nil, "more than one executable could be it (handlers/h.py, handlers/h.sh)"},
		{"timeout too long", map[string]file{"handlers/h": script(""), "handlers.json": {`{"handlers": {"h": {"run": "handlers/h", "timeout": "6m"}}}`, 0o644}}, nil, `.timeout: "6m" is not a duration`},
		{"tool not declared", map[string]file{"handlers.json": {`{"handlers": {"h": {"tool": "vault.peek"}}}`, 0o644}}, nil, `"vault.peek" is not a tool requires.mcp declares`},
		{"null", map[string]file{"handlers/h": script(""), "handlers.json": {`{"handlers": {"h": null}}`, 0o644}}, nil, "handlers.h is null"},
		{"both", map[string]file{"handlers.json": {`{"handlers": {"h": {"tool": "vault.peek", "run": "handlers/h"}}}`, 0o644}}, nil, "give run or tool, not both"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			dir := folder(t, fmt.Sprintf(handlerFlow, ""), tc.files)
			if tc.setup != nil {
				if err := tc.setup(dir); err != nil {
					t.Fatal(err)
				}
			}
			a, err := agent.Open(t.Context(), dir, agent.Config{})
			if err == nil {
				a.Close()
				t.Fatal("Open succeeded; want the handler refused")
			}
			if !errors.Is(err, agent.ErrNotProvided) || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("Open: %v; want ErrNotProvided saying %q", err, tc.want)
			}
			f, err := flow.LoadFile(filepath.Join(dir, "flow.json"))
			if err != nil {
				t.Fatal(err)
			}
			list, err := agent.Provide(dir, f, flow.Registry{})
			if err != nil || len(list) != 1 || list[0].By != "" || !strings.Contains(list[0].Problem, tc.want) {
				t.Errorf("Provide = %+v, %v; want h missing, saying %q", list, err, tc.want)
			}
		})
	}
}

// TestHandlersFileRefused: a handlers.json that cannot be read, or that
// names what the flow does not, stops the agent from opening.
func TestHandlersFileRefused(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ name, text, want string }{
		{"unknown field", `{"handlers": {"h": {"path": "handlers/h"}}}`, `unknown field "path"`},
		{"not JSON", `{"handlers": `, "handlers.json: unexpected EOF"},
		{"a name the flow does not use", `{"routers": {"h": {"run": "handlers/h"}}}`, "routers.h: the flow names no such router"},
		{"too large", `{"handlers": {}}` + strings.Repeat(" ", agent.MaxHandlersFileBytes), "larger than"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			dir := folder(t, fmt.Sprintf(handlerFlow, ""), map[string]file{"handlers/h": script(`echo '{}'`), "handlers.json": {tc.text, 0o644}})
			a, err := agent.Open(t.Context(), dir, agent.Config{})
			if err == nil {
				a.Close()
				t.Fatal("Open succeeded")
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("Open: %v; want %q", err, tc.want)
			}
		})
	}
}

// TestProvisionOrder: the Go registry wins over handlers.json, which wins
// over the folder's convention; one executable with an extension is found.
func TestProvisionOrder(t *testing.T) {
	t.Parallel()
	dir := folder(t, fmt.Sprintf(handlerFlow, ""), map[string]file{
		"handlers/h":    script(`echo '{"out":"convention"}'`),
		"bin/h.sh":      script(`echo '{"out":"handlers.json"}'`),
		"handlers.json": {`{"handlers": {"h": {"run": "bin/h.sh", "timeout": "5s"}}}`, 0o644},
	})
	a := openDir(t, dir, nil)
	res, err := a.Graph.Invoke(t.Context(), "", map[string]any{"in": "x"})
	if err != nil || res.State["out"] != "handlers.json" {
		t.Fatalf("Invoke = %v, %v; want handlers.json's executable", res.State, err)
	}
	if p := a.Provisions(); len(p) != 1 || p[0].Path != "bin/h.sh" || p[0].Timeout != 5*time.Second {
		t.Errorf("Provisions = %+v", p)
	}

	reg := flow.Registry{Handlers: map[string]flow.Handler{"h": func(context.Context, flow.State) (flow.Update, error) {
		return flow.Update{"out": "go"}, nil
	}}}
	g, err := agent.Open(t.Context(), dir, agent.Config{Registry: reg})
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	res, err = g.Graph.Invoke(t.Context(), "", map[string]any{"in": "x"})
	if err != nil || res.State["out"] != "go" {
		t.Fatalf("Invoke = %v, %v; want the Go handler's", res.State, err)
	}
	if p := g.Provisions(); len(p) != 1 || p[0].By != agent.ByGo {
		t.Errorf("Provisions = %+v, want the Go registry", p)
	}

	ext := folder(t, fmt.Sprintf(handlerFlow, ""), map[string]file{
		"handlers/h.sh":    script(`echo '{"out":"sh"}'`),
		"handlers/h.md":    {"how h works", 0o644},
		"handlers/hh.sh":   script(`echo '{"out":"hh"}'`),
		"handlers/h.sh.gz": {"", 0o644},
	})
	e := openDir(t, ext, nil)
	res, err = e.Graph.Invoke(t.Context(), "", map[string]any{"in": "x"})
	if err != nil || res.State["out"] != "sh" {
		t.Fatalf("Invoke = %v, %v; want handlers/h.sh's", res.State, err)
	}
}

// TestToolHandler: a handler an MCP tool provides is called through the
// agent's tool caller, so the board's switches apply: on, the tool's
// result is the update; off, the node fails and the server never hears of
// the call.
func TestToolHandler(t *testing.T) {
	t.Parallel()
	a, called := openVaultWith(t, "testdata/vault-handler-flow.json", map[string]string{
		"handlers.json": `{"handlers": {"look": {"tool": "vault.look"}}}`,
	})
	if p := a.Provisions(); len(p) != 1 || p[0].By != agent.ByTool || p[0].Tool != "vault.look" {
		t.Fatalf("Provisions = %+v, want the MCP tool vault.look", p)
	}
	if _, err := a.Graph.Invoke(t.Context(), "", map[string]any{"why": "curious"}); err == nil {
		t.Fatal("Invoke succeeded before the board said anything; want the call refused")
	}
	if got := called(); got != "" {
		t.Fatalf("the server received %q before the board switched the tool on", got)
	}
	if _, err := a.Subscription.Set([]string{"vault.look"}); err != nil {
		t.Fatal(err)
	}
	res, err := a.Graph.Invoke(t.Context(), "", map[string]any{"why": "curious"})
	if err != nil || res.State["tool"] != "look" || res.State["why"] != "curious" {
		t.Fatalf("Invoke = %v, %v; want the tool's result as the update", res.State, err)
	}
	if got := called(); got != "look" {
		t.Errorf("the server received %q, want look", got)
	}
}

// TestHandlersHealthCheck: an agent whose handlers are executables has a
// "handlers" health check, which passes while they are as the agent found
// them and fails, naming the handler, once one is made writable by
// everyone.
func TestHandlersHealthCheck(t *testing.T) {
	t.Parallel()
	dir := folder(t, fmt.Sprintf(handlerFlow, ""), map[string]file{"handlers/h": script(`echo '{}'`)})
	a := openDir(t, dir, nil)
	var check *agent.HealthCheck
	for _, c := range a.HealthChecks() {
		if c.Name == "handlers" {
			check = &c
		}
	}
	if check == nil {
		t.Fatalf("HealthChecks = %+v, want one named handlers", a.HealthChecks())
	}
	if err := check.Run(t.Context()); err != nil {
		t.Fatalf("handlers check = %v, want it to pass", err)
	}
	if err := os.Chmod(filepath.Join(dir, "handlers", "h"), 0o757); err != nil {
		t.Fatal(err)
	}
	if err := check.Run(t.Context()); err == nil || !strings.Contains(err.Error(), `handler "h": handlers/h is writable by everyone`) {
		t.Errorf("handlers check = %v, want it to name h, writable by everyone", err)
	}
}

// TestExecHandlerOnError: a failing executable's onError route is taken,
// with __error naming the failure, and what the run held before is kept.
func TestExecHandlerOnError(t *testing.T) {
	t.Parallel()
	const recovering = `{
  "version": "0.17",
  "state": { "in": { "type": "string" }, "out": { "type": "string" } },
  "nodes": [ { "id": "h", "handler": "h", "onError": "recover" }, { "id": "recover", "handler": "recover" } ],
  "edges": [ { "from": "h", "to": "END" }, { "from": "recover", "to": "END" } ],
  "start": "h"
}`
	dir := folder(t, recovering, map[string]file{
		"handlers/h":       script(`exit 2`),
		"handlers/recover": script(`cat > seen.json; echo '{"out":"recovered"}'`),
	})
	a := openDir(t, dir, nil)
	res, err := a.Graph.Invoke(t.Context(), "", map[string]any{"in": "kept"})
	if err != nil || res.State["out"] != "recovered" || res.State["in"] != "kept" {
		t.Fatalf("Invoke = %v, %v; want the run recovered with in kept", res.State, err)
	}
	seen, err := os.ReadFile(filepath.Join(dir, "seen.json"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(seen), `exited with status 2`) || !strings.Contains(string(seen), `"in":"kept"`) {
		t.Errorf("recover saw %s, want __error naming the exit status, and in", seen)
	}
}
