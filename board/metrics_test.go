package board_test

import (
	"net/http"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"google.golang.org/protobuf/types/known/durationpb"
	"google.golang.org/protobuf/types/known/timestamppb"

	boardv1 "github.com/symphonix/symphonix/api/symphonix/board/v1"
	"github.com/symphonix/symphonix/api/symphonix/board/v1/boardv1connect"
	"github.com/symphonix/symphonix/identity"
	"github.com/symphonix/symphonix/internal/boardtest"
)

// scrape is one scrape of the board's metrics: families by name.
type scrape map[string]*dto.MetricFamily

// scrapeMetrics GETs url with token ("" for none) and parses what it says.
func scrapeMetrics(t *testing.T, c *http.Client, url, token string) scrape {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s = %s, want 200", url, resp.Status)
	}
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(resp.Body)
	if err != nil {
		t.Fatalf("GET %s: not the text format: %v", url, err)
	}
	return fams
}

// value is the value of the series of family name whose labels include
// labels ("k", "v", ...): a counter's or gauge's value, a histogram's
// count; and whether there is one.
func (s scrape) value(name string, labels ...string) (float64, bool) {
	f := s[name]
	if f == nil {
		return 0, false
	}
	for _, m := range f.GetMetric() {
		if !hasLabels(m, labels) {
			continue
		}
		switch {
		case m.GetCounter() != nil:
			return m.GetCounter().GetValue(), true
		case m.GetGauge() != nil:
			return m.GetGauge().GetValue(), true
		case m.GetHistogram() != nil:
			return float64(m.GetHistogram().GetSampleCount()), true
		}
	}
	return 0, false
}

// total is the sum of the values of every series of family name (gauges
// and counters).
func (s scrape) total(name string) float64 {
	var sum float64
	for _, m := range s[name].GetMetric() {
		sum += m.GetGauge().GetValue() + m.GetCounter().GetValue()
	}
	return sum
}

func hasLabels(m *dto.Metric, labels []string) bool {
	for i := 0; i+1 < len(labels); i += 2 {
		found := false
		for _, l := range m.GetLabel() {
			if l.GetName() == labels[i] && l.GetValue() == labels[i+1] {
				found = true
			}
		}
		if !found {
			return false
		}
	}
	return true
}

