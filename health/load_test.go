package health_test

import (
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/symphonix/symphonix/health"
)

func writeFile(t *testing.T, data string) string {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, health.FileName), []byte(data), 0o600); err != nil {
		t.Fatal(err)
	}
	return dir
}

// TestLoad: the three kinds of check, the http status defaulting to 200,
// every Spec's Dir the folder; no file is no checks.
func TestLoad(t *testing.T) {
	t.Parallel()
	dir := writeFile(t, `{"checks": [
		{"name": "orders-db", "tcp": "db.internal:5432"},
		{"name": "billing-api", "http": {"url": "https://billing/health", "status": 200}},
		{"name": "search", "http": {"url": "http://search:9200/"}},
		{"name": "disk", "command": ["test", "-w", "/var/data"]}
	]}`)
	specs, err := health.Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	want := []health.Spec{
		{Name: "orders-db", TCP: "db.internal:5432", Dir: dir},
		{Name: "billing-api", HTTP: &health.HTTPSpec{URL: "https://billing/health", Status: 200}, Dir: dir},
		{Name: "search", HTTP: &health.HTTPSpec{URL: "http://search:9200/", Status: 200}, Dir: dir},
		{Name: "disk", Command: []string{"test", "-w", "/var/data"}, Dir: dir},
	}
	if !reflect.DeepEqual(specs, want) {
		t.Errorf("Load = %+v; want %+v", specs, want)
	}

	specs, err = health.Load(t.TempDir())
	if specs != nil || err != nil {
		t.Errorf("Load of a folder without health.json = %v, %v; want nil, nil", specs, err)
	}
	specs, err = health.Load(writeFile(t, `{"checks": []}`))
	if len(specs) != 0 || err != nil {
		t.Errorf("Load of no checks = %v, %v; want none", specs, err)
	}
}

