package linkload_test

import (
	"os"
	"testing"
	"time"

	"github.com/symphonix/symphonix/internal/linkload"
)

// TestStormBoard is the board's process of a storm run; anywhere else it
// does nothing.
func TestStormBoard(t *testing.T) {
	if os.Getenv(linkload.EnvBoard) != "1" {
		return
	}
	if err := linkload.BoardChild(t.Context(), os.Stdin, os.Stdout, os.Stderr); err != nil {
		t.Fatal(err)
	}
}

// TestStormSmall: a board killed with SIGKILL and started again on its
// store gets its whole fleet back within a minute (RunStorm fails
// otherwise), refusing none of it, and holds no more files than its links
// and a bound that does not depend on them. So does the floor that
// BenchmarkStorm -storm-bare -storm-bare-agents measures: a bare link
// service in the board's place and bare agents in agentlink's.
func TestStormSmall(t *testing.T) {
	if testing.Short() {
		t.Skip("starts three processes; not with -short")
	}
	for _, bare := range []bool{false, true} {
		t.Run(map[bool]string{false: "board", true: "bare"}[bare], func(t *testing.T) {
			r := linkload.RunStorm(t, linkload.StormOptions{
				Agents:       200,
				PingInterval: time.Second,
				Settle:       100 * time.Millisecond,
				BackWithin:   time.Minute,
				Bare:         bare,
				BareAgents:   bare,
			})
			t.Log(r)
			if r.Refused != 0 {
				t.Errorf("dials refused while the fleet came back: %d, want 0", r.Refused)
			}
			if r.Samples > 0 && r.NotSockets > linkload.MaxBoardFiles {
				t.Errorf("board's files that are not sockets: at most %d while the fleet came back, want at most %d", r.NotSockets, linkload.MaxBoardFiles)
			}
		})
	}
}

// BenchmarkStorm links -agents agents to a board in a process of its own,
// kills it with SIGKILL, starts it again on the same store and port, and
// reports how long the fleet took to come back. Run it once:
//
//	go test -run='^$' -bench=BenchmarkStorm -benchtime=1x -timeout=30m ./internal/linkload -agents=10000
func BenchmarkStorm(b *testing.B) {
	r := linkload.RunStorm(b, linkload.StormOptions{
		Agents:           *agents,
		PingInterval:     *ping,
		DialRate:         *stormDialRate,
		CPUProfile:       *stormProfile,
		AgentsCPUProfile: *agentsProfile,
		Bare:             *stormBare,
		BareAgents:       *stormBareAgents,
	})
	b.Log(r)
	b.ReportMetric(0, "ns/op") // one run of minutes: its time says nothing
	b.ReportMetric(r.Back.Seconds(), "back-s")
	b.ReportMetric(r.BackP50.Seconds(), "back-p50-s")
	b.ReportMetric(r.Online.Seconds(), "online-s")
	b.ReportMetric(r.Listening.Seconds(), "listening-s")
	b.ReportMetric(float64(r.Refused), "refused")
	b.ReportMetric(float64(r.Unavailable), "unavailable")
	b.ReportMetric(float64(r.NotSockets), "board-files-not-sockets")
	b.ReportMetric(float64(r.FDs), "board-fds")
}
