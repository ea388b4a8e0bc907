package board

import (
	"context"
	"errors"
	"sync"

	boardv1 "github.com/symphonix/symphonix/api/symphonix/board/v1"
)

// linkOut is a session's one way of sending on its stream. Its lock lets
// a goroutine other than the link handler (a decision being made) send on
// the stream without interleaving with the handler's own answers.
//
// Nothing is sent before the welcome or after the handler has returned.
// Between the welcome and the end of the catch-up (the agent's switches,
// then the decisions and pairings it missed), what other goroutines push
// is held and sent after the catch-up, in order, so that an agent always
// hears its switches first.
type linkOut struct {
	mu       sync.Mutex
	stream   linkSender
	open     bool // the welcome has gone out
	caughtUp bool // the catch-up has gone out; pushes go straight through
	closed   bool // the handler has returned; the stream is gone
	held     []*boardv1.LinkResponse
}

// maxHeld is how many pushes a link holds during its catch-up. A push
// beyond it ends the link (errOverrun): the agent links again and catches
// up on everything, so nothing pushed is lost.
const maxHeld = 256

// linkSender is the sending half of a link's stream.
type linkSender interface {
	Send(*boardv1.LinkResponse) error
}

func newLinkOut(stream linkSender) *linkOut {
	return &linkOut{stream: stream}
}

// welcome sends the welcome and opens the stream to the handler's own
// sends, and to pushes, which are held until caughtUp.
func (o *linkOut) welcome(m *boardv1.LinkResponse) error {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.closed {
		return context.Canceled
	}
	if err := o.stream.Send(m); err != nil {
		return err
	}
	o.open = true
	return nil
}

// send sends m now, for the link handler, unless the link is not open
// (yet, or any more): then errLinkNotOpen.
func (o *linkOut) send(m *boardv1.LinkResponse) error {
	o.mu.Lock()
	defer o.mu.Unlock()
	if !o.open || o.closed {
		return errLinkNotOpen
	}
	return o.stream.Send(m)
}

// push sends m for a goroutine other than the handler: at once once the
// link has caught up, held until then.
func (o *linkOut) push(m *boardv1.LinkResponse) error {
	o.mu.Lock()
	defer o.mu.Unlock()
	switch {
	case !o.open || o.closed:
		return errLinkNotOpen
	case o.caughtUp:
		return o.stream.Send(m)
	case len(o.held) >= maxHeld:
		return errOverrun
	}
	o.held = append(o.held, m)
	return nil
}

// catchUpDone sends what was held, in order, and lets pushes through from
// now on.
func (o *linkOut) catchUpDone() error {
	o.mu.Lock()
	defer o.mu.Unlock()
	if !o.open || o.closed {
		return errLinkNotOpen
	}
	held := o.held
	o.held = nil
	o.caughtUp = true
	for _, m := range held {
		if err := o.stream.Send(m); err != nil {
			return err
		}
	}
	return nil
}

// close stops all sending; the handler calls it as it returns.
func (o *linkOut) close() {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.closed = true
	o.held = nil
}

var (
	errLinkNotOpen = errors.New("link not open")
	errOverrun     = errors.New("more was pushed during the catch-up than a link holds")
)
