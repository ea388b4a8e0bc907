package board_test

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"connectrpc.com/connect/v2"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"
	"golang.org/x/net/http2"
	"google.golang.org/protobuf/types/known/durationpb"

	boardv1 "github.com/symphonix/symphonix/api/symphonix/board/v1"
	"github.com/symphonix/symphonix/identity"
	"github.com/symphonix/symphonix/internal/boardtest"
	"github.com/symphonix/symphonix/telemetry"
)

// logBuffer is a log the board writes from many goroutines.
type logBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *logBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *logBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// lines are the log lines that contain every one of words.
func (b *logBuffer) lines(words ...string) []string {
	var out []string
	for _, l := range strings.Split(b.String(), "\n") {
		ok := l != ""
		for _, w := range words {
			ok = ok && strings.Contains(l, w)
		}
		if ok {
			out = append(out, l)
		}
	}
	return out
}

// tracedBoard is a board whose spans go to an in-memory exporter and whose
// log lines, through telemetry.LogHandler, to a buffer.
func tracedBoard(t *testing.T, opts boardtest.Options) (*boardtest.Board, *tracetest.InMemoryExporter, *logBuffer) {
	t.Helper()
	spans := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(spans))
	t.Cleanup(func() { _ = tp.Shutdown(context.Background()) })
	logs := &logBuffer{}
	opts.TracerProvider = tp
	opts.Logger = slog.New(telemetry.LogHandler(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug})))
	return boardtest.Start(t, opts), spans, logs
}

// spanNamed waits for the ended span named name for which match holds.
func spanNamed(t *testing.T, spans *tracetest.InMemoryExporter, name string, match func(tracetest.SpanStub) bool) tracetest.SpanStub {
	t.Helper()
	var found tracetest.SpanStub
	boardtest.Eventually(t, 10*time.Second, "span "+name, func() bool {
		for _, s := range spans.GetSpans() {
			if s.Name == name && (match == nil || match(s)) {
				found = s
				return true
			}
		}
		return false
	})
	return found
}

func attr(s tracetest.SpanStub, key string) attribute.Value {
	for _, kv := range s.Attributes {
		if string(kv.Key) == key {
			return kv.Value
		}
	}
	return attribute.Value{}
}

// TestRPCSpans: every RPC gets a server span by the conventions, over
// Connect and gRPC alike; a caller's traceparent makes it a child of the
// caller's span; an RPC refused for the caller's fault is not an error.
func TestRPCSpans(t *testing.T) {
	t.Parallel()
	bt, spans, _ := tracedBoard(t, boardtest.Options{})
	viewer := bt.OperatorToken("vic", identity.RoleViewer)
	const parent = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
	for name, want := range map[string]struct {
		system string
		status attribute.Value
	}{
		"connect": {"connect_rpc", attribute.Value{}},
		"grpc":    {"grpc", attribute.IntValue(0)},
	} {
		t.Run(name, func(t *testing.T) {
			ctx, info := connect.NewClientContext(t.Context())
			info.RequestHeader().Set("traceparent", parent)
			if _, err := bt.Agents(viewer, boardtest.Protocols[name]...).ListAgents(ctx, &boardv1.ListAgentsRequest{}); err != nil {
				t.Fatalf("ListAgents: %v", err)
			}
			s := spanNamed(t, spans, "symphonix.board.v1.AgentService/ListAgents", func(s tracetest.SpanStub) bool {
				return attr(s, "rpc.system").AsString() == want.system && s.Parent.IsValid()
			})
			if s.SpanKind != trace.SpanKindServer {
				t.Errorf("kind = %v, want server", s.SpanKind)
			}
			if got := s.Parent.TraceID().String(); got != "4bf92f3577b34da6a3ce929d0e0e4736" || s.Parent.SpanID().String() != "00f067aa0ba902b7" {
				t.Errorf("parent = %v, want the caller's span", s.Parent)
			}
			if s.SpanContext.TraceID() != s.Parent.TraceID() {
				t.Errorf("trace id %s, want the caller's", s.SpanContext.TraceID())
			}
			if got := attr(s, "rpc.service").AsString(); got != "symphonix.board.v1.AgentService" {
				t.Errorf("rpc.service = %q", got)
			}
			if got := attr(s, "rpc.method").AsString(); got != "ListAgents" {
				t.Errorf("rpc.method = %q", got)
			}
			if got := attr(s, "rpc.grpc.status_code"); got != want.status {
				t.Errorf("rpc.grpc.status_code = %v, want %v", got.String(), want.status.String())
			}
			if s.Status.Code == codes.Error {
				t.Errorf("status = %v, want unset", s.Status)
			}
		})
	}

	_, err := bt.Agents("not a token", boardtest.Protocols["grpc"]...).GetAgent(t.Context(), &boardv1.GetAgentRequest{Name: "x"})
	if connect.CodeOf(err) != connect.CodeUnauthenticated {
		t.Fatalf("GetAgent with a bad token = %v, want unauthenticated", err)
	}
	s := spanNamed(t, spans, "symphonix.board.v1.AgentService/GetAgent", nil)
	if got := attr(s, "rpc.grpc.status_code").AsInt64(); got != int64(connect.CodeUnauthenticated) {
		t.Errorf("refused: rpc.grpc.status_code = %d, want %d", got, connect.CodeUnauthenticated)
	}
	if s.Status.Code == codes.Error {
		t.Errorf("refused: status = %v, want unset (the caller's fault, not the server's)", s.Status)
	}
	for _, s := range spans.GetSpans() {
		for _, kv := range s.Attributes {
			if strings.Contains(kv.Value.String(), viewer) {
				t.Errorf("span %s attribute %s holds the token", s.Name, kv.Key)
			}
		}
	}
}

