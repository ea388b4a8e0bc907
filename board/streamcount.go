package board

import (
	"context"
	"sync"

	"connectrpc.com/connect/v2"

	"github.com/symphonix/symphonix/identity"
)

// streams counts the watch streams (WatchApprovals, WatchAgents, WatchRuns) each
// caller has open, so that one token or one person cannot hold more than
// Limits.StreamsPerCaller of them. The zero value is ready.
type streams struct {
	mu   sync.Mutex
	open map[string]int // by streamKey
}

// streamKey is whose streams a call counts against: a signed-in person's
// (all their sessions together), or a token's.
func streamKey(c identity.Caller) string {
	switch {
	case c.Kind == identity.KindSession && c.UserID != "":
		return "person " + c.UserID
	case c.TokenID != "":
		return "token " + c.TokenID
	}
	return string(c.Kind) + " " + c.Name
}

// start counts a stream for the caller in ctx, or refuses it with
// resource_exhausted when the caller has max open. done must be called
// when the stream ends.
func (s *streams) start(ctx context.Context, max int) (done func(), err error) {
	c, _ := identity.FromContext(ctx)
	key := streamKey(c)
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.open[key] >= max {
		return nil, connect.Errorf(connect.CodeResourceExhausted,
			"too many watches open: at most %d at once for one token or person; close one and watch again", max)
	}
	if s.open == nil {
		s.open = make(map[string]int)
	}
	s.open[key]++
	return func() {
		s.mu.Lock()
		defer s.mu.Unlock()
		if s.open[key]--; s.open[key] <= 0 {
			delete(s.open, key)
		}
	}, nil
}

// startStream counts a watch stream for the caller in ctx; see streams.
func (b *Board) startStream(ctx context.Context) (done func(), err error) {
	return b.streams.start(ctx, b.cfg.Limits.StreamsPerCaller)
}
