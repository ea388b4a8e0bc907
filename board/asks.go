package board

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"slices"
	"sync"
	"time"

	"connectrpc.com/connect/v2"

	boardv1 "github.com/symphonix/symphonix/api/symphonix/board/v1"
)

// maxAsksPerAgent is how many requests the board may have waiting on one
// agent's answer at once (asks): one more is refused with
// resource_exhausted, so a busy agent, or one that never answers, costs
// the board a bounded number of goroutines.
const maxAsksPerAgent = 16

// maxAskMessage is the most an agent's refusal message may say before the
// board cuts it for its caller.
const maxAskMessage = 512

// asks are the requests the board makes of a linked agent and waits on: a
// chat window's, a fire, a stop. Each carries a request id; the answer, or
// an Error with that id, comes back on the link the request went out on,
// and only that link's answer counts.
type asks struct {
	mu      sync.Mutex
	waiting map[string]*ask // by request id
	count   map[string]int  // by agent
}

// ask is one request waiting for its answer.
type ask struct {
	agent   string
	session string
	answer  chan *boardv1.LinkRequest // buffered: one answer
	gone    chan struct{}             // closed when the link ends first
}

func newAsks() *asks {
	return &asks{waiting: map[string]*ask{}, count: map[string]int{}}
}

// ask sends the message build makes, with a new request id, to the agent's
// live link announcing capability, and waits up to within for the answer.
// The agent not linked here, or without capability, is failed_precondition;
// no answer in time is deadline_exceeded; the link ending first is
// unavailable. An Error from the agent comes back as a connect error of its
// code with its message, cut, which is the agent's to word: it names the
// field at fault.
func (b *Board) ask(ctx context.Context, agentName, capability string, within time.Duration,
	build func(requestID string) *boardv1.LinkResponse) (*boardv1.LinkRequest, error) {
	s := b.presence.session(agentName)
	if s == nil {
		return nil, refusal(connect.CodeFailedPrecondition, "agent %s: not linked to this board", quoted(agentName))
	}
	if !slices.Contains(s.caps, capability) {
		return nil, refusal(connect.CodeFailedPrecondition, "agent %s: its hello did not announce the %s capability", quoted(agentName), capability)
	}
	id := newRequestID()
	a := &ask{agent: agentName, session: s.id, answer: make(chan *boardv1.LinkRequest, 1), gone: s.gone}
	b.asks.mu.Lock()
	if b.asks.count[agentName] >= maxAsksPerAgent {
		b.asks.mu.Unlock()
		return nil, refusal(connect.CodeResourceExhausted, "agent %s: %d requests already wait on its answers; try again", quoted(agentName), maxAsksPerAgent)
	}
	b.asks.waiting[id] = a
	b.asks.count[agentName]++
	b.asks.mu.Unlock()
	defer func() {
		b.asks.mu.Lock()
		delete(b.asks.waiting, id)
		if b.asks.count[agentName]--; b.asks.count[agentName] <= 0 {
			delete(b.asks.count, agentName)
		}
		b.asks.mu.Unlock()
	}()

	if !b.presence.sendLiveTo(agentName, capability, build(id)) {
		return nil, refusal(connect.CodeUnavailable, "agent %s: its link went down; try again", quoted(agentName))
	}
	timer := time.NewTimer(within)
	defer timer.Stop()
	select {
	case m := <-a.answer:
		if e := m.GetError(); e != nil {
			return nil, chatRefusal(agentName, e)
		}
		return m, nil
	case <-a.gone:
		return nil, refusal(connect.CodeUnavailable, "agent %s: its link went down before it answered; try again", quoted(agentName))
	case <-timer.C:
		return nil, refusal(connect.CodeDeadlineExceeded, "agent %s: no answer within %s", quoted(agentName), within)
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// answered hands m, an answer that arrived on link s with requestID, to
// the request waiting on it. An answer nobody waits for (late, or made up)
// is dropped, and so is one from another link than the request went out
// on.
func (a *asks) answered(s *session, requestID string, m *boardv1.LinkRequest) bool {
	a.mu.Lock()
	w := a.waiting[requestID]
	if w == nil || w.session != s.id {
		a.mu.Unlock()
		return false
	}
	delete(a.waiting, requestID) // one answer
	a.mu.Unlock()
	w.answer <- m
	return true
}

// agentRefusal is an Error an agent answered a request with, as the
// board's caller is told it.
func chatRefusal(agentName string, e *boardv1.LinkError) error {
	code := connect.CodeFailedPrecondition
	switch e.GetCode() {
	case boardv1.LinkErrorCode_LINK_ERROR_CODE_INVALID_ARGUMENT:
		code = connect.CodeInvalidArgument
	case boardv1.LinkErrorCode_LINK_ERROR_CODE_NOT_FOUND:
		code = connect.CodeNotFound
	case boardv1.LinkErrorCode_LINK_ERROR_CODE_RESOURCE_EXHAUSTED:
		code = connect.CodeResourceExhausted
	case boardv1.LinkErrorCode_LINK_ERROR_CODE_UNAVAILABLE:
		code = connect.CodeUnavailable
	case boardv1.LinkErrorCode_LINK_ERROR_CODE_INTERNAL:
		return refusal(connect.CodeInternal, "agent %s: it failed to answer", quoted(agentName))
	}
	msg := clipText(e.GetMessage(), maxAskMessage)
	if msg == "" {
		msg = "refused"
	}
	return refusal(code, "agent %s: %s", quoted(agentName), msg)
}

// clipText is s cut to at most n bytes, on a character boundary, with
// control characters taken out: an agent's words on their way to a
// person.
func clipText(s string, n int) string {
	out := make([]rune, 0, min(len(s), n))
	size := 0
	for _, r := range s {
		if r < 0x20 || r == 0x7f {
			r = ' '
		}
		if size += len(string(r)); size > n {
			break
		}
		out = append(out, r)
	}
	return string(out)
}

// newRequestID is a request id for an ask: 16 random bytes, hex.
func newRequestID() string {
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic(fmt.Sprintf("crypto/rand: %v", err)) // does not fail on supported platforms
	}
	return hex.EncodeToString(b[:])
}
