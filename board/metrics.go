package board

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"time"

	"connectrpc.com/connect/v2"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/symphonix/symphonix/ent"
	"github.com/symphonix/symphonix/ent/approval"
	"github.com/symphonix/symphonix/identity"
)

// The board's metrics (docs/metrics.md), in Prometheus's text format. Each
// board has a registry of its own, so that boards in one process (tests)
// stay apart; every instrument is made here, in newMetrics, and the rest of
// the board calls the methods below where things happen.

// MetricsPath is where the board serves its metrics: on its own address
// with an operator's token (viewer or above), and on Config.MetricsListen
// without one.
const MetricsPath = "/metrics"

// Bounds on what a scrape may make the board do (docs/limits.md).
const (
	// maxScrapes is how many scrapes the board answers at once; one more
	// is answered 503.
	maxScrapes = 4
	// scrapeWithin is how long a scrape may take before it is answered
	// 503; countWithin, how long the count of pending approvals may take
	// (past it the series is left out of that scrape).
	scrapeWithin = 10 * time.Second
	countWithin  = time.Second
	// maxRuleLabels is how many rule ids the approval counters keep as
	// label values: twice the rules a board may hold, so that rules
	// deleted and put again have room. Past it, a rule is "other".
	maxRuleLabels = 2 * maxRules
)

// Label values that stand for many.
const (
	ruleNone    = "none"    // an approval no rule governs
	ruleOther   = "other"   // past maxRuleLabels
	procUnknown = "unknown" // a procedure the board does not serve
)

// metrics are one board's instruments.
type metrics struct {
	reg *prometheus.Registry

	linkConnects    prometheus.Counter
	linkRefusals    prometheus.Counter
	linkDisconnects *prometheus.CounterVec // reason
	pingSeconds     prometheus.Histogram

	raised          *prometheus.CounterVec // rule
	decided         *prometheus.CounterVec // rule, say
	expired         *prometheus.CounterVec // rule
	decisionSeconds prometheus.Histogram

	rpcs       *prometheus.CounterVec   // procedure, code
	rpcSeconds *prometheus.HistogramVec // procedure

	txSeconds   *prometheus.HistogramVec // outcome
	groupSize   prometheus.Histogram
	signinFails *prometheus.CounterVec // reason

	delegationFails *prometheus.CounterVec // code

	// procedures are the procedures the board serves, the values the
	// procedure label may take besides procUnknown; set once in routes.
	procedures map[string]bool

	rulesMu sync.Mutex
	rules   map[string]bool // the rule ids given as label values so far
}

// newMetrics makes b's instruments and registers them with the Go runtime's
// and the process's.
func newMetrics(b *Board) *metrics {
	m := &metrics{
		reg: prometheus.NewRegistry(),
		linkConnects: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "symphonix_link_connects_total",
			Help: "Agent links welcomed by this board.",
		}),
		linkRefusals: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "symphonix_link_refusals_total",
			Help: "New agent links refused because the board took its rate of new links a second (Config.LinksPerSecond).",
		}),
		linkDisconnects: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "symphonix_link_disconnects_total",
			Help: "Agent links that ended on this board, by why (closed, superseded, silent, revoked, expired, overrun, age, shutdown, error).",
		}, []string{"reason"}),
		pingSeconds: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    "symphonix_link_ping_rtt_seconds",
			Help:    "Round trips of the links' pings, as each agent timed its last one and told the board in its next ping.",
			Buckets: prometheus.ExponentialBuckets(0.0005, 2, 16), // 0.5 ms to 16 s
		}),
		raised: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "symphonix_approvals_raised_total",
			Help: "Approvals raised by agents, by the rule that governs them (none: not governed).",
		}, []string{"rule"}),
		decided: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "symphonix_approvals_decided_total",
			Help: "Approvals decided by operators, by rule and what was said (yes, no, cancelled).",
		}, []string{"rule", "say"}),
		expired: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "symphonix_approvals_expired_total",
			Help: "Approvals that reached their rule's time limit undecided, by rule.",
		}, []string{"rule"}),
		decisionSeconds: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    "symphonix_approval_decision_seconds",
			Help:    "Time from an approval's raise to its decision (yes, no or cancelled).",
			Buckets: []float64{1, 5, 15, 30, 60, 300, 900, 1800, 3600, 4 * 3600, 12 * 3600, 24 * 3600, 7 * 24 * 3600},
		}),
		rpcs: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "symphonix_rpc_requests_total",
			Help: "RPCs the board answered, by procedure and Connect code (ok when none).",
		}, []string{"procedure", "code"}),
		rpcSeconds: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "symphonix_rpc_duration_seconds",
			Help:    "Time the board took over a unary RPC, by procedure; streams are counted, not timed.",
			Buckets: prometheus.DefBuckets,
		}, []string{"procedure"}),
		txSeconds: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "symphonix_store_transaction_seconds",
			Help:    "Time a store transaction took from its begin to its commit or rollback, by outcome (committed, rolled_back).",
			Buckets: prometheus.ExponentialBuckets(0.0005, 2, 14), // 0.5 ms to 4 s
		}, []string{"outcome"}),
		groupSize: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    "symphonix_store_commit_group_size",
			Help:    "Transactions SQLite committed together with one fsync (group commit); never observed on PostgreSQL.",
			Buckets: []float64{1, 2, 4, 8, 16, 32, 64},
		}),
		signinFails: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "symphonix_signin_failures_total",
			Help: "Failed web sign-ins, by reason (refused: wrong email or password, or a disabled person; limited: too many failures).",
		}, []string{"reason"}),
		delegationFails: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "symphonix_delegation_failures_total",
			Help: "Delegation failures agents reported and this board stored, by agent code (AGENT_RECURSION: a circular delegation).",
		}, []string{"code"}),
		rules: make(map[string]bool),
	}
	m.reg.MustRegister(
		collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
		m.linkConnects, m.linkRefusals, m.linkDisconnects, m.pingSeconds,
		m.raised, m.decided, m.expired, m.decisionSeconds,
		m.rpcs, m.rpcSeconds,
		m.txSeconds, m.groupSize, m.signinFails, m.delegationFails,
		agentsCollector{b},
		pendingCollector{b},
	)
	// Series that exist from the start, at zero, so that a rate over them
	// is defined before the first event.
	for _, r := range []string{"refused", "limited"} {
		m.signinFails.WithLabelValues(r)
	}
	for _, c := range agentCodes {
		m.delegationFails.WithLabelValues(c)
	}
	for _, o := range []string{"committed", "rolled_back"} {
		m.txSeconds.WithLabelValues(o)
	}
	return m
}

