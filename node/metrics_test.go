package node_test

import (
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/symphonix/symphonix/internal/boardtest"
	"github.com/symphonix/symphonix/node"
)

// agentMetric is the value of the series of family name whose labels
// include labels ("k", "v", ...) at url (a histogram's count), and
// whether there is one.
func agentMetric(t *testing.T, url, name string, labels ...string) (float64, bool) {
	t.Helper()
	resp, err := http.Get(url)
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
	for _, m := range fams[name].GetMetric() {
		if !labelled(m, labels) {
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

func labelled(m *dto.Metric, labels []string) bool {
	for i := 0; i+1 < len(labels); i += 2 {
		found := false
		for _, l := range m.GetLabel() {
			found = found || (l.GetName() == labels[i] && l.GetValue() == labels[i+1])
		}
		if !found {
			return false
		}
	}
	return true
}

// TestServeMetrics: a served desk with MetricsListen, linked to a real
// board, its model an OpenAI-compatible server of the test's, counts on
// its metrics address a run paused at its card and then finished, each
// tool call by the tool the flow declares, the model's calls and the
// tokens it reported, and its link: up, once, its pings timed, and then
// down when the board goes.
func TestServeMetrics(t *testing.T) {
	t.Parallel()
	provider := deskProvider(t)
	// Pings every 100 ms (the board's welcome says so), for some to time.
	bt := boardtest.Start(t, boardtest.Options{PingInterval: 100 * time.Millisecond})
	dir := deskDir(t)
	switchOn(t, bt, dir, "orders.lookup_order", "orders.refund")
	env := map[string]string{"OPENAI_API_KEY": "sk-test-metrics-0123456789", "OPENAI_BASE_URL": provider.URL + "/v1"}
	s := startServe(t, node.Config{Dir: dir, BoardURL: bt.URL, Token: bt.AgentToken("refund-desk"),
		Getenv: func(k string) string { return env[k] }, MetricsListen: "127.0.0.1:0"})
	url := s.out.wait(t, regexp.MustCompile(`^agent refund-desk: metrics on (http://127\.0\.0\.1:\d+/metrics)$`), time.Second)[1]
	s.out.wait(t, regexp.MustCompile(`^agent refund-desk: tools: the board switched on 2: `), 60*time.Second)

	if up, _ := agentMetric(t, url, "symphonix_agent_link_up"); up != 1 {
		t.Errorf("symphonix_agent_link_up = %v while linked, want 1", up)
	}
	var first turn
	if status := call(t, "POST", s.url+"/api/threads/m-1/messages", askForRefund, &first); status != 200 || first.Pending == nil {
		t.Fatalf("message = %d %+v; want the refund's card", status, first)
	}
	var done turn
	if status := call(t, "POST", s.url+"/api/threads/m-1/answer", `{"answer": "yes"}`, &done); status != 200 || done.Pending != nil {
		t.Fatalf("answer = %d %+v; want the run finished", status, done)
	}
	for _, tc := range []struct {
		name   string
		labels []string
		want   float64
	}{
		{"symphonix_agent_runs_total", []string{"outcome", "paused"}, 1},
		{"symphonix_agent_runs_total", []string{"outcome", "finished"}, 1},
		{"symphonix_agent_runs_total", []string{"outcome", "failed"}, 0},
		{"symphonix_agent_tool_calls_total", []string{"tool", "orders.lookup_order", "outcome", "ok"}, 1},
		{"symphonix_agent_tool_calls_total", []string{"tool", "orders.refund", "outcome", "ok"}, 1},
		{"symphonix_agent_model_calls_total", []string{"outcome", "ok"}, 2},
		{"symphonix_agent_model_tokens_total", []string{"kind", "input"}, 80},
		{"symphonix_agent_model_tokens_total", []string{"kind", "output"}, 24},
		{"symphonix_agent_model_tokens_total", []string{"kind", "cached"}, 0},
		{"symphonix_agent_link_connects_total", nil, 1},
	} {
		if got, ok := agentMetric(t, url, tc.name, tc.labels...); !ok || got != tc.want {
			t.Errorf("%s%v = %v (there: %v), want %v", tc.name, tc.labels, got, ok, tc.want)
		}
	}
	if _, ok := agentMetric(t, url, "go_goroutines"); !ok {
		t.Error("go_goroutines: not there, want the runtime's metrics")
	}
	boardtest.Eventually(t, time.Minute, "pings timed", func() bool {
		n, _ := agentMetric(t, url, "symphonix_agent_link_ping_rtt_seconds")
		return n >= 1
	})

	bt.Stop()
	boardtest.Eventually(t, time.Minute, "the link down in the metrics", func() bool {
		up, ok := agentMetric(t, url, "symphonix_agent_link_up")
		return ok && up == 0
	})
}

// TestServeMetricsListenLoopback: a metrics address beyond loopback is
// refused without Public, naming the field, before anything is served.
func TestServeMetricsListenLoopback(t *testing.T) {
	t.Parallel()
	err := node.Serve(t.Context(), node.Config{Dir: deskDir(t), MetricsListen: "0.0.0.0:0"})
	if err == nil || !strings.Contains(err.Error(), "Config.MetricsListen") {
		t.Fatalf("Serve with MetricsListen 0.0.0.0:0 = %v, want a refusal naming Config.MetricsListen", err)
	}
}
