package linkload_test

import (
	"testing"
	"time"

	"github.com/symphonix/symphonix/internal/boardtest"
	"github.com/symphonix/symphonix/internal/linkload"
)

// TestAcrossSmall: 300 agents spread over three boards on one PostgreSQL
// store; the last board is killed with SIGKILL, and every agent it held
// links to one of the other two within 30 s, none refused.
func TestAcrossSmall(t *testing.T) {
	if testing.Short() {
		t.Skip("starts five processes; not with -short")
	}
	r := linkload.RunAcross(t, linkload.AcrossOptions{
		DSN:          boardtest.PostgresDSN(t),
		Agents:       300,
		PingInterval: time.Second,
		Probes:       10,
		Window:       time.Second,
		BackWithin:   30 * time.Second,
	})
	t.Log(r)
	sum := 0
	for i, n := range r.Links {
		sum += n
		if n == 0 {
			t.Errorf("board %d holds no link: the agents did not spread", i+1)
		}
	}
	if sum != r.Agents {
		t.Errorf("the boards hold %d links between them, want %d", sum, r.Agents)
	}
	if r.Killed == 0 || r.Down != r.Killed {
		t.Errorf("%d agents went down when the board holding %d links was killed, want as many", r.Down, r.Killed)
	}
	if r.Refused != 0 {
		t.Errorf("dials refused while the agents moved: %d, want 0", r.Refused)
	}
	if r.RTT.Samples == 0 {
		t.Error("no ping round trip recorded through the first board")
	}
}

// BenchmarkAcross spreads -agents agents over three boards on one
// PostgreSQL store, measures each board's memory per link and the ping
// round trip through one, kills one board, and reports how fast its agents
// linked to the others. Run it once:
//
//	go test -run='^$' -bench=BenchmarkAcross -benchtime=1x -timeout=30m ./internal/linkload -agents=10000
func BenchmarkAcross(b *testing.B) {
	r := linkload.RunAcross(b, linkload.AcrossOptions{
		DSN:          boardtest.PostgresDSN(b),
		Agents:       *agents,
		PingInterval: *ping,
		DialRate:     *stormDialRate,
		Window:       *window,
	})
	b.Log(r)
	b.ReportMetric(0, "ns/op")
	b.ReportMetric(r.Back.Seconds(), "back-s")
	b.ReportMetric(r.BackP50.Seconds(), "back-p50-s")
	b.ReportMetric(float64(r.Killed)/r.Back.Seconds(), "moved/s")
	b.ReportMetric(float64(r.RTT.P99.Microseconds())/1000, "ping-p99-ms")
	worst := 0.0
	for _, per := range r.PerAgent {
		worst = max(worst, per)
	}
	b.ReportMetric(worst/1024, "KiB/agent/board")
}
