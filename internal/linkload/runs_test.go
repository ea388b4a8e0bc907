package linkload_test

import (
	"flag"
	"testing"
	"time"

	"github.com/symphonix/symphonix/internal/linkload"
)

var (
	runEvery  = flag.Duration("run-every", 10*time.Second, "BenchmarkRuns: how often each agent finishes a run")
	runWindow = flag.Duration("run-window", 5*time.Minute, "BenchmarkRuns: how long to measure, with runs and without")
	runsTrace = flag.String("runs-trace", "", "BenchmarkRuns: write the board's execution trace of the window with runs here")
	runsCPU   = flag.String("runs-cpuprofile", "", "BenchmarkRuns: write the board's CPU profile of the window with runs here")
	apart     = flag.Bool("probes-apart", true, "BenchmarkRuns: run the probes in a process of their own, not beside the agents making runs")
	baseline  = flag.String("runs-baseline", "unsent", "BenchmarkRuns: what the runs are compared with: unsent (the same runs, no run events sent) or idle (no runs)")
	loadNice  = flag.Int("load-nice", 0, "BenchmarkRuns: with -probes-apart, run the agents that are not probes at this niceness (1 to 19)")
	runsBare  = flag.Bool("runs-bare", false, "BenchmarkRuns: a bare link service in the board's place, which answers pings and summaries and keeps nothing")
)

// TestRunLoadSmall: agents of a load run that finish runs get them kept,
// and the links stay up, with the probes in a process of their own; and
// the same against a bare link service in the board's place, which answers
// every summary.
func TestRunLoadSmall(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a second process; not with -short")
	}
	for _, bare := range []bool{false, true} {
		name := "board"
		if bare {
			name = "bare"
		}
		t.Run(name, func(t *testing.T) {
			const n, probes = 30, 3
			r := linkload.Run(t, linkload.Options{
				Agents:       n,
				Probes:       probes,
				PingInterval: 250 * time.Millisecond,
				Settle:       time.Second,
				ProbeEvery:   50 * time.Millisecond,
				Window:       6 * time.Second,
				RunEvery:     2 * time.Second,
				ProbesApart:  true,
				Bare:         bare,
			})
			logResult(t, r)
			if r.RTT.Samples == 0 {
				t.Error("the probes timed no pings")
			}
			if r.Up != n || r.Drops != 0 {
				t.Errorf("agents up = %d, dropped %d; want %d and 0", r.Up, r.Drops, n)
			}
			// Every agent but the probes finishes a run within its first 2 s,
			// and again every 2 s: at least one each in the window, most three.
			if r.Runs < n-probes {
				t.Errorf("runs kept = %d, want at least %d", r.Runs, n-probes)
			}
			for reason, count := range r.RunProblems {
				if count != 0 {
					t.Errorf("run events the board counted as %s: %d, want none", reason, count)
				}
			}
		})
	}
}

// TestRunLoadUnsent: agents making the same runs unsent announce neither
// capability, so the board keeps none of them, and the links stay up.
func TestRunLoadUnsent(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a second process; not with -short")
	}
	const n = 20
	r := linkload.Run(t, linkload.Options{
		Agents:       n,
		Probes:       2,
		PingInterval: 250 * time.Millisecond,
		Settle:       time.Second,
		ProbeEvery:   50 * time.Millisecond,
		Window:       4 * time.Second,
		RunEvery:     time.Second,
		RunsUnsent:   true,
		ProbesApart:  true,
	})
	if r.Up != n || r.Drops != 0 {
		t.Errorf("agents up = %d, dropped %d; want %d and 0", r.Up, r.Drops, n)
	}
	if r.Runs != 0 {
		t.Errorf("runs kept = %d, want 0: the runs were not to be sent", r.Runs)
	}
}

// BenchmarkRuns links -agents agents twice, each agent that is not a
// probe finishing a run of linkload.RunSteps steps every -run-every:
// first with nothing of the runs sent (-runs-baseline=unsent; idle: no
// runs at all), then with every run's events and summary sent (a start,
// two events a step and a summary). It compares the board's CPU and the
// probes' ping round trips over -run-window, and reports what a run costs
// the store. With -runs-bare a bare link service stands in the board's
// place: the floor under the board. Run it once:
//
//	go test -run='^$' -bench=BenchmarkRuns -benchtime=1x -timeout=60m ./internal/linkload -agents=1000
func BenchmarkRuns(b *testing.B) {
	opts := linkload.Options{Agents: *agents, PingInterval: *ping, DialRate: *dialRate, Window: *runWindow, ProbesApart: *apart, LoadNice: *loadNice, Bare: *runsBare}
	switch *baseline {
	case "unsent":
		opts.RunEvery, opts.RunsUnsent = *runEvery, true
	case "idle":
	default:
		b.Fatalf("-runs-baseline=%q: want unsent or idle", *baseline)
	}
	without := linkload.Run(b, opts)
	logResult(b, without)
	opts.RunEvery, opts.RunsUnsent, opts.Trace, opts.CPUProfile = *runEvery, false, *runsTrace, *runsCPU
	with := linkload.Run(b, opts)
	logResult(b, with)
	if without.Up != without.Agents || with.Up != with.Agents {
		b.Errorf("agents up at the end = %d without runs, %d with; want %d", without.Up, with.Up, with.Agents)
	}
	b.Logf("ping p99: %s without run events (-runs-baseline=%s), %s with (%.2f×); board cpu: %.3f cores without, %.3f with",
		without.RTT.P99, *baseline, with.RTT.P99, float64(with.RTT.P99)/float64(without.RTT.P99), without.BoardCPU, with.BoardCPU)
	b.ReportMetric(0, "ns/op")
	b.ReportMetric(float64(without.RTT.P99.Microseconds()), "rtt-p99-µs-without")
	b.ReportMetric(float64(with.RTT.P99.Microseconds()), "rtt-p99-µs-with")
	b.ReportMetric(float64(with.RTT.P99)/float64(without.RTT.P99), "rtt-p99-ratio")
	b.ReportMetric(without.BoardCPU, "board-cpu-cores-without")
	b.ReportMetric(with.BoardCPU, "board-cpu-cores-with")
	b.ReportMetric(float64(without.BoardCPUWait)/float64(time.Millisecond), "board-cpu-wait-ms/s-without")
	b.ReportMetric(float64(with.BoardCPUWait)/float64(time.Millisecond), "board-cpu-wait-ms/s-with")
	b.ReportMetric(without.ChildCPU, "agents-cpu-cores-without")
	b.ReportMetric(with.ChildCPU, "agents-cpu-cores-with")
	if opts.Bare {
		return // nothing kept
	}
	perRun := float64(with.StoreBytes-without.StoreBytes) / float64(max(1, with.Runs))
	running := with.Agents - with.Probes
	perDay := perRun * float64(running) * float64(24*time.Hour/opts.RunEvery)
	b.Logf("runs: %d kept; store %d bytes with, %d without: %.0f bytes a run, %.1f MiB a day for %d agents every %s",
		with.Runs, with.StoreBytes, without.StoreBytes, perRun, perDay/(1<<20), running, opts.RunEvery)
	b.Logf("run events the board counted as problems: %v", with.RunProblems)
	b.ReportMetric(float64(with.Runs), "runs-kept")
	b.ReportMetric(perRun, "store-bytes/run")
	b.ReportMetric(perDay/(1<<20), "store-MiB/day")
}
