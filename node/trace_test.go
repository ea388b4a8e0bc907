package node_test

import (
	"context"
	"regexp"
	"strings"
	"testing"
	"time"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	boardv1 "github.com/symphonix/symphonix/api/symphonix/board/v1"
	"github.com/symphonix/symphonix/api/symphonix/board/v1/boardv1connect"
	"github.com/symphonix/symphonix/identity"
	"github.com/symphonix/symphonix/internal/boardtest"
	"github.com/symphonix/symphonix/node"
)

func inMemoryTraces(t *testing.T) (*sdktrace.TracerProvider, *tracetest.InMemoryExporter) {
	t.Helper()
	spans := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(spans))
	t.Cleanup(func() { _ = tp.Shutdown(context.Background()) })
	return tp, spans
}

// spansNamed waits until spans holds at least n ended spans named name
// for which match holds, and returns them.
func spansNamed(t *testing.T, spans *tracetest.InMemoryExporter, name string, n int, match func(tracetest.SpanStub) bool) []tracetest.SpanStub {
	t.Helper()
	var found []tracetest.SpanStub
	boardtest.Eventually(t, time.Minute, "span "+name, func() bool {
		found = found[:0]
		for _, s := range spans.GetSpans() {
			if s.Name == name && (match == nil || match(s)) {
				found = append(found, s)
			}
		}
		return len(found) >= n
	})
	return found
}

func attrOf(s tracetest.SpanStub, key string) string {
	for _, kv := range s.Attributes {
		if string(kv.Key) == key {
			return kv.Value.String()
		}
	}
	return ""
}

