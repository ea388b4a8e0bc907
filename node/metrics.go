package node

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/symphonix/symphonix/agentlink"
	"github.com/symphonix/symphonix/flow"
)

// The agent's metrics (docs/metrics.md), served by Serve on
// Config.MetricsListen in Prometheus's text format, on a registry of the
// process's own. Runs are counted by a flow Watcher, model and tool calls
// where the journal wraps them, the link by its state changes.

// Bounds on what a scrape may make the agent do (docs/limits.md).
const (
	maxAgentScrapes = 2
	agentScrapeIn   = 10 * time.Second
)

// toolOther is the tool label of a call to a tool the flow does not
// declare.
const toolOther = "other"

// agentMetrics are one agent process's instruments. A nil *agentMetrics
// counts nothing.
type agentMetrics struct {
	reg *prometheus.Registry

	runs        *prometheus.CounterVec // outcome
	toolCalls   *prometheus.CounterVec // tool, outcome
	modelCalls  *prometheus.CounterVec // outcome
	tokens      *prometheus.CounterVec // kind
	linkUp      prometheus.Gauge
	linkConnect prometheus.Counter
	pingRTT     prometheus.Histogram

	// declared is the flow's declared tools, the values the tool label
	// takes besides toolOther; set once the agent is assembled.
	declared atomic.Pointer[map[string]bool]
}

func newAgentMetrics() *agentMetrics {
	m := &agentMetrics{
		reg: prometheus.NewRegistry(),
		runs: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "symphonix_agent_runs_total",
			Help: "Runs that stopped taking steps, by outcome: finished, failed, stopped (ended by the board or an operator), paused (waiting for a person).",
		}, []string{"outcome"}),
		toolCalls: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "symphonix_agent_tool_calls_total",
			Help: "MCP tool calls, by tool (server.tool, one the flow declares, or other) and outcome (ok, error).",
		}, []string{"tool", "outcome"}),
		modelCalls: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "symphonix_agent_model_calls_total",
			Help: "Model calls, by outcome (ok, error).",
		}, []string{"outcome"}),
		tokens: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "symphonix_agent_model_tokens_total",
			Help: "Tokens the model reported, by kind: input, output, and cached (the part of input read from the provider's prompt cache).",
		}, []string{"kind"}),
		linkUp: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "symphonix_agent_link_up",
			Help: "1 while the agent's link to the board is up, 0 otherwise.",
		}),
		linkConnect: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "symphonix_agent_link_connects_total",
			Help: "Times the agent's link came up (welcomed by the board).",
		}),
		pingRTT: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    "symphonix_agent_link_ping_rtt_seconds",
			Help:    "Round trip of the link's application pings, from the agent's ping to the board's pong.",
			Buckets: prometheus.ExponentialBuckets(0.0005, 2, 16), // 0.5 ms to 16 s
		}),
	}
	m.reg.MustRegister(
		collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
		m.runs, m.toolCalls, m.modelCalls, m.tokens, m.linkUp, m.linkConnect, m.pingRTT,
	)
	for _, o := range []string{"finished", "failed", "stopped", "paused"} {
		m.runs.WithLabelValues(o)
	}
	for _, k := range []string{"input", "output", "cached"} {
		m.tokens.WithLabelValues(k)
	}
	return m
}

// handler serves the metrics, at most maxAgentScrapes at once.
func (m *agentMetrics) handler(log *slog.Logger) http.Handler {
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{
		ErrorLog:            slog.NewLogLogger(log.Handler(), slog.LevelError),
		ErrorHandling:       promhttp.ContinueOnError,
		MaxRequestsInFlight: maxAgentScrapes,
		Timeout:             agentScrapeIn,
	}))
	return mux
}

// declare sets the tools the tool label may name.
func (m *agentMetrics) declare(tools []string) {
	if m == nil {
		return
	}
	set := make(map[string]bool, len(tools))
	for _, t := range tools {
		set[t] = true
	}
	m.declared.Store(&set)
}

// watch counts the runs and tells next (nil: nobody) everything.
func (m *agentMetrics) watch(next flow.Watcher) flow.Watcher {
	if m == nil {
		return next
	}
	return func(ctx context.Context, e flow.Event) {
		switch e.Kind {
		case flow.EventRunFinished:
			m.runs.WithLabelValues("finished").Inc()
		case flow.EventRunFailed:
			m.runs.WithLabelValues("failed").Inc()
		case flow.EventRunStopped:
			m.runs.WithLabelValues("stopped").Inc()
		case flow.EventRunPaused:
			m.runs.WithLabelValues("paused").Inc()
		}
		if next != nil {
			next(ctx, e)
		}
	}
}

