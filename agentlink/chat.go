package agentlink

import (
	"context"
	"errors"
	"strconv"
	"time"

	boardv1 "github.com/symphonix/symphonix/api/symphonix/board/v1"
)

// The chat window's bounds on the agent's side of the link (docs/limits.md).
const (
	// MaxChatAtOnce is how many of the board's chat requests the agent
	// answers at once; one more is refused with resource_exhausted at once.
	// A talk can take a minute; the board holds at most 16 requests waiting
	// on one agent.
	MaxChatAtOnce = 8
	// ChatTalkWithin and ChatWithin are how long the agent works on a talk,
	// and on any other chat request, before its context ends: as long as
	// the board waits for it.
	ChatTalkWithin = 120 * time.Second
	ChatWithin     = 10 * time.Second
	// MaxChatRefusal is the most a chat refusal's message says.
	MaxChatRefusal = 512
)

// chat answers the board's ChatRequest q with Config.OnChat, on a goroutine
// of its own so that the receive loop never waits for it, at most
// MaxChatAtOnce at once; without a handler, or past the bound, it is
// refused at once.
func (l *Link) chat(ctx context.Context, c *conn, q *boardv1.ChatRequest) {
	id := q.GetRequestId()
	if l.cfg.OnChat == nil || !l.announces(CapabilityChat) {
		l.refuse(ctx, c, id, "chat", &Refusal{Code: "failed_precondition", Message: "this agent does not answer the chat window"})
		return
	}
	select {
	case l.chatting <- struct{}{}:
	default:
		l.refuse(ctx, c, id, "chat", &Refusal{Code: "resource_exhausted",
			Message: "the agent answers " + strconv.Itoa(MaxChatAtOnce) + " chat requests at once: try again"})
		return
	}
	within := ChatWithin
	if q.GetTalk() != nil {
		within = ChatTalkWithin
	}
	go func() {
		defer func() { <-l.chatting }()
		qctx, cancel := context.WithTimeout(ctx, within)
		defer cancel()
		a, err := l.cfg.OnChat(qctx, q)
		if err == nil && a == nil {
			err = errors.New("OnChat answered nothing")
		}
		if err != nil {
			var r *Refusal
			if errors.As(err, &r) {
				err = &Refusal{Code: r.Code, Message: Clip(r.Message, MaxChatRefusal)}
			}
			l.refuse(ctx, c, id, "chat", err)
			return
		}
		a.RequestId = id
		if err := c.send(&boardv1.LinkRequest{Kind: &boardv1.LinkRequest_ChatAnswer{ChatAnswer: a}}); err != nil && ctx.Err() == nil {
			l.log.WarnContext(ctx, "a chat answer was not sent", "err", err)
		}
	}()
}
