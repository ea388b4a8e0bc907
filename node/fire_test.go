package node_test

import (
	"regexp"
	"slices"
	"testing"
	"time"

	"google.golang.org/protobuf/types/known/structpb"

	boardv1 "github.com/symphonix/symphonix/api/symphonix/board/v1"
	"github.com/symphonix/symphonix/api/symphonix/board/v1/boardv1connect"
	"github.com/symphonix/symphonix/identity"
	"github.com/symphonix/symphonix/internal/boardtest"
	"github.com/symphonix/symphonix/journal"
	"github.com/symphonix/symphonix/node"
)

// TestStopRunAtTheNextStepBoundary: StopRun of a run fired from the board
// while its second step's tool call is in flight lets that call finish —
// it is in the journal with its result — and ends the run there: stopped
// on the board, the third step never taken. Both are in the audit log.
func TestStopRunAtTheNextStepBoundary(t *testing.T) {
	t.Parallel()
	bt := boardtest.Start(t, boardtest.Options{})
	dir, h := newHoldDesk(t)
	switchOn(t, bt, dir, "hold.note", "hold.wait")
	s := startServe(t, node.Config{Dir: dir, BoardURL: bt.URL, Token: bt.AgentToken("holder"), JournalDetail: journal.DetailFull})
	s.out.wait(t, regexp.MustCompile(`^agent holder: tools: the board switched on 2: `), 60*time.Second)
	admin := bt.Client(bt.OperatorToken("root", identity.RoleAdmin))
	rs := boardv1connect.NewRunServiceClient(admin)

	in, _ := structpb.NewStruct(map[string]any{"topic": "stop me"})
	var started *boardv1.StartRunResponse
	boardtest.Eventually(t, time.Minute, "StartRun taken by the holder", func() bool {
		res, err := rs.StartRun(t.Context(), &boardv1.StartRunRequest{Agent: "holder", Input: in})
		started = res
		return err == nil
	})
	call := h.entered(t) // the wait tool's call is in flight
	if _, err := rs.StopRun(t.Context(), &boardv1.StopRunRequest{Agent: "holder", Id: started.GetRunId(), Reason: "enough"}); err != nil {
		t.Fatalf("StopRun while the tool call is in flight: %v", err)
	}
	if _, err := call.Write([]byte("go-ahead-7731\n")); err != nil {
		t.Fatal(err)
	}

	var run *boardv1.Run
	boardtest.Eventually(t, time.Minute, "the run stopped, on the board", func() bool {
		res, err := rs.GetRun(t.Context(), &boardv1.GetRunRequest{Agent: "holder", Id: started.GetRunId()})
		run = res.GetRun()
		return err == nil && run.GetState() == boardv1.RunState_RUN_STATE_STOPPED
	})
	var nodes []string
	for _, st := range run.GetSteps() {
		nodes = append(nodes, st.GetNode()+" "+st.GetOutcome().String())
	}
	if want := []string{"first STEP_OUTCOME_OK", "wait STEP_OUTCOME_OK"}; !slices.Equal(nodes, want) {
		t.Errorf("the stopped run's steps = %v; want %v: the call in flight finished, and nothing after it ran", nodes, want)
	}
	if run.GetStartedBy() != "board" || run.GetThread() != started.GetThread() {
		t.Errorf("the stopped run = %v; want it started by the board on %q", run, started.GetThread())
	}

	// The journal has the call in flight, with its result, and no call
	// after it.
	entries, err := journal.Read(journal.Path(dir), 0, journal.KindTool)
	if err != nil {
		t.Fatal(err)
	}
	var calls []string
	var held journal.Entry
	for _, e := range entries {
		if e.Run != started.GetRunId() {
			continue
		}
		calls = append(calls, e.Name)
		if e.Name == "hold.wait" {
			held = e
		}
	}
	if want := []string{"hold.wait", "hold.note"}; !slices.Equal(calls, want) { // newest first
		t.Errorf("the run's tool calls in the journal, newest first = %v; want %v", calls, want)
	}
	if r, _ := held.Result.(map[string]any); !held.OK || r["released"] != "go-ahead-7731" {
		t.Errorf("the journal's wait call = %+v; want it ok, with the go-ahead as its result", held)
	}

	// Both are in the audit log, by the operator, naming the run.
	res, err := boardv1connect.NewAuditServiceClient(admin).ListAudit(t.Context(), &boardv1.ListAuditRequest{PageSize: 1000})
	if err != nil {
		t.Fatal(err)
	}
	audited := map[string]bool{}
	for _, e := range res.GetEntries() {
		d := e.GetDetail().AsMap()
		if (e.GetAction() == "run.start" || e.GetAction() == "run.stop") && e.GetActor() != "" &&
			d["agent"] == "holder" && d["run"] == started.GetRunId() && d["refused"] == nil {
			audited[e.GetAction()] = true
		}
	}
	if !audited["run.start"] || !audited["run.stop"] {
		t.Errorf("the audit log = %v; want run.start and run.stop of run %s", res.GetEntries(), started.GetRunId())
	}
}
