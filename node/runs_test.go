package node_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/types/known/structpb"

	boardv1 "github.com/symphonix/symphonix/api/symphonix/board/v1"
	"github.com/symphonix/symphonix/api/symphonix/board/v1/boardv1connect"
	entrun "github.com/symphonix/symphonix/ent/run"
	"github.com/symphonix/symphonix/governed"
	"github.com/symphonix/symphonix/identity"
	"github.com/symphonix/symphonix/internal/boardtest"
	"github.com/symphonix/symphonix/internal/exampletest"
	"github.com/symphonix/symphonix/journal"
	"github.com/symphonix/symphonix/node"
	"github.com/symphonix/symphonix/runs"
)

// wire forwards TCP connections to a board and keeps every byte the
// agents send it.
type wire struct {
	mu   sync.Mutex
	sent bytes.Buffer
	url  string
}

func newWire(t *testing.T, boardURL string) *wire {
	t.Helper()
	u, err := url.Parse(boardURL)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	w := &wire{url: "http://" + ln.Addr().String()}
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			b, err := net.Dial("tcp", u.Host)
			if err != nil {
				c.Close()
				continue
			}
			t.Cleanup(func() { c.Close(); b.Close() })
			go func() { _, _ = io.Copy(c, b); c.Close() }()
			go func() { _, _ = io.Copy(io.MultiWriter(b, w), c); b.Close() }()
		}
	}()
	return w
}

func (w *wire) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.sent.Write(p)
}

func (w *wire) holds(s string) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return bytes.Contains(w.sent.Bytes(), []byte(s))
}

// The values a run of the refund desk is given, hands its tools and gets
// back, none of which may leave the agent without full detail.
const (
	// runMarker is in what the customer writes: the run's input.
	runMarker = "PLUM-TOKEN-4711"
	// reasonMarker is the model's reason to refund, which the refund
	// tool is given as its argument (and the approval's account).
	reasonMarker = "QUINCE-REASON-2718"
	// replyMarker is the model's reply to the customer: the run's output.
	replyMarker = "DAMSON-REPLY-1618"
	// customer is what the order lookup tool gives back.
	customer = "Ada Lovelace"
)

