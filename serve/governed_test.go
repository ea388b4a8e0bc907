package serve_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"testing"

	"github.com/symphonix/symphonix/governed"
	"github.com/symphonix/symphonix/serve"
)

// newGovernedServer serves the package's refund desk with approvals that
// know whether a board is configured. Use is never called: with monitored
// set, the board is configured but cannot be reached.
func newGovernedServer(t *testing.T, monitored bool) *httptest.Server {
	t.Helper()
	gov, err := governed.New(governed.Config{Graph: desk.agent.Graph, Holding: desk.agent.Holding(), Monitored: monitored})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(gov.Close)
	s, err := serve.New(t.Context(), serve.Config{
		Agent:         desk.agent,
		Approvals:     gov,
		Conversations: filepath.Join(t.TempDir(), "conversations.json"),
	})
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(s)
	t.Cleanup(ts.Close)
	return ts
}

// getThread is GET /api/threads/{thread}, which must succeed.
func getThread(t *testing.T, ts *httptest.Server, thread string) serve.Thread {
	t.Helper()
	status, b := do(t, ts, http.MethodGet, "/api/threads/"+thread, "")
	var th serve.Thread
	if err := json.Unmarshal(b, &th); status != http.StatusOK || err != nil {
		t.Fatalf("GET thread = %d %s (%v), want 200", status, b, err)
	}
	return th
}

// TestBoardDecides: with a board configured and unreachable, the refund's
// approval is the organisation's: the turn and the thread say so, and an
// answer in the chat is refused with 409 on answer while the run waits on.
func TestBoardDecides(t *testing.T) {
	t.Parallel()
	ts := newGovernedServer(t, true)
	thread := threadName(t)
	t.Cleanup(func() {
		// The shared waiting store keeps neither the run nor its note.
		ctx := context.WithoutCancel(t.Context())
		if _, err := desk.agent.Graph.Resume(ctx, thread, "no"); err != nil {
			t.Errorf("ending the run left waiting: %v", err)
		}
		if err := desk.agent.Holding().Forget(ctx, thread); err != nil {
			t.Errorf("forgetting its holding note: %v", err)
		}
	})

	first := turn(t, ts, "/api/threads/"+thread+"/messages", message("A-1002"))
	if first.Pending == nil || first.Pending.Node != "pay" {
		t.Fatalf("message = %+v, want the approval at pay", first)
	}
	if d := first.Decides; d == nil || d.Who != governed.Organisation || d.Why == "" {
		t.Fatalf("message decides = %+v, want who %q with a why", d, governed.Organisation)
	}

	th := getThread(t, ts, thread)
	if d := th.Decides; !th.Waiting || th.Pending == nil || th.Pending.Digest != first.Pending.Digest ||
		d == nil || d.Who != governed.Organisation || d.Why == "" {
		t.Errorf("GET thread = %+v decides %+v, want it waiting at %s, decided by %q with a why",
			th, th.Decides, first.Pending.Digest, governed.Organisation)
	}

	status, b := do(t, ts, http.MethodPost, "/api/threads/"+thread+"/answer", `{"answer": "yes"}`)
	var e struct{ Error, Field string }
	if err := json.Unmarshal(b, &e); err != nil || status != http.StatusConflict || e.Field != "answer" || e.Error == "" {
		t.Errorf("answer yes in the chat = %d %s (%v), want 409 with an error on answer", status, b, err)
	}

	after := getThread(t, ts, thread)
	if !after.Waiting || after.Pending == nil || after.Pending.Digest != first.Pending.Digest ||
		after.Decides == nil || after.Decides.Who != governed.Organisation {
		t.Errorf("GET thread after the refused answer = %+v decides %+v, want it still waiting for the board", after, after.Decides)
	}
}

// TestChatDecides: with no board configured, the chat decides the
// approval, and its answer runs the flow on.
func TestChatDecides(t *testing.T) {
	t.Parallel()
	ts := newGovernedServer(t, false)
	thread := threadName(t)

	first := turn(t, ts, "/api/threads/"+thread+"/messages", message("A-1002"))
	if first.Pending == nil || first.Pending.Node != "pay" {
		t.Fatalf("message = %+v, want the approval at pay", first)
	}
	if d := first.Decides; d == nil || d.Who != governed.Chat {
		t.Fatalf("message decides = %+v, want who %q", d, governed.Chat)
	}
	if d := getThread(t, ts, thread).Decides; d == nil || d.Who != governed.Chat {
		t.Errorf("GET thread decides = %+v, want who %q", d, governed.Chat)
	}

	done := turn(t, ts, "/api/threads/"+thread+"/answer", `{"answer": "no"}`)
	if _, refunded := done.State["refund"]; refunded || done.Pending != nil || done.Decides != nil || done.Reply == "" {
		t.Errorf("answer no = %+v, want a reply, no refund, and nothing left to decide", done)
	}
	if th := getThread(t, ts, thread); th.Waiting || th.Decides != nil {
		t.Errorf("GET thread after the answer = %+v, want nothing waiting", th)
	}
}
