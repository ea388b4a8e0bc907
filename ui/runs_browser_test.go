package ui_test

import (
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"google.golang.org/protobuf/types/known/durationpb"
	"google.golang.org/protobuf/types/known/structpb"
	"google.golang.org/protobuf/types/known/timestamppb"

	boardv1 "github.com/symphonix/symphonix/api/symphonix/board/v1"
	"github.com/symphonix/symphonix/identity"
	"github.com/symphonix/symphonix/internal/browsertest"
)

// Predicates on an agent's runs and a run's page, JavaScript functions.
const (
	// runRow: the agent's page lists the run id in state.
	runRow = `(id, state) => {
		const tr = Array.from(document.querySelectorAll("#run-rows tr")).find((r) => r.dataset.run === id);
		return tr !== undefined && tr.dataset.state === state;
	}`
	// runRows: the agent's page lists exactly these runs, in this order.
	runRows = `(ids) => Array.from(document.querySelectorAll("#run-rows tr")).map((r) => r.dataset.run).join(",") === ids`
	// runShows: the page of the run id of agent is shown, drawn, in state.
	runShows = `(agent, id, state) => !document.getElementById("run").hidden &&
		document.getElementById("run-id").textContent === id &&
		document.getElementById("run-agent").textContent === agent &&
		!document.getElementById("run-body").hidden &&
		document.getElementById("run").dataset.state === state`
	// stepShows: the run's timeline holds n steps, and step seq is at node
	// with outcome.
	stepShows = `(seq, node, outcome, n) => {
		const lis = Array.from(document.querySelectorAll("#steps li.step"));
		const li = lis.find((x) => x.dataset.seq === String(seq));
		return lis.length === n && li !== undefined && li.dataset.node === node && li.dataset.outcome === outcome;
	}`
)

const (
	runPaused   = boardv1.RunState_RUN_STATE_PAUSED
	runFinished = boardv1.RunState_RUN_STATE_FINISHED
	runFailed   = boardv1.RunState_RUN_STATE_FAILED
	runStopped  = boardv1.RunState_RUN_STATE_STOPPED
	stepOK      = boardv1.StepOutcome_STEP_OUTCOME_OK
	stepFailed  = boardv1.StepOutcome_STEP_OUTCOME_FAILED
	stepPaused  = boardv1.StepOutcome_STEP_OUTCOME_PAUSED
)

// noRunEnumNames fails the test when the page shows a run's enum by its
// API name rather than its word.
func noRunEnumNames(t *testing.T, b *browsertest.Tab, where string) {
	t.Helper()
	noEnumNames(t, b, where)
	if got := b.Eval(`(document.body.innerText.match(/\b(RUN_STATE|STEP_OUTCOME|PAUSE_KIND|RUN_EVENT_KIND)_[A-Z_]+/) || [""])[0]`); got != "" {
		t.Errorf("%s: the page shows the enum name %s, want its word", where, got)
	}
}

// step is one node's step of a run, as an agent reports it.
func step(seq int32, node, kind string, at time.Time, took time.Duration, outcome boardv1.StepOutcome, tokens *boardv1.Tokens) *boardv1.RunStep {
	s := &boardv1.RunStep{Seq: seq, Node: node, Kind: kind, Copy: -1, StartTime: timestamppb.New(at), Outcome: outcome, Tokens: tokens}
	if outcome != boardv1.StepOutcome_STEP_OUTCOME_UNSPECIFIED {
		s.Duration = durationpb.New(took)
	}
	return s
}

