package node_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	boardv1 "github.com/symphonix/symphonix/api/symphonix/board/v1"
	"github.com/symphonix/symphonix/api/symphonix/board/v1/boardv1connect"
	"github.com/symphonix/symphonix/identity"
	"github.com/symphonix/symphonix/internal/boardtest"
	"github.com/symphonix/symphonix/node"
)

// greeterTriggers is a trigger file for the greeter: a webhook whose body
// names whom to greet, delivering the greeting.
const greeterTriggers = `{
  "flow": "flow.json",
  "triggers": [
    {"id": "greet-hook", "kind": "webhook", "path": "/hooks/greet",
     "input": {"who": "{{body.name}}"},
     "deliver": {"urlEnv": "GREETING_URL", "body": {"text": "{{outputs.greeting}}"}}}
  ]
}`

// TestServeRunsAWebhookTrigger: a served greeter with a trigger file says
// where its webhooks are, on a listener of their own; a JSON request
// there starts one run, answered 200 with the run's id; the run reaches
// the board started by "trigger", carrying the trigger; its greeting is
// delivered to a real local endpoint; a request that is not JSON is 400
// and starts nothing. The board lists the trigger as reported, with its
// latest occurrence delivered; paused there, the webhook is 503 and
// starts nothing, and resumed, it starts a run again. A paused agent's
// webhook starts nothing.
func TestServeRunsAWebhookTrigger(t *testing.T) {
	t.Parallel()
	delivered := make(chan map[string]any, 4)
	endpoint := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var b map[string]any
		_ = json.NewDecoder(r.Body).Decode(&b)
		delivered <- b
	}))
	defer endpoint.Close()
	bt := boardtest.Start(t, boardtest.Options{})
	dir := greeterDir(t)
	if err := os.WriteFile(filepath.Join(dir, "triggers.json"), []byte(greeterTriggers), 0o644); err != nil {
		t.Fatal(err)
	}
	env := map[string]string{"GREETING_URL": endpoint.URL}
	s := startServe(t, node.Config{Dir: dir, BoardURL: bt.URL, Token: bt.AgentToken("greeter"), Getenv: func(k string) string { return env[k] }})
	hooks := s.out.wait(t, regexp.MustCompile(`^agent greeter: triggers: webhooks on (http://127\.0\.0\.1:\d+)$`), 30*time.Second)[1]
	s.out.wait(t, regexp.MustCompile(`^agent greeter: trigger greet-hook: POST /hooks/greet$`), 30*time.Second)
	if hooks == s.url {
		t.Fatalf("the webhooks are served on the chat's address %s: want their own", hooks)
	}
	s.out.wait(t, regexp.MustCompile(`^agent greeter: linked to `), 60*time.Second)

	resp, err := http.Post(hooks+"/hooks/greet", "application/json", strings.NewReader("name=Ada"))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusBadRequest {
		t.Errorf("a body that is not JSON: %d, want 400", resp.StatusCode)
	}

	resp, err = http.Post(hooks+"/hooks/greet", "application/json", strings.NewReader(`{"name": "Ada"}`))
	if err != nil {
		t.Fatal(err)
	}
	var answer struct {
		RunID string `json:"run_id"`
		State string
	}
	_ = json.NewDecoder(resp.Body).Decode(&answer)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || answer.RunID == "" {
		t.Fatalf("a JSON body: %d %+v, want 200 with the run's id", resp.StatusCode, answer)
	}
	s.out.wait(t, regexp.MustCompile(`^agent greeter: trigger greet-hook: thread trigger-greet-hook-\S+: the run finished$`), 30*time.Second)

	select {
	case b := <-delivered:
		if text, _ := b["text"].(string); text == "" {
			t.Errorf("delivered %v: want the greeting as text", b)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("nothing delivered within 30 s")
	}

	rs := boardv1connect.NewRunServiceClient(bt.Client(bt.OperatorToken("root", identity.RoleAdmin)))
	var run *boardv1.Run
	boardtest.Eventually(t, time.Minute, "the triggered run on the board, its result delivered", func() bool {
		res, err := rs.GetRun(context.Background(), &boardv1.GetRunRequest{Agent: "greeter", Id: answer.RunID})
		run = res.GetRun()
		return err == nil && run.GetState() == boardv1.RunState_RUN_STATE_FINISHED &&
			run.GetTrigger().GetDelivery() == boardv1.DeliveryState_DELIVERY_STATE_DELIVERED && run.GetTrigger().GetDeliveryAttempts() == 1
	})
	if run.GetStartedBy() != "trigger" || run.GetStartedByWho() != "greet-hook" {
		t.Errorf("the run on the board started by %q (%q): want trigger, greet-hook", run.GetStartedBy(), run.GetStartedByWho())
	}
	if tr := run.GetTrigger(); tr.GetTriggerId() != "greet-hook" || tr.GetKind() != boardv1.TriggerKind_TRIGGER_KIND_WEBHOOK ||
		tr.GetMethod() != "POST" || tr.GetPath() != "/hooks/greet" || tr.GetOccurrenceTime() == nil {
		t.Errorf("the run's trigger on the board: %v, want the webhook, its request and when", tr)
	}

	// The board lists the trigger as the agent reported it, its latest
	// occurrence the run, delivered.
	ts := boardv1connect.NewTriggerServiceClient(bt.Client(bt.OperatorToken("root", identity.RoleAdmin)))
	boardtest.Eventually(t, time.Minute, "the trigger on the board, delivered", func() bool {
		res, err := ts.ListTriggers(context.Background(), &boardv1.ListTriggersRequest{Agent: "greeter"})
		if err != nil || len(res.GetTriggers()) != 1 {
			return false
		}
		tr := res.GetTriggers()[0].GetTrigger()
		return tr.GetId() == "greet-hook" && tr.GetPath() == "/hooks/greet" && tr.GetDelivers() && tr.GetLast().GetRunId() == answer.RunID &&
			tr.GetLast().GetOk() && tr.GetLast().GetDelivery() == boardv1.DeliveryState_DELIVERY_STATE_DELIVERED
	})

	// Paused on the board, the webhook starts nothing; resumed, it does.
	if _, err := ts.PauseTrigger(context.Background(), &boardv1.PauseTriggerRequest{Agent: "greeter", TriggerId: "greet-hook", Reason: "noisy"}); err != nil {
		t.Fatal(err)
	}
	boardtest.Eventually(t, time.Minute, "the paused webhook refusing", func() bool {
		resp, err := http.Post(hooks+"/hooks/greet", "application/json", strings.NewReader(`{"name": "Bob"}`))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusServiceUnavailable
	})
	if _, err := ts.ResumeTrigger(context.Background(), &boardv1.ResumeTriggerRequest{Agent: "greeter", TriggerId: "greet-hook"}); err != nil {
		t.Fatal(err)
	}
	boardtest.Eventually(t, time.Minute, "the resumed webhook starting a run", func() bool {
		resp, err := http.Post(hooks+"/hooks/greet", "application/json", strings.NewReader(`{"name": "Cy"}`))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK
	})

	// A paused agent starts nothing from its triggers.
	if err := node.Pause(node.Config{Dir: dir, Reason: "maintenance"}); err != nil {
		t.Fatal(err)
	}
	resp, err = http.Post(hooks+"/hooks/greet", "application/json", strings.NewReader(`{"name": "Di"}`))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusServiceUnavailable {
		t.Errorf("a webhook of a paused agent: %d, want 503", resp.StatusCode)
	}
	n := 0
	for line := range strings.Lines(s.out.String()) {
		if strings.HasPrefix(line, "agent greeter: trigger greet-hook: thread ") {
			n++
		}
	}
	if n != 2 {
		t.Errorf("%d triggered runs: want 2 (the request that was not JSON, and those while paused, started nothing)", n)
	}
}

// TestServeRefusesATriggerFileItCannotRun: a trigger file naming a secret
// that is not set stops the serve before it starts, naming the variable;
// a file with problems is refused naming them.
func TestServeRefusesATriggerFileItCannotRun(t *testing.T) {
	t.Parallel()
	for name, file := range map[string]string{
		"HOOK_SECRET": `{"flow": "flow.json", "triggers": [{"id": "h", "kind": "webhook", "path": "/h", "secret": "HOOK_SECRET", "input": {"who": "{{body.name}}"}}]}`,
		"schedule":    `{"flow": "flow.json", "triggers": [{"id": "s", "kind": "schedule", "schedule": "61 * * * *", "input": {"who": "x"}}]}`,
	} {
		dir := greeterDir(t)
		if err := os.WriteFile(filepath.Join(dir, "triggers.json"), []byte(file), 0o644); err != nil {
			t.Fatal(err)
		}
		err := node.Serve(t.Context(), node.Config{Dir: dir})
		if err == nil || !strings.Contains(err.Error(), name) || !strings.Contains(err.Error(), "triggers") {
			t.Errorf("%s: Serve = %v, want a refusal naming it", name, err)
		}
	}
}