// TestRequestIDs: every RPC and HTTP request gets an id, returned in
// X-Request-Id and on the RPC's log line with the trace's ids; a usable id
// from the client is kept.
func TestRequestIDs(t *testing.T) {
	t.Parallel()
	bt, _, logs := tracedBoard(t, boardtest.Options{})
	viewer := bt.OperatorToken("vic", identity.RoleViewer)
	for name, opts := range boardtest.Protocols {
		ctx, info := connect.NewClientContext(t.Context())
		info.RequestHeader().Set("X-Request-Id", "mine-"+name)
		if _, err := bt.Agents(viewer, opts...).ListAgents(ctx, &boardv1.ListAgentsRequest{}); err != nil {
			t.Fatalf("%s: ListAgents: %v", name, err)
		}
		if got := info.ResponseHeader().Get("X-Request-Id"); got != "mine-"+name {
			t.Errorf("%s: X-Request-Id = %q, want the client's", name, got)
		}
		lines := logs.lines("msg=rpc", "procedure=/symphonix.board.v1.AgentService/ListAgents", "request_id=mine-"+name)
		if len(lines) != 1 {
			t.Fatalf("%s: rpc log lines with the request id: %q; want 1 in\n%s", name, lines, logs)
		}
		if !strings.Contains(lines[0], "trace_id=") || !strings.Contains(lines[0], "span_id=") {
			t.Errorf("%s: rpc log line %q has no trace_id and span_id", name, lines[0])
		}

		ctx, info = connect.NewClientContext(t.Context())
		info.RequestHeader().Set("X-Request-Id", "bad id with spaces")
		if _, err := bt.Agents(viewer, opts...).ListAgents(ctx, &boardv1.ListAgentsRequest{}); err != nil {
			t.Fatalf("%s: ListAgents: %v", name, err)
		}
		if got := info.ResponseHeader().Get("X-Request-Id"); !telemetry.UsableRequestID(got) || strings.Contains(got, "bad") {
			t.Errorf("%s: an unusable X-Request-Id came back as %q, want one the board made", name, got)
		}
	}
	res, err := bt.HTTPClient().Get(bt.URL + "/.well-known/jwks.json")
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if got := res.Header.Get("X-Request-Id"); !telemetry.UsableRequestID(got) {
		t.Errorf("GET /.well-known/jwks.json: X-Request-Id = %q, want one", got)
	}
}

// TestHTTPErrorLog: what net/http says (here a failed TLS handshake) is a
// line of the board's log, not of the standard logger.
func TestHTTPErrorLog(t *testing.T) {
	t.Parallel()
	bt, _, logs := tracedBoard(t, boardtest.Options{TLS: true})
	c, err := net.Dial("tcp", bt.Addr)
	if err != nil {
		t.Fatal(err)
	}
	_, _ = io.WriteString(c, "GET / HTTP/1.1\r\nHost: x\r\n\r\n")
	_, _ = io.Copy(io.Discard, c)
	c.Close()
	boardtest.Eventually(t, 10*time.Second, "the handshake error in the board's log", func() bool {
		return len(logs.lines("level=WARN", "TLS handshake error")) > 0
	})
}

