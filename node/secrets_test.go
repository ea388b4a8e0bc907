package node_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/symphonix/symphonix/journal"
	"github.com/symphonix/symphonix/node"
	"github.com/symphonix/symphonix/secrets"
)

// echoFlow is an agent whose one llm node is asked what the person
// wrote, and answers with the model's reply. It requires two variables:
// one long enough to be a secret, one not.
const echoFlow = `{"version": "0.17", "name": "echo", "description": "Asks the model what the person wrote.",
  "inputs": ["message"], "outputs": ["reply"],
  "requires": {"env": ["ORDERS_TOKEN", "SHORT_PIN"]},
  "state": {"message": {"type": "string", "description": "What the person wrote."},
            "reply": {"type": "string", "description": "The model's answer."}},
  "start": "ask",
  "nodes": [{"id": "ask", "type": "llm", "prompt": "{{message}}", "output": "reply"}],
  "edges": [{"from": "ask", "to": "END"}]}`

// echoProvider is an OpenAI-compatible chat-completions server that
// answers every request with the last message it was sent, after "echo: ".
func echoProvider(t *testing.T) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			Messages []struct{ Content string }
		}
		if r.URL.Path != "/v1/chat/completions" || json.NewDecoder(r.Body).Decode(&req) != nil || len(req.Messages) == 0 {
			http.Error(w, "not a chat completion", http.StatusBadRequest)
			return
		}
		reply, _ := json.Marshal("echo: " + req.Messages[len(req.Messages)-1].Content)
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"id": "c1", "object": "chat.completion", "model": "gpt-test",
		  "choices": [{"index": 0, "message": {"role": "assistant", "content": %s}, "finish_reason": "stop"}]}`, reply)
	}))
	t.Cleanup(srv.Close)
	return srv
}

// TestJournalKeepsWhatWasSaid: on a machine whose host name is a value of
// its environment, a journal at full detail still says the host name a
// reply gave, verbatim: a journal keeps what was said, less the named
// secrets — the model's key, the flow's requires.env, the names in
// .env.example and the values in .env, never a value shorter than
// secrets.Enough. The same host name in a detail going to another machine
// (secrets.SafeDetail, with every value of the environment) is removed.
func TestJournalKeepsWhatWasSaid(t *testing.T) {
	t.Parallel()
	const (
		host    = "agent-host-7f3a"
		key     = "sk-test-journal-0123456789"
		token   = "orders-token-5150"
		pin     = "4242" // shorter than secrets.Enough
		mailbox = "mailbox-pw-8675309"
		dotenv  = "dotenv-value-31337"
	)
	dir := filepath.Join(t.TempDir(), "echo")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for name, content := range map[string]string{
		"flow.json":    echoFlow,
		".env.example": "SUPPORT_MAILBOX_PASSWORD=\n",
		".env":         "# a variable nothing of the agent reads, named all the same\nLOCAL_ONLY=" + dotenv + "\n",
	} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	env := map[string]string{
		"HOSTNAME":                 host,
		"OPENAI_API_KEY":           key,
		"OPENAI_BASE_URL":          echoProvider(t).URL + "/v1",
		"ORDERS_TOKEN":             token,
		"SHORT_PIN":                pin,
		"SUPPORT_MAILBOX_PASSWORD": mailbox,
	}
	s := startServe(t, node.Config{Dir: dir, JournalDetail: journal.DetailFull, Getenv: func(name string) string { return env[name] }})
	s.out.wait(t, regexp.MustCompile(`^model: gpt-4o-mini at http://127\.0\.0\.1:\d+/v1$`), 0)

	said := fmt.Sprintf("I am on %s; my key is %s, the token %s, the pin %s, the mailbox's %s and the file's %s", host, key, token, pin, mailbox, dotenv)
	body, _ := json.Marshal(map[string]any{"input": map[string]string{"message": said}})
	var done turn
	if status := call(t, "POST", s.url+"/api/threads/t1/messages", string(body), &done); status != 200 || done.Reply != "echo: "+said {
		t.Fatalf("message = %d %+v, want the model's echo of it", status, done)
	}
	if err := s.shutdown(t); err != nil {
		t.Fatal(err)
	}

	b, err := os.ReadFile(journal.Path(dir))
	if err != nil {
		t.Fatal(err)
	}
	var e journal.Entry
	if err := json.Unmarshal(b, &e); err != nil {
		t.Fatalf("the journal %q: %v", b, err)
	}
	want := fmt.Sprintf("I am on %s; my key is REDACTED, the token REDACTED, the pin %s, the mailbox's REDACTED and the file's REDACTED", host, pin)
	if e.Kind != journal.KindLLM || e.Prompt != want || e.Reply != "echo: "+want {
		t.Errorf("the journal's entry has prompt %q and reply %q; want %q and its echo", e.Prompt, e.Reply, want)
	}
	for _, secret := range []string{key, token, mailbox, dotenv} {
		if strings.Contains(string(b), secret) {
			t.Errorf("the journal holds %q", secret)
		}
	}

	var environ []string
	for k, v := range env {
		environ = append(environ, k+"="+v)
	}
	detail := secrets.SafeDetail("dial tcp "+host+":443: i/o timeout", environ)
	if strings.Contains(detail, host) || detail != "dial tcp REDACTED:443: i/o timeout" {
		t.Errorf("SafeDetail = %q, want the host name removed", detail)
	}
}

// TestJournalNotKeptForABadEnvFile: an .env the agent cannot read is
// said on the journal's start line, naming the file and the line and not
// what it holds, and the agent serves without a journal.
func TestJournalNotKeptForABadEnvFile(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "echo")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "flow.json"), []byte(echoFlow), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, ".env"), []byte("OK=1\nsk-pasted-0123456789\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	s := startServe(t, node.Config{Dir: dir, JournalDetail: journal.DetailFull})
	line := s.out.wait(t, regexp.MustCompile(`^journal: not kept: .*$`), 0)[0]
	if !strings.Contains(line, filepath.Join(dir, ".env")+" line 2: ") || strings.Contains(line, "sk-pasted") {
		t.Errorf("the journal's line = %q, want it to name %s and line 2, and not what the line holds", line, filepath.Join(dir, ".env"))
	}
	var done turn
	if status := call(t, "POST", s.url+"/api/threads/t1/messages", `{"input": {"message": "hello"}}`, &done); status != 200 || done.Reply == "" {
		t.Fatalf("message = %d %+v, want the stand-in's reply", status, done)
	}
	if err := s.shutdown(t); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(journal.Path(dir)); err == nil {
		t.Error("a journal was written")
	}
}

// TestServeAppliesDotEnv: the folder's .env is applied to the agent's
// environment when it starts: the model's settings come from it when the
// process's environment does not set them.
func TestServeAppliesDotEnv(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "echo")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	const key = "sk-from-the-dotenv-0123456789"
	for name, content := range map[string]string{
		"flow.json": echoFlow,
		".env":      "OPENAI_API_KEY=" + key + "\nOPENAI_BASE_URL=" + echoProvider(t).URL + "/v1\n",
	} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	s := startServe(t, node.Config{Dir: dir})
	s.out.wait(t, regexp.MustCompile(`^model: gpt-4o-mini at http://127\.0\.0\.1:\d+/v1$`), 0)
	if strings.Contains(s.out.String(), key) {
		t.Errorf("the start lines hold the key:\n%s", s.out)
	}
}
