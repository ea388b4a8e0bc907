package e2e

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	boardv1 "github.com/symphonix/symphonix/api/symphonix/board/v1"
	"github.com/symphonix/symphonix/api/symphonix/board/v1/boardv1connect"
	"github.com/symphonix/symphonix/internal/boardtest"
)

// TestAgentServeWebhookTrigger: the built agent serves a flow folder with
// a trigger file, linked to the built board: its webhook, signed, on the
// address TRIGGER_BIND names, starts one run for a request signed with the
// shared secret and none for one that is not; the run's result is
// delivered to a local endpoint; the board lists the trigger as the agent
// reported it, and keeps the run as started by the trigger.
func TestAgentServeWebhookTrigger(t *testing.T) {
	t.Parallel()
	delivered := make(chan map[string]any, 4)
	endpoint := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var b map[string]any
		_ = json.NewDecoder(r.Body).Decode(&b)
		delivered <- b
	}))
	defer endpoint.Close()

	data := t.TempDir()
	_, boardURL := startBoard(t, data, "127.0.0.1:0")
	mint := func(args ...string) string {
		out, _ := runCmd(t, "board", append([]string{"token"}, append(args, "--data", data)...)...)
		return strings.TrimSpace(out)
	}
	adminTok := mint("operator", "--name", "root", "--role", "admin")
	agentTok := mint("agent", "--name", "greeter")

	dir := filepath.Join(t.TempDir(), "greeter")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for name, content := range map[string]string{
		"flow.json": `{"version": "0.17", "name": "greeter", "inputs": ["who"], "outputs": ["greeting"],
  "state": {"who": {"type": "string"}, "greeting": {"type": "string"}},
  "nodes": [{"id": "greet", "type": "llm", "output": "greeting", "prompt": "Greet {{who}}."}],
  "edges": [{"from": "greet", "to": "END"}], "start": "greet"}`,
		"triggers.json": `{"flow": "flow.json", "triggers": [{"id": "hello", "kind": "webhook", "path": "/hooks/hello",
  "secret": "HELLO_SECRET", "input": {"who": "{{body.who}}"}, "deliver": {"urlEnv": "HELLO_URL"}}]}`,
	} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	const secret = "the-shared-secret-of-the-hello-hook"
	agent := startWithEnv(t, []string{"OPENAI_API_KEY=", "TRIGGER_BIND=127.0.0.1", "HELLO_SECRET=" + secret, "HELLO_URL=" + endpoint.URL},
		"agent", "serve", "--monitor", boardURL, "--token", agentTok, dir)
	hooks := agent.waitLine(t, regexp.MustCompile(`^agent greeter: triggers: webhooks on (http://127\.0\.0\.1:\d+)$`))[1]
	agent.waitLine(t, regexp.MustCompile(`^agent greeter: linked to `))

	body := `{"who": "Ada"}`
	post := func(sig string) (int, string) {
		req, _ := http.NewRequest(http.MethodPost, hooks+"/hooks/hello", strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		if sig != "" {
			req.Header.Set("X-Symphonix-Signature", sig)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var a struct {
			RunID string `json:"run_id"`
		}
		_ = json.NewDecoder(resp.Body).Decode(&a)
		return resp.StatusCode, a.RunID
	}
	if code, _ := post(""); code != http.StatusUnauthorized {
		t.Errorf("an unsigned request: %d, want 401", code)
	}
	code, runID := post(signature(secret, time.Now(), body))
	if code != http.StatusOK || runID == "" {
		t.Fatalf("a signed request: %d, run %q; want 200 with the run's id", code, runID)
	}
	select {
	case b := <-delivered:
		if b["text"] == nil || b["text"] == "" {
			t.Errorf("delivered %v: want the greeting as text", b)
		}
	case <-time.After(ceiling):
		t.Fatal("nothing delivered")
	}

	admin := boardtest.NewClient(boardURL, adminTok)
	runs := boardv1connect.NewRunServiceClient(admin)
	trig := boardv1connect.NewTriggerServiceClient(admin)
	boardtest.Eventually(t, ceiling, "the run and the trigger on the board", func() bool {
		r, err := runs.GetRun(t.Context(), &boardv1.GetRunRequest{Agent: "greeter", Id: runID})
		if err != nil || r.GetRun().GetStartedBy() != "trigger" || r.GetRun().GetTrigger().GetTriggerId() != "hello" {
			return false
		}
		l, err := trig.ListTriggers(t.Context(), &boardv1.ListTriggersRequest{Agent: "greeter"})
		if err != nil || len(l.GetTriggers()) != 1 {
			return false
		}
		tr := l.GetTriggers()[0].GetTrigger()
		return tr.GetSigned() && tr.GetLast().GetRunId() == runID
	})
	var n int
	for _, line := range agent.output() {
		if strings.HasPrefix(line, "agent greeter: trigger hello: thread ") {
			n++
		}
	}
	if n != 1 {
		t.Errorf("%d triggered runs: want 1 (the unsigned request started none)", n)
	}
}

// signature is the X-Symphonix-Signature header for body, as
// docs/triggers.md says a sender computes it, written here apart from the
// agent's code: "t=<unix>,v1=<hex HMAC-SHA256 of "<t>.<body>">".
func signature(secret string, at time.Time, body string) string {
	ts := strconv.FormatInt(at.Unix(), 10)
	m := hmac.New(sha256.New, []byte(secret))
	m.Write([]byte(ts + "." + body))
	return "t=" + ts + ",v1=" + hex.EncodeToString(m.Sum(nil))
}

// TestAgentServeScheduleTrigger: the built agent, linked to the built
// board, arms a schedule that comes round every minute: the board lists it
// with its next run within the minute, in words; when the minute comes, the
// agent starts one run, which the board keeps as started by the schedule at
// that instant, and the trigger's latest occurrence names it. Cron's finest
// step is a minute, so this test waits for up to one.
func TestAgentServeScheduleTrigger(t *testing.T) {
	t.Parallel()
	data := t.TempDir()
	_, boardURL := startBoard(t, data, "127.0.0.1:0")
	mint := func(args ...string) string {
		out, _ := runCmd(t, "board", append([]string{"token"}, append(args, "--data", data)...)...)
		return strings.TrimSpace(out)
	}
	viewerTok := mint("operator", "--name", "vic", "--role", "viewer")
	agentTok := mint("agent", "--name", "ticker")

	dir := filepath.Join(t.TempDir(), "ticker")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for name, content := range map[string]string{
		"flow.json": `{"version": "0.17", "name": "ticker", "inputs": ["at"], "outputs": ["note"],
  "state": {"at": {"type": "string"}, "note": {"type": "string"}},
  "nodes": [{"id": "note", "type": "llm", "output": "note", "prompt": "Note the time {{at}}."}],
  "edges": [{"from": "note", "to": "END"}], "start": "note"}`,
		"triggers.json": `{"flow": "flow.json", "triggers": [{"id": "every-minute", "kind": "schedule",
  "schedule": "* * * * *", "timeZone": "Europe/Paris", "input": {"at": "{{time.iso}}"}}]}`,
	} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	agent := startWithEnv(t, []string{"OPENAI_API_KEY="}, "agent", "serve", "--monitor", boardURL, "--token", agentTok, dir)
	agent.waitLine(t, regexp.MustCompile(`^agent ticker: linked to `))
	armed := time.Now()

	viewer := boardtest.NewClient(boardURL, viewerTok)
	trig := boardv1connect.NewTriggerServiceClient(viewer)
	listed := func() *boardv1.Trigger {
		l, err := trig.ListTriggers(t.Context(), &boardv1.ListTriggersRequest{Agent: "ticker"})
		if err != nil || len(l.GetTriggers()) != 1 {
			return nil
		}
		return l.GetTriggers()[0].GetTrigger()
	}
	var tr *boardv1.Trigger
	boardtest.Eventually(t, ceiling, "the schedule listed with its next run", func() bool {
		tr = listed()
		return tr.GetNextRunTime() != nil
	})
	next := tr.GetNextRunTime().AsTime()
	if tr.GetKind() != boardv1.TriggerKind_TRIGGER_KIND_SCHEDULE || tr.GetTimeZone() != "Europe/Paris" ||
		next.Second() != 0 || next.Before(armed.Add(-time.Second)) || next.After(armed.Add(61*time.Second)) {
		t.Fatalf("listed %v: want a schedule in Europe/Paris whose next run is the next whole minute after %v", tr, armed)
	}
	if tr.GetDescription() == "" || tr.GetDescription() == "* * * * *" {
		t.Errorf("description %q: want the schedule in words", tr.GetDescription())
	}

	boardtest.Eventually(t, 90*time.Second, "the minute's occurrence and its run", func() bool {
		tr = listed()
		return tr.GetLast().GetRunId() != ""
	})
	if at := tr.GetLast().GetTime().AsTime(); !at.Equal(next) {
		t.Errorf("the occurrence at %v, want the announced %v", at, next)
	}
	runs := boardv1connect.NewRunServiceClient(viewer)
	boardtest.Eventually(t, ceiling, "the run kept as the schedule's", func() bool {
		r, err := runs.GetRun(t.Context(), &boardv1.GetRunRequest{Agent: "ticker", Id: tr.GetLast().GetRunId()})
		rt := r.GetRun().GetTrigger()
		return err == nil && r.GetRun().GetStartedBy() == "trigger" && rt.GetTriggerId() == "every-minute" &&
			rt.GetKind() == boardv1.TriggerKind_TRIGGER_KIND_SCHEDULE && rt.GetOccurrenceTime().AsTime().Equal(next)
	})
}
