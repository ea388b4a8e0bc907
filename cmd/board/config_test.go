package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/symphonix/symphonix/internal/cli"
)

// writeConfig writes a config file in a folder of the test's own.
func writeConfig(t *testing.T, text string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "board.toml")
	if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// effective is board config -o json, by key.
func effective(t *testing.T, env map[string]string, args ...string) map[string]cli.Setting {
	t.Helper()
	out, errb, code, err := runArgs(t, env, append([]string{"config", "-o", "json"}, args...)...)
	if code != 0 {
		t.Fatalf("board config %s: exit %d, %v\n%s", strings.Join(args, " "), code, err, errb)
	}
	var v struct {
		File     string        `json:"file"`
		Settings []cli.Setting `json:"settings"`
	}
	if err := json.Unmarshal([]byte(out), &v); err != nil {
		t.Fatalf("board config -o json = %q: %v", out, err)
	}
	m := map[string]cli.Setting{}
	for _, s := range v.Settings {
		m[s.Key] = s
	}
	return m
}

// TestConfigPrecedence: a flag wins over the environment, which wins over
// the config file, which wins over the default; board config says which
// gave each value, with a DSN's password redacted; a table named for the
// command wins over the file's top level.
func TestConfigPrecedence(t *testing.T) {
	t.Parallel()
	file := writeConfig(t, `
run-days = 10
hash-rate = 3
listen = "127.0.0.1:1"
trusted-proxy = ["10.0.0.0/8"]
database = "postgres://ann:s3cret@db.example:5432/board?sslmode=disable"

[serve]
listen = "127.0.0.1:2"

[token.operator]
ttl = "24h"
`)
	env := map[string]string{
		"SYMPHONIX_CONFIG":        file,
		"SYMPHONIX_RUN_DAYS":      "20",
		"SYMPHONIX_HASH_RATE":     "4",
		"SYMPHONIX_TRUSTED_PROXY": "192.168.0.0/16,::1",
	}
	got := effective(t, env, "--run-days", "30")
	for key, want := range map[string]struct {
		value  any
		source string
	}{
		"run-days":      {"30", cli.FromFlag},
		"hash-rate":     {"4", cli.FromEnv},
		"trusted-proxy": {[]any{"192.168.0.0/16", "::1"}, cli.FromEnv},
		"listen":        {"127.0.0.1:2", cli.FromFile},
		"database":      {"postgres://ann:***@db.example:5432/board?sslmode=disable", cli.FromFile},
		"data":          {".symphonix", cli.FromDefault},
		"tls-cert":      {"", cli.FromDefault},
		"log-format":    {"text", cli.FromDefault},
	} {
		s, ok := got[key]
		if !ok {
			t.Errorf("board config has no %s", key)
			continue
		}
		if gv, _ := json.Marshal(s.Value); string(gv) != mustJSON(want.value) || s.Source != want.source {
			t.Errorf("board config %s = %s from %s, want %s from %s", key, gv, s.Source, mustJSON(want.value), want.source)
		}
	}
	if got["run-days"].Env != "SYMPHONIX_RUN_DAYS" {
		t.Errorf("run-days's variable = %q, want SYMPHONIX_RUN_DAYS", got["run-days"].Env)
	}
	// The table: board config shows what board serve would use; nothing
	// of the password anywhere.
	out, _, _, _ := runArgs(t, env, "config", "--config", file)
	if !strings.Contains(out, "postgres://ann:***@db.example") || strings.Contains(out, "s3cret") {
		t.Errorf("board config printed:\n%s\nwant the DSN with its password redacted", out)
	}
	// --database on the command line is redacted as well.
	got = effective(t, nil, "--database", "postgres://bob:hunter2@db.example/board")
	if v := got["database"].Value; v != "postgres://bob:***@db.example/board" {
		t.Errorf("board config --database postgres://bob:hunter2@… shows %v", v)
	}
}

