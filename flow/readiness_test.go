package flow

import (
	"os"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func loadTestdata(t *testing.T, name string) *Flow {
	t.Helper()
	data, err := os.ReadFile("testdata/" + name)
	if err != nil {
		t.Fatal(err)
	}
	f, err := Load(data)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

func codes(r Readiness) []string {
	var out []string
	for _, f := range r.Findings {
		out = append(out, f.Code+"@"+f.Path)
	}
	return out
}

func TestReadinessOfTheReferencesResearchFlow(t *testing.T) {
	t.Parallel()
	r := CheckReadiness(loadTestdata(t, "research-summary.json"))
	if !r.Ready {
		t.Errorf("research-summary: not ready: %v", r.Findings)
	}
	// "Search the web and return …" fetches without naming an endpoint.
	want := []string{"TOOL_WITHOUT_ENDPOINT@tools[0].description"}
	if diff := cmp.Diff(want, codes(r)); diff != "" {
		t.Errorf("findings (-want +got):\n%s", diff)
	}
	wantPlan := Plan{Handlers: []string{"checkSources"}, Routers: []string{"routeSources"}, Tools: []string{"web_search"}}
	if diff := cmp.Diff(wantPlan, r.Plan); diff != "" {
		t.Errorf("plan (-want +got):\n%s", diff)
	}
}

func TestReadinessFindings(t *testing.T) {
	t.Parallel()
	// A flow valid enough to run and wrong in every way readiness looks at.
	const src = `{
  "version": "0.17",
  "start": "gather",
  "conversation": true,
  "requires": {
    "services": { "orders": "An MCP client for the orders server." },
    "mcp": { "pay": { "command": "pay", "tools": [ { "name": "refund", "description": "Refund an order." }, { "name": "lookup" } ] } }
  },
  "tools": [ { "name": "fetch_rates", "description": "Fetches today's exchange rates for a currency, as a table." } ],
  "inputs": ["question"],
  "state": {
    "question": { "type": "string" },
    "docs": { "type": "list", "reducer": "append", "default": [] },
    "doc": {},
    "grades": { "type": "list", "reducer": "append", "default": [] },
    "spent": { "type": "number", "description": "Tokens spent so far in this conversation.", "default": 0 },
    "order": { "type": "object" },
    "paid": { "type": "object" }
  },
  "nodes": [
    { "id": "gather", "handler": "gather" },
    { "id": "spread", "type": "fanout", "over": "docs", "to": "grade", "as": "doc" },
    { "id": "grade", "type": "llm", "prompt": "Grade {{doc}}", "output": "grades" },
    { "id": "clarify", "type": "ask", "ask": "What do you mean?", "output": "question" },
    { "id": "pay", "type": "tool", "tool": "pay.refund", "args": { "order": "{{order}}" }, "output": "paid" },
    { "id": "look", "type": "tool", "tool": "pay.lookup", "args": { "order": "{{order}}" }, "output": "order",
      "approval": { "ask": "Look it up?", "show": ["order"] } },
    { "id": "sum", "handler": "sumUp", "description": "Sum." }
  ],
  "edges": [
    { "from": "gather", "to": "spread" },
    { "from": "grade", "type": "conditional", "router": "next", "routes": { "ask": "clarify", "pay": "pay" }, "when": { "ask": "the question is unclear" } },
    { "from": "clarify", "to": "look" },
    { "from": "pay", "to": "look" },
    { "from": "look", "to": "sum" },
    { "from": "sum", "to": "END" }
  ]
}`
	f, err := Load([]byte(src))
	if err != nil {
		t.Fatal(err)
	}
	if p := Validate(f); len(p) > 0 {
		t.Fatalf("the test flow must be valid: %v", p)
	}
	r := CheckReadiness(f)
	if r.Ready {
		t.Errorf("Ready = true, want false")
	}
	want := []string{
		"NO_DESCRIPTION@description",
		"NO_OUTPUTS@outputs",
		"CHANNEL_UNTYPED@state.doc",
		"HANDLER_UNDESCRIBED@nodes[0]",
		"ROUTE_UNEXPLAINED@edges[1].when.pay",
		"TOOL_UNDESCRIBED@nodes[5].tool",
		"CHANNEL_FORGETS_BETWEEN_TURNS@state.spent",
		"FANOUT_MAY_SILENCE_THE_TAIL@nodes[1]",
		"LLM_SHAPE_UNCHECKED@nodes[2]",
		"ASK_OVERWRITES_INPUT@nodes[3]",
		"WRITE_WITHOUT_APPROVAL@nodes[4]",
		"VIEW_SHOWS_RAW_DATA@nodes[5].approval.show[0]",
		"DESCRIPTION_TOO_THIN@nodes[6].description",
		"CONVERSATION_UNREAD@conversation",
		"TOOL_WITHOUT_ENDPOINT@tools[0].description",
		"MCP_PACKAGE_MISSING@requires.services.orders",
	}
	if diff := cmp.Diff(want, codes(r)); diff != "" {
		t.Errorf("findings (-want +got):\n%s", diff)
	}
	wantPlan := Plan{
		Handlers: []string{"gather", "sumUp"},
		Routers:  []string{"next"},
		Tools:    []string{"fetch_rates"},
		Services: []string{"orders"},
		Declared: []string{"pay", "pay.lookup", "pay.refund"},
	}
	if diff := cmp.Diff(wantPlan, r.Plan); diff != "" {
		t.Errorf("plan (-want +got):\n%s", diff)
	}
	for _, fd := range r.Findings {
		if fd.Message == "" || strings.HasSuffix(fd.Message, ".") {
			t.Errorf("finding %s: message %q", fd.Code, fd.Message)
		}
	}
}

// TestReadinessShapeUnchecked: an object or list channel filled by an llm
// node with no schema is a warning; with a schema, or into a string, it is
// nothing.
func TestReadinessShapeUnchecked(t *testing.T) {
	t.Parallel()
	const src = `{
  "version": "0.17", "start": "a",
  "state": { "o": { "type": "object" }, "l": { "type": "list" }, "s": { "type": "string" }, "c": { "type": "object" } },
  "nodes": [
    { "id": "a", "type": "llm", "prompt": "p", "output": "o" },
    { "id": "b", "type": "llm", "prompt": "p", "output": "l" },
    { "id": "c", "type": "llm", "prompt": "p", "output": "s" },
    { "id": "d", "type": "llm", "prompt": "p", "output": "c", "schema": { "type": "object" } }
  ],
  "edges": [ { "from": "a", "to": "b" }, { "from": "b", "to": "c" }, { "from": "c", "to": "d" }, { "from": "d", "to": "END" } ]
}`
	f, err := Load([]byte(src))
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, fd := range CheckReadiness(f).Findings {
		if fd.Code == ReadyShapeUnchecked {
			if fd.Severity != SeverityWarning {
				t.Errorf("%v: severity %s, want a warning", fd, fd.Severity)
			}
			got = append(got, fd.Path)
		}
	}
	if diff := cmp.Diff([]string{"nodes[0]", "nodes[1]"}, got); diff != "" {
		t.Errorf("LLM_SHAPE_UNCHECKED paths (-want +got):\n%s", diff)
	}
}

// TestReadinessRoutedFanout: routing around a fan-out from the node in
// front of it silences FANOUT_MAY_SILENCE_THE_TAIL.
func TestReadinessRoutedFanout(t *testing.T) {
	t.Parallel()
	r := CheckReadiness(loadTestdata(t, "parallel-review.json"))
	for _, fd := range r.Findings {
		if fd.Code == ReadyFanoutSilences {
			t.Errorf("parallel-review routes around its fan-out, yet: %v", fd)
		}
	}
}

// TestReadinessOfAnInvalidFlow: a flow that does not validate is not ready,
// and its problems are findings.
func TestReadinessOfAnInvalidFlow(t *testing.T) {
	t.Parallel()
	f, err := Load([]byte(`{"version":"9.9","start":"a","nodes":[{"id":"a","handler":"h"}],"edges":[{"from":"a","to":"END"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	r := CheckReadiness(f)
	if r.Ready || len(r.Findings) == 0 || r.Findings[0].Code != CodeUnsupportedVersion {
		t.Errorf("CheckReadiness = %+v, want not ready with UNSUPPORTED_VERSION first", r)
	}
}
