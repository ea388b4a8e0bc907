package serve

import (
	"context"
	"errors"
	"sync"

	"github.com/symphonix/symphonix/flow"
	"github.com/symphonix/symphonix/governed"
)

// maxDecided is how many threads' outcomes a server remembers.
const maxDecided = 1024

// Decided records what a decision made on the board came to for thread:
// give it to governed.Config.OnResult. GET /api/threads/{thread} shows the
// newest, until the agent restarts.
func (s *Server) Decided(thread string, res flow.Result, v governed.Verdict, err error) {
	d := &Decided{At: s.now().UTC()}
	switch {
	case errors.Is(err, governed.ErrCancelled):
		d.Ended, d.Why = "cancelled", v.Why
	case errors.Is(err, governed.ErrExpired):
		d.Ended, d.Why = "expired", v.Why
	case err != nil:
		d.Ended, d.Why = "failed", err.Error()
	default:
		d.Turn = s.turn(thread, res, v)
		s.said(context.Background(), thread, res)
	}
	d.Thread = thread
	d.Receipt = v.Receipt
	s.decided.put(thread, d)
	s.convs.touch(context.Background(), thread, s.now())
	s.changed(thread)
}

// outcomes keeps the newest Decided per thread, for at most maxDecided
// threads (the oldest is forgotten first). Safe for concurrent use.
type outcomes struct {
	mu    sync.Mutex
	m     map[string]*Decided
	order []string
}

func (o *outcomes) put(thread string, d *Decided) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.m == nil {
		o.m = map[string]*Decided{}
	}
	if _, ok := o.m[thread]; !ok {
		o.order = append(o.order, thread)
		if len(o.order) > maxDecided {
			delete(o.m, o.order[0])
			o.order = o.order[1:]
		}
	}
	o.m[thread] = d
}

func (o *outcomes) get(thread string) *Decided {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.m[thread]
}