// deskProvider is an OpenAI-compatible chat-completions server for the
// refund desk: its decide node is told to refund, for reasonMarker; every
// other prompt is answered with replyMarker.
func deskProvider(t *testing.T) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			Messages []struct{ Content string }
		}
		if r.URL.Path != "/v1/chat/completions" || json.NewDecoder(r.Body).Decode(&req) != nil || len(req.Messages) == 0 {
			http.Error(w, "not a chat completion", http.StatusBadRequest)
			return
		}
		content := "Your refund is on its way. " + replyMarker
		if strings.Contains(req.Messages[len(req.Messages)-1].Content, "Decide whether to refund") {
			content = `{"action": "refund", "reason": "The mug arrived broken: ` + reasonMarker + `."}`
		}
		reply, _ := json.Marshal(content)
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"id": "c1", "object": "chat.completion", "model": "gpt-test",
		  "choices": [{"index": 0, "message": {"role": "assistant", "content": %s}, "finish_reason": "stop"}],
		  "usage": {"prompt_tokens": 40, "completion_tokens": 12, "total_tokens": 52}}`, reply)
	}))
	t.Cleanup(srv.Close)
	return srv
}

// storeBytes is every byte of the board's SQLite store in dir: the
// database, its write-ahead log and its shared memory.
func storeBytes(t *testing.T, dir string) []byte {
	t.Helper()
	var all []byte
	for _, name := range []string{"board.db", "board.db-wal", "board.db-shm"} {
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			t.Fatal(err)
		}
		all = append(all, b...)
	}
	if len(all) == 0 {
		t.Fatalf("no store in %s", dir)
	}
	return all
}

// TestRunsWithoutPayloads: a served desk linked to a real board, its model
// an OpenAI-compatible server of the test's, reports its run — paused at a
// card, then finished — over the link, and not one byte of what the run
// was given (the customer's words), what its tools were given (the model's
// reason to refund) and gave back (the customer's name), nor what the model
// replied, crosses it, lands in the board's store (its SQLite files) or in
// what the board says of the run, nor in the outbox in the folder. With
// MONITOR_DETAIL=full the customer's words cross, are stored and shown.
func TestRunsWithoutPayloads(t *testing.T) {
	t.Parallel()
	provider := deskProvider(t)
	for _, full := range []bool{false, true} {
		name := "metadata"
		if full {
			name = "full"
		}
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			bt := boardtest.Start(t, boardtest.Options{})
			w := newWire(t, bt.URL)
			dir := deskDir(t)
			switchOn(t, bt, dir, "orders.lookup_order", "orders.refund")
			env := map[string]string{"OPENAI_API_KEY": "sk-test-runs-0123456789", "OPENAI_BASE_URL": provider.URL + "/v1"}
			if full {
				env[runs.EnvDetail] = "full"
			}
			s := startServe(t, node.Config{Dir: dir, BoardURL: w.url, Token: bt.AgentToken("refund-desk"),
				Getenv: func(k string) string { return env[k] }, JournalDetail: journal.DetailFull})
			s.out.wait(t, regexp.MustCompile(`^agent refund-desk: tools: the board switched on 2: `), 60*time.Second)
			s.out.wait(t, regexp.MustCompile(`^runs: reported to the board `), time.Second)
			s.out.wait(t, regexp.MustCompile(`^model: gpt-4o-mini at http://127\.0\.0\.1:\d+/v1$`), time.Second)

			body := `{"input": {"order_id": "A-1001", "request": "The mug arrived broken (` + runMarker + `); I want my money back."}}`
			var first turn
			if status := call(t, "POST", s.url+"/api/threads/runs-1/messages", body, &first); status != 200 ||
				first.Pending == nil || first.Decides == nil || first.Decides.Who != governed.Chat {
				t.Fatalf("message = %d %+v; want the refund's card", status, first)
			}
			var done turn
			if status := call(t, "POST", s.url+"/api/threads/runs-1/answer", `{"answer": "yes"}`, &done); status != 200 || done.Pending != nil {
				t.Fatalf("answer = %d %+v; want the run finished", status, done)
			}
			// The run really had every value: the tools were given the
			// model's reason, and the customer read its reply.
			if !strings.Contains(done.Reply, replyMarker) {
				t.Fatalf("the reply = %q; want the model's", done.Reply)
			}
			// (the journal, kept in full here, says so).
			calls, err := journal.Read(journal.Path(dir), 0, journal.KindTool)
			if err != nil {
				t.Fatal(err)
			}
			if j := fmt.Sprint(calls); !strings.Contains(j, reasonMarker) || !strings.Contains(j, customer) {
				t.Fatalf("the journal's tool calls = %s; want the model's reason in the refund's arguments, the customer in the lookup's result", j)
			}

			// The board has stored the finished run.
			rs := boardv1connect.NewRunServiceClient(bt.Client(bt.OperatorToken("ops", identity.RoleViewer)))
			var run *boardv1.Run
			boardtest.Eventually(t, time.Minute, "the finished run, stored by the board", func() bool {
				res, err := rs.ListRuns(t.Context(), &boardv1.ListRunsRequest{Agent: "refund-desk"})
				if err != nil || len(res.GetRuns()) != 1 || res.GetRuns()[0].GetState() != boardv1.RunState_RUN_STATE_FINISHED {
					return false
				}
				got, err := rs.GetRun(t.Context(), &boardv1.GetRunRequest{Agent: "refund-desk", Id: res.GetRuns()[0].GetId()})
				run = got.GetRun()
				return err == nil
			})
			boardtest.Eventually(t, time.Minute, "the outbox emptied", func() bool {
				box, err := runs.OpenOutbox(runs.OutboxPath(dir))
				return err == nil && box.Len() == 0
			})
			shown, err := protojson.Marshal(run)
			if err != nil {
				t.Fatal(err)
			}
			stored := storeBytes(t, bt.Dir)
			if full {
				if !w.holds(runMarker) || !bytes.Contains(stored, []byte(runMarker)) || !strings.Contains(fmt.Sprint(run.GetInput().AsMap()), runMarker) {
					t.Errorf("with full detail, the customer's words: on the wire %v, in the store %v, in GetRun %s; want all three",
						w.holds(runMarker), bytes.Contains(stored, []byte(runMarker)), shown)
				}
				return
			}
			if slices.Compare(run.GetWithheld(), []string{"input", "output"}) != 0 || run.GetInput() != nil || run.GetOutput() != nil || len(run.GetSteps()) != 5 {
				t.Errorf("GetRun = %s; want its 5 steps (the pause and the resumption of pay among them), without its input and output, withheld named", shown)
			}
			// The order id is in the hello (the input's description names
			// one), so it cannot stand for the input.
			for _, v := range []string{runMarker, "money back", reasonMarker, customer, replyMarker} {
				if w.holds(v) {
					w.mu.Lock()
					b := w.sent.Bytes()
					i := bytes.Index(b, []byte(v))
					t.Errorf("the board was sent %q: %q", v, b[max(0, i-300):min(len(b), i+100)])
					w.mu.Unlock()
				}
				if i := bytes.Index(stored, []byte(v)); i >= 0 {
					t.Errorf("the board's store holds %q: %q", v, stored[max(0, i-200):min(len(stored), i+100)])
				}
				if bytes.Contains(shown, []byte(v)) {
					t.Errorf("GetRun shows %q: %s", v, shown)
				}
			}
			data, err := os.ReadFile(runs.OutboxPath(dir))
			if err != nil {
				t.Fatal(err)
			}
			for _, v := range []string{runMarker, reasonMarker, customer, replyMarker} {
				if strings.Contains(string(data), v) {
					t.Errorf("the outbox holds %q", v)
				}
			}
		})
	}
}

