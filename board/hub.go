package board

import "sync"

// hub fans changes (agents, approvals) out to watchers. A watcher that
// falls too far behind is dropped (its channel closed) rather than slowing
// the board down; its client reconnects and gets a fresh snapshot.
type hub[T any] struct {
	mu       sync.Mutex
	watchers map[chan T]struct{}
}

// watcherBuffer is how many changes a watcher may fall behind.
const watcherBuffer = 256

func newHub[T any]() *hub[T] {
	return &hub[T]{watchers: make(map[chan T]struct{})}
}

// watch subscribes; stop unsubscribes and must be called.
func (h *hub[T]) watch() (ch chan T, stop func()) {
	ch = make(chan T, watcherBuffer)
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

// watched reports whether anyone watches. A change committed before a
// watcher subscribes is in the snapshot it reads after subscribing, so a
// publisher that finds nobody watching may skip the work of publishing.
func (h *hub[T]) watched() bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.watchers) > 0
}

// publish sends a change to every watcher, dropping the ones that are
// full. It never blocks on a watcher.
func (h *hub[T]) publish(v T) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for ch := range h.watchers {
		select {
		case ch <- v:
		default:
			delete(h.watchers, ch)
			close(ch)
		}
	}
}

// dropAll ends every watcher; each watches again and reads a fresh
// snapshot.
func (h *hub[T]) dropAll() {
	h.mu.Lock()
	defer h.mu.Unlock()
	for ch := range h.watchers {
		delete(h.watchers, ch)
		close(ch)
	}
}
