package e2e

import (
	"io"
	"net/http"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	boardv1 "github.com/symphonix/symphonix/api/symphonix/board/v1"
)

// getProbe GETs url without a credential and returns its status and body.
func getProbe(t *testing.T, url string) (int, string) {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	defer res.Body.Close()
	body, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	return res.StatusCode, string(body)
}

// TestBoardDrainsOnSIGTERM: the board command, sent SIGTERM with a drain
// delay, says so in its log and turns not ready at once — /readyz 503
// "shutting down" on its own address and on its metrics address, while
// /healthz stays 200 and an operator's RPC is still answered — then
// stops with status 0 once the delay has passed.
func TestBoardDrainsOnSIGTERM(t *testing.T) {
	t.Parallel()
	const delay = 5 * time.Second // room for the requests below on a loaded machine
	data := t.TempDir()
	tok, _ := runCmd(t, "board", "token", "operator", "--create", "--data", data, "--name", "ops", "--role", "viewer")
	p := start(t, "board", "--data", data, "--listen", "127.0.0.1:0", "--metrics-listen", "127.0.0.1:0",
		"--drain-delay", delay.String())
	url := p.waitLine(t, listening)[1]
	metrics := p.waitLine(t, regexp.MustCompile(`metrics and probes on (http://127\.0\.0\.1:\d+)`))[1]
	bases := []string{url, metrics}
	for _, base := range bases {
		if code, body := getProbe(t, base+"/readyz"); code != http.StatusOK || body != "ready\n" {
			t.Fatalf("GET %s/readyz before SIGTERM = %d %q, want 200 ready", base, code, body)
		}
	}

	asked := time.Now()
	if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	p.waitLine(t, regexp.MustCompile(`msg="shutting down: not ready" drain_delay=`+regexp.QuoteMeta(delay.String())+`$`))
	for _, base := range bases {
		if code, body := getProbe(t, base+"/readyz"); code != http.StatusServiceUnavailable || body != "shutting down\n" {
			t.Errorf("GET %s/readyz while draining = %d %q, want 503 shutting down", base, code, body)
		}
		if code, body := getProbe(t, base+"/healthz"); code != http.StatusOK || body != "ok\n" {
			t.Errorf("GET %s/healthz while draining = %d %q, want 200 ok", base, code, body)
		}
	}
	if _, err := agentsClient(url, strings.TrimSpace(tok)).ListAgents(t.Context(), &boardv1.ListAgentsRequest{}); err != nil {
		t.Errorf("ListAgents while draining: %v, want it answered", err)
	}
	if took := time.Since(asked); took >= delay {
		t.Fatalf("the requests while draining took %s, past the drain delay %s: the machine is too slow for this test", took, delay)
	}

	select {
	case <-p.read:
	case <-time.After(ceiling):
		t.Fatalf("board still running %s after SIGTERM", ceiling)
	}
	if err := p.cmd.Wait(); err != nil {
		t.Fatalf("board after SIGTERM: %v, want exit status 0", err)
	}
	if took := time.Since(asked); took < delay {
		t.Errorf("the board stopped %s after SIGTERM, want at least the drain delay %s", took, delay)
	}
	p.waitLine(t, regexp.MustCompile(`board stopped`))
}