// TestServeRefusesABadDetail: MONITOR_DETAIL other than full or unset
// stops the agent before it serves, naming the variable.
func TestServeRefusesABadDetail(t *testing.T) {
	t.Parallel()
	dir := deskDir(t)
	err := node.Serve(t.Context(), node.Config{Dir: dir, BoardURL: "http://127.0.0.1:1", Token: "t",
		Getenv: func(k string) string {
			if k == runs.EnvDetail {
				return "everything"
			}
			return ""
		}})
	if err == nil || !strings.Contains(err.Error(), "MONITOR_DETAIL") {
		t.Errorf("Serve with MONITOR_DETAIL=everything = %v; want an error naming MONITOR_DETAIL", err)
	}
}

// TestRunAtATerminalIsRecorded: `agent run` linked to a board records its
// run as started by the command line, and before it exits the board has
// stored it: the outbox is empty, and the board holds one finished run.
func TestRunAtATerminalIsRecorded(t *testing.T) {
	t.Parallel()
	bt := boardtest.Start(t, boardtest.Options{})
	dir := deskDir(t)
	switchOn(t, bt, dir, "orders.lookup_order", "orders.refund")
	err := node.Run(t.Context(), node.Config{Dir: dir, BoardURL: bt.URL, Token: bt.AgentToken("refund-desk"),
		Input: map[string]string{"order_id": "A-1001", "request": "broken"}, Stdin: strings.NewReader("yes\n")})
	if err != nil {
		t.Fatal(err)
	}
	box, err := runs.OpenOutbox(runs.OutboxPath(dir))
	if err != nil {
		t.Fatal(err)
	}
	if box.Len() != 0 {
		t.Errorf("the outbox holds %d summaries after the run exited; want the board to have stored them", box.Len())
	}
	rs := boardv1connect.NewRunServiceClient(bt.Client(bt.OperatorToken("ops", identity.RoleViewer)))
	res, err := rs.ListRuns(t.Context(), &boardv1.ListRunsRequest{Agent: "refund-desk"})
	if err != nil {
		t.Fatal(err)
	}
	if rl := res.GetRuns(); len(rl) != 1 || rl[0].GetStartedBy() != "cli" || rl[0].GetStartedByWho() == "" ||
		rl[0].GetState() != boardv1.RunState_RUN_STATE_FINISHED || rl[0].GetThread() != "terminal" || rl[0].GetInput() != nil {
		t.Errorf("the board's runs = %v; want one, finished on thread terminal, started by cli and its user, without its input", rl)
	}
}

