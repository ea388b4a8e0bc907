package node

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/symphonix/symphonix/secrets"
)

// lockedBuffer is a log's buffer, written by the watch and read by the test.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// TestWatchEnv: a served agent reads its .env again when it changes: the
// new values are in its environment and in its named secrets; a bad file
// keeps the last good values and is logged by its line; no value is ever
// logged.
func TestWatchEnv(t *testing.T) {
	t.Parallel()
	const first, second, third = "first-secret-value-1", "second-secret-value-2", "third-secret-value-3"
	synctest.Test(t, func(t *testing.T) {
		dir := t.TempDir()
		write := func(content string) {
			t.Helper()
			if err := os.WriteFile(filepath.Join(dir, secrets.EnvFile), []byte(content), 0o600); err != nil {
				t.Fatal(err)
			}
		}
		write("ORDERS_TOKEN=" + first + "\n")
		var logs lockedBuffer
		log := slog.New(slog.NewTextHandler(&logs, nil))
		cfg := Config{Dir: dir, Logger: log}.withEnv("echo", io.Discard)
		filter := detailFilter(cfg)
		if got := cfg.Getenv("ORDERS_TOKEN"); got != first {
			t.Fatalf("Getenv(ORDERS_TOKEN) at start = %q, want .env's %q", got, first)
		}
		ctx, cancel := context.WithCancel(t.Context())
		done := make(chan struct{})
		go func() { watchEnv(ctx, cfg, log); close(done) }()

		write("ORDERS_TOKEN=" + second + "\n")
		time.Sleep(EnvPollInterval)
		synctest.Wait()
		if got := cfg.Getenv("ORDERS_TOKEN"); got != second {
			t.Errorf("Getenv(ORDERS_TOKEN) after the change = %q, want %q", got, second)
		}
		// The served agent's secret list follows: the new value is removed,
		// and the old one still is.
		if got := cfg.named.Without(first + " " + second); got != "REDACTED REDACTED" {
			t.Errorf("the named secrets after the change remove %q, want both values", got)
		}
		if got := filter.SafeDetail("token " + second); strings.Contains(got, second) {
			t.Errorf("the filter of details after the change gives %q, want the new value removed", got)
		}

		write("ORDERS_TOKEN=" + third + "\nthis is not a variable " + third + "\n")
		time.Sleep(EnvPollInterval)
		synctest.Wait()
		if got := cfg.Getenv("ORDERS_TOKEN"); got != second {
			t.Errorf("Getenv(ORDERS_TOKEN) after a bad file = %q, want the last good %q", got, second)
		}
		time.Sleep(3 * EnvPollInterval)
		synctest.Wait()
		cancel()
		<-done

		said := logs.String()
		if !strings.Contains(said, "line 2") || strings.Count(said, "line 2") != 1 {
			t.Errorf("the log should say the bad line once; it says:\n%s", said)
		}
		if !strings.Contains(said, "env: read again") {
			t.Errorf("the log does not say .env was read again:\n%s", said)
		}
		for _, v := range []string{first, second, third} {
			if strings.Contains(said, v) {
				t.Errorf("the log holds the value %q:\n%s", v, said)
			}
		}
	})
}
