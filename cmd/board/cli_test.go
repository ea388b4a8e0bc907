package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/spf13/cobra"

	"github.com/symphonix/symphonix/internal/boardtest"
	"github.com/symphonix/symphonix/internal/cli"
	"github.com/symphonix/symphonix/store"
)

// runArgs runs the command with args and env, and returns what it printed
// and its exit status.
func runArgs(t *testing.T, env map[string]string, args ...string) (stdout, stderr string, code int, err error) {
	t.Helper()
	var out, errb bytes.Buffer
	getenv := func(k string) string { return env[k] }
	err = run(t.Context(), args, getenv, &out, &errb)
	return out.String(), errb.String(), cli.ExitCode(err), err
}

// commandPaths is every command under the board's root, by its path's
// words after "board".
func commandPaths() [][]string {
	var paths [][]string
	var walk func(c *cobra.Command, path []string)
	walk = func(c *cobra.Command, path []string) {
		paths = append(paths, path)
		for _, s := range c.Commands() {
			walk(s, append(append([]string(nil), path...), s.Name()))
		}
	}
	root := newRoot(noEnv, &bytes.Buffer{}, &bytes.Buffer{})
	root.InitDefaultCompletionCmd()
	walk(root.Command, nil)
	return paths
}

// TestHelpEverywhere: --help and -h on every command exit 0 and print its
// usage on stdout; a command with subcommands lists them.
func TestHelpEverywhere(t *testing.T) {
	t.Parallel()
	paths := commandPaths()
	if len(paths) < 15 {
		t.Fatalf("found %d commands, want the whole tree", len(paths))
	}
	for _, path := range paths {
		for _, h := range []string{"--help", "-h"} {
			out, _, code, err := runArgs(t, nil, append(append([]string(nil), path...), h)...)
			if code != 0 || !strings.Contains(out, "Usage:") {
				t.Errorf("board %s %s: exit %d (%v), printed %q; want exit 0 and the usage", strings.Join(path, " "), h, code, err, out)
			}
		}
	}
	out, _, _, _ := runArgs(t, nil, "--help")
	for _, sub := range []string{"serve", "config", "token", "user", "audit", "version", "completion"} {
		if !regexp.MustCompile(`(?m)^  ` + sub + ` `).MatchString(out) {
			t.Errorf("board --help does not list %s:\n%s", sub, out)
		}
	}
	out, _, _, _ = runArgs(t, nil, "token", "--help")
	for _, sub := range []string{"operator", "agent", "revoke", "list"} {
		if !regexp.MustCompile(`(?m)^  ` + sub + ` `).MatchString(out) {
			t.Errorf("board token --help does not list %s:\n%s", sub, out)
		}
	}
}