// TestBrowserRunLive: a run an agent reports appears on its page as it
// starts, and its own page grows step by step as the agent takes them,
// each entered and then finished, without a reload; its summary ends it,
// and the page says it finished, what it spent and that its input and
// output were kept on the agent.
func TestBrowserRunLive(t *testing.T) {
	bt := linkBoard(t)
	desk := openRawLink(t, bt, "desk", "runs", "live-runs")

	b := browsertest.New(t)
	signInTo(t, b, bt, bt.OperatorToken("vic", identity.RoleViewer), "agents")
	openAgentPage(t, b, "desk")
	b.UntilText("no run yet", "#runs-empty", "No run yet")
	b.Eval(`window.sameDocument = "yes"; "set"`)

	start := time.Now().Add(-2 * time.Second).Truncate(time.Millisecond)
	build := "sha256:" + strings.Repeat("cd", 32)
	desk.runStart("r-1", start, &boardv1.RunStart{Thread: "t-1", StartedBy: "chat", StartedByWho: "ann@example.com", Build: build})
	b.Until("r-1 running on desk's page", runRow, "r-1", "running")
	row := b.Eval(`document.querySelector('#run-rows tr[data-run="r-1"]').textContent`)
	for _, want := range []string{"r-1", "running", "chat (ann@example.com)", "t-1"} {
		if !strings.Contains(row, want) {
			t.Errorf("r-1's row = %q, want it to contain %q", row, want)
		}
	}

	b.Click("open r-1's page", `#run-rows tr[data-run="r-1"] a.run-link`)
	b.Until("r-1's page", runShows, "desk", "r-1", "running")
	if got := b.Eval(`location.hash`); got != "#run/desk/r-1" {
		t.Errorf("address = %q, want #run/desk/r-1", got)
	}

	steps := []struct {
		node, kind string
		took       time.Duration
		tokens     *boardv1.Tokens
	}{
		{"classify", "llm", 300 * time.Millisecond, &boardv1.Tokens{Input: 100, Output: 20, Cached: 40, Total: 120}},
		{"lookup", "tool", 100 * time.Millisecond, nil},
		{"reply", "llm", 500 * time.Millisecond, &boardv1.Tokens{Input: 200, Output: 80, Total: 280}},
	}
	var done []*boardv1.RunStep
	at := start
	for i, s := range steps {
		seq := int32(i + 1)
		entered := step(seq, s.node, s.kind, at, 0, boardv1.StepOutcome_STEP_OUTCOME_UNSPECIFIED, nil)
		finished := step(seq, s.node, s.kind, at, s.took, stepOK, s.tokens)
		if s.node == "lookup" {
			entered.Copy, finished.Copy = 1, 1 // the second copy of a fanout
		}
		desk.runStep("r-1", entered)
		b.Until(s.node+" entered", stepShows, seq, s.node, "running", i+1)
		desk.runStep("r-1", finished)
		b.Until(s.node+" finished", stepShows, seq, s.node, "ok", i+1)
		done = append(done, finished)
		at = at.Add(s.took + 50*time.Millisecond)
	}
	item := b.Eval(`document.querySelector('#steps li[data-seq="1"]').textContent`)
	for _, want := range []string{"classify", "llm", "+0 ms", "300 ms", "ok", "120 (100 in, 40 cached, 20 out)"} {
		if !strings.Contains(item, want) {
			t.Errorf("the first step = %q, want it to contain %q", item, want)
		}
	}
	if got := b.Eval(`document.querySelector('#steps li[data-seq="2"] .step-copy').textContent`); got != "copy 1" {
		t.Errorf("the fanout's copy = %q, want copy 1", got)
	}
	// The bars are drawn to scale: the reply took five times the lookup.
	widths := b.Eval(`Array.from(document.querySelectorAll("#steps .step-bar")).map((e) => e.style.width).join(" ")`)
	var w []float64
	for _, f := range strings.Fields(widths) {
		var x float64
		if _, err := fmt.Sscan(strings.TrimSuffix(f, "%"), &x); err != nil {
			t.Fatalf("bar widths %q: %v", widths, err)
		}
		w = append(w, x)
	}
	if len(w) != 3 || w[1] <= 0 || w[2] < 4*w[1] || w[2] > 6*w[1] {
		t.Errorf("bar widths = %q, want three, the third about five times the second", widths)
	}

	end := at
	desk.runSummary(&boardv1.Run{
		Id: "r-1", Thread: "t-1", StartedBy: "chat", StartedByWho: "ann@example.com", Build: build,
		State: runFinished, StartTime: timestamppb.New(start), EndTime: timestamppb.New(end),
		Duration: durationpb.New(900 * time.Millisecond), StepCount: 3,
		Tokens:   &boardv1.Tokens{Input: 300, Output: 100, Cached: 40, Total: 400},
		Withheld: []string{"input", "output"}, Steps: done,
	}, 0)
	b.Until("r-1 finished", runShows, "desk", "r-1", "finished")
	facts := b.Eval(`document.getElementById("run-facts").textContent`)
	for _, want := range []string{"finished", "chat (ann@example.com)", "t-1", "900 ms", "400 (300 in, 40 cached, 100 out)", build} {
		if !strings.Contains(facts, want) {
			t.Errorf("r-1's facts = %q, want them to contain %q", facts, want)
		}
	}
	for _, id := range []string{"run-input-note", "run-output-note"} {
		if got := b.Eval(`document.getElementById("` + id + `").textContent`); !strings.Contains(got, "kept on the agent") {
			t.Errorf("%s = %q, want it to say it is kept on the agent", id, got)
		}
	}
	if visible(t, b, "stop-box") {
		t.Error("a finished run: want no Stop")
	}
	noRunEnumNames(t, b, "a run's page")

	b.Do("back to desk's page", chromedp.Click(chromedp.ID("run-back")))
	b.Until("desk's page", pageShows, "desk")
	b.Until("r-1 finished in the list", runRow, "r-1", "finished")
	if visible(t, b, "runs-dropped") {
		t.Error("an agent whose outbox dropped nothing: want no word of dropped runs")
	}
	if got := b.Eval(`window.sameDocument || "reloaded"`); got != "yes" {
		t.Errorf("page: %s, want the same document throughout", got)
	}
	noRunEnumNames(t, b, "an agent's runs")
}

