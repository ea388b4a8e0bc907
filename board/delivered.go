package board

import (
	"context"
	"sync"
	"time"

	"github.com/symphonix/symphonix/ent/approval"
)

// maxMarkBatch is the most approvals one write marks delivered.
const maxMarkBatch = 500

// deliveredMarks is the decisions that went out on a live link and are
// not yet marked delivered in the store. The mark only says whether to
// send the decision again when the agent next links, so it is written
// after the decision has been answered, many at a time, by one goroutine
// that runs while there are marks to write (flush). Until it is written
// the board treats the decision as delivered (has); a mark lost with the
// process means one more delivery on the next link, which the agent
// ignores for an approval it no longer holds.
type deliveredMarks struct {
	mu       sync.Mutex
	pending  map[string]time.Time // approval id → when its decision went out
	flushing bool                 // a flush goroutine is running
	idle     *sync.Cond           // signalled when a flush goroutine ends
}

// add records that the decision on id went out at, and starts a flush
// goroutine unless one is running.
func (m *deliveredMarks) add(b *Board, id string, at time.Time) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.pending == nil {
		m.pending = make(map[string]time.Time)
	}
	if _, ok := m.pending[id]; !ok {
		m.pending[id] = at
	}
	if !m.flushing {
		m.flushing = true
		go m.flush(b)
	}
}

// has reports whether the decision on id went out and its mark is not
// written yet.
func (m *deliveredMarks) has(id string) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	_, ok := m.pending[id]
	return ok
}

// flush writes the pending marks, a batch per transaction, until there
// are none, and ends. A batch that fails is logged and dropped: those
// decisions go out again when their agents next link.
func (m *deliveredMarks) flush(b *Board) {
	ctx := context.Background()
	for {
		m.mu.Lock()
		if len(m.pending) == 0 {
			m.flushing = false
			if m.idle != nil {
				m.idle.Broadcast()
			}
			m.mu.Unlock()
			return
		}
		ids := make([]string, 0, min(len(m.pending), maxMarkBatch))
		var at time.Time
		for id, t := range m.pending {
			ids = append(ids, id)
			if t.After(at) {
				at = t
			}
			if len(ids) == maxMarkBatch {
				break
			}
		}
		m.mu.Unlock()

		err := b.db.Approval.Update().
			Where(approval.IDIn(ids...), approval.DeliveredAtIsNil()).
			SetDeliveredAt(at).
			Exec(ctx)
		if err != nil {
			b.log.ErrorContext(ctx, "mark decisions delivered", "approvals", len(ids), "err", err.Error())
		}
		m.mu.Lock()
		for _, id := range ids {
			delete(m.pending, id)
		}
		m.mu.Unlock()
	}
}

// wait returns when no flush goroutine is running.
func (m *deliveredMarks) wait() {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.idle == nil {
		m.idle = sync.NewCond(&m.mu)
	}
	for m.flushing {
		m.idle.Wait()
	}
}
