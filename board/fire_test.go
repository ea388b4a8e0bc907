package board_test

import (
	"strings"
	"testing"
	"time"

	"connectrpc.com/connect/v2"
	"google.golang.org/protobuf/types/known/structpb"

	boardv1 "github.com/symphonix/symphonix/api/symphonix/board/v1"
	"github.com/symphonix/symphonix/board"
	"github.com/symphonix/symphonix/identity"
	"github.com/symphonix/symphonix/internal/boardtest"
)

// fireResult is what a StartRun or StopRun called in the background came
// to.
type fireResult struct {
	start *boardv1.StartRunResponse
	err   error
}

// TestStartRun: StartRun checks the agent and the input before anything
// is sent, sends a Fire with the operator's name, and gives back the
// agent's Fired, or its Error with its code and words; it is audited as
// run.start without the input's values.
func TestStartRun(t *testing.T) {
	t.Parallel()
	bt := boardtest.Start(t, boardtest.Options{})
	admin := runsClient(bt, bt.OperatorToken("root", identity.RoleAdmin))
	inputs := []*boardv1.FlowInput{{Name: "order_id", Type: "string"}, {Name: "amount", Type: "number"}, {Name: "any"}}
	l, _ := openLinkWith(t, bt, &boardv1.Hello{Name: "desk", Protocol: board.Protocol, Capabilities: []string{"fire", "runs", "pause"}, Inputs: inputs})
	runsLink(t, bt, "deaf", "runs")
	left := runsLink(t, bt, "left", "fire")
	if err := left.s.CloseSend(); err != nil {
		t.Fatal(err)
	}
	boardtest.Eventually(t, 30*time.Second, "left offline", func() bool {
		return getAgent(t, bt.Agents(bt.OperatorToken("vic", identity.RoleViewer)), "left").GetState() == boardv1.AgentState_AGENT_STATE_OFFLINE
	})

	input := func(m map[string]any) *structpb.Struct {
		s, err := structpb.NewStruct(m)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	for name, tc := range map[string]struct {
		req  *boardv1.StartRunRequest
		code connect.Code
		says string
	}{
		"an input not declared": {&boardv1.StartRunRequest{Agent: "desk", Input: input(map[string]any{"nope": 1})}, connect.CodeInvalidArgument, "input.nope:"},
		"a wrong type":          {&boardv1.StartRunRequest{Agent: "desk", Input: input(map[string]any{"amount": "ten"})}, connect.CodeInvalidArgument, "input.amount: want a number"},
		"input too large":       {&boardv1.StartRunRequest{Agent: "desk", Input: input(map[string]any{"any": strings.Repeat("x", 65<<10)})}, connect.CodeInvalidArgument, "input:"},
		"a thread too long":     {&boardv1.StartRunRequest{Agent: "desk", Thread: strings.Repeat("t", 129)}, connect.CodeInvalidArgument, "thread:"},
		"no fire":               {&boardv1.StartRunRequest{Agent: "deaf"}, connect.CodeFailedPrecondition, "fire capability"},
		"never seen":            {&boardv1.StartRunRequest{Agent: "gone"}, connect.CodeNotFound, "not found"},
		"not linked":            {&boardv1.StartRunRequest{Agent: "left"}, connect.CodeFailedPrecondition, "not linked"},
	} {
		_, err := admin.StartRun(t.Context(), tc.req)
		if connect.CodeOf(err) != tc.code || !strings.Contains(err.Error(), tc.says) {
			t.Errorf("%s: %v, want %s saying %q", name, err, tc.code, tc.says)
		}
	}
	viewer := runsClient(bt, bt.OperatorToken("vic", identity.RoleViewer))
	if _, err := viewer.StartRun(t.Context(), &boardv1.StartRunRequest{Agent: "desk"}); connect.CodeOf(err) != connect.CodePermissionDenied {
		t.Errorf("a viewer's StartRun: %v, want permission_denied", err)
	}

	start := func(req *boardv1.StartRunRequest) <-chan fireResult {
		ch := make(chan fireResult, 1)
		go func() {
			res, err := admin.StartRun(t.Context(), req)
			ch <- fireResult{res, err}
		}()
		return ch
	}
	done := start(&boardv1.StartRunRequest{Agent: "desk", Thread: "t-1", Input: input(map[string]any{"order_id": "A-secret-17", "amount": 12})})
	fire := l.next().GetFire()
	if fire == nil || fire.GetBy() != "root" || fire.GetThread() != "t-1" || fire.GetInput().GetFields()["order_id"].GetStringValue() != "A-secret-17" || fire.GetRequestId() == "" {
		t.Fatalf("the agent got %v, want a fire by root on t-1 with the input", fire)
	}
	l.send(&boardv1.LinkRequest{Kind: &boardv1.LinkRequest_Fired{Fired: &boardv1.Fired{RequestId: fire.GetRequestId(), RunId: "run-9", Thread: "t-1"}}})
	if r := <-done; r.err != nil || r.start.GetRunId() != "run-9" || r.start.GetThread() != "t-1" {
		t.Fatalf("StartRun: %v %v, want run-9 on t-1", r.start, r.err)
	}

	// The agent refuses: its code and words.
	done = start(&boardv1.StartRunRequest{Agent: "desk", Input: input(map[string]any{"amount": 3})})
	fire = l.next().GetFire()
	l.send(&boardv1.LinkRequest{Kind: &boardv1.LinkRequest_Error{Error: &boardv1.LinkError{RequestId: fire.GetRequestId(),
		Code: boardv1.LinkErrorCode_LINK_ERROR_CODE_INVALID_ARGUMENT, Message: "input.amount: must be 5 or more"}}})
	if r := <-done; connect.CodeOf(r.err) != connect.CodeInvalidArgument || !strings.Contains(r.err.Error(), "input.amount: must be 5 or more") {
		t.Errorf("an agent's refusal: %v, want invalid_argument with its words", r.err)
	}
	// Words that are not plain text are not passed on.
	done = start(&boardv1.StartRunRequest{Agent: "desk"})
	fire = l.next().GetFire()
	l.send(&boardv1.LinkRequest{Kind: &boardv1.LinkRequest_Error{Error: &boardv1.LinkError{RequestId: fire.GetRequestId(),
		Code: boardv1.LinkErrorCode_LINK_ERROR_CODE_FAILED_PRECONDITION, Message: "bad\x1b[31m"}}})
	if r := <-done; connect.CodeOf(r.err) != connect.CodeFailedPrecondition || strings.Contains(r.err.Error(), "\x1b") {
		t.Errorf("an agent's refusal with control characters: %v, want failed_precondition without them", r.err)
	}

	// Audited without the input's values.
	entries := auditEntries(t, bt, "run.start")
	if len(entries) < 3 {
		t.Fatalf("%d run.start entries, want at least 3", len(entries))
	}
	var fired bool
	for _, e := range entries {
		if strings.Contains(string(e.Detail), "A-secret-17") {
			t.Errorf("audit entry %s holds an input's value", e.Detail)
		}
		if e.Actor == "root" && strings.Contains(string(e.Detail), `"run":"run-9"`) && strings.Contains(string(e.Detail), `"thread":"t-1"`) {
			fired = true
		}
	}
	if !fired {
		t.Errorf("no run.start entry by root naming run-9 on t-1 in %d entries", len(entries))
	}

	// Paused: refused before anything is sent.
	if _, err := bt.Agents(bt.OperatorToken("root", identity.RoleAdmin)).PauseAgent(t.Context(), &boardv1.PauseAgentRequest{Name: "desk", Reason: "maintenance"}); err != nil {
		t.Fatal(err)
	}
	if m := l.next(); m.GetPause() == nil {
		t.Fatalf("after PauseAgent the agent got %v, want the pause", m)
	}
	if _, err := admin.StartRun(t.Context(), &boardv1.StartRunRequest{Agent: "desk"}); connect.CodeOf(err) != connect.CodeFailedPrecondition || !strings.Contains(err.Error(), "paused") {
		t.Errorf("StartRun on a paused agent: %v, want failed_precondition saying paused", err)
	}
}

// TestStartRunUnanswered: an agent that does not answer a fire within
// 10 s is deadline_exceeded.
func TestStartRunUnanswered(t *testing.T) {
	if testing.Short() {
		t.Skip("waits 10 s for an agent that never answers")
	}
	t.Parallel()
	bt := boardtest.Start(t, boardtest.Options{})
	runsLink(t, bt, "mute", "fire")
	start := time.Now()
	_, err := runsClient(bt, bt.OperatorToken("root", identity.RoleAdmin)).StartRun(t.Context(), &boardv1.StartRunRequest{Agent: "mute"})
	if connect.CodeOf(err) != connect.CodeDeadlineExceeded || time.Since(start) < 10*time.Second {
		t.Errorf("an agent that never answers: %v after %s, want deadline_exceeded after 10 s", err, time.Since(start))
	}
}

// TestStopRun: StopRun refuses a run that has ended; sends a Stop to the
// agent running one and gives back its Stopped, or failed_precondition
// when the agent says it is not running it; asks the agent about a run the
// board has not heard of, not_found when the agent does not know it either
// or cannot be asked; audited as run.stop.
func TestStopRun(t *testing.T) {
	t.Parallel()
	bt := boardtest.Start(t, boardtest.Options{})
	admin := runsClient(bt, bt.OperatorToken("root", identity.RoleAdmin))
	l := runsLink(t, bt, "desk", "fire", "runs", "live-runs")
	l.stored(endedRun("over", 1), 2, 0)
	l.send(startOf("live", 1, "t-9"))
	l.ping(1)

	if _, err := admin.StopRun(t.Context(), &boardv1.StopRunRequest{Agent: "desk", Id: "over"}); connect.CodeOf(err) != connect.CodeFailedPrecondition {
		t.Errorf("StopRun of an ended run: %v, want failed_precondition", err)
	}
	stopOf := func(id string) <-chan error {
		ch := make(chan error, 1)
		go func() {
			_, err := admin.StopRun(t.Context(), &boardv1.StopRunRequest{Agent: "desk", Id: id, Reason: "wrong order"})
			ch <- err
		}()
		return ch
	}
	stop := func() <-chan error { return stopOf("live") }
	// A run the board has not heard of is asked after: a fired one that has
	// not begun is the agent's to stop; one it does not know either is
	// not_found.
	done := stopOf("never")
	st := l.next().GetStop()
	if st.GetRunId() != "never" {
		t.Fatalf("the agent got %v, want a stop of never", st)
	}
	l.send(&boardv1.LinkRequest{Kind: &boardv1.LinkRequest_Error{Error: &boardv1.LinkError{RequestId: st.GetRequestId(),
		Code: boardv1.LinkErrorCode_LINK_ERROR_CODE_NOT_FOUND, Message: "no such run"}}})
	if err := <-done; connect.CodeOf(err) != connect.CodeNotFound {
		t.Errorf("StopRun of a run nobody knows: %v, want not_found", err)
	}
	done = stopOf("not-begun")
	st = l.next().GetStop()
	l.send(&boardv1.LinkRequest{Kind: &boardv1.LinkRequest_Stopped{Stopped: &boardv1.Stopped{RequestId: st.GetRequestId()}}})
	if err := <-done; err != nil {
		t.Errorf("StopRun of a run only the agent knows: %v, want it stopped", err)
	}
	if _, err := admin.StopRun(t.Context(), &boardv1.StopRunRequest{Agent: "nobody", Id: "never"}); connect.CodeOf(err) != connect.CodeNotFound {
		t.Errorf("StopRun of no run of an agent not linked: %v, want not_found", err)
	}
	done = stop()
	st = l.next().GetStop()
	if st == nil || st.GetRunId() != "live" || st.GetReason() != "wrong order" || st.GetBy() != "root" {
		t.Fatalf("the agent got %v, want a stop of live by root", st)
	}
	l.send(&boardv1.LinkRequest{Kind: &boardv1.LinkRequest_Stopped{Stopped: &boardv1.Stopped{RequestId: st.GetRequestId()}}})
	if err := <-done; err != nil {
		t.Fatalf("StopRun: %v", err)
	}
	done = stop()
	st = l.next().GetStop()
	l.send(&boardv1.LinkRequest{Kind: &boardv1.LinkRequest_Error{Error: &boardv1.LinkError{RequestId: st.GetRequestId(),
		Code: boardv1.LinkErrorCode_LINK_ERROR_CODE_NOT_FOUND, Message: "no such run"}}})
	if err := <-done; connect.CodeOf(err) != connect.CodeFailedPrecondition || !strings.Contains(err.Error(), "not running it") {
		t.Errorf("the agent not running it: %v, want failed_precondition saying so", err)
	}
	entries := auditEntries(t, bt, "run.stop")
	if len(entries) != 4 || !strings.Contains(string(entries[2].Detail), `"run":"live"`) || !strings.Contains(string(entries[2].Detail), `"thread":"t-9"`) ||
		!strings.Contains(string(entries[0].Detail), `"refused":"not_found"`) {
		t.Errorf("run.stop entries %v, want 4: never refused not_found, not-begun, then live on t-9 twice", entries)
	}
}

// TestStartRunRate: one token starts at most 60 runs a minute, refused or
// not; the next is resource_exhausted, and another token is not held.
func TestStartRunRate(t *testing.T) {
	t.Parallel()
	// The minute never passes; the board's clock is ahead of the wall's, so
	// that the tokens minted by the wall's are valid already.
	now := time.Now().Add(time.Minute)
	bt := boardtest.Start(t, boardtest.Options{Now: func() time.Time { return now }})
	runsLink(t, bt, "deaf", "runs")
	admin := runsClient(bt, bt.OperatorToken("root", identity.RoleAdmin))
	other := runsClient(bt, bt.OperatorToken("ann", identity.RoleAdmin))
	for i := range 60 {
		if _, err := admin.StartRun(t.Context(), &boardv1.StartRunRequest{Agent: "deaf"}); connect.CodeOf(err) != connect.CodeFailedPrecondition {
			t.Fatalf("start %d: %v, want failed_precondition (no fire)", i+1, err)
		}
	}
	if _, err := admin.StartRun(t.Context(), &boardv1.StartRunRequest{Agent: "deaf"}); connect.CodeOf(err) != connect.CodeResourceExhausted ||
		!strings.Contains(err.Error(), "60 a minute") {
		t.Errorf("the 61st start in a minute: %v, want resource_exhausted naming the limit", err)
	}
	if _, err := other.StartRun(t.Context(), &boardv1.StartRunRequest{Agent: "deaf"}); connect.CodeOf(err) != connect.CodeFailedPrecondition {
		t.Errorf("another token's start: %v, want failed_precondition, not held to the first's rate", err)
	}
}