// TestUsageErrors: an unknown command or flag, a bad value, the wrong
// number of arguments: exit 2, one line naming what was wrong, no usage
// dump, and no store made.
func TestUsageErrors(t *testing.T) {
	t.Parallel()
	data := t.TempDir()
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"frob", "--data", "DATA"}, `unknown command "frob"`},
		{[]string{"token"}, "token: want a command: agent, list, operator or revoke"},
		{[]string{"token", "frob"}, `token: unknown command "frob"`},
		{[]string{"--bogus"}, "--bogus: unknown flag"},
		{[]string{"token", "list", "--bogus"}, "--bogus: unknown flag (see board token list --help)"},
		{[]string{"token", "operator", "--name", "a", "--role", "admin", "--ttl", "x", "--data", "DATA"}, `--ttl: "x" is not a duration`},
		{[]string{"token", "operator", "--name", "a", "--role", "root", "--data", "DATA"}, "--role: "},
		{[]string{"token", "operator", "--role", "admin", "--data", "DATA"}, "--name: required"},
		{[]string{"token", "revoke", "--data", "DATA"}, "token revoke: want ID"},
		{[]string{"token", "revoke", "a", "b", "--data", "DATA"}, `token revoke: unexpected argument "b"`},
		{[]string{"token", "list", "extra", "--data", "DATA"}, `unexpected argument "extra"`},
		{[]string{"token", "list", "-o", "xml", "--data", "DATA"}, `--output: "xml": want table or json`},
		{[]string{"audit", "list", "--limit", "many", "--data", "DATA"}, `--limit: "many" is not a whole number`},
		{[]string{"--run-days", "ten", "--data", "DATA"}, `--run-days: "ten" is not a whole number`},
		{[]string{"--run-days", "4000", "--data", "DATA"}, "--run-days: 4000, want 0 (keep for ever) to 3650"},
		{[]string{"--log-format", "xml", "--data", "DATA"}, `--log-format: "xml": want text or json`},
		{[]string{"--log-level", "loud", "--data", "DATA"}, `--log-level: "loud": want debug, info, warn or error`},
		{[]string{"--trusted-proxy", "bogus", "--data", "DATA"}, `--trusted-proxy: "bogus": want a CIDR`},
		{[]string{"--listen"}, "--listen: needs a value"},
		{[]string{"--database", "mysql://x", "--data", "DATA"}, `--database: store: DSN not accepted: unknown scheme "mysql"`},
	} {
		args := make([]string, len(c.args))
		for i, a := range c.args {
			args[i] = strings.ReplaceAll(a, "DATA", data)
		}
		out, errb, code, err := runArgs(t, nil, args...)
		if code != cli.ExitUsage || err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("board %s: exit %d, %v; want exit 2 and %q", strings.Join(c.args, " "), code, err, c.want)
			continue
		}
		if strings.Contains(err.Error(), "\n") || strings.Contains(out+errb, "Usage:") {
			t.Errorf("board %s: %q, printed %q %q; want one line and no usage", strings.Join(c.args, " "), err, out, errb)
		}
	}
	if entries, _ := os.ReadDir(data); len(entries) != 0 {
		t.Errorf("usage errors left %v in --data", entries)
	}
}

// TestFlagsAfterArguments: flags go before or after a command's
// arguments.
func TestFlagsAfterArguments(t *testing.T) {
	t.Parallel()
	data := t.TempDir()
	runOK(t, "token", "agent", "--create", "--data", data, "--name", "desk")
	out, _ := runOK(t, "token", "list", "-o", "json", "--data", data)
	var tokens []struct {
		ID string `json:"id"`
	}
	if err := json.Unmarshal([]byte(out), &tokens); err != nil || len(tokens) != 1 {
		t.Fatalf("token list -o json = %q, %v", out, err)
	}
	_, errb := runOK(t, "token", "revoke", tokens[0].ID, "--data", data)
	if !strings.Contains(errb, "revoked") {
		t.Errorf("token revoke ID --data DIR said %q", errb)
	}
	runOK(t, "--data", data, "user", "add", "--email", "ann@example.com", "--role", "viewer", "--url", "https://board.example")
	runOK(t, "user", "disable", "ann@example.com", "--data", data)
	if out, _ := runOK(t, "user", "list", "--data", data); !strings.Contains(out, "disabled") {
		t.Errorf("user disable EMAIL --data DIR did not disable ann:\n%s", out)
	}
}

