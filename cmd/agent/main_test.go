package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/spf13/cobra"

	"github.com/symphonix/symphonix/internal/boardtest"
	"github.com/symphonix/symphonix/internal/cli"
	"github.com/symphonix/symphonix/internal/exampletest"
)

// orders is the refund desk's orders server, built once for the package.
var orders string

func TestMain(m *testing.M) {
	os.Exit(runTests(m))
}

func runTests(m *testing.M) int {
	tmp, err := os.MkdirTemp("", "agent-cmd-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(tmp)
	if orders, err = exampletest.BuildOrders(tmp); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return m.Run()
}

// desk is a refund desk of the test's own (the repository's example,
// copied, with its orders server).
func desk(t *testing.T) string {
	t.Helper()
	return exampletest.RefundDesk(t, "../../examples/refund-desk", orders)
}

// result is what one command did.
type result struct {
	stdout, stderr string
	code           int
	err            error
}

// runAgent runs the command in-process with args, env and stdin.
func runAgent(t *testing.T, env map[string]string, stdin string, args ...string) result {
	t.Helper()
	var out, errb bytes.Buffer
	err := run(t.Context(), args, func(k string) string { return env[k] }, strings.NewReader(stdin), &out, &errb)
	return result{out.String(), errb.String(), exitCode(err), err}
}

const request = "request=The mug arrived broken; I want my money back."

// TestRunFlagsAfterDir: agent run DIR --json --input … works: flags after
// the folder, --json's state alone on stdout.
func TestRunFlagsAfterDir(t *testing.T) {
	t.Parallel()
	dir := desk(t)
	r := runAgent(t, nil, "yes\n", "run", dir, "--json", "--input", "order_id=A-1001", "--input", request, "--thread", "t1")
	if r.err != nil {
		t.Fatalf("agent run DIR --json --input …: %v\n%s", r.err, r.stderr)
	}
	var state map[string]any
	if err := json.Unmarshal([]byte(r.stdout), &state); err != nil {
		t.Fatalf("stdout %q is not one JSON object: %v", r.stdout, err)
	}
	if refund, _ := state["refund"].(map[string]any); refund["status"] != "refunded" {
		t.Errorf("state = %v, want the refund made", state)
	}
	exampletest.CheckRefundedOnce(t, dir)
}

// TestRunInputsFromEnvAndFile: --input from SYMPHONIX_INPUT,
// comma-separated, and from a config file's list; the run sees them.
func TestRunInputsFromEnvAndFile(t *testing.T) {
	t.Parallel()
	dir := desk(t)
	r := runAgent(t, map[string]string{"SYMPHONIX_INPUT": "order_id=A-1002,request=Broken mug"}, "no\n", "run", dir, "--json")
	if got := finalState(t, r); got["order_id"] != "A-1002" || got["request"] != "Broken mug" {
		t.Errorf("agent run with SYMPHONIX_INPUT: state %v, want order A-1002's", got)
	}
	cfg := filepath.Join(t.TempDir(), "agent.toml")
	text := "[run]\njson = true\ninput = [\"order_id=A-1001\", " + fmt.Sprintf("%q", request) + "]\n"
	if err := os.WriteFile(cfg, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	r = runAgent(t, nil, "no\n", "run", dir, "--config", cfg)
	if got := finalState(t, r); got["order_id"] != "A-1001" || got["request"] != strings.TrimPrefix(request, "request=") {
		t.Errorf("agent run with input in the config file: state %v, want order A-1001's", got)
	}
}

// finalState is agent run --json's state.
func finalState(t *testing.T, r result) map[string]any {
	t.Helper()
	var state map[string]any
	if r.err != nil || json.Unmarshal([]byte(r.stdout), &state) != nil {
		t.Fatalf("agent run: %v; stdout %q\n%s", r.err, r.stdout, r.stderr)
	}
	return state
}

// TestAgentUsageErrors: exit 2 and one line naming what was wrong.
func TestAgentUsageErrors(t *testing.T) {
	t.Parallel()
	dir := desk(t)
	tokenFile := filepath.Join(t.TempDir(), "token")
	if err := os.WriteFile(tokenFile, []byte("x.y.z\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		args []string
		env  map[string]string
		want string
	}{
		{[]string{}, nil, "want a flow folder, DIR, or a command"},
		{[]string{dir, "other"}, nil, `unexpected argument "other"`},
		{[]string{"--bogus", dir}, nil, "--bogus: unknown flag"},
		{[]string{"run"}, nil, "run: want DIR"},
		{[]string{"run", dir, "extra"}, nil, `run: unexpected argument "extra"`},
		{[]string{"run", dir, "--input", "nothing"}, nil, `--input: "nothing": want NAME=VALUE`},
		{[]string{"run", dir, "--journal-detail", "all"}, nil, "--journal-detail: "},
		{[]string{"run", dir, "--journal-max-bytes", "0"}, nil, "--journal-max-bytes: 0: want more than 0"},
		{[]string{"run", dir, "--token", "a.b.c", "--token-file", tokenFile}, nil, "--token and --token-file: give one of them, not both"},
		{[]string{"run", dir}, map[string]string{"MONITOR_TOKEN": "a.b.c", "SYMPHONIX_TOKEN_FILE": tokenFile}, "--token and --token-file: give one of them, not both"},
		{[]string{"run", dir, "--monitor", "http://127.0.0.1:1"}, nil, "--token, --token-file or MONITOR_TOKEN: required with a monitor URL"},
		{[]string{"serve", dir, "--health-interval", "soon"}, nil, `--health-interval: "soon" is not a duration`},
		{[]string{"serve", dir, "--health-interval", "1ms"}, nil, "--health-interval: 1ms: want 0 (off) or from 1s to 24h0m0s"},
		{[]string{"serve", dir, "--listen", "0.0.0.0:0"}, nil, "--listen: "},
		{[]string{"serve", dir, "--metrics-listen", "0.0.0.0:0"}, nil, "--metrics-listen: "},
		{[]string{"validate", dir, "-o", "xml"}, nil, `--output: "xml": want table or json`},
		{[]string{"cancel"}, nil, "cancel: want DIR"},
		{[]string{"pause", dir, "--log-format", "yaml"}, nil, `--log-format: "yaml": want text or json`},
		{[]string{"run", dir}, map[string]string{"SYMPHONIX_JOURNAL_MAX_BYTES": "lots"}, `SYMPHONIX_JOURNAL_MAX_BYTES: "lots" is not a whole number`},
	} {
		r := runAgent(t, c.env, "", c.args...)
		if r.code != cli.ExitUsage || r.err == nil || !strings.Contains(r.err.Error(), c.want) {
			t.Errorf("agent %s (env %v): exit %d, %v; want exit 2 and %q", strings.Join(c.args, " "), c.env, r.code, r.err, c.want)
			continue
		}
		if strings.Contains(r.stdout+r.stderr, "Usage:") {
			t.Errorf("agent %s printed the usage: %q %q", strings.Join(c.args, " "), r.stdout, r.stderr)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, ".symphonix")); err == nil {
		t.Errorf("usage errors wrote %s/.symphonix", dir)
	}
}

// TestAgentHelpEverywhere: --help and -h on every command exit 0; the
// root lists every command.
func TestAgentHelpEverywhere(t *testing.T) {
	t.Parallel()
	root := newRoot(nil, nil, io.Discard, io.Discard)
	root.InitDefaultCompletionCmd()
	var paths [][]string
	var walk func(c *cobra.Command, path []string)
	walk = func(c *cobra.Command, path []string) {
		paths = append(paths, path)
		for _, s := range c.Commands() {
			walk(s, append(append([]string(nil), path...), s.Name()))
		}
	}
	walk(root.Command, nil)
	for _, path := range paths {
		for _, h := range []string{"--help", "-h"} {
			r := runAgent(t, nil, "", append(append([]string(nil), path...), h)...)
			if r.code != 0 || !strings.Contains(r.stdout, "Usage:") {
				t.Errorf("agent %s %s: exit %d (%v); want 0 and the usage", strings.Join(path, " "), h, r.code, r.err)
			}
		}
	}
	r := runAgent(t, nil, "", "--help")
	for _, sub := range []string{"serve", "validate", "check", "run", "cancel", "pause", "resume", "install", "instantiate", "version", "completion"} {
		if !regexp.MustCompile(`(?m)^  ` + sub + ` `).MatchString(r.stdout) {
			t.Errorf("agent --help does not list %s:\n%s", sub, r.stdout)
		}
	}
	r = runAgent(t, nil, "", "version")
	if v := cli.Version(); r.code != 0 || r.stdout != "agent "+v.String()+"\n" {
		t.Errorf("agent version = %q, want agent %s", r.stdout, v)
	}
}

// TestPausedRunExits75: a run refused because the agent is paused exits
// 75; resumed, it runs.
func TestPausedRunExits75(t *testing.T) {
	t.Parallel()
	dir := desk(t)
	if r := runAgent(t, nil, "", "pause", dir, "--reason", "maintenance"); r.err != nil {
		t.Fatalf("agent pause: %v", r.err)
	}
	r := runAgent(t, nil, "no\n", "run", dir, "--input", "order_id=A-1001", "--input", request)
	if r.code != exitPaused {
		t.Fatalf("agent run of a paused agent: exit %d (%v), want %d", r.code, r.err, exitPaused)
	}
	runAgent(t, nil, "", "resume", dir)
	if r := runAgent(t, nil, "no\n", "run", dir, "--input", "order_id=A-1001", "--input", request); r.code != 0 {
		t.Errorf("agent run after resume: exit %d (%v)", r.code, r.err)
	}
}

// TestValidateCheckJSON: validate and check print their findings as JSON
// with -o json, and exit as they do without it.
func TestValidateCheckJSON(t *testing.T) {
	t.Parallel()
	dir := desk(t)
	r := runAgent(t, nil, "", "validate", dir, "-o", "json")
	var v struct {
		File     string `json:"file"`
		Valid    bool   `json:"valid"`
		Nodes    int    `json:"nodes"`
		Problems []any  `json:"problems"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &v); err != nil || r.code != 0 || !v.Valid || v.Nodes == 0 || v.Problems == nil {
		t.Errorf("validate -o json = %q (exit %d, %v), want valid", r.stdout, r.code, err)
	}
	bad := t.TempDir()
	if err := os.WriteFile(filepath.Join(bad, "flow.json"), []byte(`{"version":"0.7","start":"a","nodes":[{"id":"a","handler":"h"}],"edges":[{"from":"a","to":"END"}]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	r = runAgent(t, nil, "", "check", bad, "--output", "json")
	var c struct {
		Ready    bool `json:"ready"`
		Findings []struct {
			Code     string `json:"code"`
			Severity string `json:"severity"`
		} `json:"findings"`
		Plan struct {
			Handlers []string `json:"handlers"`
		} `json:"plan"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &c); err != nil || r.code != 1 || c.Ready || len(c.Findings) == 0 || c.Findings[0].Code == "" {
		t.Errorf("check -o json of an undescribed flow = %q (exit %d, %v), want not ready with findings", r.stdout, r.code, err)
	}
	if r := runAgent(t, nil, "", "check", bad); r.code != 1 || !strings.Contains(r.stdout, "not ready") {
		t.Errorf("check of an undescribed flow = %q (exit %d)", r.stdout, r.code)
	}
}

// TestTokenFile: the agent links with the token in --token-file (its
// newline dropped); a file others may read is refused, naming the chmod.
func TestTokenFile(t *testing.T) {
	t.Parallel()
	b := boardtest.Start(t, boardtest.Options{})
	dir := desk(t)
	tokenFile := filepath.Join(t.TempDir(), "token")
	if err := os.WriteFile(tokenFile, []byte(b.AgentToken("refund-desk")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	r := runAgent(t, nil, "", "serve", dir, "--monitor", b.URL, "--token-file", tokenFile)
	want := fmt.Sprintf("--token-file: %s can be read by other users (mode -rw-r--r--): run chmod 600 %s", tokenFile, tokenFile)
	if r.code != 1 || r.err == nil || r.err.Error() != want {
		t.Errorf("agent serve with a token file others may read: exit %d, %v; want %q", r.code, r.err, want)
	}
	if err := os.Chmod(tokenFile, 0o600); err != nil {
		t.Fatal(err)
	}
	// The flag wins over MONITOR_TOKEN, which is not the desk's.
	serveUntilLinked(t, b.URL, map[string]string{"MONITOR_TOKEN": "not.a.token"}, "serve", dir, "--monitor", b.URL, "--token-file", tokenFile)
}

// TestMonitorFromEnvironment: with no flag at all, the agent links to the
// board MONITOR_URL names with the token in MONITOR_TOKEN, the platform's
// names, as the agent's image and the compose example run it.
func TestMonitorFromEnvironment(t *testing.T) {
	t.Parallel()
	b := boardtest.Start(t, boardtest.Options{})
	env := map[string]string{"MONITOR_URL": b.URL, "MONITOR_TOKEN": b.AgentToken("refund-desk")}
	serveUntilLinked(t, b.URL, env, "serve", desk(t))
}

// serveUntilLinked runs the agent with args and env until it says it is
// linked to boardURL, then stops it.
func serveUntilLinked(t *testing.T, boardURL string, env map[string]string, args ...string) {
	t.Helper()
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	var out syncBuffer
	done := make(chan error, 1)
	go func() {
		done <- run(ctx, args, func(k string) string { return env[k] }, strings.NewReader(""), &out, &out)
	}()
	linked := regexp.MustCompile(`agent refund-desk: linked to ` + regexp.QuoteMeta(boardURL))
	deadline := time.Now().Add(30 * time.Second)
	for !linked.MatchString(out.String()) {
		select {
		case err := <-done:
			t.Fatalf("agent %s ended: %v\n%s", strings.Join(args, " "), err, out.String())
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("agent %s did not link:\n%s", strings.Join(args, " "), out.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
	cancel()
	if err := <-done; err != nil && !errors.Is(err, context.Canceled) {
		t.Errorf("agent %s after cancel: %v", strings.Join(args, " "), err)
	}
}

// TestReadTokenFile: one line, its owner's alone, not empty, not huge.
func TestReadTokenFile(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	write := func(name, content string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	for content, want := range map[string]string{"a.b.c\n": "a.b.c", "a.b.c\r\n": "a.b.c", "  a.b.c": "a.b.c"} {
		if got, err := readTokenFile(write("ok", content)); err != nil || got != want {
			t.Errorf("readTokenFile(%q) = %q, %v; want %q", content, got, err, want)
		}
	}
	for content, want := range map[string]string{"\n": "empty", "a.b.c\nd.e.f\n": "more than one line", strings.Repeat("x", maxTokenFileBytes+1): "larger than"} {
		if _, err := readTokenFile(write("bad", content)); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("readTokenFile(%.20q…) = %v, want %q", content, err, want)
		}
	}
	if _, err := readTokenFile(filepath.Join(dir, "none")); err == nil || !strings.Contains(err.Error(), "no such file") {
		t.Errorf("readTokenFile(missing) = %v", err)
	}
}

// syncBuffer is a bytes.Buffer safe to read while run writes.
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
