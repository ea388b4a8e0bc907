package secrets_test

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/symphonix/symphonix/secrets"
)

// folder writes files into a folder of the test's own.
func folder(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, content := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// TestNamesIn: the names .env.example and .env set, each once, in the
// files' order; comments, blank lines, export and quotes read as a
// dotenv loader reads them.
func TestNamesIn(t *testing.T) {
	t.Parallel()
	dir := folder(t, map[string]string{
		".env.example": "# the model\nOPENAI_API_KEY=\nORDERS_TOKEN=your-token-here\n\nSUPPORT_MAILBOX\n",
		".env": "export ORDERS_TOKEN=orders-live-123456 # the shop's\r\n" +
			"  DB_URL = 'postgres://u:p@db/x'\n" +
			"PEM=\"-----BEGIN KEY-----\nMIIBOgIBAAJBAK\n-----END KEY-----\"\n" +
			"ESCAPED=\"say \\\"hello there\\\"\\n\"\n" +
			"SHORT=abc\n" +
			"EMPTY=\n",
	})
	names, err := secrets.NamesIn(dir)
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"OPENAI_API_KEY", "ORDERS_TOKEN", "SUPPORT_MAILBOX", "DB_URL", "PEM", "ESCAPED", "SHORT", "EMPTY"}; !slices.Equal(names, want) {
		t.Errorf("NamesIn = %q, want %q", names, want)
	}
	values, err := secrets.ValuesIn(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"orders-live-123456",                           // as a dotenv loader reads it
		"orders-live-123456 # the shop's",              // as docker --env-file does
		"postgres://u:p@db/x", "'postgres://u:p@db/x'", // within its quotes and with them
		"-----BEGIN KEY-----\nMIIBOgIBAAJBAK\n-----END KEY-----", // over three lines
		"say \"hello there\"\n", `say \"hello there\"\n`,         // escapes read, and as written
	} {
		if !slices.Contains(values, want) {
			t.Errorf("ValuesIn has no %q; it has %q", want, values)
		}
	}
	for _, v := range values {
		if v == "abc" || v == "" || v == "your-token-here" {
			t.Errorf("ValuesIn has %q: short values and .env.example's placeholders are no secrets", v)
		}
	}
}

// TestNamesInNoFiles: a folder without the files names nothing.
func TestNamesInNoFiles(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	names, err := secrets.NamesIn(dir)
	values, err2 := secrets.ValuesIn(dir)
	if len(names) != 0 || err != nil || len(values) != 0 || err2 != nil {
		t.Errorf("NamesIn, ValuesIn of an empty folder = %q, %v, %q, %v; want nothing", names, err, values, err2)
	}
}

// TestNamesInRefuses: a file past the bounds, or with a line that is not
// a variable, is refused, naming the file and line and never what the
// line holds.
func TestNamesInRefuses(t *testing.T) {
	t.Parallel()
	many := strings.Repeat("A=1\n", secrets.MaxEnvNames) + "B=2\n"
	tests := []struct {
		name, file, content, want string
	}{
		{"too large", ".env", strings.Repeat("#", secrets.MaxEnvFileBytes+1), "larger than 65536 bytes"},
		{"too many", ".env.example", many, "line 1025: more than 1024 variables"},
		{"a pasted key", ".env", "OK=1\nsk-live-pasted-without-a-name\n", "line 2: not NAME=VALUE"},
		{"a name with a space", ".env", "MY KEY=sk-live-0123456789\n", "line 1: not NAME=VALUE"},
		{"a name starting with a digit", ".env", "1KEY=x\n", "line 1: not NAME=VALUE"},
		{"a quote never closed", ".env", "KEY=\"sk-live-0123456789\nMORE=1\n", "line 1: a quoted value that is never closed"},
		{"a single quote never closed", ".env", "KEY='sk-live-0123456789\n", "line 1: a quoted value that is never closed"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			dir := folder(t, map[string]string{tt.file: tt.content})
			_, err := secrets.NamesIn(dir)
			if err == nil || !strings.Contains(err.Error(), filepath.Join(dir, tt.file)) || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("NamesIn = %v, want an error naming %s and saying %q", err, tt.file, tt.want)
			}
			if strings.Contains(err.Error(), "sk-live") {
				t.Errorf("the error %q repeats what the file holds", err)
			}
			if tt.file == ".env" {
				if _, err := secrets.ValuesIn(dir); err == nil {
					t.Error("ValuesIn read the file NamesIn refused")
				}
			}
		})
	}
}
