package agentlink_test

import (
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/symphonix/symphonix/agentlink"
	"github.com/symphonix/symphonix/internal/boardtest"
)

// TestOnPong: each ping the board answers is timed, from the send to the
// pong, and told to OnPong.
func TestOnPong(t *testing.T) {
	t.Parallel()
	bt := boardtest.Start(t, boardtest.Options{})
	var mu sync.Mutex
	var rtts []time.Duration
	start := time.Now()
	a := startAgent(t, bt, "desk", func(c *agentlink.Config) {
		c.PingInterval = 20 * time.Millisecond
		c.OnPong = func(rtt time.Duration) {
			mu.Lock()
			defer mu.Unlock()
			rtts = append(rtts, rtt)
		}
	})
	a.awaitState(t, true)
	boardtest.Eventually(t, 30*time.Second, "three pongs timed", func() bool {
		mu.Lock()
		defer mu.Unlock()
		return len(rtts) >= 3
	})
	mu.Lock()
	defer mu.Unlock()
	for _, rtt := range rtts {
		if rtt <= 0 || rtt > time.Since(start) {
			t.Errorf("OnPong(%s): want a round trip between 0 and %s", rtt, time.Since(start))
		}
	}
}

// TestRoundTripsToldTheBoard: each ping after the first tells the board
// the round trip of the one before, which the board keeps in its metrics.
func TestRoundTripsToldTheBoard(t *testing.T) {
	t.Parallel()
	bt := boardtest.Start(t, boardtest.Options{MetricsListen: "127.0.0.1:0"})
	a := startAgent(t, bt, "desk", func(c *agentlink.Config) { c.PingInterval = 20 * time.Millisecond })
	a.awaitState(t, true)
	boardtest.Eventually(t, 30*time.Second, "the board keeps three round trips", func() bool {
		resp, err := http.Get(bt.MetricsURL + "/metrics")
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		body, err := io.ReadAll(resp.Body)
		if err != nil {
			t.Fatal(err)
		}
		for line := range strings.Lines(string(body)) {
			if n, ok := strings.CutPrefix(strings.TrimSpace(line), "symphonix_link_ping_rtt_seconds_count "); ok {
				count, err := strconv.Atoi(n)
				return err == nil && count >= 3
			}
		}
		return false
	})
}
