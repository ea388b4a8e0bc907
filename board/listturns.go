package board

import (
	"context"
	"sync"
	"time"

	"connectrpc.com/connect/v2"

	"github.com/symphonix/symphonix/api/symphonix/board/v1/boardv1connect"
)

// listProcedures are the calls whose answer may be a list of up to
// MaxListBytes: each costs the board reading, encoding and compressing
// megabytes, so one caller calling them side by side could take every core.
var listProcedures = map[string]bool{
	boardv1connect.AgentServiceListAgentsProcedure:               true,
	boardv1connect.AgentServiceGetHealthHistoryProcedure:         true,
	boardv1connect.AgentServiceListAgentBuildsProcedure:          true,
	boardv1connect.ApprovalServiceListApprovalsProcedure:         true,
	boardv1connect.ApprovalServiceListRulesProcedure:             true,
	boardv1connect.AuditServiceListAuditProcedure:                true,
	boardv1connect.ConversationServiceListConversationsProcedure: true,
	boardv1connect.RunServiceListRunsProcedure:                   true,
	boardv1connect.ToolServiceListServersProcedure:               true,
	boardv1connect.ToolServiceListSwitchesProcedure:              true,
	boardv1connect.UserServiceListUsersProcedure:                 true,
}

// maxListsWaiting is how many lists one caller may have waiting for their
// turn behind the one being answered.
const maxListsWaiting = 16

// maxListRest is the longest a turn lasts after its list is answered.
const maxListRest = time.Second

// listTurns makes each caller's lists (listProcedures) take turns: one
// token, or one signed-in person (streamKey), has one answered at a time,
// and up to maxListsWaiting more wait, in no promised order; one more is
// refused with resource_exhausted. A turn lasts as long again as its list
// took to answer (at most maxListRest more), so that a caller asking for
// one list after another, or many at once, has at most half of one core
// of the board; a client that asks for two small lists at once gets both,
// a few milliseconds apart. The zero value is ready.
type listTurns struct {
	mu sync.Mutex
	m  map[string]*listTurn
}

// listTurn is one caller's: its turn, and its lists in flight or waiting.
type listTurn struct {
	turn  chan struct{} // holds a token while one of its lists is answered
	calls int
}

// take waits for key's turn; release ends it. It fails when key has as
// many lists waiting as it may, or when ctx ends first.
func (l *listTurns) take(ctx context.Context, key string) (release func(), err error) {
	l.mu.Lock()
	t := l.m[key]
	if t == nil {
		if l.m == nil {
			l.m = make(map[string]*listTurn)
		}
		t = &listTurn{turn: make(chan struct{}, 1)}
		l.m[key] = t
	}
	if t.calls > maxListsWaiting {
		l.mu.Unlock()
		return nil, connect.Errorf(connect.CodeResourceExhausted,
			"too many lists at once: one token or person has one answered at a time and at most %d waiting; wait for one", maxListsWaiting)
	}
	t.calls++
	l.mu.Unlock()
	done := func() {
		l.mu.Lock()
		defer l.mu.Unlock()
		if t.calls--; t.calls == 0 {
			delete(l.m, key)
		}
	}
	select {
	case t.turn <- struct{}{}:
		start := time.Now()
		return func() {
			time.AfterFunc(min(time.Since(start), maxListRest), func() {
				<-t.turn
				done()
			})
		}, nil
	case <-ctx.Done():
		done()
		return nil, ctx.Err()
	}
}
