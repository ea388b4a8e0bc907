package secrets_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/symphonix/symphonix/secrets"
)

func writeEnv(t *testing.T, dir, content string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(dir, secrets.EnvFile), []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
}

// TestEnv: .env is applied under the process's environment, read again
// when it changes, and a bad file keeps the last good values with an error
// that names the line and never the value.
func TestEnv(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	const key, rotated, bad = "sk-from-dotenv-0123456789", "sk-rotated-9876543210", "sk-never-said-5555555"
	writeEnv(t, dir, "OPENAI_API_KEY="+key+"\nORDERS_URL=http://orders.local\nHOME=/from/dotenv\n")
	process := map[string]string{"HOME": "/home/agent"}
	env, err := secrets.LoadEnv(dir, func(n string) string { return process[n] })
	if err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]string{
		"OPENAI_API_KEY": key, "ORDERS_URL": "http://orders.local",
		"HOME":    "/home/agent", // the process's environment wins, as dotenv loaders have it
		"MISSING": "",
	} {
		if got := env.Getenv(name); got != want {
			t.Errorf("Getenv(%s) = %q, want %q", name, got, want)
		}
	}
	if changed, err := env.Reload(); changed || err != nil {
		t.Errorf("Reload of an unchanged file = %v, %v; want no change", changed, err)
	}

	writeEnv(t, dir, "OPENAI_API_KEY="+rotated+"\n")
	if changed, err := env.Reload(); !changed || err != nil {
		t.Fatalf("Reload after a change = %v, %v; want a change", changed, err)
	}
	if got := env.Getenv("OPENAI_API_KEY"); got != rotated {
		t.Errorf("Getenv(OPENAI_API_KEY) after the change = %q, want %q", got, rotated)
	}
	if got := env.Getenv("ORDERS_URL"); got != "" {
		t.Errorf("Getenv(ORDERS_URL) after it was taken out of .env = %q, want nothing", got)
	}

	writeEnv(t, dir, "OPENAI_API_KEY="+bad+"\nthis line holds "+bad+"\n")
	changed, err := env.Reload()
	if changed || err == nil {
		t.Fatalf("Reload of a bad file = %v, %v; want an error and no change", changed, err)
	}
	if !strings.Contains(err.Error(), "line 2") || !strings.Contains(err.Error(), secrets.EnvFile) || strings.Contains(err.Error(), bad) {
		t.Errorf("Reload's error = %q: want the file and line 2 named, and never the value", err)
	}
	if got := env.Getenv("OPENAI_API_KEY"); got != rotated {
		t.Errorf("Getenv after a bad file = %q, want the last good value %q", got, rotated)
	}
	if changed, err := env.Reload(); changed || err != nil {
		t.Errorf("Reload of the same bad file again = %v, %v; want it said once", changed, err)
	}

	if err := os.Remove(filepath.Join(dir, secrets.EnvFile)); err != nil {
		t.Fatal(err)
	}
	if changed, err := env.Reload(); !changed || err != nil || env.Getenv("OPENAI_API_KEY") != "" {
		t.Errorf("Reload of a removed file = %v, %v, key %q; want a change to nothing", changed, err, env.Getenv("OPENAI_API_KEY"))
	}
}

// TestLoadEnvBadFile: a .env refused at start gives nothing, says why, and
// is read well once mended.
func TestLoadEnvBadFile(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	writeEnv(t, dir, "not a variable\n")
	env, err := secrets.LoadEnv(dir, nil)
	if err == nil || env == nil || env.Len() != 0 {
		t.Fatalf("LoadEnv of a bad file = %v, %v; want a usable Env with nothing, and the error", env, err)
	}
	writeEnv(t, dir, "A_NAME=value-of-a-name\n")
	if changed, err := env.Reload(); !changed || err != nil || env.Getenv("A_NAME") != "value-of-a-name" {
		t.Errorf("Reload of the mended file = %v, %v; want it read", changed, err)
	}
}

// TestSetAdd: a Set grows while it is used, and never forgets a value.
func TestSetAdd(t *testing.T) {
	t.Parallel()
	s := secrets.NewSet([]string{"first-secret-1"})
	if n := s.Add([]string{"second-secret-2", "first-secret-1", "short"}); n != 1 {
		t.Errorf("Add = %d, want 1 new value", n)
	}
	if got := s.Without("first-secret-1 second-secret-2 short"); got != "REDACTED REDACTED short" {
		t.Errorf("Without = %q", got)
	}
}