// TestTraceAcrossTheLink: with an in-memory exporter on each side, a run
// that pauses at a governed approval, the board's handling of the raise,
// the decision, and the run the decision resumes are one trace: the
// agent's run span, the board's raise span its child, the decision span
// the raise's, the agent's resume span the decision's, and the resumed
// run's nodes and calls under it. Nodes, model calls and tool calls have
// spans under their run's; the link has a client span whose child is the
// board's server span. No span holds a payload.
func TestTraceAcrossTheLink(t *testing.T) {
	t.Parallel()
	boardTP, boardSpans := inMemoryTraces(t)
	agentTP, agentSpans := inMemoryTraces(t)
	bt := boardtest.Start(t, boardtest.Options{TracerProvider: boardTP})
	admin := bt.Client(bt.OperatorToken("root", identity.RoleAdmin))
	if _, err := boardv1connect.NewApprovalServiceClient(admin).PutRule(t.Context(),
		&boardv1.PutRuleRequest{Rule: &boardv1.Rule{Agent: "*", Node: "*", Role: boardv1.Role_ROLE_APPROVER}}); err != nil {
		t.Fatalf("PutRule: %v", err)
	}
	g := &governance{
		bt:       bt,
		tools:    boardv1connect.NewToolServiceClient(admin),
		approver: boardv1connect.NewApprovalServiceClient(bt.Client(bt.OperatorToken("ada", identity.RoleApprover))),
	}
	dir := deskDir(t)
	s := startServe(t, node.Config{Dir: dir, BoardURL: bt.URL, Token: bt.AgentToken("refund-desk"), TracerProvider: agentTP})
	s.out.wait(t, regexp.MustCompile(`^agent refund-desk: linked to `), 60*time.Second)
	if _, err := g.tools.ReplaceSwitches(t.Context(), &boardv1.ReplaceSwitchesRequest{
		Agent: "refund-desk", On: []string{"orders.lookup_order", "orders.refund"}}); err != nil {
		t.Fatalf("ReplaceSwitches: %v", err)
	}
	s.out.wait(t, regexp.MustCompile(`^agent refund-desk: tools: the board switched on 2: `), 60*time.Second)

	const thread = "traced"
	var first turn
	if status := call(t, "POST", s.url+"/api/threads/"+thread+"/messages", askForRefund, &first); status != 200 || first.Pending == nil {
		t.Fatalf("message = %d %+v, want the refund's approval", status, first)
	}
	a := g.approvalOf(t, thread)
	g.approve(t, a)
	s.out.wait(t, regexp.MustCompile(`^thread `+thread+`: the board decided; the run finished$`), 60*time.Second)

	run := spansNamed(t, agentSpans, "run", 1, func(s tracetest.SpanStub) bool { return attrOf(s, "symphonix.thread") == thread })[0]
	id := run.SpanContext.TraceID()
	if attrOf(run, "symphonix.run.id") == "" || attrOf(run, "symphonix.run.outcome") != "run paused" || attrOf(run, "symphonix.run.waits_for") != "board" {
		t.Errorf("run span attributes %v: want its run id, paused, waiting for the board", run.Attributes)
	}
	raise := spansNamed(t, boardSpans, "approval raise", 1, nil)[0]
	if raise.SpanContext.TraceID() != id || raise.Parent.SpanID() != run.SpanContext.SpanID() {
		t.Errorf("the board's raise span: trace %s parent %s, want the run's trace %s and span %s",
			raise.SpanContext.TraceID(), raise.Parent.SpanID(), id, run.SpanContext.SpanID())
	}
	decide := spansNamed(t, boardSpans, "approval decide", 1, nil)[0]
	if decide.SpanContext.TraceID() != id || decide.Parent.SpanID() != raise.SpanContext.SpanID() {
		t.Errorf("the board's decision span: trace %s parent %s, want %s and the raise's span %s",
			decide.SpanContext.TraceID(), decide.Parent.SpanID(), id, raise.SpanContext.SpanID())
	}
	resume := spansNamed(t, agentSpans, "run resume", 1, nil)[0]
	if resume.SpanContext.TraceID() != id || resume.Parent.SpanID() != decide.SpanContext.SpanID() {
		t.Errorf("the agent's resume span: trace %s parent %s, want %s and the decision's span %s",
			resume.SpanContext.TraceID(), resume.Parent.SpanID(), id, decide.SpanContext.SpanID())
	}
	if attrOf(resume, "symphonix.approval.id") != a.GetId() || attrOf(resume, "symphonix.run.outcome") != "run finished" {
		t.Errorf("resume span attributes %v: want approval %s, finished", resume.Attributes, a.GetId())
	}

	// The nodes and calls before the pause are under the run, those after
	// it under the resume.
	under := func(name string, parent tracetest.SpanStub) tracetest.SpanStub {
		t.Helper()
		return spansNamed(t, agentSpans, name, 1, func(s tracetest.SpanStub) bool {
			return s.Parent.SpanID() == parent.SpanContext.SpanID()
		})[0]
	}
	lookup := under("node lookup", run)
	under("execute_tool orders.lookup_order", lookup)
	decideNode := under("node decide", run)
	chat := under("chat", decideNode)
	if attrOf(chat, "gen_ai.operation.name") != "chat" || attrOf(chat, "symphonix.node") != "decide" {
		t.Errorf("model call span attributes %v", chat.Attributes)
	}
	pay := under("node pay", resume)
	if pay.SpanContext.TraceID() != id {
		t.Errorf("the resumed node's trace %s, want %s", pay.SpanContext.TraceID(), id)
	}
	under("execute_tool orders.refund", pay)
	under("chat", under("node answer", resume))

	if err := s.shutdown(t); err != nil {
		t.Fatalf("Serve = %v", err)
	}
	client := spansNamed(t, agentSpans, "symphonix.board.v1.AgentLinkService/Link", 1, nil)[0]
	if client.SpanKind != trace.SpanKindClient {
		t.Errorf("link span kind %v, want client", client.SpanKind)
	}
	spansNamed(t, boardSpans, "symphonix.board.v1.AgentLinkService/Link", 1, func(s tracetest.SpanStub) bool {
		return s.Parent.SpanID() == client.SpanContext.SpanID() && s.SpanKind == trace.SpanKindServer
	})

	for _, side := range []*tracetest.InMemoryExporter{agentSpans, boardSpans} {
		for _, s := range side.GetSpans() {
			for _, kv := range s.Attributes {
				if v := kv.Value.String(); strings.Contains(v, "A-1001") || strings.Contains(v, "broken") || strings.Contains(v, "Refund") {
					t.Errorf("span %s: %s = %q holds a payload", s.Name, kv.Key, v)
				}
			}
		}
	}
}