// TestMetrics: after real traffic — an agent linked and gone, an approval
// raised under a rule and decided, an RPC with a bad token, a failed
// sign-in — the board's metrics say so, on its own address for an
// operator's token (and for nobody else) and on its metrics address
// without one; with the Go runtime's and the process's.
func TestMetrics(t *testing.T) {
	t.Parallel()
	bt, admin := decideBoard(t, nil, boardtest.Options{MetricsListen: "127.0.0.1:0"})
	rule := putRule(t, admin, &boardv1.Rule{Agent: "*", Node: "pay", Role: boardv1.Role_ROLE_APPROVER})
	c := bt.HTTPClient()
	viewer := bt.OperatorToken("vic", identity.RoleViewer)

	// Who may scrape the board's own address.
	for _, tc := range []struct {
		name  string
		token string
		want  int
	}{
		{"nobody", "", http.StatusUnauthorized},
		{"a bad token", "not-a-token", http.StatusUnauthorized},
		{"an agent", bt.AgentToken("desk"), http.StatusUnauthorized},
	} {
		req, _ := http.NewRequest(http.MethodGet, bt.URL+"/metrics", nil)
		if tc.token != "" {
			req.Header.Set("Authorization", "Bearer "+tc.token)
		}
		resp, body := bt.Do(req)
		if resp.StatusCode != tc.want || strings.Contains(string(body), "symphonix_") {
			t.Errorf("GET /metrics as %s = %s %q, want %d and no metrics", tc.name, resp.Status, body, tc.want)
		}
	}

	l := openLink(t, bt, "desk")
	a := l.raised(refund("run-1", 1))
	if _, err := decide(approver(bt, "ann"), t, a.GetApprovalId(), "yes", digestOf(1), ""); err != nil {
		t.Fatal(err)
	}
	// An RPC with a bad token, and a sign-in refused.
	if _, err := boardv1connect.NewAgentServiceClient(bt.Client("not-a-token")).ListAgents(t.Context(), &boardv1.ListAgentsRequest{}); err == nil {
		t.Fatal("ListAgents with a bad token: no error")
	}
	if w, err := bt.Agents("not-a-token").WatchAgents(t.Context(), &boardv1.WatchAgentsRequest{}); err == nil {
		if _, err := w.Receive(); err == nil {
			t.Fatal("WatchAgents with a bad token: no error")
		}
	}
	if resp, _ := bt.PostJSON("/auth/signin", map[string]string{"email": "nobody@example.com", "password": "wrong"}, "", ""); resp.StatusCode != http.StatusUnauthorized {
		t.Fatalf("sign-in of nobody = %s, want 401", resp.Status)
	}

	own := scrapeMetrics(t, c, bt.URL+"/metrics", viewer)
	open := scrapeMetrics(t, c, bt.MetricsURL+"/metrics", "")
	for _, s := range []scrape{own, open} {
		for _, tc := range []struct {
			name   string
			labels []string
			want   float64
		}{
			{"symphonix_agents", []string{"state", "linked"}, 1},
			{"symphonix_link_connects_total", nil, 1},
			{"symphonix_approvals_raised_total", []string{"rule", rule.GetId()}, 1},
			{"symphonix_approvals_decided_total", []string{"rule", rule.GetId(), "say", "yes"}, 1},
			{"symphonix_approval_decision_seconds", nil, 1},
			{"symphonix_rpc_requests_total", []string{"procedure", boardv1connect.AgentServiceListAgentsProcedure, "code", "unauthenticated"}, 1},
			{"symphonix_rpc_requests_total", []string{"procedure", boardv1connect.AgentServiceWatchAgentsProcedure, "code", "unauthenticated"}, 1},
			{"symphonix_rpc_requests_total", []string{"procedure", boardv1connect.ApprovalServiceDecideProcedure, "code", "ok"}, 1},
			{"symphonix_rpc_duration_seconds", []string{"procedure", boardv1connect.ApprovalServiceDecideProcedure}, 1},
			{"symphonix_signin_failures_total", []string{"reason", "refused"}, 1},
		} {
			if got, ok := s.value(tc.name, tc.labels...); !ok || got != tc.want {
				t.Errorf("%s%v = %v (there: %v), want %v", tc.name, tc.labels, got, ok, tc.want)
			}
		}
		if got := s.total("symphonix_approvals_pending"); got != 0 {
			t.Errorf("symphonix_approvals_pending: %v in all, want none: the one raised was decided", got)
		}
		for _, name := range []string{"symphonix_store_transaction_seconds", "symphonix_store_commit_group_size"} {
			if got, ok := s.value(name); !ok || got < 1 {
				t.Errorf("%s: %v observations, want some (the raise and the decision were written)", name, got)
			}
		}
		for _, name := range []string{"go_goroutines", "process_resident_memory_bytes"} {
			if _, ok := s[name]; !ok {
				t.Errorf("%s: not there, want the runtime's and the process's metrics", name)
			}
		}
	}
	// A procedure label takes only the procedures the board serves.
	for _, m := range open["symphonix_rpc_requests_total"].GetMetric() {
		for _, lp := range m.GetLabel() {
			if lp.GetName() == "procedure" && !strings.HasPrefix(lp.GetValue(), "/") && lp.GetValue() != "unknown" {
				t.Errorf("procedure label %q", lp.GetValue())
			}
		}
	}

	// A second approval pending, then the link gone: counted as closed.
	var decisions []*boardv1.ApprovalDecision
	l.raisedAmid(refund("run-2", 2), &decisions)
	if err := l.s.CloseSend(); err != nil {
		t.Fatal(err)
	}
	boardtest.Eventually(t, 10*time.Second, "the link counted as closed", func() bool {
		s := scrapeMetrics(t, c, bt.MetricsURL+"/metrics", "")
		closed, _ := s.value("symphonix_link_disconnects_total", "reason", "closed")
		linked, _ := s.value("symphonix_agents", "state", "linked")
		pending, _ := s.value("symphonix_approvals_pending", "rule", rule.GetId())
		return closed == 1 && linked == 0 && pending == 1 && s.total("symphonix_approvals_pending") == 1
	})
}

