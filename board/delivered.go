package board

import (
	"context"
	"sync"
	"time"

	"github.com/symphonix/symphonix/ent/approval"
)

const (
	// maxMarkBatch is the most approvals one write marks delivered.
	maxMarkBatch = 500
	// markRetryMin and markRetryMax bound the pause before a write of
	// delivered marks that failed (the store away) is tried again.
	markRetryMin = 100 * time.Millisecond
	markRetryMax = 2 * time.Second
)

// deliveredMarks is the decisions that went out on a live link and are
// not yet marked delivered in the store. The mark only says whether to
// send the decision again when the agent next links, so it is written
// after the decision has been answered, many at a time, by one goroutine
// that runs while there are marks to write (flush). Until it is written
// the board treats the decision as delivered (has), however long the
// store is away; a mark lost with the process means one more delivery on
// the next link, which the agent ignores for an approval it no longer
// holds.
type deliveredMarks struct {
	mu sync.Mutex
	// pending: agent → approval id → when its decision went out.
	pending  map[string]map[string]time.Time
	count    int        // ids in pending
	flushing bool       // a flush goroutine is running
	idle     *sync.Cond // signalled when a flush goroutine ends
}

// add records that the decision on id, an approval of agentName, went out
// at, and starts a flush goroutine unless one is running.
func (m *deliveredMarks) add(b *Board, agentName, id string, at time.Time) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.pending == nil {
		m.pending = make(map[string]map[string]time.Time)
	}
	ids := m.pending[agentName]
	if ids == nil {
		ids = make(map[string]time.Time)
		m.pending[agentName] = ids
	}
	if _, ok := ids[id]; !ok {
		ids[id] = at
		m.count++
	}
	if !m.flushing {
		m.flushing = true
		go m.flush(b)
	}
}

// of returns the approvals of agentName whose decisions went out and
// whose marks are not written yet. The caller holds the agent's delivery
// lock and takes this before it reads undelivered decisions from the
// store: a mark written between the two is then either in what this
// returned or in what the store said, never in neither.
func (m *deliveredMarks) of(agentName string) map[string]bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := make(map[string]bool, len(m.pending[agentName]))
	for id := range m.pending[agentName] {
		out[id] = true
	}
	return out
}

// flush writes the pending marks, a batch per transaction, until there
// are none, and ends. A batch that fails stays pending (so its decisions
// are not sent again on the link they went out on) and is tried again
// after a pause that grows to markRetryMax; once the board is closing,
// one that fails is logged and dropped: those decisions go out again
// when their agents next link.
func (m *deliveredMarks) flush(b *Board) {
	ctx := context.Background()
	pause := markRetryMin
	for {
		m.mu.Lock()
		if m.count == 0 {
			m.flushing = false
			if m.idle != nil {
				m.idle.Broadcast()
			}
			m.mu.Unlock()
			return
		}
		type mark struct{ agent, id string }
		batch := make([]mark, 0, min(m.count, maxMarkBatch))
		var at time.Time
	gather:
		for agentName, ids := range m.pending {
			for id, t := range ids {
				batch = append(batch, mark{agentName, id})
				if t.After(at) {
					at = t
				}
				if len(batch) == maxMarkBatch {
					break gather
				}
			}
		}
		ids := make([]string, len(batch))
		for i, k := range batch {
			ids[i] = k.id
		}
		m.mu.Unlock()

		err := b.db.Approval.Update().
			Where(approval.IDIn(ids...), approval.DeliveredAtIsNil()).
			SetDeliveredAt(at).
			Exec(ctx)
		if err != nil {
			b.log.ErrorContext(ctx, "mark decisions delivered", "approvals", len(ids), "err", err.Error())
			select {
			case <-b.done:
			case <-time.After(pause):
				pause = min(2*pause, markRetryMax)
				continue
			}
		}
		pause = markRetryMin
		m.mu.Lock()
		for _, k := range batch {
			if _, ok := m.pending[k.agent][k.id]; ok {
				delete(m.pending[k.agent], k.id)
				m.count--
			}
			if len(m.pending[k.agent]) == 0 {
				delete(m.pending, k.agent)
			}
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
