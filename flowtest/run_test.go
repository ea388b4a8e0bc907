package flowtest

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"time"

	"github.com/symphonix/symphonix/flow"

	"github.com/google/go-cmp/cmp"
)

// lookup is the orders server's answer for A-1001 in these tests.
const lookup = `{ "order_id": "A-1001", "customer": "Ada", "amount": 42.5, "currency": "EUR", "status": "delivered" }`

func TestRunExample(t *testing.T) {
	t.Parallel()
	rs, err := Run(t.Context(), "../examples/refund-desk", Config{})
	if err != nil {
		t.Fatal(err)
	}
	if len(rs) != 1 || rs[0].File != "refund-desk.test.json" || len(rs[0].Problems) != 0 {
		t.Fatalf("Run = %+v, want one file without problems", rs)
	}
	paths := map[string][]string{}
	for _, c := range rs[0].Cases {
		if !c.Passed {
			t.Errorf("case %q failed: %v", c.Name, c.Failure)
		}
		paths[c.Name] = c.Path
	}
	// The approval's yes runs pay; its no goes to answer without it.
	if got, want := paths["a refund approved is paid and answered"], []string{"lookup", "decide", "pay", "answer"}; !slices.Equal(got, want) {
		t.Errorf("yes path = %v, want %v", got, want)
	}
	if got, want := paths["a refund refused by the approver is never paid"], []string{"lookup", "decide", "answer"}; !slices.Equal(got, want) {
		t.Errorf("no path = %v, want %v", got, want)
	}
	if s := Summarize(rs); s.Passed != 4 || s.Failed != 0 || !s.OK() {
		t.Errorf("Summarize = %+v, want 4 passed", s)
	}
}

