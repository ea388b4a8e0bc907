package agentlink_test

import (
	"context"
	"log/slog"
	"slices"
	"testing"
	"time"

	"github.com/symphonix/symphonix/agentlink"
	"github.com/symphonix/symphonix/internal/boardtest"
)

func TestFirstRedial(t *testing.T) {
	t.Parallel()
	tests := []struct {
		window time.Duration
		r      float64
		want   time.Duration
	}{
		{5 * time.Second, 0, 0},
		{5 * time.Second, 0.5, 2500 * time.Millisecond},
		{5 * time.Second, 0.999999999, 5 * time.Second},
		{250 * time.Millisecond, 0.2, 50 * time.Millisecond},
	}
	for _, tt := range tests {
		got := agentlink.FirstRedial(tt.window, tt.r).Round(time.Millisecond)
		if got != tt.want {
			t.Errorf("FirstRedial(%v, %v) = %v, want %v", tt.window, tt.r, got, tt.want)
		}
	}
}

// within is the ceiling on waiting for anything in these tests.
const within = 45 * time.Second

// runLogged runs a link with cfg until the test ends, its waits recorded.
func runLogged(t *testing.T, cfg agentlink.Config) *retries {
	t.Helper()
	rec := &retries{changed: make(chan struct{}, 1)}
	cfg.Logger = slog.New(rec)
	link, err := agentlink.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = link.Run(ctx)
	}()
	t.Cleanup(func() { cancel(); <-done })
	return rec
}

// awaitWaits returns the first n waits rec records, with their messages.
func awaitWaits(t *testing.T, rec *retries, n int) ([]time.Duration, []string) {
	t.Helper()
	deadline := time.After(within)
	for {
		rec.mu.Lock()
		if len(rec.waits) >= n {
			defer rec.mu.Unlock()
			return slices.Clone(rec.waits[:n]), slices.Clone(rec.msgs[:n])
		}
		rec.mu.Unlock()
		select {
		case <-rec.changed:
		case <-deadline:
			t.Fatalf("fewer than %d redials within %s", n, within)
		}
	}
}

// TestRefusalWaitIsJittered: a board that refuses the hello (here a name
// it does not accept: invalid_argument) is retried at the longest backoff
// with its upper half jittered, so a fleet refused at once (a board
// downgraded) does not come back in one wave.
func TestRefusalWaitIsJittered(t *testing.T) {
	t.Parallel()
	bt := boardtest.Start(t, boardtest.Options{})
	const maxWait = 300 * time.Millisecond
	rec := runLogged(t, agentlink.Config{
		BoardURL:   bt.URL,
		Token:      bt.AgentToken("someone-else"),
		Identity:   agentlink.Identity{Name: " impostor"},
		MinBackoff: 10 * time.Millisecond,
		MaxBackoff: maxWait,
	})
	waits, msgs := awaitWaits(t, rec, 4)
	for i, w := range waits {
		if w < maxWait/2 || w > maxWait || msgs[i] != "board refused the link" {
			t.Errorf("refusal %d: %q, retry in %v; want a refusal retried within [%v, %v]", i, msgs[i], w, maxWait/2, maxWait)
		}
	}
	if slices.Min(waits) == slices.Max(waits) {
		t.Errorf("refusals retried in %v: all the same, want jitter", waits)
	}
}

// TestUnavailableIsNotARefusal: a board that cannot read its store says
// unavailable, and the agent retries with its ordinary backoff, not the
// refusal's long wait.
func TestUnavailableIsNotARefusal(t *testing.T) {
	t.Parallel()
	bt := boardtest.Start(t, boardtest.Options{})
	tok := bt.AgentToken("patient")
	if err := bt.Store.Close(); err != nil {
		t.Fatal(err)
	}
	rec := runLogged(t, agentlink.Config{
		BoardURL:   bt.URL,
		Token:      tok,
		Identity:   agentlink.Identity{Name: "patient"},
		MinBackoff: 20 * time.Millisecond,
		MaxBackoff: time.Minute,
	})
	waits, msgs := awaitWaits(t, rec, 3)
	for i, w := range waits {
		full := 20 * time.Millisecond << i
		if w > full || msgs[i] == "board refused the link" {
			t.Errorf("redial %d: %q, retry in %v; want the link down, retried within %v", i, msgs[i], w, full)
		}
	}
}

// TestFirstRedialWithinTheBoardsWindow: when a link that was up drops, the
// first redial waits within the window the board gave, not the backoff.
func TestFirstRedialWithinTheBoardsWindow(t *testing.T) {
	t.Parallel()
	bt := boardtest.Start(t, boardtest.Options{})
	up := make(chan agentlink.State, 8)
	rec := runLogged(t, agentlink.Config{
		BoardURL: bt.URL,
		Token:    bt.AgentToken("spread"),
		Identity: agentlink.Identity{Name: "spread"},
		// The backoff alone would wait 5 to 10 s.
		MinBackoff: 10 * time.Second,
		MaxBackoff: time.Minute,
		OnState:    func(s agentlink.State) { up <- s },
	})
	select {
	case s := <-up:
		if !s.Up {
			t.Fatalf("state %+v, want up", s)
		}
	case <-time.After(within):
		t.Fatal("not linked")
	}
	bt.Stop()
	waits, _ := awaitWaits(t, rec, 1)
	// One agent on the board: its window is the least, 250 ms.
	if waits[0] >= 250*time.Millisecond {
		t.Errorf("first redial in %v, want within the board's window of 250ms", waits[0])
	}
}
