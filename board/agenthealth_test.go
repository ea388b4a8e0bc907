package board_test

import (
	"strings"
	"sync/atomic"
	"testing"
	"time"
	"unicode/utf8"

	"connectrpc.com/connect/v2"
	"google.golang.org/protobuf/types/known/durationpb"
	"google.golang.org/protobuf/types/known/timestamppb"

	boardv1 "github.com/symphonix/symphonix/api/symphonix/board/v1"
	"github.com/symphonix/symphonix/board"
	"github.com/symphonix/symphonix/identity"
	"github.com/symphonix/symphonix/internal/boardtest"
)

func healthReport(checks ...*boardv1.HealthCheck) *boardv1.LinkRequest {
	return &boardv1.LinkRequest{Kind: &boardv1.LinkRequest_Health{Health: &boardv1.HealthReport{
		Status: boardv1.HealthStatus_HEALTH_STATUS_OK, Checks: checks, StartTime: timestamppb.Now(),
	}}}
}

func check(name string, st boardv1.CheckStatus, detail string) *boardv1.HealthCheck {
	return &boardv1.HealthCheck{Name: name, Status: st, Duration: durationpb.New(3 * time.Millisecond), Detail: detail}
}

const (
	checkOK    = boardv1.CheckStatus_CHECK_STATUS_OK
	checkError = boardv1.CheckStatus_CHECK_STATUS_ERROR
)

