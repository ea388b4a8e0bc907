package linkload_test

import (
	"flag"
	"os"
	"testing"
	"time"

	"github.com/symphonix/symphonix/internal/linkload"
)

var (
	agents     = flag.Int("agents", 1000, "BenchmarkLinks, BenchmarkStorm: agents to link")
	ping       = flag.Duration("ping", 15*time.Second, "BenchmarkLinks, BenchmarkStorm: the board's ping interval, which agents follow")
	dialRate   = flag.Int("dial-rate", 500, "BenchmarkLinks: agents dialled per second")
	window     = flag.Duration("window", 10*time.Second, "BenchmarkLinks: how long to record ping round trips")
	useTLS     = flag.Bool("tls", false, "BenchmarkLinks: serve HTTP/2 over TLS rather than h2c")
	profileDir = flag.String("board-profile", "", "BenchmarkLinks: write the board's heap and goroutine profiles here while loaded")

	stormDialRate   = flag.Int("storm-dial-rate", 2000, "BenchmarkStorm: agents dialled per second when they first link")
	stormProfile    = flag.String("storm-cpuprofile", "", "BenchmarkStorm: write the restarted board's CPU profile here")
	stormBare       = flag.Bool("storm-bare", false, "BenchmarkStorm: a bare link service of connect-go in the board's place, which checks no token and stores nothing")
	stormBareAgents = flag.Bool("storm-bare-agents", false, "BenchmarkStorm: agents that are raw clients of the generated API, redialling as agentlink does, in agentlink's place")
	agentsProfile   = flag.String("storm-agents-cpuprofile", "", "BenchmarkStorm: write each agents' process's CPU profile, while its agents come back, here (.0, .1 appended)")
)

// TestLoadChild is the agents' process of a load run; anywhere else it does
// nothing.
func TestLoadChild(t *testing.T) {
	if os.Getenv(linkload.EnvChild) != "1" {
		return
	}
	if err := linkload.Child(t.Context(), os.Stdin, os.Stdout); err != nil {
		t.Fatal(err)
	}
}

// TestLoadSmall runs the benchmark's machinery on a few agents.
func TestLoadSmall(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a second process; not with -short")
	}
	const n = 50
	r := linkload.Run(t, linkload.Options{
		Agents:       n,
		Probes:       5,
		PingInterval: 250 * time.Millisecond,
		Settle:       time.Second,
		ProbeEvery:   50 * time.Millisecond,
		Window:       2 * time.Second,
	})
	logResult(t, r)
	if r.Up != n {
		t.Errorf("agents up at the end = %d, want %d", r.Up, n)
	}
	// A link costs the board a connection, a stream handler and a receiver:
	// a handful of goroutines, not dozens.
	if got := r.After.Goroutines - r.Before.Goroutines; got < n || got > 8*n {
		t.Errorf("board goroutines for %d agents = %d, want between %d and %d", n, got, n, 8*n)
	}
	if r.RTT.Samples < 10 {
		t.Errorf("ping round trips = %d samples, want at least 10", r.RTT.Samples)
	}
	if r.RTT.P50 <= 0 || r.RTT.P99 < r.RTT.P50 {
		t.Errorf("RTT p50 = %s, p99 = %s, want 0 < p50 <= p99", r.RTT.P50, r.RTT.P99)
	}
	if r.Drops != 0 {
		t.Errorf("links that ended early = %d, want 0", r.Drops)
	}
}

// BenchmarkLinks links -agents agents to one board and reports what each
// costs it. Run it once:
//
//	go test -run='^$' -bench=BenchmarkLinks -benchtime=1x -timeout=30m ./internal/linkload -agents=10000
func BenchmarkLinks(b *testing.B) {
	r := linkload.Run(b, linkload.Options{
		Agents:       *agents,
		PingInterval: *ping,
		DialRate:     *dialRate,
		Window:       *window,
		TLS:          *useTLS,
		ProfileDir:   *profileDir,
	})
	logResult(b, r)
	if r.Up != r.Agents {
		b.Errorf("agents up at the end = %d, want %d", r.Up, r.Agents)
	}
	b.ReportMetric(0, "ns/op") // one run of minutes: its time says nothing
	b.ReportMetric(r.Board.Bytes, "bytes/agent")
	b.ReportMetric(r.Board.RSS, "rss-bytes/agent")
	b.ReportMetric(r.Board.Goroutines, "goroutines/agent")
	b.ReportMetric(float64(r.RTT.P50.Microseconds()), "rtt-p50-µs")
	b.ReportMetric(float64(r.RTT.P99.Microseconds()), "rtt-p99-µs")
	b.ReportMetric(r.BoardCPU, "board-cpu-cores")
}

func logResult(t testing.TB, r linkload.Result) {
	t.Helper()
	kib := func(f float64) float64 { return f / 1024 }
	mib := func(u uint64) float64 { return float64(u) / (1 << 20) }
	t.Logf("%d agents (%d probes); minting %s, linking %s; links dropped and redialled: %d while linking, %d in all",
		r.Agents, r.Probes, r.Minting.Round(time.Millisecond), r.Linking.Round(time.Millisecond), r.DropsLinking, r.Drops)
	t.Logf("board before: heap %.1f MiB, stack %.1f MiB, live heap %.1f MiB, sys %.1f MiB, rss %.1f MiB, %d goroutines",
		mib(r.Before.HeapInuse), mib(r.Before.StackInuse), mib(r.Before.HeapAlloc), mib(r.Before.Sys), mib(r.Before.RSS), r.Before.Goroutines)
	t.Logf("board after:  heap %.1f MiB, stack %.1f MiB, live heap %.1f MiB, sys %.1f MiB, rss %.1f MiB, %d goroutines",
		mib(r.After.HeapInuse), mib(r.After.StackInuse), mib(r.After.HeapAlloc), mib(r.After.Sys), mib(r.After.RSS), r.After.Goroutines)
	t.Logf("board per agent: %.1f KiB heap+stack (%.1f KiB live), %.1f KiB rss, %.2f goroutines",
		kib(r.Board.Bytes), kib(r.Board.LiveBytes), kib(r.Board.RSS), r.Board.Goroutines)
	t.Logf("agents' process: heap %.1f MiB, stack %.1f MiB, rss %.1f MiB, %d goroutines",
		mib(r.Child.HeapInuse), mib(r.Child.StackInuse), mib(r.Child.RSS), r.Child.Goroutines)
	t.Logf("ping round trip: %d samples, p50 %s, p99 %s, max %s; cpu during the window: board %.2f cores, agents %.2f cores; the board's threads waited %s a second for a cpu",
		r.RTT.Samples, r.RTT.P50, r.RTT.P99, r.RTT.Max, r.BoardCPU, r.ChildCPU, r.BoardCPUWait)
	if r.HealthRounds > 0 {
		t.Logf("health rounds kept: %d; the store's files: %.1f MiB", r.HealthRounds, mib(uint64(r.StoreBytes)))
	}
}