// handler serves the metrics, at most maxScrapes at once.
func (m *metrics) handler(log *slog.Logger) http.Handler {
	return promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{
		ErrorLog:            slog.NewLogLogger(log.Handler(), slog.LevelError),
		ErrorHandling:       promhttp.ContinueOnError,
		MaxRequestsInFlight: maxScrapes,
		Timeout:             scrapeWithin,
	})
}

// rule is the label value of a rule id: ruleNone for no rule, ruleOther
// once maxRuleLabels ids have been given.
func (m *metrics) rule(id string) string {
	if id == "" {
		return ruleNone
	}
	m.rulesMu.Lock()
	defer m.rulesMu.Unlock()
	if m.rules[id] {
		return id
	}
	if len(m.rules) >= maxRuleLabels {
		return ruleOther
	}
	m.rules[id] = true
	return id
}

// linked: a link was welcomed.
func (m *metrics) linked() { m.linkConnects.Inc() }

// unlinked: a link ended, for the reason err says (linkService.close).
func (m *metrics) unlinked(reason string) { m.linkDisconnects.WithLabelValues(reason).Inc() }

// linkRefused: a new link was refused for the rate of new links.
func (m *metrics) linkRefused() { m.linkRefusals.Inc() }

// pinged counts the round trip an agent timed for its last ping.
func (m *metrics) pinged(rtt time.Duration) { m.pingSeconds.Observe(rtt.Seconds()) }

// approvalRaised: an approval was stored pending under rule id ruleID.
func (m *metrics) approvalRaised(ruleID string) { m.raised.WithLabelValues(m.rule(ruleID)).Inc() }

// approvalDecided: an approval raised at raisedAt was decided at decidedAt
// (nil: not known, and not timed).
func (m *metrics) approvalDecided(ruleID, say string, raisedAt time.Time, decidedAt *time.Time) {
	m.decided.WithLabelValues(m.rule(ruleID), say).Inc()
	if decidedAt == nil {
		return
	}
	if d := decidedAt.Sub(raisedAt); d >= 0 {
		m.decisionSeconds.Observe(d.Seconds())
	}
}

// approvalExpired: an approval reached its time limit.
func (m *metrics) approvalExpired(ruleID string) { m.expired.WithLabelValues(m.rule(ruleID)).Inc() }

// delegationFailed: a delegation failure of code was stored; code is
// one of agentCodes, so the label is bounded.
func (m *metrics) delegationFailed(code string) { m.delegationFails.WithLabelValues(code).Inc() }

// signinFailed: a sign-in was refused (reason "refused") or limited.
func (m *metrics) signinFailed(reason string) { m.signinFails.WithLabelValues(reason).Inc() }

// procedure is the label value of a procedure.
func (m *metrics) procedure(p string) string {
	if m.procedures[p] {
		return p
	}
	return procUnknown
}

// rpcDone: an RPC to procedure ended with err after took; unary says
// whether it is timed.
func (m *metrics) rpcDone(procedure string, err error, took time.Duration, unary bool) {
	p := m.procedure(procedure)
	m.rpcs.WithLabelValues(p, codeString(err)).Inc()
	if unary {
		m.rpcSeconds.WithLabelValues(p).Observe(took.Seconds())
	}
}

