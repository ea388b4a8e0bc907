package linkload_test

import (
	"flag"
	"testing"
	"time"

	"github.com/symphonix/symphonix/internal/linkload"
)

var (
	healthEvery  = flag.Duration("health-every", 10*time.Second, "BenchmarkHealth: how often each agent reports a round")
	healthWindow = flag.Duration("health-window", 5*time.Minute, "BenchmarkHealth: how long to measure, with health and without")
)

// TestHealthLoadSmall: agents of a load run that report health get their
// rounds kept, and the links stay up.
func TestHealthLoadSmall(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a second process; not with -short")
	}
	const n, probes = 30, 3
	r := linkload.Run(t, linkload.Options{
		Agents:       n,
		Probes:       probes,
		PingInterval: 250 * time.Millisecond,
		Settle:       time.Second,
		ProbeEvery:   50 * time.Millisecond,
		Window:       6 * time.Second,
		HealthEvery:  5 * time.Second,
	})
	logResult(t, r)
	if r.Up != n || r.Drops != 0 {
		t.Errorf("agents up = %d, dropped %d; want %d and 0", r.Up, r.Drops, n)
	}
	// Every agent but the probes reports at once and again within 5 s of
	// its first report: each at least once in the window, most twice.
	if r.HealthRounds < n-probes {
		t.Errorf("health rounds kept = %d, want at least %d", r.HealthRounds, n-probes)
	}
	if r.StoreBytes <= 0 {
		t.Errorf("store bytes = %d, want the store's size", r.StoreBytes)
	}
}

// BenchmarkHealth links -agents agents twice, without health and then with
// every agent reporting a new round every -health-every, and compares
// the board's CPU and the probes' ping round trips over -health-window; it
// reports what a round costs the store. Run it once:
//
//	go test -run='^$' -bench=BenchmarkHealth -benchtime=1x -timeout=60m ./internal/linkload -agents=1000
func BenchmarkHealth(b *testing.B) {
	opts := linkload.Options{Agents: *agents, PingInterval: *ping, DialRate: *dialRate, Window: *healthWindow}
	without := linkload.Run(b, opts)
	logResult(b, without)
	opts.HealthEvery = *healthEvery
	with := linkload.Run(b, opts)
	logResult(b, with)
	if without.Up != without.Agents || with.Up != with.Agents {
		b.Errorf("agents up at the end = %d without health, %d with; want %d", without.Up, with.Up, with.Agents)
	}
	perRound := float64(with.StoreBytes-without.StoreBytes) / float64(max(1, with.HealthRounds))
	reporting := with.Agents - with.Probes
	perDay := perRound * float64(reporting) * float64(24*time.Hour/opts.HealthEvery)
	b.Logf("health: %d rounds kept; store %d bytes with, %d without: %.0f bytes a round, %.1f MiB a day for %d agents every %s",
		with.HealthRounds, with.StoreBytes, without.StoreBytes, perRound, perDay/(1<<20), reporting, opts.HealthEvery)
	b.Logf("ping p99: %s without health, %s with (%.2f×); board cpu: %.3f cores without, %.3f with",
		without.RTT.P99, with.RTT.P99, float64(with.RTT.P99)/float64(without.RTT.P99), without.BoardCPU, with.BoardCPU)
	b.ReportMetric(0, "ns/op")
	b.ReportMetric(float64(without.RTT.P99.Microseconds()), "rtt-p99-µs-without")
	b.ReportMetric(float64(with.RTT.P99.Microseconds()), "rtt-p99-µs-with")
	b.ReportMetric(float64(with.RTT.P99)/float64(without.RTT.P99), "rtt-p99-ratio")
	b.ReportMetric(without.BoardCPU, "board-cpu-cores-without")
	b.ReportMetric(with.BoardCPU, "board-cpu-cores-with")
	b.ReportMetric(without.ChildCPU, "agents-cpu-cores-without")
	b.ReportMetric(with.ChildCPU, "agents-cpu-cores-with")
	b.ReportMetric(float64(with.HealthRounds), "rounds-kept")
	b.ReportMetric(perRound, "store-bytes/round")
	b.ReportMetric(perDay/(1<<20), "store-MiB/day")
}