// TestFireAndStopFromTheBoard: an admin's StartRun runs on the served
// desk and shows on the board as started by the board and the operator;
// StopRun ends it while it waits at its card, and the board holds it
// stopped.
func TestFireAndStopFromTheBoard(t *testing.T) {
	t.Parallel()
	bt := boardtest.Start(t, boardtest.Options{})
	dir := deskDir(t)
	switchOn(t, bt, dir, "orders.lookup_order", "orders.refund")
	s := startServe(t, node.Config{Dir: dir, BoardURL: bt.URL, Token: bt.AgentToken("refund-desk")})
	s.out.wait(t, regexp.MustCompile(`^agent refund-desk: tools: the board switched on 2: `), 60*time.Second)
	rs := boardv1connect.NewRunServiceClient(bt.Client(bt.OperatorToken("root", identity.RoleAdmin)))
	in, _ := structpb.NewStruct(map[string]any{"order_id": "A-1001", "request": "broken"})
	var started *boardv1.StartRunResponse
	boardtest.Eventually(t, time.Minute, "StartRun taken by the desk", func() bool {
		res, err := rs.StartRun(t.Context(), &boardv1.StartRunRequest{Agent: "refund-desk", Input: in})
		started = res
		return err == nil
	})
	var run *boardv1.Run
	boardtest.Eventually(t, time.Minute, "the fired run paused at its card, on the board", func() bool {
		res, err := rs.GetRun(t.Context(), &boardv1.GetRunRequest{Agent: "refund-desk", Id: started.GetRunId()})
		run = res.GetRun()
		return err == nil && run.GetState() == boardv1.RunState_RUN_STATE_PAUSED
	})
	if run.GetStartedBy() != "board" || run.GetStartedByWho() == "" || run.GetThread() != started.GetThread() || run.GetPause() != boardv1.PauseKind_PAUSE_KIND_APPROVAL {
		t.Errorf("the fired run = %v; want it started by the board and its operator, on %q, waiting at an approval", run, started.GetThread())
	}
	if _, err := rs.StopRun(t.Context(), &boardv1.StopRunRequest{Agent: "refund-desk", Id: started.GetRunId(), Reason: "not today"}); err != nil {
		t.Fatalf("StopRun: %v", err)
	}
	boardtest.Eventually(t, time.Minute, "the stopped run on the board", func() bool {
		res, err := rs.GetRun(t.Context(), &boardv1.GetRunRequest{Agent: "refund-desk", Id: started.GetRunId()})
		run = res.GetRun()
		return err == nil && run.GetState() == boardv1.RunState_RUN_STATE_STOPPED
	})
	if !strings.Contains(run.GetError(), "not today") {
		t.Errorf("the stopped run's error = %q; want the reason", run.GetError())
	}
	if got := exampletest.Refunds(t, dir); len(got) != 0 {
		t.Errorf("refunds after the stop: %v", got)
	}
}

// relayFlow is an agent of two model steps, no tools and no approvals:
// a run of it finishes without the board.
const relayFlow = `{"version": "0.17", "name": "relay", "description": "Drafts an answer to what the person wrote, then polishes it.",
  "inputs": ["message"], "outputs": ["reply"],
  "state": {"message": {"type": "string", "description": "What the person wrote."},
            "draft": {"type": "string", "description": "The first answer."},
            "reply": {"type": "string", "description": "The answer the person reads."}},
  "start": "draft",
  "nodes": [{"id": "draft", "type": "llm", "prompt": "Answer: {{message}}", "output": "draft"},
            {"id": "polish", "type": "llm", "prompt": "Polish: {{draft}}", "output": "reply"}],
  "edges": [{"from": "draft", "to": "polish"}, {"from": "polish", "to": "END"}]}`