// TestConfigApplies: what the file and the environment say is what the
// command does, not only what board config prints: --data from the file,
// then from the environment, finds the store.
func TestConfigApplies(t *testing.T) {
	t.Parallel()
	data := t.TempDir()
	runOK(t, "token", "agent", "--create", "--data", data, "--name", "from-flag")
	file := writeConfig(t, "data = "+mustJSON(data)+"\n")
	out, _, code, err := runArgs(t, nil, "token", "list", "--config", file)
	if code != 0 || !strings.Contains(out, "from-flag") {
		t.Errorf("token list with data in the config file: exit %d, %v:\n%s", code, err, out)
	}
	out, _, code, err = runArgs(t, map[string]string{"SYMPHONIX_DATA": data}, "token", "list")
	if code != 0 || !strings.Contains(out, "from-flag") {
		t.Errorf("token list with SYMPHONIX_DATA: exit %d, %v:\n%s", code, err, out)
	}
	// A table for another command does not apply.
	file = writeConfig(t, "[user.list]\ndata = "+mustJSON(data)+"\n")
	if _, _, _, err := runArgs(t, nil, "token", "list", "--config", file, "--data", filepath.Join(data, "nowhere")); err == nil {
		t.Errorf("token list read [user.list]'s data, and the flag lost to it")
	}
	if out, _, _, err := runArgs(t, nil, "user", "list", "--config", file); err != nil {
		t.Errorf("user list with [user.list] data: %v\n%s", err, out)
	}
}

// TestConfigErrors: an unknown key or table, a value of the wrong type, a
// bad value, from the file or the environment: exit 2, naming the file,
// line and key, or the variable.
func TestConfigErrors(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		text string
		want string // after "FILE:"
	}{
		{"listen = \"127.0.0.1:0\"\nrun_days = 3\n", `2: run_days: unknown key`},
		{"\n\nrun-days = \"ten\"\n", `3: run-days: want a whole number, not a string`},
		{"trusted-proxy = [1, 2]\n", `1: trusted-proxy: want a list of strings, not a list holding a whole number`},
		{"[serve]\nlisten = 7777\n", `2: serve.listen: want a string, not a whole number`},
		{"[frob]\nx = 1\n", `1: [frob]: no such command`},
		{"[token.operator]\nttl = \"soon\"\n", ``}, // not this command's: checked when it runs
		{"log-level = \"loud\"\n", `1: log-level: "loud": want debug, info, warn or error`},
		{"run-days = 10\nrun-days = 11\n", `2: `},
		{"config = \"other.toml\"\n", `1: config: unknown key`},
	} {
		file := writeConfig(t, c.text)
		_, _, code, err := runArgs(t, nil, "config", "--config", file)
		if c.want == "" {
			if err != nil {
				t.Errorf("config file %q: %v, want it read", c.text, err)
			}
			continue
		}
		if code != cli.ExitUsage || err == nil || !strings.HasPrefix(err.Error(), "--config: "+file+":"+c.want) {
			t.Errorf("config file %q: exit %d, %v; want exit 2 and --config: %s:%s", c.text, code, err, file, c.want)
		}
	}
	// The same file named by SYMPHONIX_CONFIG, and a bad variable.
	file := writeConfig(t, "run_days = 3\n")
	if _, _, code, err := runArgs(t, map[string]string{"SYMPHONIX_CONFIG": file}, "config"); code != cli.ExitUsage || err == nil || !strings.HasPrefix(err.Error(), "SYMPHONIX_CONFIG: "+file+":1: run_days: unknown key") {
		t.Errorf("SYMPHONIX_CONFIG with an unknown key: exit %d, %v", code, err)
	}
	if _, _, code, err := runArgs(t, map[string]string{"SYMPHONIX_RUN_DAYS": "ten"}, "config"); code != cli.ExitUsage || err == nil || err.Error() != `SYMPHONIX_RUN_DAYS: "ten" is not a whole number` {
		t.Errorf("SYMPHONIX_RUN_DAYS=ten: exit %d, %v", code, err)
	}
	if _, _, code, err := runArgs(t, nil, "config", "--config", filepath.Join(t.TempDir(), "none.toml")); code != cli.ExitUsage || err == nil || !strings.Contains(err.Error(), "none.toml: no such file or directory") {
		t.Errorf("--config naming no file: exit %d, %v", code, err)
	}
	// The bad ttl of [token.operator] is found when that command runs.
	file = writeConfig(t, "[token.operator]\nttl = \"soon\"\n")
	_, _, code, err := runArgs(t, nil, "token", "operator", "--config", file, "--name", "a", "--role", "admin", "--data", t.TempDir(), "--create")
	if code != cli.ExitUsage || err == nil || err.Error() != "--config: "+file+`:2: ttl: "soon" is not a duration such as 90s, 15m or 720h` {
		t.Errorf("token operator with ttl = \"soon\": exit %d, %v", code, err)
	}
}

func mustJSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return string(b)
}

// TestConfigHidesWebhooks: a webhook's URL is its credential: board config
// shows how many were given, never the URLs, as text or JSON.
func TestConfigHidesWebhooks(t *testing.T) {
	t.Parallel()
	args := []string{"--notify-webhook", "https://hooks.example.com/services/SECRETPATH", "--notify-webhook", "https://discord.example/api/webhooks/OTHERSECRET"}
	out, _ := runOK(t, append([]string{"config"}, args...)...)
	got := effective(t, nil, args...)["notify-webhook"]
	js, _ := json.Marshal(got.Value)
	if strings.Contains(out+string(js), "SECRET") || string(js) != `["***","***"]` {
		t.Errorf("board config shows %q and %s, want the two URLs hidden", out, js)
	}
}

// TestNotifySMTPFlags: --notify-smtp carries the mail server's password:
// board config never prints it; a bad one, or one without --notify-from,
// is refused naming the flag and never repeating the password.
func TestNotifySMTPFlags(t *testing.T) {
	t.Parallel()
	args := []string{"--notify-smtp", "smtp://board:SECRETPW@mail.example.com:587", "--notify-from", "board@example.com"}
	out, _ := runOK(t, append([]string{"config"}, args...)...)
	got := effective(t, nil, args...)
	js, _ := json.Marshal(got["notify-smtp"].Value)
	if strings.Contains(out+string(js), "SECRETPW") || string(js) != `"***"` || got["notify-from"].Value != "board@example.com" {
		t.Errorf("board config shows %q and %s, want the mail server hidden and the from address shown", out, js)
	}
	for _, tc := range []struct {
		args []string
		says string
	}{
		{[]string{"--notify-smtp", "http://board:SECRETPW@mail.example.com", "--notify-from", "board@example.com"}, "--notify-smtp: scheme \"http\""},
		{[]string{"--notify-smtp", "smtp://board:SECRETPW@mail.example.com:0"}, "--notify-smtp: port"},
		{[]string{"--notify-smtp", "smtp://board:SECRETPW@mail.example.com"}, "--notify-from: required"},
		{[]string{"--notify-smtp", "smtps://board:SECRETPW@mail.example.com", "--notify-from", "board"}, "--notify-from: \"board\" is not an email address"},
		{[]string{"--notify-from", "board@example.com"}, "--notify-from: given without --notify-smtp"},
	} {
		err := run(t.Context(), append(tc.args, "--data", t.TempDir(), "--listen", "127.0.0.1:0"), noEnv, &bytes.Buffer{}, &bytes.Buffer{})
		if err == nil || !strings.HasPrefix(err.Error(), tc.says) || strings.Contains(err.Error(), "SECRETPW") {
			t.Errorf("board %s = %v, want refused saying %q, without the password", strings.Join(tc.args, " "), err, tc.says)
		}
	}
}
