package main

import (
	"bytes"
	"context"
	"io"
	"net"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"
)

// TestMetricsListenFlag: --metrics-listen serves the metrics and the
// probes without a token, said on a line; an address that cannot be had
// is refused naming the flag, and --drain-delay, --links-per-second and
// --link-max-age are bounded.
func TestMetricsListenFlag(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	var out syncBuffer
	done := make(chan error, 1)
	go func() {
		done <- run(ctx, []string{"--data", t.TempDir(), "--listen", "127.0.0.1:0", "--metrics-listen", "127.0.0.1:0", "--drain-delay", "1s"},
			noEnv, &out, &bytes.Buffer{})
	}()
	defer func() {
		cancel()
		<-done
	}()
	line := regexp.MustCompile(`(?m)^board: metrics and probes on (http://127\.0\.0\.1:\d+) \(no token: keep it private\)$`)
	var url string
	for deadline := time.Now().Add(20 * time.Second); ; {
		if m := line.FindStringSubmatch(out.String()); m != nil {
			url = m[1]
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no metrics line: %s", out.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
	get := func(path string) (int, string) {
		t.Helper()
		resp, err := http.Get(url + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	if code, body := get("/readyz"); code != http.StatusOK || body != "ready\n" {
		t.Errorf("GET /readyz = %d %q, want 200 ready", code, body)
	}
	if code, body := get("/metrics"); code != http.StatusOK || !strings.Contains(body, "symphonix_agents{state=\"linked\"} 0") {
		t.Errorf("GET /metrics = %d, want 200 with symphonix_agents; got:\n%.500s", code, body)
	}

	taken, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer taken.Close()
	for _, args := range [][]string{
		{"--metrics-listen", taken.Addr().String()},
		{"--drain-delay", "-1s"},
		{"--drain-delay", "6m"},
		{"--links-per-second", "0"},
		{"--link-max-age", "30s"},
	} {
		err := run(t.Context(), append(args, "--data", t.TempDir(), "--listen", "127.0.0.1:0"), noEnv, &bytes.Buffer{}, &bytes.Buffer{})
		if err == nil || !strings.Contains(err.Error(), strings.TrimPrefix(args[0], "--")) {
			t.Errorf("board %s = %v, want refused naming the flag", strings.Join(args, " "), err)
		}
	}
}