// TestRunWhileTheBoardIsDown: a run made in the chat while the board is
// down reaches the board once it is back: after the agent's next welcome
// the board holds exactly one run, finished, started by chat, with both
// its steps, and the agent's outbox is empty. The live events of that run
// were never sent, and are not sent late: the board counts no problem with
// run events.
func TestRunWhileTheBoardIsDown(t *testing.T) {
	t.Parallel()
	bt := boardtest.Start(t, boardtest.Options{})
	dir := filepath.Join(t.TempDir(), "relay")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "flow.json"), []byte(relayFlow), 0o644); err != nil {
		t.Fatal(err)
	}
	s := startServe(t, node.Config{Dir: dir, BoardURL: bt.URL, Token: bt.AgentToken("relay")})
	linked := regexp.MustCompile(`^agent relay: linked to `)
	s.out.wait(t, linked, 60*time.Second)

	bt.Stop()
	s.out.wait(t, regexp.MustCompile(`^agent relay: link down: `), 60*time.Second)
	var done turn
	if status := call(t, "POST", s.url+"/api/threads/offline-1/messages", `{"input": {"message": "are you there?"}}`, &done); status != 200 || done.Reply == "" || done.Pending != nil {
		t.Fatalf("message while the board is down = %d %+v; want the run finished", status, done)
	}
	box, err := runs.OpenOutbox(runs.OutboxPath(dir))
	if err != nil {
		t.Fatal(err)
	}
	if box.Len() != 1 {
		t.Fatalf("the outbox holds %d summaries while the board is down; want the run's", box.Len())
	}

	bt.Restart()
	boardtest.Eventually(t, time.Minute, "the agent linked again", func() bool {
		return strings.Count(s.out.String(), "agent relay: linked to ") >= 2
	})
	rs := boardv1connect.NewRunServiceClient(bt.Client(bt.OperatorToken("ops", identity.RoleViewer)))
	var listed []*boardv1.Run
	boardtest.Eventually(t, time.Minute, "the run stored by the board", func() bool {
		res, err := rs.ListRuns(t.Context(), &boardv1.ListRunsRequest{Agent: "relay"})
		listed = res.GetRuns()
		return err == nil && len(listed) > 0
	})
	if len(listed) != 1 || listed[0].GetState() != boardv1.RunState_RUN_STATE_FINISHED || listed[0].GetStartedBy() != "chat" || listed[0].GetThread() != "offline-1" {
		t.Fatalf("the board's runs = %v; want one, finished, started by chat on offline-1", listed)
	}
	got, err := rs.GetRun(t.Context(), &boardv1.GetRunRequest{Agent: "relay", Id: listed[0].GetId()})
	if err != nil {
		t.Fatal(err)
	}
	var steps []string
	for _, st := range got.GetRun().GetSteps() {
		steps = append(steps, st.GetNode()+" "+st.GetOutcome().String())
	}
	if want := []string{"draft STEP_OUTCOME_OK", "polish STEP_OUTCOME_OK"}; !slices.Equal(steps, want) || got.GetRun().GetStepCount() != 2 {
		t.Errorf("the stored run's steps = %v (count %d); want %v", steps, got.GetRun().GetStepCount(), want)
	}
	boardtest.Eventually(t, time.Minute, "the outbox emptied", func() bool {
		box, err := runs.OpenOutbox(runs.OutboxPath(dir))
		return err == nil && box.Len() == 0
	})
	// A late event would be of a run the board does not know (unknown_run)
	// or has ended (after_end); the summary is there, so there are none.
	for reason, n := range bt.Board.RunEventProblems() {
		if n != 0 {
			t.Errorf("the board counted %d run events %s after it came back; want none sent late", n, reason)
		}
	}
}