// TestHTTP2ErrorLog: what the HTTP/2 server serving h2c connections
// says (here a client's GOAWAY with an error) is a line of the board's
// log too: it uses the http.Server's ErrorLog.
func TestHTTP2ErrorLog(t *testing.T) {
	t.Parallel()
	bt, _, logs := tracedBoard(t, boardtest.Options{})
	c, err := net.Dial("tcp", bt.Addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := io.WriteString(c, http2.ClientPreface); err != nil {
		t.Fatal(err)
	}
	fr := http2.NewFramer(c, c)
	if err := fr.WriteSettings(); err != nil {
		t.Fatal(err)
	}
	if err := fr.WriteGoAway(0, http2.ErrCodeProtocol, nil); err != nil {
		t.Fatal(err)
	}
	boardtest.Eventually(t, 10*time.Second, "the HTTP/2 server's line in the board's log", func() bool {
		return len(logs.lines("level=WARN", "http2: received GOAWAY")) > 0
	})
}

// TestDecisionTrace: a raise carrying the agent's traceparent, the board's
// handling of it, the decision and the traceparent the decision goes back
// with are one trace: the raise's span is a child of the agent's, the
// decision's a child of the raise's, linked to the Decide RPC's span.
func TestDecisionTrace(t *testing.T) {
	t.Parallel()
	bt, spans, _ := tracedBoard(t, boardtest.Options{})
	putRule(t, approvalsClient(bt, bt.OperatorToken("root", identity.RoleAdmin)),
		&boardv1.Rule{Agent: "*", Node: "*", Role: boardv1.Role_ROLE_APPROVER, TimeLimit: durationpb.New(time.Hour)})
	l := openLink(t, bt, "desk")
	const agentSpan = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"
	r := refund("run-1", 1)
	r.Traceparent = agentSpan
	raised := l.raised(r)

	raise := spanNamed(t, spans, "approval raise", nil)
	if raise.Parent.SpanID().String() != "b7ad6b7169203331" || raise.SpanContext.TraceID().String() != "0af7651916cd43dd8448eb211c80319c" {
		t.Errorf("raise span: parent %v, trace %s; want the agent's span and trace", raise.Parent, raise.SpanContext.TraceID())
	}
	if got := attr(raise, "symphonix.approval.id").AsString(); got != raised.GetApprovalId() {
		t.Errorf("raise span: symphonix.approval.id = %q, want %q", got, raised.GetApprovalId())
	}

	ctx, info := connect.NewClientContext(t.Context())
	info.RequestHeader().Set("traceparent", "00-11111111111111111111111111111111-2222222222222222-01")
	_, err := approvalsClient(bt, bt.OperatorToken("ann", identity.RoleApprover)).Decide(ctx, &boardv1.DecideRequest{
		Id: raised.GetApprovalId(), Say: boardv1.Say_SAY_YES, Digest: digestOf(1),
	})
	if err != nil {
		t.Fatalf("Decide: %v", err)
	}
	d := l.next().GetDecision()
	if d == nil {
		t.Fatal("no decision pushed")
	}
	decide := spanNamed(t, spans, "approval decide", nil)
	rpc := spanNamed(t, spans, "symphonix.board.v1.ApprovalService/Decide", nil)
	if decide.Parent.SpanID() != raise.SpanContext.SpanID() || decide.SpanContext.TraceID() != raise.SpanContext.TraceID() {
		t.Errorf("decision span: parent %v, want the raise's span %v", decide.Parent, raise.SpanContext)
	}
	if len(decide.Links) != 1 || decide.Links[0].SpanContext.SpanID() != rpc.SpanContext.SpanID() {
		t.Errorf("decision span: links %v, want the Decide RPC's span %v", decide.Links, rpc.SpanContext)
	}
	if got := attr(decide, "symphonix.approval.say").AsString(); got != "yes" {
		t.Errorf("decision span: say %q, want yes", got)
	}
	if want := telemetry.Traceparent(decide.SpanContext); d.GetTraceparent() != want {
		t.Errorf("the decision's traceparent = %q, want the decision span's %q", d.GetTraceparent(), want)
	}
	// Raised again (as after a redial), the decision comes back with the
	// same traceparent; operators are not sent it.
	again := l.raised(r)
	if got := again.GetDecision().GetTraceparent(); got != d.GetTraceparent() {
		t.Errorf("raised again: traceparent %q, want %q", got, d.GetTraceparent())
	}
	got, err := approvalsClient(bt, bt.OperatorToken("vic", identity.RoleViewer)).GetApproval(t.Context(), &boardv1.GetApprovalRequest{Id: raised.GetApprovalId()})
	if err != nil || got.GetApproval().GetDecision().GetTraceparent() != "" {
		t.Errorf("GetApproval = %v, %v; want a decision without a traceparent", got, err)
	}
}

// TestDecisionTraceOff: with the board not tracing, the agent's trace
// context goes back with the decision as it came, so the agent's resumed
// run still continues its trace; a raise without one gets none back.
func TestDecisionTraceOff(t *testing.T) {
	t.Parallel()
	bt := boardtest.Start(t, boardtest.Options{})
	putRule(t, approvalsClient(bt, bt.OperatorToken("root", identity.RoleAdmin)),
		&boardv1.Rule{Agent: "*", Node: "*", Role: boardv1.Role_ROLE_APPROVER, TimeLimit: durationpb.New(time.Hour)})
	l := openLink(t, bt, "desk")
	const agentSpan = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"
	for i, tp := range []string{agentSpan, "", "not a traceparent"} {
		r := refund("run-"+string(rune('a'+i)), 1)
		r.Traceparent = tp
		raised := l.raised(r)
		_, err := approvalsClient(bt, bt.OperatorToken("ann", identity.RoleApprover)).Decide(t.Context(), &boardv1.DecideRequest{
			Id: raised.GetApprovalId(), Say: boardv1.Say_SAY_NO, Digest: digestOf(1),
		})
		if err != nil {
			t.Fatalf("Decide: %v", err)
		}
		want := tp
		if i == 2 {
			want = ""
		}
		if got := l.next().GetDecision().GetTraceparent(); got != want {
			t.Errorf("raised with %q: decision traceparent %q, want %q", tp, got, want)
		}
	}
}
