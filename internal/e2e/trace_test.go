package e2e

import (
	"bytes"
	"encoding/hex"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"

	"connectrpc.com/connect/v2"

	boardv1 "github.com/symphonix/symphonix/api/symphonix/board/v1"
	"github.com/symphonix/symphonix/api/symphonix/board/v1/boardv1connect"
	"github.com/symphonix/symphonix/internal/boardtest"
)

// otlpReceiver is a collector as far as the test needs one: it takes
// OTLP/HTTP exports at /v1/traces and keeps their bodies.
type otlpReceiver struct {
	mu     sync.Mutex
	bodies [][]byte
}

func (r *otlpReceiver) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	body, _ := io.ReadAll(req.Body)
	if req.URL.Path == "/v1/traces" && req.Method == "POST" {
		r.mu.Lock()
		r.bodies = append(r.bodies, body)
		r.mu.Unlock()
	}
	w.Header().Set("Content-Type", "application/x-protobuf")
	w.WriteHeader(http.StatusOK)
}

// has reports whether an export held every one of words (as bytes: an
// OTLP protobuf holds its strings as they are).
func (r *otlpReceiver) has(words ...[]byte) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, b := range r.bodies {
		ok := true
		for _, w := range words {
			ok = ok && bytes.Contains(b, w)
		}
		if ok {
			return true
		}
	}
	return false
}

// TestTracesExported: with OTEL_EXPORTER_OTLP_ENDPOINT set, the board and
// the agent say where they export, and by the time each has stopped on
// SIGTERM its spans have reached the collector under its service name:
// the board's span of an operator's RPC in the operator's trace, and both
// sides' spans of the agent's link. The board's line for that RPC carries
// the trace's id.
func TestTracesExported(t *testing.T) {
	t.Parallel()
	recv := &otlpReceiver{}
	collector := httptest.NewServer(recv)
	t.Cleanup(collector.Close)
	env := []string{"OTEL_EXPORTER_OTLP_ENDPOINT=" + collector.URL, "OTEL_SERVICE_NAME=", "OTEL_TRACES_SAMPLER="}

	data := t.TempDir()
	boardProc := startWithEnv(t, env, "board", "--data", data, "--listen", "127.0.0.1:0")
	url := boardProc.waitLine(t, listening)[1]
	boardProc.waitLine(t, regexp.MustCompile(`msg=tracing exporting_to="`+regexp.QuoteMeta(collector.URL)+`/v1/traces \(http/protobuf\)"`))
	viewer, _ := runCmd(t, "board", "token", "operator", "--data", data, "--name", "vic", "--role", "viewer")
	deskTok, _ := runCmd(t, "board", "token", "agent", "--data", data, "--name", "traced")
	agent := startWithEnv(t, env, "agent", "--monitor", url, "--token", strings.TrimSpace(deskTok), helloDir(t, "traced"))
	agent.waitLine(t, regexp.MustCompile(`agent traced: linked to`))

	const traceID = "4bf92f3577b34da6a3ce929d0e0e4736"
	ctx, info := connect.NewClientContext(t.Context())
	info.RequestHeader().Set("traceparent", "00-"+traceID+"-00f067aa0ba902b7-01")
	agents := boardv1connect.NewAgentServiceClient(boardtest.NewClient(url, strings.TrimSpace(viewer)))
	if _, err := agents.ListAgents(ctx, &boardv1.ListAgentsRequest{}); err != nil {
		t.Fatalf("ListAgents: %v", err)
	}
	boardProc.waitLine(t, regexp.MustCompile(`msg=rpc procedure=/symphonix.board.v1.AgentService/ListAgents .*trace_id=`+traceID))

	if err := agent.stop(t, syscall.SIGTERM); err != nil {
		t.Errorf("agent after SIGTERM: %v", err)
	}
	if err := boardProc.stop(t, syscall.SIGTERM); err != nil {
		t.Errorf("board after SIGTERM: %v", err)
	}
	id, _ := hex.DecodeString(traceID)
	link := []byte("symphonix.board.v1.AgentLinkService/Link")
	for what, words := range map[string][][]byte{
		"the board's span of ListAgents, in the operator's trace": {[]byte("symphonix-board"), []byte("symphonix.board.v1.AgentService/ListAgents"), id},
		"the board's span of the link":                            {[]byte("symphonix-board"), link},
		"the agent's span of the link":                            {[]byte("symphonix-agent"), link},
	} {
		if !recv.has(words...) {
			t.Errorf("the collector did not get %s", what)
		}
	}
}
