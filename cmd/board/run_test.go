package main

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/netip"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

func TestParseTrustedProxy(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"10.0.0.0/8":      "10.0.0.0/8",
		"10.1.2.3/8":      "10.0.0.0/8",
		"10.0.0.5":        "10.0.0.5/32",
		"::1":             "::1/128",
		"fd00::/8":        "fd00::/8",
		"::ffff:10.0.0.5": "10.0.0.5/32",
	} {
		got, err := parseTrustedProxy(in)
		if err != nil || got != netip.MustParsePrefix(want) {
			t.Errorf("parseTrustedProxy(%q) = %v, %v; want %s", in, got, err, want)
		}
	}
	for _, in := range []string{"", "proxy.example.com", "10.0.0.0/33", "10.0.0"} {
		if got, err := parseTrustedProxy(in); err == nil {
			t.Errorf("parseTrustedProxy(%q) = %v, want an error", in, got)
		}
	}
	var errb bytes.Buffer
	err := run(t.Context(), []string{"--trusted-proxy", "bogus", "--data", t.TempDir()}, noEnv, &bytes.Buffer{}, &errb)
	if err == nil || !strings.Contains(errb.String()+err.Error(), "trusted-proxy") {
		t.Errorf("--trusted-proxy bogus: %v %s, want an error naming the flag", err, errb.String())
	}
}

// TestTrustedProxyFlag: with --trusted-proxy naming the peer (here, the
// test itself on loopback), failed sign-ins are counted per address the
// X-Forwarded-For header gives; without it, per peer.
func TestTrustedProxyFlag(t *testing.T) {
	t.Parallel()
	for _, trusted := range []bool{true, false} {
		t.Run("trusted="+strconv.FormatBool(trusted), func(t *testing.T) {
			t.Parallel()
			// --hash-rate: the sign-ins below come faster than the
			// board's own rate of hashing would take them.
			args := []string{"--data", t.TempDir(), "--listen", "127.0.0.1:0", "--hash-rate", "1000"}
			if trusted {
				args = append(args, "--trusted-proxy", "127.0.0.0/8", "--trusted-proxy", "::1")
			}
			url := boardAt(t, args)
			signIn := func(email, client string) int {
				body, _ := json.Marshal(map[string]string{"email": email, "password": "wrong password!"})
				req, err := http.NewRequest(http.MethodPost, url+"/auth/signin", bytes.NewReader(body))
				if err != nil {
					t.Fatal(err)
				}
				req.Header.Set("Content-Type", "application/json")
				req.Header.Set("X-Forwarded-For", client)
				resp, err := http.DefaultClient.Do(req)
				if err != nil {
					t.Fatal(err)
				}
				resp.Body.Close()
				return resp.StatusCode
			}
			// Twenty failures, each for another account so that the
			// per-account limit does not stop them first.
			for i := range 20 {
				if got := signIn(strconv.Itoa(i)+"@example.com", "203.0.113.1"); got != http.StatusUnauthorized {
					t.Fatalf("failure %d: %d, want 401", i, got)
				}
			}
			if got := signIn("nobody@example.com", "203.0.113.1"); got != http.StatusTooManyRequests {
				t.Errorf("the client that failed twenty times: %d, want 429", got)
			}
			want := http.StatusUnauthorized // counted apart
			if !trusted {
				want = http.StatusTooManyRequests // the same peer
			}
			if got := signIn("nobody@example.com", "203.0.113.2"); got != want {
				t.Errorf("another client: %d, want %d", got, want)
			}
		})
	}
}

// boardAt runs the board with args until the test ends and returns its
// URL, from its listening line.
func boardAt(t *testing.T, args []string) string {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	var out syncBuffer
	done := make(chan error, 1)
	go func() { done <- run(ctx, args, noEnv, &out, &bytes.Buffer{}) }()
	t.Cleanup(func() {
		cancel()
		<-done
	})
	listening := regexp.MustCompile(`listening on (http://[^\s;]+)`)
	deadline := time.Now().Add(20 * time.Second)
	for {
		if m := listening.FindStringSubmatch(out.String()); m != nil {
			return m[1]
		}
		if time.Now().After(deadline) {
			t.Fatalf("board did not start: %s", out.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestRunDaysChecked: --run-days is 0 (for ever) to 3,650; anything else is
// refused before the board starts, naming the flag.
func TestRunDaysChecked(t *testing.T) {
	t.Parallel()
	for _, d := range []string{"-1", "3651", "ten"} {
		err := run(t.Context(), []string{"--run-days", d, "--data", t.TempDir(), "--listen", "127.0.0.1:0"}, noEnv, &bytes.Buffer{}, &bytes.Buffer{})
		if err == nil || !strings.Contains(err.Error(), "run-days") {
			t.Errorf("--run-days %s = %v, want refused naming it", d, err)
		}
	}
}