// TestLoadRefused: anything but what the format defines is refused, naming
// the file, the field and the problem.
func TestLoadRefused(t *testing.T) {
	t.Parallel()
	many := make([]string, health.MaxFileChecks+1)
	for i := range many {
		many[i] = fmt.Sprintf(`{"name": "c%d", "tcp": "db:1"}`, i)
	}
	words := `"true"` + strings.Repeat(`, "x"`, health.MaxCommandWords)
	for _, tc := range []struct {
		data string
		want string
	}{
		{`{"checks": [`, "not JSON: at byte 12: unexpected end of JSON input"},
		{`{"checks": []} {}`, "not JSON: at byte 16: invalid character '{' after top-level value"},
		{`[]`, "must be an object"},
		{`{"check": []}`, "check: unknown field (known: checks)"},
		{`{"checks": {}}`, "checks: must be a list"},
		{`{"checks": null}`, "checks: must be a list"},
		{`{"checks": [], "checks": []}`, "checks: given twice"},
		{`{"checks": [` + strings.Join(many, ",") + `]}`, "checks: 65 checks, at most 64"},
		{`{"checks": ["disk"]}`, "checks[0]: must be an object"},
		{`{"checks": [{"tcp": "db:1"}]}`, "checks[0].name: required"},
		{`{"checks": [{"name": "", "tcp": "db:1"}]}`, "checks[0].name: required"},
		{`{"checks": [{"name": 7, "tcp": "db:1"}]}`, "checks[0].name: must be a string"},
		{`{"checks": [{"name": "a\tb", "tcp": "db:1"}]}`, "checks[0].name: must be printable: holds U+0009"},
		{`{"checks": [{"name": "` + strings.Repeat("n", 65) + `", "tcp": "db:1"}]}`, "checks[0].name: 65 bytes, must be at most 64"},
		{`{"checks": [{"name": "a", "tcp": "db:1"}, {"name": "a", "tcp": "db:2"}]}`, `checks[1].name: "a" is checks[0]'s name already`},
		{`{"checks": [{"name": "a", "tcp": "db:1", "name": "b"}]}`, "checks[0].name: given twice"},
		{`{"checks": [{"name": "a", "timeout": 3, "tcp": "db:1"}]}`, "checks[0].timeout: unknown field (known: name, tcp, http, command)"},
		{`{"checks": [{"name": "a", "the timeout": 3}]}`, `checks[0]."the timeout": unknown field (known: name, tcp, http, command)`},
		{`{"checks": [{"name": "a"}]}`, "checks[0]: needs one of tcp, http, command"},
		{`{"checks": [{"name": "a", "tcp": "db:1", "command": ["true"]}]}`, "checks[0]: has tcp and command; a check is exactly one of tcp, http, command"},
		{`{"checks": [{"name": "a", "tcp": "db"}]}`, `checks[0].tcp: "db": must be host:port`},
		{`{"checks": [{"name": "a", "tcp": ":5432"}]}`, `checks[0].tcp: ":5432": the host is required`},
		{`{"checks": [{"name": "a", "tcp": "db:postgres"}]}`, `checks[0].tcp: "db:postgres": the port must be a number from 1 to 65535`},
		{`{"checks": [{"name": "a", "tcp": "db:0"}]}`, `checks[0].tcp: "db:0": the port must be a number from 1 to 65535`},
		{`{"checks": [{"name": "a", "tcp": null}]}`, "checks[0].tcp: must be a string"},
		{`{"checks": [{"name": "a", "http": "https://x"}]}`, "checks[0].http: must be an object"},
		{`{"checks": [{"name": "a", "http": {}}]}`, "checks[0].http.url: required"},
		{`{"checks": [{"name": "a", "http": {"url": "ftp://x/"}}]}`, "checks[0].http.url: must be an http or https URL"},
		{`{"checks": [{"name": "a", "http": {"url": "https://"}}]}`, "checks[0].http.url: the host is required"},
		{`{"checks": [{"name": "a", "http": {"url": "https://x/", "method": "POST"}}]}`, "checks[0].http.method: unknown field (known: url, status)"},
		{`{"checks": [{"name": "a", "http": {"url": "https://x/", "status": "200"}}]}`, `checks[0].http.status: "200", must be a whole number from 100 to 599`},
		{`{"checks": [{"name": "a", "http": {"url": "https://x/", "status": 200.5}}]}`, "checks[0].http.status: 200.5, must be a whole number from 100 to 599"},
		{`{"checks": [{"name": "a", "http": {"url": "https://x/", "status": 700}}]}`, "checks[0].http.status: 700, must be a whole number from 100 to 599"},
		{`{"checks": [{"name": "a", "command": "test -w /var/data"}]}`, "checks[0].command: must be a list of strings: the program and its arguments"},
		{`{"checks": [{"name": "a", "command": []}]}`, "checks[0].command: 0 words, must be 1 to 64: the program and its arguments"},
		{`{"checks": [{"name": "a", "command": [` + words + `]}]}`, "checks[0].command: 65 words, must be 1 to 64: the program and its arguments"},
		{`{"checks": [{"name": "a", "command": ["test", 7]}]}`, "checks[0].command[1]: must be a string"},
		{`{"checks": [{"name": "a", "command": [""]}]}`, "checks[0].command[0]: the program, required"},
		{`{"checks": [{"name": "a", "command": ["test", "a\u0000b"]}]}`, "checks[0].command[1]: must not hold a NUL"},
	} {
		dir := writeFile(t, tc.data)
		_, err := health.Load(dir)
		want := filepath.Join(dir, "health.json") + ": " + tc.want
		if err == nil || err.Error() != want {
			t.Errorf("Load(%.80s) = %v; want %s", tc.data, err, want)
		}
	}
}

// TestLoadTooLarge: a file past MaxFileBytes is refused unread.
func TestLoadTooLarge(t *testing.T) {
	t.Parallel()
	dir := writeFile(t, `{"checks": []}`+strings.Repeat(" ", health.MaxFileBytes))
	_, err := health.Load(dir)
	if err == nil || !strings.Contains(err.Error(), "health.json: larger than 65536 bytes") {
		t.Errorf("Load of a file past 64 KiB = %v; want refused", err)
	}
	dir = writeFile(t, `{"checks": []}`+strings.Repeat(" ", health.MaxFileBytes-14))
	if _, err := health.Load(dir); err != nil {
		t.Errorf("Load of a file of exactly 64 KiB = %v; want it read", err)
	}
}

// TestLoadUnreadable: a health.json that cannot be read is an error, not
// no checks.
func TestLoadUnreadable(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	if err := os.Mkdir(filepath.Join(dir, health.FileName), 0o700); err != nil {
		t.Fatal(err)
	}
	if specs, err := health.Load(dir); err == nil {
		t.Errorf("Load of a health.json that is a folder = %v, nil; want an error", specs)
	}
}