// TestHealthReports: the board keeps an agent's rounds, reads the round's
// status from its lines, shows the latest on the agent and in the watch,
// keeps every one in the history, newest first, and refuses a report that
// comes too soon, with the link up.
func TestHealthReports(t *testing.T) {
	t.Parallel()
	var ahead atomic.Int64 // how far the board's clock is ahead of the wall's
	bt := boardtest.Start(t, boardtest.Options{Now: func() time.Time { return time.Now().Add(time.Duration(ahead.Load())) }})
	agents := bt.Agents(bt.OperatorToken("ops", identity.RoleViewer))
	watch, err := agents.WatchAgents(t.Context(), &boardv1.WatchAgentsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	defer watch.Close()

	l, w := openLinkWith(t, bt, &boardv1.Hello{Name: "desk", Protocol: board.Protocol, Capabilities: []string{"health", "users"}})
	if w.GetMinProtocol() != board.MinProtocol || w.GetMaxProtocol() != board.Protocol || w.GetProtocol() != board.Protocol {
		t.Errorf("welcome protocols %q %q..%q, want %q %q..%q", w.GetProtocol(), w.GetMinProtocol(), w.GetMaxProtocol(), board.Protocol, board.MinProtocol, board.Protocol)
	}
	if a := getAgent(t, agents, "desk"); a.GetHealth() != nil {
		t.Fatalf("health before any report = %v, want none", a.GetHealth())
	}
	// Lines out of order, one failing: the board says degraded, by name.
	l.send(healthReport(check("waiting", checkOK, ""), check("mcp:orders", checkError, "no answer within 5s")))
	var a *boardv1.Agent
	boardtest.Eventually(t, 10*time.Second, "the first round kept", func() bool {
		a = getAgent(t, agents, "desk")
		return a.GetHealth() != nil
	})
	h := a.GetHealth()
	if h.GetStatus() != boardv1.HealthStatus_HEALTH_STATUS_DEGRADED || len(h.GetChecks()) != 2 ||
		h.GetChecks()[0].GetName() != "mcp:orders" || h.GetChecks()[0].GetStatus() != checkError ||
		h.GetChecks()[0].GetDetail() != "no answer within 5s" || h.GetChecks()[1].GetName() != "waiting" ||
		h.GetChecks()[0].GetDuration().AsDuration() != 3*time.Millisecond || h.GetReceiveTime() == nil {
		t.Errorf("health = %v, want degraded with mcp:orders failing, then waiting", h)
	}
	// The watch carries the change.
	for {
		msg, err := watch.Receive()
		if err != nil {
			t.Fatalf("watch ended: %v", err)
		}
		if got := msg.GetAgent(); got.GetName() == "desk" && got.GetHealth().GetStatus() == boardv1.HealthStatus_HEALTH_STATUS_DEGRADED {
			break
		}
	}

	// Too soon: refused, and the link stays up.
	l.send(healthReport(check("waiting", checkOK, "")))
	if m := l.next(); m.GetError().GetCode() != boardv1.LinkErrorCode_LINK_ERROR_CODE_RESOURCE_EXHAUSTED ||
		!strings.Contains(m.GetError().GetMessage(), "at most one every 5s") {
		t.Fatalf("a report too soon = %v, want resource_exhausted naming the limit", m)
	}
	l.ping(1)

	// Recovered, and a round that could not tell.
	ahead.Add(int64(6 * time.Second))
	l.send(healthReport(check("mcp:orders", checkOK, ""), check("waiting", checkOK, "")))
	l.ping(2)
	if got := getAgent(t, agents, "desk").GetHealth().GetStatus(); got != boardv1.HealthStatus_HEALTH_STATUS_OK {
		t.Errorf("after the recovery: %v, want ok", got)
	}
	ahead.Add(int64(6 * time.Second))
	l.send(healthReport(check("model", boardv1.CheckStatus_CHECK_STATUS_UNSPECIFIED, "")))
	l.ping(3)
	if got := getAgent(t, agents, "desk").GetHealth(); got.GetStatus() != boardv1.HealthStatus_HEALTH_STATUS_UNKNOWN ||
		got.GetChecks()[0].GetStatus() != boardv1.CheckStatus_CHECK_STATUS_UNKNOWN {
		t.Errorf("a line of no status: %v, want unknown (never ok)", got)
	}

	// The history: newest first, a page at a time.
	var statuses []boardv1.HealthStatus
	token := ""
	for {
		res, err := agents.GetHealthHistory(t.Context(), &boardv1.GetHealthHistoryRequest{Name: "desk", PageSize: 2, PageToken: token})
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range res.GetRounds() {
			statuses = append(statuses, r.GetStatus())
		}
		if token = res.GetNextPageToken(); token == "" {
			break
		}
	}
	want := []boardv1.HealthStatus{boardv1.HealthStatus_HEALTH_STATUS_UNKNOWN, boardv1.HealthStatus_HEALTH_STATUS_OK, boardv1.HealthStatus_HEALTH_STATUS_DEGRADED}
	if len(statuses) != len(want) {
		t.Fatalf("history = %v, want %v", statuses, want)
	}
	for i := range want {
		if statuses[i] != want[i] {
			t.Errorf("history = %v, want %v", statuses, want)
			break
		}
	}
	if _, err := agents.GetHealthHistory(t.Context(), &boardv1.GetHealthHistoryRequest{Name: "nobody"}); connect.CodeOf(err) != connect.CodeNotFound {
		t.Errorf("history of an unknown agent: %v, want not_found", err)
	}
	if _, err := agents.GetHealthHistory(t.Context(), &boardv1.GetHealthHistoryRequest{}); connect.CodeOf(err) != connect.CodeInvalidArgument ||
		!strings.Contains(err.Error(), "name: required") {
		t.Errorf("history of no agent: %v, want invalid_argument naming name", err)
	}
}

// TestHealthReportBounds: a report of 10,000 lines, a line named with a
// control character, or a capability the agent never announced is refused
// with a message naming the field; a detail of a mebibyte is cut to what
// the board keeps, saying so; the link stays up through all of them.
func TestHealthReportBounds(t *testing.T) {
	t.Parallel()
	bt := boardtest.Start(t, boardtest.Options{Limits: board.Limits{HealthEvery: time.Nanosecond}})
	agents := bt.Agents(bt.OperatorToken("ops", identity.RoleViewer))
	l, _ := openLinkWith(t, bt, &boardv1.Hello{Name: "desk", Protocol: board.Protocol, Capabilities: []string{"health"}})

	many := make([]*boardv1.HealthCheck, 10_000)
	for i := range many {
		many[i] = check("c"+strings.Repeat("x", i%50), checkOK, "")
	}
	refusals := []struct {
		name   string
		report *boardv1.LinkRequest
		says   string
	}{
		{"10,000 lines", healthReport(many...), "health.checks: 10000 lines, at most 100"},
		{"a control character", healthReport(check("ok", checkOK, ""), check("bad\x1b[31m", checkOK, "")), "health.checks[1].name: control characters"},
		{"no name", healthReport(check("", checkOK, "")), "health.checks[0].name: required"},
		{"a long name", healthReport(check(strings.Repeat("n", 65), checkOK, "")), "health.checks[0].name: 65 bytes, at most 64"},
		{"a name twice", healthReport(check("a", checkOK, ""), check("a", checkError, "")), `health.checks[1].name: "a" twice`},
		{"a negative duration", healthReport(&boardv1.HealthCheck{Name: "a", Duration: durationpb.New(-time.Second)}), "health.checks[0].duration"},
	}
	for i, tc := range refusals {
		l.send(tc.report)
		m := l.next()
		if m.GetError().GetCode() != boardv1.LinkErrorCode_LINK_ERROR_CODE_INVALID_ARGUMENT || m.GetError().GetMessage() != tc.says && !strings.HasPrefix(m.GetError().GetMessage(), tc.says) {
			t.Errorf("%s: %v, want invalid_argument %q", tc.name, m, tc.says)
		}
		l.ping(uint64(i + 1))
	}
	if a := getAgent(t, agents, "desk"); a.GetHealth() != nil {
		t.Errorf("after refusals only: health %v, want none kept", a.GetHealth())
	}

	// A detail of (nearly) a mebibyte: kept, cut, and saying so.
	huge := strings.Repeat("é", (1<<20-4096)/2)
	l.send(healthReport(check("big", checkError, huge)))
	l.ping(100)
	d := getAgent(t, agents, "desk").GetHealth().GetChecks()[0].GetDetail()
	if len(d) > 1024 || !utf8.ValidString(d) || !strings.HasSuffix(d, "(cut by the board at 1 KiB)") || !strings.HasPrefix(d, "éé") {
		t.Errorf("a 1 MiB detail kept as %d bytes ending %q, want at most 1024, valid UTF-8, saying it was cut", len(d), d[max(0, len(d)-40):])
	}

	// An agent that never announced health is refused, and nothing is kept.
	quiet, _ := openLinkWith(t, bt, &boardv1.Hello{Name: "quiet", Protocol: board.Protocol, Capabilities: []string{"users"}})
	quiet.send(healthReport(check("a", checkOK, "")))
	if m := quiet.next(); m.GetError().GetCode() != boardv1.LinkErrorCode_LINK_ERROR_CODE_FAILED_PRECONDITION ||
		!strings.Contains(m.GetError().GetMessage(), "did not announce the health capability") {
		t.Errorf("health from an agent without it = %v, want failed_precondition", m)
	}
	quiet.ping(1)
	if a := getAgent(t, agents, "quiet"); a.GetHealth() != nil || strings.Contains(strings.Join(a.GetCapabilities(), ","), "health") {
		t.Errorf("quiet = %v, want no health and no health capability", a)
	}
}
