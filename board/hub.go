package board

import (
	"sync"

	"google.golang.org/protobuf/proto"
)

// hub fans changes (agents, approvals, runs) out to watchers. A watcher that
// falls too far behind — watcherBuffer changes, or more than its bytes
// (Limits.WatcherBytes) of them — is dropped (its channel closed) rather
// than slowing the board down or growing its memory; its client watches
// again and gets a fresh snapshot.
type hub[T proto.Message] struct {
	maxBytes int

	mu       sync.Mutex
	watchers map[chan T]*behind
}

// watcherBuffer is how many changes a watcher may fall behind.
const watcherBuffer = 256

// behind is what one watcher has been sent and may not have received: the
// size of each change, oldest first, and their sum. Its channel holds the
// newest of them, so whatever is not in the channel any more was received.
type behind struct {
	sizes []int
	bytes int
	// keep says which changes the watcher wants; nil is all of them. A
	// change it does not want is never sent, and never counts against it.
	keep func(any) bool
}

// received forgets the changes the watcher has taken from its channel,
// given how many the channel holds. The channel may hold fewer by the time
// this runs (the watcher reads at any moment): what is forgotten is never
// more than was received.
func (w *behind) received(inChannel int) {
	for len(w.sizes) > inChannel {
		w.bytes -= w.sizes[0]
		w.sizes = w.sizes[1:]
	}
}

func newHub[T proto.Message](maxBytes int) *hub[T] {
	return &hub[T]{maxBytes: maxBytes, watchers: make(map[chan T]*behind)}
}

// watch subscribes; stop unsubscribes and must be called.
func (h *hub[T]) watch() (ch chan T, stop func()) {
	return h.watchWhere(nil)
}

// watchWhere subscribes to the changes keep says yes to (nil: all of
// them); stop unsubscribes and must be called. keep runs under the hub's
// lock, for every change published: it must be quick and never block.
func (h *hub[T]) watchWhere(keep func(T) bool) (ch chan T, stop func()) {
	ch = make(chan T, watcherBuffer)
	w := &behind{}
	if keep != nil {
		w.keep = func(v any) bool { return keep(v.(T)) }
	}
	h.mu.Lock()
	h.watchers[ch] = w
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
// full: by count, or by bytes. A change larger than a watcher's bytes
// still reaches a watcher that has nothing else waiting. It never blocks
// on a watcher.
func (h *hub[T]) publish(v T) {
	n := proto.Size(v)
	h.mu.Lock()
	defer h.mu.Unlock()
	for ch, w := range h.watchers {
		if w.keep != nil && !w.keep(v) {
			continue
		}
		w.received(len(ch))
		if w.bytes > 0 && w.bytes+n > h.maxBytes {
			delete(h.watchers, ch)
			close(ch)
			continue
		}
		select {
		case ch <- v:
			w.sizes = append(w.sizes, n)
			w.bytes += n
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