// runOne runs the cases of one test file in dir and returns them.
func runOne(t *testing.T, dir string, cfg Config) []CaseResult {
	t.Helper()
	rs, err := Run(t.Context(), dir, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if len(rs) != 1 || len(rs[0].Problems) != 0 {
		t.Fatalf("Run = %+v, want one file without problems", rs)
	}
	return rs[0].Cases
}

func TestApprovalAnswers(t *testing.T) {
	t.Parallel()
	// The same case, answered yes and no, expecting the yes path: the no
	// must fail, saying where the paths part.
	tmpl := `{ "name": %q, "input": { "order_id": "A-1001", "request": "broken" }, "answers": [%q],
	  "mock": { "llm": { "decide": { "action": "refund", "reason": "delivered broken" }, "answer": "done" },
	            "tools": { "orders.lookup_order": ` + lookup + `, "orders.refund": { "refund_id": "R-1" } } },
	  "expect": { "path": ["lookup", "decide", "pay", "answer"], "state": { "refund": { "refund_id": "R-1" } } } }`
	dir := refundDesk(t, map[string]string{"a.test.json": `{ "cases": [` + fmt.Sprintf(tmpl, "yes", "yes") + "," + fmt.Sprintf(tmpl, "no", "no") + `] }`})
	cs := runOne(t, dir, Config{})
	if !cs[0].Passed {
		t.Errorf("yes: failed: %v", cs[0].Failure)
	}
	if cs[1].Passed {
		t.Fatal("no: passed, want a failure: the approval was refused")
	}
	want := []string{
		`state.refund: expected {"refund_id":"R-1"}, got nothing (the run never wrote it)`,
		"path: expected lookup → decide → pay → answer, got lookup → decide → answer: step 3 went to answer where pay was expected",
	}
	if diff := cmp.Diff(want, cs[1].Failure); diff != "" {
		t.Errorf("no: failure (-want +got):\n%s", diff)
	}
	if want := []string{"orders.refund"}; !slices.Equal(cs[1].Unused.Tools, want) {
		t.Errorf("no: unused tools = %v, want %v", cs[1].Unused.Tools, want)
	}
}

func TestUnmockedLLMNode(t *testing.T) {
	t.Parallel()
	dir := refundDesk(t, map[string]string{"a.test.json": `{ "cases": [ { "name": "no decide",
	  "input": { "order_id": "A-1001", "request": "broken" },
	  "mock": { "llm": { "answer": "x" }, "tools": { "orders.lookup_order": ` + lookup + ` } } } ] }`})
	c := runOne(t, dir, Config{})[0]
	if c.Passed || len(c.Failure) == 0 || c.Failure[0] != "node decide asked the model and the case gives it no answer" {
		t.Errorf("failure = %q, want it to name node decide", c.Failure)
	}
	if want := []string{"answer"}; !slices.Equal(c.Unused.LLM, want) {
		t.Errorf("unused llm = %v, want %v", c.Unused.LLM, want)
	}
}

func TestUnmockedTool(t *testing.T) {
	t.Parallel()
	dir := refundDesk(t, map[string]string{"a.test.json": `{ "cases": [ { "name": "no lookup",
	  "input": { "order_id": "A-1001", "request": "broken" }, "mock": { "llm": { "decide": "{}" } } } ] }`})
	c := runOne(t, dir, Config{})[0]
	if c.Passed || len(c.Failure) == 0 || c.Failure[0] != "tool orders.lookup_order was called and the case gives it no result" {
		t.Errorf("failure = %q, want it to name orders.lookup_order", c.Failure)
	}
}

func TestRepliesRunOut(t *testing.T) {
	t.Parallel()
	dir := refundDesk(t, map[string]string{"a.test.json": `{ "cases": [ { "name": "an empty list",
	  "input": { "order_id": "A-1001", "request": "broken" }, "mock": { "tools": { "lookup_order": [] } } } ] }`})
	c := runOne(t, dir, Config{})[0]
	if c.Passed || !strings.Contains(strings.Join(c.Failure, "\n"), "tool orders.lookup_order was called 1 times and the case gives it 0 results") {
		t.Errorf("failure = %q, want the list run out", c.Failure)
	}
}

func TestAskAnswered(t *testing.T) {
	t.Parallel()
	dir := folder(t, askFlow, map[string]string{
		"handlers/greet": "#!/bin/sh\necho '{\"greeting\": \"hello from the handler\"}'\n",
		"ask.test.json": `{ "cases": [
		  { "name": "answered", "input": { "topic": "tea" }, "answers": ["Ada"],
		    "mock": { "llm": { "polish": "Hello, Ada!" } },
		    "expect": { "path": ["who", "greet", "polish"], "state": { "name": "Ada", "greeting": "hello from the handler", "polished": "Hello, Ada!" } } },
		  { "name": "not answered", "input": { "topic": "tea" }, "mock": { "llm": { "polish": "x" } } },
		  { "name": "answered twice", "input": { "topic": "tea" }, "answers": ["Ada", "Bo"], "mock": { "llm": { "polish": "x" } } }
		] }`,
	})
	cs := runOne(t, dir, Config{})
	if !cs[0].Passed {
		t.Errorf("answered: failed: %v", cs[0].Failure)
	}
	if want := []string{`the run stopped at node who for an ask ("Who is it about tea?") and the case has no answer left`}; !slices.Equal(cs[1].Failure, want) {
		t.Errorf("not answered: failure = %q, want %q", cs[1].Failure, want)
	}
	if want := []string{"the case gives 1 answers the run never asked for"}; !slices.Equal(cs[2].Failure, want) {
		t.Errorf("answered twice: failure = %q, want %q", cs[2].Failure, want)
	}
	if want := []string{"polish"}; !slices.Equal(cs[1].Unused.LLM, want) {
		t.Errorf("not answered: unused llm = %v, want %v", cs[1].Unused.LLM, want)
	}
}

func TestTimeout(t *testing.T) {
	t.Parallel()
	dir := folder(t, hangFlow, map[string]string{
		"handlers/slow":  "#!/bin/sh\nsleep 60\n",
		"hang.test.json": `{ "cases": [ { "name": "hangs", "expect": { "error": "anything" } } ] }`,
	})
	start := time.Now()
	c := runOne(t, dir, Config{Timeout: 300 * time.Millisecond})[0]
	if took := time.Since(start); took > 20*time.Second {
		t.Errorf("the case took %s, want it ended near its time limit", took)
	}
	if want := []string{"the case did not end within its time limit, 300ms (--timeout)"}; !slices.Equal(c.Failure, want) {
		t.Errorf("failure = %q, want the time limit", c.Failure)
	}
}

func TestRunPattern(t *testing.T) {
	t.Parallel()
	rs, err := Run(t.Context(), "../examples/refund-desk", Config{Run: regexp.MustCompile("refused by")})
	if err != nil {
		t.Fatal(err)
	}
	if len(rs[0].Cases) != 1 || rs[0].Cases[0].Name != "a refund refused by the approver is never paid" {
		t.Errorf("cases = %+v, want the one --run names", rs[0].Cases)
	}
}

func TestNoTestFiles(t *testing.T) {
	t.Parallel()
	dir := folder(t, hangFlow, map[string]string{"handlers/slow": "#!/bin/sh\n"})
	if _, err := Run(context.Background(), dir, Config{}); !errors.Is(err, ErrNoTests) {
		t.Errorf("Run = %v, want ErrNoTests", err)
	}
}

// TestDelegation: the team's agents run as the agent runs them — the
// researcher's handler executable — and a child's llm node is mocked as
// "<agent>/<node>": without its mock the case fails naming it that way,
// with it the writer's reply reaches the parent's answer.
func TestDelegation(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	if err := os.CopyFS(dir, os.DirFS("../examples/team")); err != nil {
		t.Fatal(err)
	}
	file := `{ "cases": [
	  { "name": "unmocked", "input": { "question": "why is the sky blue" }, "mock": { "llm": { "answer": "because" } } },
	  { "name": "mocked", "input": { "question": "why is the sky blue" },
	    "mock": { "llm": { "writer/write": "Light scatters.", "answer": "Light scatters, they say." } },
	    "expect": { "path": ["research", "write", "answer"], "state": { "reply": { "text": "Light scatters." }, "answer": "Light scatters, they say." } } }
	] }`
	if err := os.WriteFile(filepath.Join(dir, "team.test.json"), []byte(file), 0o644); err != nil {
		t.Fatal(err)
	}
	cs := runOne(t, dir, Config{})
	if want := []string{"node writer/write asked the model and the case gives it no answer"}; !slices.Equal(cs[0].Failure, want) {
		t.Errorf("unmocked: failure = %q, want %q", cs[0].Failure, want)
	}
	// research (the researcher, its executable run) ended, and write
	// failed: both are on the path.
	if want := []string{"research", "write"}; !slices.Equal(cs[0].Path, want) {
		t.Errorf("unmocked: path = %v, want %v", cs[0].Path, want)
	}
	if !cs[1].Passed || len(cs[1].Unused.LLM) != 0 {
		t.Errorf("mocked: %+v", cs[1])
	}

	// A child's node the registry does not have, or that does not ask the
	// model, is refused before anything runs.
	bad := `{ "cases": [ { "name": "x", "mock": { "llm": { "nobody/write": "a", "writer/nothing": "b", "researcher/gather": "c" } } } ] }`
	f, err := flow.LoadFile(filepath.Join(dir, "flow.json"))
	if err != nil {
		t.Fatal(err)
	}
	ps := SpecProblemsWith(f, Children(dir), []byte(bad))
	var got []string
	for _, p := range ps {
		got = append(got, p.Path+": "+p.Message)
	}
	want := []string{
		`cases[0].mock.llm.nobody/write: "nobody/write" names agent "nobody", which the folder's agents.json does not register`,
		`cases[0].mock.llm.researcher/gather: "gather" is not an llm node of agent researcher (a handler node): only llm nodes, and agent nodes choosing among agents, ask the model`,
		`cases[0].mock.llm.writer/nothing: "nothing" is not an llm node of agent writer (no such node): only llm nodes, and agent nodes choosing among agents, ask the model`,
	}
	if !slices.Equal(got, want) {
		t.Errorf("problems:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
