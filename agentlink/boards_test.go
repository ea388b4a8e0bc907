package agentlink_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/symphonix/symphonix/agentlink"
	"github.com/symphonix/symphonix/internal/boardtest"
)

func TestBoardURLs(t *testing.T) {
	t.Parallel()
	base := agentlink.Config{Token: "t", Identity: agentlink.Identity{Name: "a"}}
	for _, tt := range []struct {
		list, want string // want: "" for accepted, else a part of the error
	}{
		{"http://a:1", ""},
		{"http://a:1, https://b:2 ,http://c:3", ""},
		{"", "BoardURL is required"},
		{"http://a:1,", `BoardURL "": want http://HOST:PORT`},
		{"http://a:1,ftp://b", `BoardURL "ftp://b"`},
		{strings.Repeat("http://a:1,", 16) + "http://a:1", "17 boards, at most 16"},
	} {
		cfg := base
		cfg.BoardURL = tt.list
		_, err := agentlink.New(cfg)
		switch {
		case tt.want == "" && err != nil:
			t.Errorf("New(%q): %v, want it accepted", tt.list, err)
		case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)):
			t.Errorf("New(%q): %v, want an error naming %q", tt.list, err, tt.want)
		}
	}
}

func TestHintedRedial(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		hint, max time.Duration
		r         float64
		want      time.Duration
	}{
		{2 * time.Second, time.Minute, 0, 2 * time.Second},
		{2 * time.Second, time.Minute, 0.5, 2500 * time.Millisecond},
		{2 * time.Second, 2200 * time.Millisecond, 0.9, 2200 * time.Millisecond},
		{0, time.Minute, 0.5, 125 * time.Millisecond},
	} {
		if got := agentlink.HintedRedial(tt.hint, tt.max, tt.r); got != tt.want {
			t.Errorf("HintedRedial(%v, %v, %v) = %v, want %v", tt.hint, tt.max, tt.r, got, tt.want)
		}
	}
}

// twoBoards starts two boards on one PostgreSQL store, with opts.
func twoBoards(t *testing.T, opts boardtest.Options) (a, b *boardtest.Board) {
	t.Helper()
	opts.DSN = boardtest.PostgresDSN(t)
	return boardtest.Start(t, opts), boardtest.Start(t, opts)
}

// runStates runs a link until the test ends and returns its states.
func runStates(t *testing.T, cfg agentlink.Config) (*agentlink.Link, <-chan agentlink.State) {
	t.Helper()
	states := make(chan agentlink.State, 64)
	cfg.OnState = func(s agentlink.State) { states <- s }
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
	return link, states
}

// awaitLinked waits for the link to come up, and returns the board it is on.
func awaitLinked(t *testing.T, link *agentlink.Link, states <-chan agentlink.State, within time.Duration) string {
	t.Helper()
	deadline := time.After(within)
	for {
		select {
		case s := <-states:
			if s.Up {
				return link.Board()
			}
		case <-deadline:
			t.Fatalf("not linked within %v", within)
		}
	}
}

// TestMovesToAnotherBoard: an agent given two boards of one store links to
// one of them; when that board goes away, the agent is on the other within
// 30 s.
func TestMovesToAnotherBoard(t *testing.T) {
	t.Parallel()
	a, b := twoBoards(t, boardtest.Options{})
	link, states := runStates(t, agentlink.Config{
		BoardURL: a.URL + "," + b.URL,
		Token:    a.AgentToken("mover"),
		Identity: agentlink.Identity{Name: "mover"},
	})
	first := awaitLinked(t, link, states, within)
	gone, other := a, b.URL
	if first == b.URL {
		gone, other = b, a.URL
	}
	gone.Stop()
	start := time.Now()
	if now := awaitLinked(t, link, states, 30*time.Second); now != other {
		t.Fatalf("linked again to %s, want the board left, %s", now, other)
	}
	t.Logf("on the other board %v after the first went", time.Since(start).Round(time.Millisecond))
}

// TestAgeMovesTheLink: a link that reaches the board's age limit comes
// back at once on the next board of the agent's list, so links spread
// over boards that joined later.
func TestAgeMovesTheLink(t *testing.T) {
	t.Parallel()
	a, b := twoBoards(t, boardtest.Options{LinkMaxAge: 2 * time.Second})
	link, states := runStates(t, agentlink.Config{
		BoardURL:   a.URL + "," + b.URL,
		Token:      a.AgentToken("rover"),
		Identity:   agentlink.Identity{Name: "rover"},
		MinBackoff: 10 * time.Second, // an ordinary redial would wait this long
		MaxBackoff: time.Minute,
	})
	first := awaitLinked(t, link, states, within)
	start := time.Now()
	second := awaitLinked(t, link, states, within)
	if second == first {
		t.Errorf("after its age the link came back on %s again, want the other board", second)
	}
	if took := time.Since(start); took > 5*time.Second {
		t.Errorf("the link came back %v after the first went up, want within the age (2s) and a moment", took)
	}
}

// TestRefusedForRateGoesElsewhere: a board that takes no more new links now
// refuses with a retry hint, and the agent, knowing another board, links
// there.
func TestRefusedForRateGoesElsewhere(t *testing.T) {
	t.Parallel()
	dsn := boardtest.PostgresDSN(t)
	full := boardtest.Start(t, boardtest.Options{DSN: dsn, LinksPerSecond: 0.01}) // one link, then one in 100 s
	free := boardtest.Start(t, boardtest.Options{DSN: dsn})
	early, earlyStates := runStates(t, agentlink.Config{
		BoardURL: full.URL, Token: full.AgentToken("early"), Identity: agentlink.Identity{Name: "early"},
	})
	awaitLinked(t, early, earlyStates, within)
	link, states := runStates(t, agentlink.Config{
		BoardURL: full.URL + "," + free.URL,
		Token:    full.AgentToken("late"),
		Identity: agentlink.Identity{Name: "late"},
	})
	if on := awaitLinked(t, link, states, within); on != free.URL {
		t.Fatalf("linked to %s, want %s: the other board is full", on, free.URL)
	}
}
