package flowtest

import (
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestSpecProblems(t *testing.T) {
	t.Parallel()
	f := mustFlow(t, "../examples/refund-desk")
	ok := `"name": "n"`
	for _, tc := range []struct {
		name string
		file string
		want []Problem // Message is not compared
	}{
		{"valid", `{ "cases": [ { ` + ok + `, "input": { "order_id": "A" }, "answers": ["yes"], "mock": { "llm": { "decide": "{}" }, "tools": { "lookup_order": {}, "orders.refund": [1, 2] } }, "expect": { "state": { "reply": "x" }, "path": ["lookup"] } } ] }`, nil},
		{"not json", `{ "cases": `, []Problem{{Code: CodeInvalidJSON}}},
		{"two values", `{} {}`, []Problem{{Code: CodeInvalidJSON}}},
		{"not an object", `[]`, []Problem{{Code: CodeWrongType}}},
		{"no cases", `{}`, []Problem{{Code: CodeNoCases, Path: "cases"}}},
		{"empty cases", `{ "cases": [] }`, []Problem{{Code: CodeNoCases, Path: "cases"}}},
		{"cases not a list", `{ "cases": {} }`, []Problem{{Code: CodeWrongType, Path: "cases"}}},
		{"unknown keys everywhere", `{ "case": 1, "cases": [ { ` + ok + `, "inputs": {}, "mock": { "read": {} }, "expect": { "states": {} } } ] }`, []Problem{
			{Code: CodeUnknownKey, Path: "case"},
			{Code: CodeUnknownKey, Path: "cases[0].inputs"},
			{Code: CodeUnknownKey, Path: "cases[0].mock.read"},
			{Code: CodeUnknownKey, Path: "cases[0].expect.states"},
		}},
		{"case not an object", `{ "cases": [ 1 ] }`, []Problem{{Code: CodeWrongType, Path: "cases[0]"}}},
		{"no name", `{ "cases": [ {}, { "name": " " } ] }`, []Problem{{Code: CodeMissingName, Path: "cases[0].name"}, {Code: CodeMissingName, Path: "cases[1].name"}}},
		{"name not text", `{ "cases": [ { "name": 1 } ] }`, []Problem{{Code: CodeWrongType, Path: "cases[0].name"}}},
		{"long name", `{ "cases": [ { "name": "` + strings.Repeat("x", MaxNameBytes+1) + `" } ] }`, []Problem{{Code: CodeTooLarge, Path: "cases[0].name"}}},
		{"duplicate names", `{ "cases": [ { "name": "a" }, { "name": "b" }, { "name": "a" } ] }`, []Problem{{Code: CodeDuplicateName, Path: "cases[2].name"}}},
		{"mock for a tool node", `{ "cases": [ { ` + ok + `, "mock": { "llm": { "lookup": "x", "nowhere": "y" } } } ] }`, []Problem{
			{Code: CodeNotLLMNode, Path: "cases[0].mock.llm.lookup"},
			{Code: CodeNotLLMNode, Path: "cases[0].mock.llm.nowhere"},
		}},
		{"null llm reply", `{ "cases": [ { ` + ok + `, "mock": { "llm": { "decide": [null] } } } ] }`, []Problem{{Code: CodeWrongType, Path: "cases[0].mock.llm.decide[0]"}}},
		{"too many replies", `{ "cases": [ { ` + ok + `, "mock": { "tools": { "refund": [` + strings.Repeat("1,", MaxReplies) + `1] } } } ] }`, []Problem{{Code: CodeTooLarge, Path: "cases[0].mock.tools.refund"}}},
		{"unknown tool", `{ "cases": [ { ` + ok + `, "mock": { "tools": { "orders.delete": {}, "billing.refund": {} } } } ] }`, []Problem{
			{Code: CodeUnknownTool, Path: "cases[0].mock.tools.billing.refund"},
			{Code: CodeUnknownTool, Path: "cases[0].mock.tools.orders.delete"},
		}},
		{"unknown channel", `{ "cases": [ { ` + ok + `, "input": { "orderid": "A" }, "expect": { "state": { "replies": "x" } } } ] }`, []Problem{
			{Code: CodeUnknownChannel, Path: "cases[0].input.orderid"},
			{Code: CodeUnknownChannel, Path: "cases[0].expect.state.replies"},
		}},
		{"unknown node in path", `{ "cases": [ { ` + ok + `, "expect": { "path": ["lookup", "refund", 3] } } ] }`, []Problem{
			{Code: CodeUnknownNode, Path: "cases[0].expect.path[1]"},
			{Code: CodeWrongType, Path: "cases[0].expect.path[2]"},
		}},
		{"empty answers", `{ "cases": [ { ` + ok + `, "answers": ["yes", "", null, false, 0] } ] }`, []Problem{
			{Code: CodeEmptyAnswer, Path: "cases[0].answers[1]"},
			{Code: CodeEmptyAnswer, Path: "cases[0].answers[2]"},
			{Code: CodeEmptyAnswer, Path: "cases[0].answers[3]"},
			{Code: CodeEmptyAnswer, Path: "cases[0].answers[4]"},
		}},
		{"too many answers", `{ "cases": [ { ` + ok + `, "answers": [` + strings.Repeat(`"yes",`, MaxAnswers) + `"yes"] } ] }`, []Problem{{Code: CodeTooLarge, Path: "cases[0].answers"}}},
		{"error and state", `{ "cases": [ { ` + ok + `, "expect": { "error": "x", "state": { "reply": "y" } } } ] }`, []Problem{{Code: CodeErrorAndExpected, Path: "cases[0].expect"}}},
		{"empty error", `{ "cases": [ { ` + ok + `, "expect": { "error": "" } } ] }`, []Problem{{Code: CodeWrongType, Path: "cases[0].expect.error"}}},
		{"wrong types", `{ "cases": [ { ` + ok + `, "input": 1, "answers": {}, "mock": [], "expect": "x" } ] }`, []Problem{
			{Code: CodeWrongType, Path: "cases[0].input"},
			{Code: CodeWrongType, Path: "cases[0].answers"},
			{Code: CodeWrongType, Path: "cases[0].mock"},
			{Code: CodeWrongType, Path: "cases[0].expect"},
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got := SpecProblems(f, []byte(tc.file))
			for i := range got {
				if got[i].Message == "" {
					t.Errorf("problem %v has no message", got[i])
				}
				got[i].Message = ""
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("SpecProblems (-want +got):\n%s", diff)
			}
		})
	}
}

func TestSpecProblemsBounds(t *testing.T) {
	t.Parallel()
	f := mustFlow(t, "../examples/refund-desk")
	var b strings.Builder
	b.WriteString(`{ "cases": [`)
	for i := range MaxCases + 1 {
		if i > 0 {
			b.WriteString(",")
		}
		fmt.Fprintf(&b, `{ "name": "c%d" }`, i)
	}
	b.WriteString("] }")
	if got := SpecProblems(f, []byte(b.String())); len(got) != 1 || got[0].Code != CodeTooLarge || got[0].Path != "cases" {
		t.Errorf("SpecProblems(%d cases) = %v, want TEST_TOO_LARGE at cases", MaxCases+1, got)
	}
	big := `{ "cases": [ { "name": "` + strings.Repeat("x", MaxFileBytes) + `" } ] }`
	if got := SpecProblems(f, []byte(big)); len(got) != 1 || got[0].Code != CodeTooLarge {
		t.Errorf("SpecProblems(%d bytes) = %v, want TEST_TOO_LARGE", len(big), got)
	}
	dir := refundDesk(t, map[string]string{"big.test.json": big})
	rs, err := Run(t.Context(), dir, Config{})
	if err != nil {
		t.Fatal(err)
	}
	if ps := rs[0].Problems; len(ps) != 1 || ps[0].Code != CodeTooLarge || len(rs[0].Cases) != 0 {
		t.Errorf("Run(a file of %d bytes) = %+v, want TEST_TOO_LARGE and no case run", len(big), rs[0])
	}
}

func TestSpecProblemsMessages(t *testing.T) {
	t.Parallel()
	f := mustFlow(t, "../examples/refund-desk")
	got := SpecProblems(f, []byte(`{ "cases": [ { "name": "a", "mock": { "llm": { "lookup": "x" }, "tools": { "delete": 1 } } }, { "name": "a" } ] }`))
	want := []string{
		`cases[0].mock.llm.lookup: TEST_NOT_LLM_NODE: "lookup" is not an llm node of the flow (a tool node): only llm nodes, and agent nodes choosing among agents, ask the model`,
		`cases[0].mock.tools.delete: TEST_UNKNOWN_TOOL: the flow declares no tool "delete" (declared: orders.lookup_order, orders.refund)`,
		`cases[1].name: TEST_DUPLICATE_NAME: "a" is also the name of cases[0]`,
	}
	var lines []string
	for _, p := range got {
		lines = append(lines, p.String())
	}
	if diff := cmp.Diff(want, lines); diff != "" {
		t.Errorf("SpecProblems (-want +got):\n%s", diff)
	}
}