// TestOutputJSON: -o json prints the same data as the table, with
// snake_case fields that stay put, and never a token.
func TestOutputJSON(t *testing.T) {
	t.Parallel()
	data := t.TempDir()
	minted, _ := runOK(t, "token", "operator", "--create", "--data", data, "--name", "ops", "--role", "viewer", "-o", "json")
	var m map[string]any
	if err := json.Unmarshal([]byte(minted), &m); err != nil {
		t.Fatalf("token operator -o json = %q: %v", minted, err)
	}
	for _, k := range []string{"id", "token", "kind", "name", "role", "expires_at"} {
		if _, ok := m[k]; !ok {
			t.Errorf("token operator -o json lacks %s: %s", k, minted)
		}
	}
	runOK(t, "user", "add", "--data", data, "--email", "ann@example.com", "--name", "Ann", "--role", "approver", "--url", "https://board.example")

	for _, c := range []struct {
		args   []string
		fields []string
		table  *regexp.Regexp
	}{
		{[]string{"token", "list"}, []string{"id", "kind", "name", "role", "issued_at", "expires_at", "revoked_at"}, regexp.MustCompile(`(?m)^ID +KIND +NAME +ROLE +EXPIRES +REVOKED\n[0-9a-f]+ +operator +ops +viewer +\S+ +-$`)},
		{[]string{"user", "list"}, []string{"email", "name", "role", "password_set", "disabled", "created_at"}, regexp.MustCompile(`(?m)^EMAIL +NAME +ROLE +PASSWORD +DISABLED\nann@example\.com +Ann +approver +not set +-$`)},
		{[]string{"audit", "list"}, []string{"seq", "at", "actor", "action", "subject", "detail", "hash"}, regexp.MustCompile(`(?m)^SEQ +AT +ACTOR +ACTION +SUBJECT +DETAIL +HASH\n1 +\S+ +cli +token\.mint `)},
		{[]string{"audit", "verify"}, []string{"ok", "entries", "head"}, regexp.MustCompile(`^audit: 2 entries, chain intact\n`)},
	} {
		table, _ := runOK(t, append(c.args, "--data", data)...)
		if !c.table.MatchString(table) {
			t.Errorf("board %s:\n%s\nwant it to match %s", strings.Join(c.args, " "), table, c.table)
		}
		out, _ := runOK(t, append(c.args, "--data", data, "--output", "json")...)
		if strings.Contains(out, m["token"].(string)) {
			t.Errorf("board %s -o json shows a token", strings.Join(c.args, " "))
		}
		var v any
		if err := json.Unmarshal([]byte(out), &v); err != nil {
			t.Fatalf("board %s -o json = %q: %v", strings.Join(c.args, " "), out, err)
		}
		obj, _ := v.(map[string]any)
		if list, ok := v.([]any); ok && len(list) > 0 {
			obj, _ = list[0].(map[string]any)
		}
		for _, f := range c.fields {
			if _, ok := obj[f]; !ok {
				t.Errorf("board %s -o json: no field %s in %s", strings.Join(c.args, " "), f, out)
			}
		}
	}
}

// TestVersion: version and --version say the module's version, the VCS
// revision and the Go version, from the binary's build information.
func TestVersion(t *testing.T) {
	t.Parallel()
	want := cli.Version()
	for _, args := range [][]string{{"version"}, {"--version"}} {
		out, _, code, err := runArgs(t, nil, args...)
		if code != 0 || !strings.HasPrefix(out, "board "+want.Version+" (revision ") || !strings.HasSuffix(out, " "+want.Go+"\n") {
			t.Errorf("board %s = %q, %v; want board %s (revision …) %s", args[0], out, err, want.Version, want.Go)
		}
	}
	out, _, _, _ := runArgs(t, nil, "version", "-o", "json")
	var got cli.VersionInfo
	if err := json.Unmarshal([]byte(out), &got); err != nil || got.Go != want.Go || got.Version != want.Version {
		t.Errorf("version -o json = %q, %v; want %+v", out, err, want)
	}
}

// TestCompletion: cobra's completion scripts, for the four shells.
func TestCompletion(t *testing.T) {
	t.Parallel()
	for shell, want := range map[string]string{"bash": "bash completion", "zsh": "#compdef board", "fish": "complete -c board", "powershell": "Register-ArgumentCompleter"} {
		out, _, code, err := runArgs(t, nil, "completion", shell)
		if code != 0 || !strings.Contains(out, want) {
			t.Errorf("completion %s: exit %d, %v; want a script with %q", shell, code, err, want)
		}
	}
}

