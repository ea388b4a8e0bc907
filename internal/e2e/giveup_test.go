package e2e

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"regexp"
	"strings"
	"testing"
	"time"
)

// exited waits for p to end on its own and returns its exit status.
func exited(t *testing.T, p *proc) int {
	t.Helper()
	ended := make(chan error, 1)
	go func() {
		<-p.read
		ended <- p.cmd.Wait()
	}()
	select {
	case err := <-ended:
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			return ee.ExitCode()
		}
		if err != nil {
			t.Fatal(err)
		}
		return 0
	case <-time.After(ceiling):
		t.Fatalf("%s still running after %v; output:\n%s", p.cmd.Path, ceiling, strings.Join(p.output(), "\n"))
		return -1
	}
}

// TestAgentGivesUp: an agent whose token the board refuses, or whose
// monitor URL is not a board's, exits with status 1 and one line saying
// what is wrong and what to do, served or running once; it does not dial
// for ever.
func TestAgentGivesUp(t *testing.T) {
	t.Parallel()
	data := t.TempDir()
	_, url := startBoard(t, data, "127.0.0.1:0")
	tok, minted := runCmd(t, "board", "token", "agent", "--name", "hello", "--data", data)
	id := regexp.MustCompile(`token id (\S+),`).FindStringSubmatch(minted)
	if id == nil {
		t.Fatalf("board token agent: stderr %q, want the token's id", minted)
	}
	runCmd(t, "board", "token", "revoke", "--data", data, id[1])

	notABoard := httptest.NewUnstartedServer(http.NotFoundHandler())
	notABoard.Config.Protocols = new(http.Protocols)
	notABoard.Config.Protocols.SetHTTP1(true)
	notABoard.Config.Protocols.SetUnencryptedHTTP2(true)
	notABoard.Start()
	t.Cleanup(notABoard.Close)

	tokenLine := regexp.MustCompile(`^agent: link to ` + regexp.QuoteMeta(url) + `: the board refused the agent's token \(unauthenticated: .*\); ` +
		`mint a token for this agent on the board \(board token agent --name hello\) and start the agent with it`)
	urlLine := regexp.MustCompile(`^agent: link to ` + regexp.QuoteMeta(notABoard.URL) + `: the monitor URL does not answer as a board \(HTTP 404 Not Found\); check --monitor`)
	tests := []struct {
		name string
		args []string
		want *regexp.Regexp
	}{
		{"serve, revoked token", []string{"serve", "--monitor", url, "--token", strings.TrimSpace(tok)}, tokenLine},
		{"run, revoked token", []string{"run", "--monitor", url, "--token", strings.TrimSpace(tok), "--input", "who=Ann"}, tokenLine},
		{"serve, not a board", []string{"serve", "--monitor", notABoard.URL, "--token", strings.TrimSpace(tok)}, urlLine},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			dir := example(t, "hello")
			agent := start(t, "agent", append(tt.args, dir)...)
			if code := exited(t, agent); code != 1 {
				t.Fatalf("agent %s: exit status %d, want 1; output:\n%s", tt.name, code, strings.Join(agent.output(), "\n"))
			}
			lines := agent.output()
			if last := lines[len(lines)-1]; !tt.want.MatchString(last) {
				t.Errorf("agent %s: last line %q, want it to match %s", tt.name, last, tt.want)
			}
		})
	}
}
