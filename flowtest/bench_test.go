package flowtest

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// BenchmarkAgentTest runs a test file of MaxCases cases against the
// refund desk, every case with mocks for its model and tools and an
// approval answered: what agent test does with the largest file it takes.
func BenchmarkAgentTest(b *testing.B) {
	flowJSON, err := os.ReadFile("../examples/refund-desk/flow.json")
	if err != nil {
		b.Fatal(err)
	}
	dir := b.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "flow.json"), flowJSON, 0o644); err != nil {
		b.Fatal(err)
	}
	var s strings.Builder
	s.WriteString(`{ "cases": [`)
	for i := range MaxCases {
		if i > 0 {
			s.WriteString(",")
		}
		answer := []string{"yes", "no"}[i%2]
		fmt.Fprintf(&s, `{ "name": "case %d", "input": { "order_id": "A-%d", "request": "broken" }, "answers": [%q],
		  "mock": { "llm": { "decide": { "action": "refund", "reason": "delivered broken" }, "answer": "done" },
		            "tools": { "orders.lookup_order": { "order_id": "A-%d", "amount": 10 }, "orders.refund": { "refund_id": "R-%d" } } },
		  "expect": { "state": { "reply": "done" } } }`, i, i, answer, i, i)
	}
	s.WriteString("] }")
	if err := os.WriteFile(filepath.Join(dir, "many.test.json"), []byte(s.String()), 0o644); err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		rs, err := Run(b.Context(), dir, Config{})
		if err != nil {
			b.Fatal(err)
		}
		if s := Summarize(rs); s.Passed != MaxCases {
			b.Fatalf("Summarize = %+v, want %d passed", s, MaxCases)
		}
	}
}