// TestMetricsExpiredAndCancelled: an approval past its rule's time limit
// is counted expired under its rule, and one an operator cancels is
// counted decided, said cancelled.
func TestMetricsExpiredAndCancelled(t *testing.T) {
	t.Parallel()
	bt, admin := decideBoard(t, nil, boardtest.Options{MetricsListen: "127.0.0.1:0", RevocationPoll: 20 * time.Millisecond})
	soon := putRule(t, admin, &boardv1.Rule{Agent: "*", Node: "pay", Role: boardv1.Role_ROLE_APPROVER, TimeLimit: durationpb.New(100 * time.Millisecond)})
	later := putRule(t, admin, &boardv1.Rule{Agent: "*", Node: "ship", Role: boardv1.Role_ROLE_APPROVER})
	l := openLink(t, bt, "desk")
	var ds []*boardv1.ApprovalDecision
	l.raisedAmid(refund("run-1", 1), &ds)
	ship := refund("run-2", 2)
	ship.Node = "ship"
	a := l.raisedAmid(ship, &ds)
	if _, err := approver(bt, "ann").Cancel(t.Context(), &boardv1.CancelRequest{Id: a.GetApprovalId()}); err != nil {
		t.Fatal(err)
	}
	c := bt.HTTPClient()
	boardtest.Eventually(t, 30*time.Second, "the expiry and the cancel counted", func() bool {
		s := scrapeMetrics(t, c, bt.MetricsURL+"/metrics", "")
		expired, _ := s.value("symphonix_approvals_expired_total", "rule", soon.GetId())
		cancelled, _ := s.value("symphonix_approvals_decided_total", "rule", later.GetId(), "say", "cancelled")
		return expired == 1 && cancelled == 1 && s.total("symphonix_approvals_pending") == 0
	})
}

// TestPingRoundTrips: the round trip an agent timed for its last ping, told
// in its next one, is kept in symphonix_link_ping_rtt_seconds; one below
// zero or past the ping timeout is refused with an Error naming the field,
// is not kept, and the link stays up.
func TestPingRoundTrips(t *testing.T) {
	t.Parallel()
	bt := boardtest.Start(t, boardtest.Options{MetricsListen: "127.0.0.1:0", PingTimeout: 10 * time.Second})
	l := openLink(t, bt, "pinger")
	ping := func(seq uint64, rtt time.Duration) {
		l.send(&boardv1.LinkRequest{Kind: &boardv1.LinkRequest_Ping{Ping: &boardv1.Ping{
			Seq: seq, SendTime: timestamppb.Now(), LastRoundTrip: durationpb.New(rtt)}}})
	}
	ping(1, 3*time.Millisecond)
	if m := l.next(); m.GetPong().GetSeq() != 1 {
		t.Fatalf("ping 1 answered %v, want its pong", m)
	}
	for i, bad := range []time.Duration{-time.Millisecond, 11 * time.Second} {
		seq := uint64(i + 2)
		ping(seq, bad)
		m := l.next()
		if e := m.GetError(); e == nil || e.GetCode() != boardv1.LinkErrorCode_LINK_ERROR_CODE_INVALID_ARGUMENT ||
			!strings.Contains(e.GetMessage(), "ping.last_round_trip") {
			t.Fatalf("ping with a round trip of %s answered %v, want an invalid_argument Error naming ping.last_round_trip", bad, m)
		}
		if m := l.next(); m.GetPong().GetSeq() != seq {
			t.Fatalf("ping %d answered %v after its Error, want its pong: the link stays up", seq, m)
		}
	}
	f := scrapeMetrics(t, http.DefaultClient, bt.MetricsURL+"/metrics", "")["symphonix_link_ping_rtt_seconds"]
	if f == nil || len(f.GetMetric()) != 1 {
		t.Fatalf("symphonix_link_ping_rtt_seconds = %v, want one histogram", f)
	}
	h := f.GetMetric()[0].GetHistogram()
	if h.GetSampleCount() != 1 || h.GetSampleSum() != 0.003 {
		t.Errorf("symphonix_link_ping_rtt_seconds: %d round trips summing %vs, want the one of 3ms", h.GetSampleCount(), h.GetSampleSum())
	}
}