// wrapModel counts the model's calls and the tokens they report.
func (m *agentMetrics) wrapModel(model flow.Model) flow.Model {
	if m == nil || model == nil {
		return model
	}
	return countedModel{m: m, model: model}
}

type countedModel struct {
	m     *agentMetrics
	model flow.Model
}

func (c countedModel) Complete(ctx context.Context, req flow.ModelRequest) (flow.ModelReply, error) {
	reply, err := c.model.Complete(ctx, req)
	c.m.modelCalls.WithLabelValues(outcomeOf(err)).Inc()
	if u := reply.Usage; u != nil {
		c.m.tokens.WithLabelValues("input").Add(float64(max(u.InputTokens, 0)))
		c.m.tokens.WithLabelValues("output").Add(float64(max(u.OutputTokens, 0)))
		c.m.tokens.WithLabelValues("cached").Add(float64(max(u.CachedTokens, 0)))
	}
	return reply, err
}

// wrapTools counts the tool calls call makes.
func (m *agentMetrics) wrapTools(call flow.ToolCaller) flow.ToolCaller {
	if m == nil || call == nil {
		return call
	}
	return func(ctx context.Context, name string, args map[string]any) (any, error) {
		res, err := call(ctx, name, args)
		tool := toolOther
		if d := m.declared.Load(); d != nil && (*d)[name] {
			tool = name
		}
		m.toolCalls.WithLabelValues(tool, outcomeOf(err)).Inc()
		return res, err
	}
}

// linkState follows the link's state.
func (m *agentMetrics) linkState(st agentlink.State) {
	if m == nil {
		return
	}
	if st.Up {
		m.linkUp.Set(1)
		m.linkConnect.Inc()
		return
	}
	m.linkUp.Set(0)
}

// pong times a ping's round trip; nil without metrics.
func (m *agentMetrics) pong() func(time.Duration) {
	if m == nil {
		return nil
	}
	return func(rtt time.Duration) { m.pingRTT.Observe(rtt.Seconds()) }
}

func outcomeOf(err error) string {
	if err != nil {
		return "error"
	}
	return "ok"
}

// metricsServer is Config.MetricsListen served: nil when it is empty.
type metricsServer struct {
	metrics *agentMetrics
	ln      net.Listener
	srv     *http.Server
	log     *slog.Logger
}

// listenMetrics listens on cfg.MetricsListen for m; nil, nil when it is
// empty.
func listenMetrics(cfg Config, m *agentMetrics) (*metricsServer, error) {
	if cfg.MetricsListen == "" {
		return nil, nil
	}
	ln, err := net.Listen("tcp", cfg.MetricsListen)
	if err != nil {
		return nil, fmt.Errorf("--metrics-listen: %w", err)
	}
	p := new(http.Protocols)
	p.SetHTTP1(true)
	p.SetUnencryptedHTTP2(true)
	return &metricsServer{metrics: m, ln: ln, log: cfg.Logger, srv: &http.Server{
		Handler:           m.handler(cfg.Logger),
		Protocols:         p,
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       10 * time.Second,
		WriteTimeout:      agentScrapeIn + 5*time.Second,
		IdleTimeout:       2 * time.Minute,
		MaxHeaderBytes:    16 << 10,
		ErrorLog:          slog.NewLogLogger(cfg.Logger.Handler(), slog.LevelWarn),
	}}, nil
}

// url is where the metrics are.
func (s *metricsServer) url() string { return "http://" + s.ln.Addr().String() + "/metrics" }

// run serves until ctx ends.
func (s *metricsServer) run(ctx context.Context) {
	done := make(chan error, 1)
	go func() { done <- s.srv.Serve(s.ln) }()
	select {
	case <-ctx.Done():
		sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		if s.srv.Shutdown(sctx) != nil {
			s.srv.Close()
		}
		<-done
	case err := <-done:
		if !errors.Is(err, http.ErrServerClosed) {
			s.log.ErrorContext(ctx, "serving metrics", "err", err.Error())
		}
	}
}