// TestBrowserRunPausedAndFailed: a run paused for an approval links to the
// approval, whose card links back to the run, and when the board restarts
// its page watches again and hears it end; a failed run shows its error as
// text; the list filters by state; the runs the agent's outbox dropped are
// said in words.
func TestBrowserRunPausedAndFailed(t *testing.T) {
	bt := linkBoard(t)
	desk := openRawLink(t, bt, "desk", "runs", "live-runs")

	start := time.Now().Add(-time.Minute).Truncate(time.Millisecond)
	desk.runStart("r-2", start, &boardv1.RunStart{Thread: "t-2", StartedBy: "chat"})
	desk.runStep("r-2", step(1, "pay", "approval", start, 0, boardv1.StepOutcome_STEP_OUTCOME_UNSPECIFIED, nil))
	approval := desk.raise("r-2", "pay", "Pay the supplier?")
	paused := step(1, "pay", "approval", start, 20*time.Millisecond, stepPaused, nil)
	paused.Pause = boardv1.PauseKind_PAUSE_KIND_APPROVAL
	paused.ApprovalId = approval
	desk.runStep("r-2", paused)
	desk.runEvent("r-2", start.Add(20*time.Millisecond), &boardv1.RunEvent{Kind: &boardv1.RunEvent_Pause{Pause: &boardv1.RunPause{
		Kind: boardv1.PauseKind_PAUSE_KIND_APPROVAL, Node: "pay", ApprovalId: approval,
	}}})
	desk.runSummary(&boardv1.Run{
		Id: "r-2", Thread: "t-2", StartedBy: "chat", State: runPaused, StartTime: timestamppb.New(start),
		Duration: durationpb.New(20 * time.Millisecond), StepCount: 1, Pause: boardv1.PauseKind_PAUSE_KIND_APPROVAL,
		PausedAt: "pay", ApprovalId: approval, Steps: []*boardv1.RunStep{paused},
	}, 0)

	const markup = `<img src=x onerror="window.injected='yes'" id=injected>`
	failedAt := start.Add(10 * time.Second)
	failed := step(1, "refund", "tool", failedAt, 30*time.Millisecond, stepFailed, nil)
	failed.Error = markup + " the refunds API is down"
	desk.runSummary(&boardv1.Run{
		Id: "r-3", StartedBy: "cli", State: runFailed, StartTime: timestamppb.New(failedAt),
		EndTime: timestamppb.New(failedAt.Add(30 * time.Millisecond)), Duration: durationpb.New(30 * time.Millisecond),
		StepCount: 1, Error: markup + " the refunds API is down", Steps: []*boardv1.RunStep{failed},
		Input: mustStruct(t, map[string]any{"order": "A-17", "amount": 12.5}),
	}, 3)

	b := browsertest.New(t)
	signInTo(t, b, bt, bt.OperatorToken("ada", identity.RoleApprover), "agents")
	openAgentPage(t, b, "desk")
	b.Until("both runs, newest first", runRows, "r-3,r-2")
	b.UntilText("the dropped runs said", "#runs-dropped",
		"3 runs this agent finished while the board could not be reached were not kept")
	if got := b.Eval(`document.querySelector('#run-rows tr[data-run="r-2"]').textContent`); !strings.Contains(got, "for an approval") {
		t.Errorf("r-2's row = %q, want it to say it waits for an approval", got)
	}

	// The filter shows the runs in one state.
	b.Eval(`(() => { const s = document.getElementById("runs-state"); s.value = "failed"; s.dispatchEvent(new Event("change")); return "failed"; })()`)
	b.Until("only the failed run", runRows, "r-3")
	b.Eval(`(() => { const s = document.getElementById("runs-state"); s.value = "paused"; s.dispatchEvent(new Event("change")); return "paused"; })()`)
	b.Until("only the paused run", runRows, "r-2")

	b.Click("open r-2's page", `#run-rows tr[data-run="r-2"] a.run-link`)
	b.Until("r-2's page, paused", runShows, "desk", "r-2", "paused")
	waits := b.Eval(`document.getElementById("run-waits").textContent`)
	if !strings.Contains(waits, "waiting for an approval at the node pay") {
		t.Errorf("r-2 waits = %q, want it to say for an approval at pay", waits)
	}
	if got := b.Eval(`document.querySelector("#run-waits a.approval-link").getAttribute("href")`); got != "#approval/"+approval {
		t.Errorf("the approval link = %q, want #approval/%s", got, approval)
	}
	if got := b.Eval(`document.querySelector('#steps li[data-seq="1"] a.approval-link').getAttribute("href")`); got != "#approval/"+approval {
		t.Errorf("the paused step's link = %q, want #approval/%s", got, approval)
	}

	b.Click("follow the link to the approval", "#run-waits a.approval-link")
	b.Until("the approval picked out", `(id) => !document.getElementById("approvals").hidden &&
		document.querySelector('#queue li.is-selected[data-approval="' + id + '"]') !== null`, approval)
	if got := b.Eval(card(approval) + `.querySelector("a.run-link").getAttribute("href")`); got != "#run/desk/r-2" {
		t.Errorf("the card's run link = %q, want #run/desk/r-2", got)
	}
	b.Click("follow the card's link to the run", `#queue li[data-approval="`+approval+`"] a.run-link`)
	b.Until("r-2's page again", runShows, "desk", "r-2", "paused")

	// The board restarts: the page watches again, and hears that r-2 ended.
	bt.Restart()
	again := openRawLink(t, bt, "desk", "runs", "live-runs")
	again.runSeq = desk.runSeq
	again.runSummary(&boardv1.Run{
		Id: "r-2", Thread: "t-2", StartedBy: "chat", State: runFinished, StartTime: timestamppb.New(start),
		EndTime: timestamppb.New(start.Add(time.Second)), Duration: durationpb.New(40 * time.Millisecond), StepCount: 1,
		Steps: []*boardv1.RunStep{step(1, "pay", "approval", start, 40*time.Millisecond, stepOK, nil)},
	}, 0)
	b.Until("r-2 finished, heard after the restart", runShows, "desk", "r-2", "finished")
	if visible(t, b, "run-waits") {
		t.Error("a finished run: want no word of what it waits for")
	}

	// A failed run: its error and its step's, as text; its input as JSON.
	b.Eval(`location.hash = "#run/desk/r-3"; "moved"`)
	b.Until("r-3's page, failed", runShows, "desk", "r-3", "failed")
	if got := b.Eval(`document.getElementById("run-failure-text").textContent`); got != markup+" the refunds API is down" {
		t.Errorf("the failure = %q, want the agent's words as text", got)
	}
	if got := b.Eval(`document.querySelector('#steps li[data-seq="1"] .step-error-text').textContent`); !strings.Contains(got, markup) {
		t.Errorf("the step's error = %q, want the markup as text", got)
	}
	if got := b.Eval(`(document.getElementById("injected") === null && document.querySelector("#run img") === null && window.injected === undefined) ? "text" : "markup"`); got != "text" {
		t.Errorf("an agent's error: drawn as %s, want text", got)
	}
	if got := b.Eval(`JSON.stringify(JSON.parse(document.getElementById("run-input").textContent))`); got != `{"amount":12.5,"order":"A-17"}` {
		t.Errorf("r-3's input = %s, want its JSON", got)
	}
	if got := b.Eval(`document.getElementById("run-output-note").textContent`); got != "None." {
		t.Errorf("r-3's output note = %q, want None.", got)
	}
	noRunEnumNames(t, b, "a failed run's page")
}