// TestStoreCommandsNeedAStore: token, user and audit commands on a folder
// without a store say where they looked and what to do, and make nothing;
// with --create they start one.
func TestStoreCommandsNeedAStore(t *testing.T) {
	t.Parallel()
	parent := t.TempDir()
	data := filepath.Join(parent, "nowhere")
	for _, args := range [][]string{
		{"token", "operator", "--name", "ops", "--role", "admin"},
		{"token", "agent", "--name", "desk"},
		{"token", "list"},
		{"token", "revoke", "abc"},
		{"user", "add", "--email", "ann@example.com", "--role", "viewer", "--url", "https://board.example"},
		{"user", "list"},
		{"user", "disable", "ann@example.com"},
		{"audit", "verify"},
		{"audit", "list"},
	} {
		_, _, code, err := runArgs(t, nil, append(args, "--data", data)...)
		want := "no store at " + filepath.Join(data, "board.db") + ": point --data at the board's folder (the one it printed when it started), or pass --create to start a new one"
		if code != cli.ExitFailure || !errors.Is(err, store.ErrNoStore) || err.Error() != want {
			t.Errorf("board %s on an empty folder: exit %d, %v; want exit 1 and %q", strings.Join(args, " "), code, err, want)
		}
	}
	// --database naming a file that is not there.
	_, _, _, err := runArgs(t, nil, "token", "list", "--database", filepath.Join(parent, "other.db"))
	if !errors.Is(err, store.ErrNoStore) || !strings.HasPrefix(err.Error(), "--database: no store at ") {
		t.Errorf("token list --database MISSING = %v, want it refused naming --database", err)
	}
	if entries, _ := os.ReadDir(parent); len(entries) != 0 {
		t.Errorf("commands refused for want of a store left %v", entries)
	}
	runOK(t, "token", "agent", "--name", "desk", "--data", data, "--create")
	if out, _ := runOK(t, "token", "list", "--data", data); !strings.Contains(out, "desk") {
		t.Errorf("token list after --create:\n%s", out)
	}
}

// TestStoreCommandsNeedAPostgresStore: on PostgreSQL, a database without
// the board's tables is no store; --create makes it one.
func TestStoreCommandsNeedAPostgresStore(t *testing.T) {
	t.Parallel()
	dsn := boardtest.PostgresDSN(t)
	_, _, code, err := runArgs(t, nil, "token", "list", "--database", dsn)
	if code != cli.ExitFailure || !errors.Is(err, store.ErrNoStore) || !strings.Contains(err.Error(), "--database: no store in the PostgreSQL database") {
		t.Fatalf("token list on an empty database: exit %d, %v; want refused", code, err)
	}
	runOK(t, "token", "agent", "--name", "desk", "--database", dsn, "--create")
	if out, _ := runOK(t, "token", "list", "--database", dsn); !strings.Contains(out, "desk") {
		t.Errorf("token list after --create:\n%s", out)
	}
}

// TestLogFlags: --log-format json makes the board's log lines JSON;
// --log-level warn leaves out its info lines.
func TestLogFlags(t *testing.T) {
	t.Parallel()
	serveLogs := func(args ...string) string {
		ctx, cancel := context.WithCancel(t.Context())
		defer cancel()
		out := &cancelOn{s: "listening on", cancel: cancel}
		var errb syncBuffer
		err := run(ctx, append([]string{"--data", t.TempDir(), "--listen", "127.0.0.1:0"}, args...), noEnv, out, &errb)
		if !out.seen {
			t.Fatalf("board %s did not start: %v\n%s", strings.Join(args, " "), err, errb.String())
		}
		return errb.String()
	}
	logs := serveLogs("--log-format", "json")
	var line struct {
		Level string `json:"level"`
		Msg   string `json:"msg"`
	}
	last := strings.TrimSpace(logs)
	last = last[strings.LastIndex(last, "\n")+1:]
	if err := json.Unmarshal([]byte(last), &line); err != nil || line.Msg != "board stopped" || line.Level != "INFO" {
		t.Errorf("--log-format json: last line %q (%v), want a JSON line saying board stopped", last, err)
	}
	if logs := serveLogs("--log-level", "warn"); strings.Contains(logs, "board stopped") {
		t.Errorf("--log-level warn logged info lines:\n%s", logs)
	}
	if logs := serveLogs(); !strings.Contains(logs, "level=INFO msg=\"board stopped\"") {
		t.Errorf("default logs, want text at info:\n%s", logs)
	}
}
