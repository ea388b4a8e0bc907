package board

import (
	"sync"

	boardv1 "github.com/symphonix/symphonix/api/symphonix/board/v1"
)

// hub fans agent changes out to watchers. A watcher that falls too far
// behind is dropped (its channel closed) rather than slowing the board down;
// its client reconnects and gets a fresh snapshot.
type hub struct {
	mu       sync.Mutex
	watchers map[chan *boardv1.Agent]struct{}
}

// watcherBuffer is how many changes a watcher may fall behind.
const watcherBuffer = 256

func newHub() *hub {
	return &hub{watchers: make(map[chan *boardv1.Agent]struct{})}
}

// watch subscribes; stop unsubscribes and must be called.
func (h *hub) watch() (ch chan *boardv1.Agent, stop func()) {
	ch = make(chan *boardv1.Agent, watcherBuffer)
	h.mu.Lock()
	h.watchers[ch] = struct{}{}
	h.mu.Unlock()
	return ch, func() {
		h.mu.Lock()
		defer h.mu.Unlock()
		if _, ok := h.watchers[ch]; ok {
			delete(h.watchers, ch)
			close(ch)
		}
	}
}

// publish sends a change to every watcher, dropping the ones that are full.
func (h *hub) publish(a *boardv1.Agent) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for ch := range h.watchers {
		select {
		case ch <- a:
		default:
			delete(h.watchers, ch)
			close(ch)
		}
	}
}