// TestBrowserFireAndStop: an admin starts a run on an agent announcing
// "fire" from a form built from its declared inputs; a bad number is
// refused in the page, naming the field, and nothing is sent; the agent
// receives the typed values the form sent, answers with its run, and the
// page opens it. On that page the admin stops it with a reason, and the
// agent receives the stop. A viewer sees no form.
func TestBrowserFireAndStop(t *testing.T) {
	bt := linkBoard(t)
	desk := openRawHello(t, bt, &boardv1.Hello{
		Name:         "desk",
		Capabilities: []string{"runs", "live-runs", "fire"},
		Inputs: []*boardv1.FlowInput{
			{Name: "amount", Type: "number", Description: "How much, in euros"},
			{Name: "urgent", Type: "boolean"},
			{Name: "note", Type: "string"},
			{Name: "order", Type: "object"},
			{Name: "tags", Type: "list"},
		},
	})

	b := browsertest.New(t)
	signInTo(t, b, bt, bt.OperatorToken("vic", identity.RoleViewer), "agents")
	openAgentPage(t, b, "desk")
	b.Until("a viewer told only admins start runs", `() => !document.getElementById("fire-readonly").hidden`)
	if visible(t, b, "fire-form") {
		t.Error("a viewer: want no form to start a run")
	}
	b.Do("sign out",
		chromedp.Click(chromedp.ID("sign-out")),
		chromedp.WaitVisible(chromedp.ID("token")),
	)

	signInTo(t, b, bt, bt.OperatorToken("root", identity.RoleAdmin), "agents")
	openAgentPage(t, b, "desk")
	b.Until("the form, a field per input", `() => document.getElementById("fire-form").offsetParent !== null &&
		Array.from(document.querySelectorAll("#fire-inputs [data-input]")).filter((e) => e.matches("input, select, textarea"))
			.map((e) => e.dataset.input + ":" + e.dataset.type).join(",") === "amount:number,urgent:boolean,note:string,order:object,tags:list"`)
	if got := b.Eval(`document.getElementById("fire-inputs").textContent`); !strings.Contains(got, "How much, in euros") {
		t.Errorf("the fields = %q, want the input's description", got)
	}

	b.RecordFetches()
	sel := func(name string) string {
		return `#fire-inputs :is(input, select, textarea)[data-input="` + name + `"]`
	}
	b.Do("start with a bad number",
		chromedp.SetValue(chromedp.CSS(sel("amount")), "12x"),
		chromedp.Click(chromedp.ID("fire-button")),
	)
	b.Until("the bad number refused, naming the field", `(sel) => {
		const e = document.getElementById("fire-error");
		return !e.hidden && e.textContent.includes("amount") && e.textContent.includes("not a number") &&
			document.querySelector(sel).getAttribute("aria-invalid") === "true";
	}`, sel("amount"))
	for _, path := range b.Fetched() {
		if strings.HasSuffix(path, "/StartRun") {
			t.Errorf("a bad number sent %s", path)
		}
	}

	b.Do("start with good values",
		chromedp.SetValue(chromedp.CSS(sel("amount")), "12.5"),
		chromedp.SetValue(chromedp.CSS(sel("urgent")), "true"),
		chromedp.SetValue(chromedp.CSS(sel("note")), "<b>now</b>"),
		chromedp.SetValue(chromedp.CSS(sel("order")), `{"id": 7, "lines": [1, 2]}`),
		chromedp.SetValue(chromedp.CSS(sel("tags")), `["a", "b"]`),
		chromedp.SetValue(chromedp.ID("fire-thread"), "t-9"),
		chromedp.Click(chromedp.ID("fire-button")),
	)
	f := desk.fireNext()
	want := map[string]any{
		"amount": 12.5, "urgent": true, "note": "<b>now</b>",
		"order": map[string]any{"id": 7.0, "lines": []any{1.0, 2.0}}, "tags": []any{"a", "b"},
	}
	if got := f.GetInput().AsMap(); !reflect.DeepEqual(got, want) {
		t.Errorf("the fire's input = %v, want %v", got, want)
	}
	if f.GetThread() != "t-9" || f.GetBy() != "root" {
		t.Errorf("the fire: thread %q by %q, want t-9 by root", f.GetThread(), f.GetBy())
	}
	desk.send(&boardv1.LinkRequest{Kind: &boardv1.LinkRequest_Fired{Fired: &boardv1.Fired{
		RequestId: f.GetRequestId(), RunId: "f-1", Thread: "t-9",
	}}})
	b.Until("the run's page opened", `() => location.hash === "#run/desk/f-1" && !document.getElementById("run").hidden`)
	start := time.Now().Truncate(time.Millisecond)
	desk.runStart("f-1", start, &boardv1.RunStart{Thread: "t-9", StartedBy: "board", StartedByWho: "root"})
	b.Until("f-1 running", runShows, "desk", "f-1", "running")
	if got := b.Eval(`document.querySelector('#run-facts dd[data-fact="started by"]').textContent`); got != "board (root)" {
		t.Errorf("started by = %q, want board (root)", got)
	}
	desk.runStep("f-1", step(1, "wait", "handler", start, 0, boardv1.StepOutcome_STEP_OUTCOME_UNSPECIFIED, nil))
	b.Until("its first step", stepShows, 1, "wait", "running", 1)

	// Stop asks for a reason first.
	b.Until("Stop offered", `() => document.getElementById("stop-button").offsetParent !== null`)
	b.Do("stop without a reason", chromedp.Click(chromedp.ID("stop-button")))
	b.Until("the reason asked for", `() => {
		const e = document.getElementById("stop-error");
		return !e.hidden && e.textContent.includes("required") &&
			document.getElementById("stop-reason").getAttribute("aria-invalid") === "true";
	}`)
	for _, path := range b.Fetched() {
		if strings.HasSuffix(path, "/StopRun") {
			t.Errorf("a stop without a reason sent %s", path)
		}
	}
	const reason = "wrong order <b>number</b>"
	b.Do("stop with a reason",
		chromedp.SetValue(chromedp.ID("stop-reason"), reason),
		chromedp.Click(chromedp.ID("stop-button")),
	)
	st := desk.stopNext()
	if st.GetRunId() != "f-1" || st.GetReason() != reason || st.GetBy() != "root" {
		t.Fatalf("the stop = %v, want f-1 by root with the reason", st)
	}
	desk.send(&boardv1.LinkRequest{Kind: &boardv1.LinkRequest_Stopped{Stopped: &boardv1.Stopped{RequestId: st.GetRequestId()}}})
	b.UntilText("the stop said", "#stop-status", "Asked desk to stop the run")
	stopped := step(1, "wait", "handler", start, 40*time.Millisecond, boardv1.StepOutcome_STEP_OUTCOME_STOPPED, nil)
	desk.runSummary(&boardv1.Run{
		Id: "f-1", Thread: "t-9", StartedBy: "board", StartedByWho: "root", State: runStopped,
		StartTime: timestamppb.New(start), EndTime: timestamppb.New(start.Add(40 * time.Millisecond)),
		Duration: durationpb.New(40 * time.Millisecond), StepCount: 1, Error: reason, Steps: []*boardv1.RunStep{stopped},
	}, 0)
	b.Until("f-1 stopped", runShows, "desk", "f-1", "stopped")
	if visible(t, b, "stop-box") {
		t.Error("a stopped run: want no Stop")
	}
	if got := b.Eval(`document.getElementById("run-failure").textContent`); !strings.Contains(got, "stopped") || !strings.Contains(got, reason) {
		t.Errorf("the stopped run says %q, want the reason", got)
	}
}

