package node_test

import (
	"bytes"
	"io"
	"net"
	"net/url"
	"os"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"google.golang.org/protobuf/types/known/structpb"

	boardv1 "github.com/symphonix/symphonix/api/symphonix/board/v1"
	"github.com/symphonix/symphonix/api/symphonix/board/v1/boardv1connect"
	"github.com/symphonix/symphonix/governed"
	"github.com/symphonix/symphonix/identity"
	"github.com/symphonix/symphonix/internal/boardtest"
	"github.com/symphonix/symphonix/internal/exampletest"
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

// withheldOutput is how a summary of a finished run that had output says
// so on the wire: Run.withheld (field 19) holding "output".
const withheldOutput = "\x9a\x01\x06output"

// runMarker is in what the customer writes: a value that must never leave
// the agent without full detail.
const runMarker = "PLUM-TOKEN-4711"

// TestRunsWithoutPayloads: a served desk linked to a real board reports
// its run — paused at a card, then finished — over the link, and not one
// byte of what the run was given (the customer's words) or what its tools
// gave back (the customer's name) crosses it, nor lands in the outbox in
// the folder; with MONITOR_DETAIL=full the customer's words do.
func TestRunsWithoutPayloads(t *testing.T) {
	t.Parallel()
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
			getenv := func(k string) string {
				if k == runs.EnvDetail && full {
					return "full"
				}
				return ""
			}
			s := startServe(t, node.Config{Dir: dir, BoardURL: w.url, Token: bt.AgentToken("refund-desk"), Getenv: getenv})
			s.out.wait(t, regexp.MustCompile(`^agent refund-desk: tools: the board switched on 2: `), 60*time.Second)
			s.out.wait(t, regexp.MustCompile(`^runs: reported to the board `), time.Second)

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
			if full {
				boardtest.Eventually(t, time.Minute, "the run's input on the wire, with full detail", func() bool { return w.holds(runMarker) })
				return
			}
			// The finished run's summary has crossed.
			boardtest.Eventually(t, time.Minute, "the finished run's summary on the wire", func() bool { return w.holds(withheldOutput) })
			// The order id is in the hello (the input's description names
			// one), so what the tools gave back stands for the tools: the
			// customer's name the order lookup returns.
			for _, v := range []string{runMarker, "money back", "Ada Lovelace"} {
				if w.holds(v) {
					w.mu.Lock()
					b := w.sent.Bytes()
					i := bytes.Index(b, []byte(v))
					t.Errorf("the board was sent %q: %q", v, b[max(0, i-300):min(len(b), i+100)])
					w.mu.Unlock()
				}
			}
			data, err := os.ReadFile(runs.OutboxPath(dir))
			if err != nil {
				t.Fatal(err)
			}
			for _, v := range []string{runMarker, "Ada Lovelace"} {
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
