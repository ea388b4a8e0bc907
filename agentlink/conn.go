package agentlink

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"sync"
	"time"

	boardv1 "github.com/symphonix/symphonix/api/symphonix/board/v1"
	"github.com/symphonix/symphonix/api/symphonix/board/v1/boardv1connect"
)

// request sends the request build makes with a fresh request id on c, and
// waits for the answer with that id, for ctx, for c to go down, or for
// Config.AnswerWithin. A LinkError answer is a *BoardError.
func (l *Link) request(ctx context.Context, c *conn, build func(id string) *boardv1.LinkRequest) (*boardv1.LinkResponse, error) {
	return l.requestWithin(ctx, c, l.cfg.AnswerWithin, build)
}

// requestWithin is request waiting within rather than Config.AnswerWithin.
func (l *Link) requestWithin(ctx context.Context, c *conn, within time.Duration, build func(id string) *boardv1.LinkRequest) (*boardv1.LinkResponse, error) {
	id := "q" + strconv.FormatUint(l.reqSeq.Add(1), 10)
	ch, err := c.expect(id)
	if err != nil {
		return nil, err
	}
	defer c.forget(id)
	if err := c.send(build(id)); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrLinkDown, err)
	}
	t := time.NewTimer(within)
	defer t.Stop()
	select {
	case m := <-ch:
		if e := m.GetError(); e != nil {
			return nil, &BoardError{Code: codeOf(e.GetCode()), Message: e.GetMessage()}
		}
		return m, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	case <-c.done:
		return nil, ErrLinkDown
	case <-t.C:
		return nil, fmt.Errorf("%w (%s)", ErrNoAnswer, within)
	}
}

// conn is one link that is up: its sends, serialised, and the requests
// waiting for their answers.
type conn struct {
	stream linkStream
	sendMu sync.Mutex
	closed bool // guarded by sendMu

	mu      sync.Mutex
	pending map[string]chan *boardv1.LinkResponse
	done    chan struct{}

	// events: live run events waiting to be sent (SendRunEvent); stored:
	// the board's RunStored, for the summary deliverer.
	events chan *boardv1.RunEvent
	stored chan runSeq
	// batches: the board's welcome said it reads run_events, so events
	// waiting together go in one message.
	batches bool
	// flush asks the events' sender to send the events it holds now; it
	// closes the channel it is given once they are sent.
	flush chan chan struct{}
}

type linkStream = boardv1connect.AgentLinkServiceLinkClientStream

func newConn(stream linkStream, welcome *boardv1.Welcome) *conn {
	return &conn{stream: stream, pending: map[string]chan *boardv1.LinkResponse{}, done: make(chan struct{}),
		events: make(chan *boardv1.RunEvent, RunEventBuffer), stored: make(chan runSeq, 16), flush: make(chan chan struct{}),
		batches: slices.Contains(welcome.GetAccepts(), "run_events")}
}

// send sends m unless the link has ended.
func (c *conn) send(m *boardv1.LinkRequest) error {
	c.sendMu.Lock()
	defer c.sendMu.Unlock()
	if c.closed {
		return ErrLinkDown
	}
	return c.stream.Send(m)
}

// expect registers a waiter for the answer with id.
func (c *conn) expect(id string) (<-chan *boardv1.LinkResponse, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	select {
	case <-c.done:
		return nil, ErrLinkDown
	default:
	}
	ch := make(chan *boardv1.LinkResponse, 1)
	c.pending[id] = ch
	return ch, nil
}

func (c *conn) forget(id string) {
	c.mu.Lock()
	delete(c.pending, id)
	c.mu.Unlock()
}

// answer hands m to the request waiting for id; an answer nobody waits for
// (the caller gave up) is dropped.
func (c *conn) answer(id string, m *boardv1.LinkResponse) {
	c.mu.Lock()
	ch := c.pending[id]
	delete(c.pending, id)
	c.mu.Unlock()
	if ch != nil {
		ch <- m // buffered, and only ever one answer per id
	}
}

// finish stops all sending and fails every waiting request.
func (c *conn) finish(error) {
	c.sendMu.Lock()
	c.closed = true
	c.sendMu.Unlock()
	c.mu.Lock()
	defer c.mu.Unlock()
	select {
	case <-c.done:
	default:
		close(c.done)
	}
}