// mustStruct is v as a Struct.
func mustStruct(t *testing.T, v map[string]any) *structpb.Struct {
	t.Helper()
	s, err := structpb.NewStruct(v)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestBrowserRunsPaged: an agent's page lists its newest 50 runs, and More
// the older ones; a run that starts then appears at the top by the watch,
// without the list being read again. When the board restarts, the page
// watches again and a run started after it appears too.
func TestBrowserRunsPaged(t *testing.T) {
	bt := linkBoard(t)
	desk := openRawLink(t, bt, "desk", "runs", "live-runs")
	first := time.Now().Add(-time.Hour).Truncate(time.Second)
	var list []*boardv1.Run
	var ids []string
	for i := range 55 {
		id := fmt.Sprintf("p-%02d", i)
		at := first.Add(time.Duration(i) * time.Second)
		list = append(list, &boardv1.Run{
			Id: id, StartedBy: "trigger", State: runFinished, StartTime: timestamppb.New(at),
			EndTime: timestamppb.New(at.Add(time.Millisecond)), Duration: durationpb.New(time.Millisecond),
		})
		ids = append([]string{id}, ids...)
	}
	desk.runSummaries(list)

	b := browsertest.New(t)
	signInTo(t, b, bt, bt.OperatorToken("vic", identity.RoleViewer), "agents")
	openAgentPage(t, b, "desk")
	b.Until("the newest 50", runRows, strings.Join(ids[:50], ","))
	b.UntilText("more on the board", "#runs-count", "50 runs shown; older ones on the board")
	b.Do("More", chromedp.Click(chromedp.ID("runs-more")))
	b.Until("all 55", runRows, strings.Join(ids, ","))
	if visible(t, b, "runs-more") {
		t.Error("after the last page: want no More")
	}
	if n := calls(t, b, "ListRuns"); n != 2 {
		t.Errorf("ListRuns called %d times, want 2: the first page and More", n)
	}

	desk.runStart("live-1", time.Now(), &boardv1.RunStart{StartedBy: "chat"})
	b.Until("live-1 at the top", runRows, strings.Join(append([]string{"live-1"}, ids...), ","))
	if n := calls(t, b, "ListRuns"); n != 2 {
		t.Errorf("ListRuns called %d times, want still 2: the watch brings a run that starts", n)
	}

	bt.Restart()
	again := openRawLink(t, bt, "desk", "runs", "live-runs")
	again.runStart("after", time.Now(), &boardv1.RunStart{StartedBy: "chat"})
	b.Until("a run started after the restart", runRow, "after", "running")
}
