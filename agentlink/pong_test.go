package agentlink_test

import (
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