// TestGovernedRunWaitsForItsApproval: a run paused at an approval a rule
// of the board governs is the approval's run: the approval names the run
// (run_id), the run on the board is paused naming the approval
// (approval_id), and once the approval is decided on the board the run
// goes on and finishes as the same run — one run, not two.
func TestGovernedRunWaitsForItsApproval(t *testing.T) {
	t.Parallel()
	g := startGovernance(t)
	dir := deskDir(t)
	g.switchOn(t, dir, "orders.lookup_order", "orders.refund")
	s := startServe(t, node.Config{Dir: dir, BoardURL: g.bt.URL, Token: g.bt.AgentToken("refund-desk")})
	s.out.wait(t, regexp.MustCompile(`^agent refund-desk: tools: the board switched on 2: `), 60*time.Second)

	var first turn
	if status := call(t, "POST", s.url+"/api/threads/gov-1/messages", askForRefund, &first); status != 200 ||
		first.Pending == nil || first.Decides == nil || first.Decides.Who != governed.Organisation {
		t.Fatalf("message = %d %+v; want the run waiting for the board", status, first)
	}
	a := g.approvalOf(t, "gov-1")
	rs := boardv1connect.NewRunServiceClient(g.bt.Client(g.bt.OperatorToken("ops", identity.RoleViewer)))
	var run *boardv1.Run
	boardtest.Eventually(t, time.Minute, "the run paused at its approval, on the board", func() bool {
		res, err := rs.ListRuns(t.Context(), &boardv1.ListRunsRequest{Agent: "refund-desk"})
		if err != nil || len(res.GetRuns()) != 1 {
			return false
		}
		got, err := rs.GetRun(t.Context(), &boardv1.GetRunRequest{Agent: "refund-desk", Id: res.GetRuns()[0].GetId()})
		run = got.GetRun()
		return err == nil && run.GetState() == boardv1.RunState_RUN_STATE_PAUSED && run.GetApprovalId() != ""
	})
	if a.GetRunId() != run.GetId() || run.GetApprovalId() != a.GetId() || run.GetPausedAt() != "pay" || run.GetPause() != boardv1.PauseKind_PAUSE_KIND_APPROVAL {
		t.Errorf("the approval's run_id %q, the run %s (paused at %q for %v, approval_id %q); want the approval %s naming the run and the run naming it",
			a.GetRunId(), run.GetId(), run.GetPausedAt(), run.GetPause(), run.GetApprovalId(), a.GetId())
	}

	// The agent names the approval itself, in the paused run's summary:
	// the board stores it on the run's row (GetRun would otherwise join
	// it from the approval's run_id).
	boardtest.Eventually(t, time.Minute, "the run's row naming its approval, from the agent's summary", func() bool {
		row, err := g.bt.Store.Run.Query().Where(entrun.Agent("refund-desk"), entrun.RunID(run.GetId())).Only(t.Context())
		return err == nil && row.ApprovalID == a.GetId()
	})

	g.approve(t, a)
	s.out.wait(t, regexp.MustCompile(`^thread gov-1: the board decided; the run finished$`), 60*time.Second)
	var after []*boardv1.Run
	boardtest.Eventually(t, time.Minute, "the run finished, on the board", func() bool {
		res, err := rs.ListRuns(t.Context(), &boardv1.ListRunsRequest{Agent: "refund-desk"})
		after = res.GetRuns()
		return err == nil && len(after) > 0 && after[0].GetState() == boardv1.RunState_RUN_STATE_FINISHED
	})
	if len(after) != 1 || after[0].GetId() != run.GetId() || after[0].GetStartedBy() != "chat" {
		t.Errorf("the board's runs after the decision = %v; want one, run %s, finished", after, run.GetId())
	}
	exampletest.CheckRefundedOnce(t, dir)
}
