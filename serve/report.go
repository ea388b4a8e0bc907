package serve

import (
	"context"
	"errors"
	"sync"

	"github.com/symphonix/symphonix/agentlink"
)

// reports is what is due to be told to the board: every pointer (full), or
// the pointers of the threads that changed since the last report.
type reports struct {
	mu    sync.Mutex
	full  bool
	dirty map[string]struct{}
	wake  chan struct{} // one buffered wake-up
}

func newReports() *reports {
	return &reports{dirty: map[string]struct{}{}, wake: make(chan struct{}, 1)}
}

func (q *reports) due(thread string, full bool) {
	q.mu.Lock()
	if full {
		q.full = true
		clear(q.dirty)
	} else if !q.full {
		q.dirty[thread] = struct{}{}
	}
	q.mu.Unlock()
	select {
	case q.wake <- struct{}{}:
	default:
	}
}

func (q *reports) take() (full bool, threads []string) {
	q.mu.Lock()
	defer q.mu.Unlock()
	full, q.full = q.full, false
	for t := range q.dirty {
		threads = append(threads, t)
	}
	clear(q.dirty)
	return full, threads
}

// ReportAll makes the next report every pointer: call it whenever the
// link comes up (agentlink.Config.OnState), so the board has them all and
// forgets any the agent no longer holds.
func (s *Server) ReportAll() {
	if s.monitored {
		s.reports.due("", true)
	}
}

// changed makes thread's pointer due: a turn, a decision, a pairing or a
// verify changed it.
func (s *Server) changed(thread string) {
	if s.monitored {
		s.reports.due(thread, false)
	}
}

// Report tells the board where the agent's conversations are until ctx
// ends, and then returns nil: every pointer after ReportAll, and the
// pointers of the threads that change. Pointers only (thread, when, whether
// it waits, who is in it), never a word of what was said. Without a board
// configured it only waits for ctx. A report the link cannot carry (no
// link up) is dropped: ReportAll at the next link-up sends everything.
func (s *Server) Report(ctx context.Context) error {
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-s.reports.wake:
		}
		b := s.boardOrNil()
		if b == nil {
			continue
		}
		full, threads := s.reports.take()
		if err := s.report(ctx, b, full, threads); err != nil && !errors.Is(err, agentlink.ErrNoLink) && ctx.Err() == nil {
			s.log.WarnContext(ctx, "conversations not reported to the board", "full", full, "err", err)
		}
	}
}

// report sends one report: every pointer when full, else those of threads.
func (s *Server) report(ctx context.Context, b Board, full bool, threads []string) error {
	var list []Conversation
	if full {
		all, err := s.convs.list(ctx, s.agent)
		if err != nil {
			return err
		}
		list = all
	} else {
		for _, t := range threads {
			conv, ok, err := s.convs.pointer(ctx, s.agent, t)
			if err != nil {
				return err
			}
			if ok {
				list = append(list, conv)
			}
		}
		if len(list) == 0 {
			return nil
		}
	}
	pointers := make([]agentlink.ConversationPointer, 0, len(list))
	for _, c := range list {
		if c.Updated.IsZero() {
			continue
		}
		pointers = append(pointers, agentlink.ConversationPointer{
			Thread: c.Thread, Updated: c.Updated, Waiting: c.Waiting, People: c.People,
		})
	}
	return b.ReportConversations(ctx, pointers, full)
}