// Transaction and Group make metrics the store's Observer (store.Observe).
func (m *metrics) Transaction(took time.Duration, committed bool) {
	outcome := "committed"
	if !committed {
		outcome = "rolled_back"
	}
	m.txSeconds.WithLabelValues(outcome).Observe(took.Seconds())
}

func (m *metrics) Group(n int) { m.groupSize.Observe(float64(n)) }

// disconnectReason is the reason label of a link that ended with err.
func disconnectReason(err error) string {
	switch {
	case errors.Is(err, io.EOF):
		return "closed"
	case errors.Is(err, errSuperseded):
		return "superseded"
	case errors.Is(err, errSilent):
		return "silent"
	case errors.Is(err, errShutdown):
		return "shutdown"
	case errors.Is(err, errExpired):
		return "expired"
	case errors.Is(err, identity.ErrRevoked):
		return "revoked"
	case errors.Is(err, errOverrun):
		return "overrun"
	case errors.Is(err, errAgeLimit):
		return "age"
	case errors.Is(err, context.Canceled):
		return "canceled"
	}
	return "error"
}

// agentsCollector is symphonix_agents: the agents this board has a live
// link with, and those whose link dropped and are held online for the
// offline grace, read from presence at each scrape.
type agentsCollector struct{ b *Board }

var agentsDesc = prometheus.NewDesc("symphonix_agents",
	"Agents on this board by state: linked (a live link here) or grace (the link dropped; held online for the offline grace).",
	[]string{"state"}, nil)

func (c agentsCollector) Describe(ch chan<- *prometheus.Desc) { ch <- agentsDesc }

func (c agentsCollector) Collect(ch chan<- prometheus.Metric) {
	linked, grace := c.b.presence.counts()
	ch <- prometheus.MustNewConstMetric(agentsDesc, prometheus.GaugeValue, float64(linked), "linked")
	ch <- prometheus.MustNewConstMetric(agentsDesc, prometheus.GaugeValue, float64(grace), "grace")
}

// pendingCollector is symphonix_approvals_pending, counted in the store at
// each scrape (every board sharing a store counts the same approvals). A
// count the store does not give within countWithin is left out.
type pendingCollector struct{ b *Board }

var pendingDesc = prometheus.NewDesc("symphonix_approvals_pending",
	"Approvals waiting for a decision, in the whole store, by the rule that governs them (none: not governed).", []string{"rule"}, nil)

func (c pendingCollector) Describe(ch chan<- *prometheus.Desc) { ch <- pendingDesc }

func (c pendingCollector) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), countWithin)
	defer cancel()
	var rows []struct {
		RuleID string `json:"rule_id"`
		Count  int    `json:"count"`
	}
	err := c.b.db.Approval.Query().Where(approval.State(StatePending)).
		GroupBy(approval.FieldRuleID).Aggregate(ent.Count()).Scan(ctx, &rows)
	if err != nil {
		c.b.log.LogAttrs(ctx, slog.LevelWarn, "count pending approvals for metrics", slog.String("err", err.Error()))
		return
	}
	// Rules past the label bound count together, as other.
	byLabel := make(map[string]int, len(rows))
	for _, r := range rows {
		byLabel[c.b.metrics.rule(r.RuleID)] += r.Count
	}
	for label, n := range byLabel {
		ch <- prometheus.MustNewConstMetric(pendingDesc, prometheus.GaugeValue, float64(n), label)
	}
}

// metricsWithToken serves the metrics on the board's own address to an
// operator (viewer or above, by token or signed in), and says no more than
// 401 or 403 to anyone else.
func (b *Board) metricsWithToken() http.Handler {
	h := b.metrics.handler(b.log)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if _, err := b.authenticate(r.Context(), MetricsPath, r.Header); err != nil {
			status := http.StatusForbidden
			switch connect.CodeOf(err) {
			case connect.CodeUnauthenticated:
				status = http.StatusUnauthorized
				w.Header().Set("WWW-Authenticate", `Bearer realm="symphonix"`)
			case connect.CodeUnavailable:
				status = http.StatusServiceUnavailable
			}
			http.Error(w, strings.ToLower(http.StatusText(status))+": metrics need an operator token (viewer or above)", status)
			return
		}
		h.ServeHTTP(w, r)
	})
}

// MetricsHandler serves the board's metrics without a token, for an
// address only a monitoring system can reach (Config.MetricsListen is
// served with it), with the probes /healthz and /readyz beside them.
func (b *Board) MetricsHandler() http.Handler {
	mux := http.NewServeMux()
	mux.Handle("GET "+MetricsPath, b.metrics.handler(b.log))
	b.probeRoutes(mux)
	return mux
}
