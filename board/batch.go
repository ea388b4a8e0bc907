package board

import (
	"slices"
	"sync"
	"time"
)

// batcher writes items many at a time: one goroutine, started when there
// is an item to write and ended when there are none, takes every item that
// queued while it wrote the last batch (up to max) and hands them to write
// together, so that many callers at once cost the store one transaction,
// not one each and a hand-over of the write connection between them.
type batcher[T any] struct {
	max   int
	write func([]*T) // writes the batch and sets each item's result
	// linger is how long the writer waits for more items before it writes
	// a batch of fewer than max: each transaction costs the store a
	// commit (an fsync), so a steady trickle of items is better written a
	// few times a second than once for each. Zero writes at once.
	linger time.Duration

	mu      sync.Mutex
	queue   []*queued[T]
	writing bool
}

// queued is one item waiting for its batch.
type queued[T any] struct {
	item *T
	done chan struct{}
	then func() // for an item queued without waiting; nil otherwise
}

// add queues item and returns once its batch is written. It waits even if
// the caller's request ends: a write left behind could land after a later
// one of the same caller's.
func (q *batcher[T]) add(item *T) {
	w := &queued[T]{item: item, done: make(chan struct{})}
	q.mu.Lock()
	q.queue = append(q.queue, w)
	if !q.writing {
		q.writing = true
		go q.flush()
	}
	q.mu.Unlock()
	<-w.done
}

// later queues item and returns at once; then is called, on the writing
// goroutine, once its batch is written. Items are written in the order
// they were queued, whether waited for or not.
func (q *batcher[T]) later(item *T, then func()) {
	w := &queued[T]{item: item, done: make(chan struct{}), then: then}
	q.mu.Lock()
	q.queue = append(q.queue, w)
	if !q.writing {
		q.writing = true
		go q.flush()
	}
	q.mu.Unlock()
}

// flush writes batches until the queue is empty, and ends.
func (q *batcher[T]) flush() {
	for {
		q.mu.Lock()
		if len(q.queue) == 0 {
			q.writing = false
			q.mu.Unlock()
			return
		}
		if q.linger > 0 && len(q.queue) < q.max {
			q.mu.Unlock()
			time.Sleep(q.linger)
			q.mu.Lock()
		}
		n := min(len(q.queue), q.max)
		batch := slices.Clone(q.queue[:n])
		q.queue = slices.Delete(q.queue, 0, n)
		q.mu.Unlock()
		items := make([]*T, len(batch))
		for i, w := range batch {
			items[i] = w.item
		}
		q.write(items)
		for _, w := range batch {
			if w.then != nil {
				w.then()
			}
			close(w.done)
		}
	}
}
