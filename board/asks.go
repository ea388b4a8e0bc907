package board

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"connectrpc.com/connect/v2"
	"google.golang.org/protobuf/proto"

	boardv1 "github.com/symphonix/symphonix/api/symphonix/board/v1"
)

// Limits of the requests the board makes of a linked agent (docs/limits.md).
const (
	// maxAsksWaiting is how many requests may wait for one link's answers
	// at once: fires, stops and the chat window's together.
	maxAsksWaiting = 64
	// maxAgentWords is the most of an agent's refusal passed on.
	maxAgentWords = 1024
)

// askWaits are the requests the board sent on one link that wait for their
// answers (fires, stops, the chat window's), by request id: only that
// link's answer counts, and when it ends every one of them gives up. The
// zero value is ready.
type askWaits struct {
	mu     sync.Mutex
	m      map[string]chan askAnswer
	closed bool
}

// askAnswer is what the agent said to a request: the answer of its kind
// (a Fired, a Stopped, a ChatAnswer), or an Error.
type askAnswer struct {
	msg proto.Message
	err *boardv1.LinkError
}

var errLinkEnded = errors.New("the agent's link ended")

// wait registers id; its answer comes on ch. done must be called.
func (f *askWaits) wait(id string) (ch <-chan askAnswer, done func(), err error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	switch {
	case f.closed:
		return nil, nil, errLinkEnded
	case len(f.m) >= maxAsksWaiting:
		return nil, nil, connect.Errorf(connect.CodeResourceExhausted,
			"the agent has %d requests waiting for its answers, at most %d: try again", len(f.m), maxAsksWaiting)
	}
	if f.m == nil {
		f.m = make(map[string]chan askAnswer)
	}
	c := make(chan askAnswer, 1)
	f.m[id] = c
	return c, func() {
		f.mu.Lock()
		defer f.mu.Unlock()
		delete(f.m, id)
	}, nil
}

// answer hands the agent's answer to whoever waits for id; an answer
// nobody waits for (given up, or never asked) is dropped.
func (f *askWaits) answer(id string, msg proto.Message, le *boardv1.LinkError) {
	f.mu.Lock()
	defer f.mu.Unlock()
	c, ok := f.m[id]
	if !ok {
		return
	}
	delete(f.m, id)
	c <- askAnswer{msg: msg, err: le}
}

// close ends every wait: the link is gone.
func (f *askWaits) close() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.closed = true
	for id, c := range f.m {
		delete(f.m, id)
		close(c)
	}
}

// askAgent sends m, whose request id is id, on the agent's link and waits
// up to within for the answer: the answer of its kind, or the agent's
// Error as the matching code with its words.
func (b *Board) askAgent(ctx context.Context, to askTarget, id string, within time.Duration, m *boardv1.LinkResponse) (proto.Message, error) {
	if to.sess == nil {
		return b.relayAsk(ctx, to, id, within, m)
	}
	sess := to.sess
	ch, done, err := sess.asks.wait(id)
	if errors.Is(err, errLinkEnded) {
		return nil, connect.NewError(connect.CodeFailedPrecondition, "the agent's link ended; try again once it is back")
	}
	if err != nil {
		return nil, err
	}
	defer done()
	if err := sess.out.push(m); err != nil {
		if errors.Is(err, errOverrun) {
			sess.cancel(err)
		}
		return nil, connect.NewError(connect.CodeFailedPrecondition, "the agent's link ended; try again once it is back")
	}
	t := time.NewTimer(within)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return nil, ctx.Err()
	case <-t.C:
		return nil, connect.Errorf(connect.CodeDeadlineExceeded, "the agent did not answer within %s; it may still act on it", within)
	case a, ok := <-ch:
		if !ok {
			return nil, connect.NewError(connect.CodeUnavailable, "the agent's link ended before it answered; it may still act on it")
		}
		if a.err != nil {
			return nil, agentRefusal(a.err)
		}
		return a.msg, nil
	}
}

// agentRefusal is an agent's Error as a caller is told it: the code it
// chose, where it is one the link carries, and its words when they are
// safe to pass on (UTF-8 without control characters, cut to 1 KiB).
func agentRefusal(le *boardv1.LinkError) error {
	code := connect.CodeInternal
	switch le.GetCode() {
	case boardv1.LinkErrorCode_LINK_ERROR_CODE_INVALID_ARGUMENT:
		code = connect.CodeInvalidArgument
	case boardv1.LinkErrorCode_LINK_ERROR_CODE_NOT_FOUND:
		code = connect.CodeNotFound
	case boardv1.LinkErrorCode_LINK_ERROR_CODE_RESOURCE_EXHAUSTED:
		code = connect.CodeResourceExhausted
	case boardv1.LinkErrorCode_LINK_ERROR_CODE_FAILED_PRECONDITION:
		code = connect.CodeFailedPrecondition
	case boardv1.LinkErrorCode_LINK_ERROR_CODE_UNAVAILABLE:
		code = connect.CodeUnavailable
	}
	words := le.GetMessage()
	if !utf8.ValidString(words) || strings.ContainsFunc(words, func(r rune) bool { return r < 0x20 || r == 0x7f }) {
		words = "(its words were not shown: not plain text)"
	}
	if words == "" {
		words = "(no words)"
	}
	return connect.NewError(code, "the agent refused: "+cutText(words, maxAgentWords))
}

// linkedWith is where to ask the agent when it announced capability: its
// live link on this board, or on another board of the store (relay.go);
// failed_precondition naming why otherwise.
func (b *Board) linkedWith(ctx context.Context, name, capability, what string) (askTarget, error) {
	sess := b.presence.session(name)
	switch {
	case sess == nil:
		return b.elsewhere(ctx, name, capability, what)
	case !slices.Contains(sess.caps, capability):
		return askTarget{}, connect.Errorf(connect.CodeFailedPrecondition,
			"agent %s: its hello did not announce the %s capability, so %s", quoted(name), capability, what)
	}
	return askTarget{sess: sess}, nil
}

// newRequestID is the request id of a request the board makes.
func newRequestID() string {
	var p [9]byte
	_, _ = rand.Read(p[:])
	return fmt.Sprintf("board-%s", hex.EncodeToString(p[:]))
}
