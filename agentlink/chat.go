package agentlink

import (
	"context"
	"errors"
	"strconv"
	"time"

	"google.golang.org/protobuf/types/known/timestamppb"

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
		r, err := l.cfg.OnChat(qctx, chatOf(q))
		a, ok := answerOf(r)
		if err == nil && !ok {
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

// Chat is one of the board's chat window's requests, for a caller: Who
// (the signed-in person's address, or an operator token's name) and All
// (an admin, who sees every conversation). Kind is "talk", "chat_page",
// "describe", "conversations" or "conversation".
type Chat struct {
	Who  string
	All  bool
	Kind string
	// Thread: the talk's (or "" for a new one), or the conversation's.
	Thread string
	// A talk: Text, Input, or Answer with Answering.
	Text      string
	Input     map[string]any
	Answer    any
	Answering bool
}

// The kinds of Chat.
const (
	ChatTalk          = "talk"
	ChatPageKind      = "chat_page"
	ChatDescribe      = "describe"
	ChatConversations = "conversations"
	ChatConversation  = "conversation"
)

// ChatReply answers a Chat: the one field of its kind.
type ChatReply struct {
	Turn        *ChatTurn
	Page        *ChatPage
	Description *ChatDescription
	// Threads, for conversations (Listed set, so that none is an answer).
	Threads      []ChatThread
	Listed       bool
	Conversation *ChatThreadTurns
}

// ChatTurn is how a turn came out.
type ChatTurn struct {
	Thread, RunID, Reply string
	Pending              *ChatPending
}

// ChatPending is what a run waits for.
type ChatPending struct {
	// Approval: an approval; otherwise an ask.
	Approval                 bool
	Node, Question, ShowJSON string
	Decides, ApprovalID      string
}

// ChatPage is the agent's chat page, composed.
type ChatPage struct {
	Name, Description string
	Inputs, Outputs   []FlowInput
	// Paused: why it takes no new messages; "" when it does.
	Paused string
}

// ChatDescription is what the flow says about itself.
type ChatDescription struct {
	Name, Description, Build string
	Inputs, Outputs          []FlowInput
	Tools, Needs             []string
	Conversation             bool
}

// ChatThread points at one conversation.
type ChatThread struct {
	Thread  string
	Updated time.Time
	Turns   int
	Waiting bool
}

// ChatThreadTurns is one conversation: its turns, oldest first, and what
// its run waits for.
type ChatThreadTurns struct {
	Thread  string
	Turns   []ChatTurnRecord
	Pending *ChatPending
}

// ChatTurnRecord is one turn as the agent's transcript keeps it.
type ChatTurnRecord struct {
	At                   time.Time
	Asked, Answered, Who string
}

// chatOf is q in this package's terms.
func chatOf(q *boardv1.ChatRequest) Chat {
	c := Chat{Who: q.GetWho(), All: q.GetAll()}
	switch k := q.GetKind().(type) {
	case *boardv1.ChatRequest_Talk:
		c.Kind, c.Thread, c.Text = ChatTalk, k.Talk.GetThread(), k.Talk.GetText()
		if in := k.Talk.GetInput(); in != nil {
			c.Input = in.AsMap()
		}
		if a := k.Talk.GetAnswer(); a != nil {
			c.Answer, c.Answering = a.AsInterface(), true
		}
	case *boardv1.ChatRequest_ChatPage:
		c.Kind = ChatPageKind
	case *boardv1.ChatRequest_Describe:
		c.Kind = ChatDescribe
	case *boardv1.ChatRequest_Conversations:
		c.Kind = ChatConversations
	case *boardv1.ChatRequest_Conversation:
		c.Kind, c.Thread = ChatConversation, k.Conversation.GetThread()
	}
	return c
}

// answerOf is r as the link's ChatAnswer; false when r holds nothing.
func answerOf(r ChatReply) (*boardv1.ChatAnswer, bool) {
	switch {
	case r.Turn != nil:
		return &boardv1.ChatAnswer{Kind: &boardv1.ChatAnswer_Talk{Talk: &boardv1.TalkResponse{Turn: &boardv1.ChatTurn{
			Thread: r.Turn.Thread, RunId: r.Turn.RunID, Reply: r.Turn.Reply, Pending: pendingOf(r.Turn.Pending),
		}}}}, true
	case r.Page != nil:
		return &boardv1.ChatAnswer{Kind: &boardv1.ChatAnswer_ChatPage{ChatPage: &boardv1.GetChatPageResponse{
			Name: r.Page.Name, Description: r.Page.Description, Inputs: inputsOf(r.Page.Inputs),
			Outputs: inputsOf(r.Page.Outputs), Paused: r.Page.Paused,
		}}}, true
	case r.Description != nil:
		d := r.Description
		return &boardv1.ChatAnswer{Kind: &boardv1.ChatAnswer_Describe{Describe: &boardv1.DescribeAgentResponse{
			Name: d.Name, Description: d.Description, Build: d.Build, Inputs: inputsOf(d.Inputs),
			Outputs: inputsOf(d.Outputs), Tools: d.Tools, Needs: d.Needs, Conversation: d.Conversation,
		}}}, true
	case r.Listed:
		out := &boardv1.ListThreadsResponse{}
		for _, t := range r.Threads {
			th := &boardv1.ChatThread{Thread: t.Thread, Turns: int32(t.Turns), Waiting: t.Waiting}
			if !t.Updated.IsZero() {
				th.UpdateTime = timestamppb.New(t.Updated)
			}
			out.Threads = append(out.Threads, th)
		}
		return &boardv1.ChatAnswer{Kind: &boardv1.ChatAnswer_Conversations{Conversations: out}}, true
	case r.Conversation != nil:
		out := &boardv1.GetThreadResponse{Thread: r.Conversation.Thread, Pending: pendingOf(r.Conversation.Pending)}
		for _, t := range r.Conversation.Turns {
			out.Turns = append(out.Turns, &boardv1.ChatTurnRecord{Time: timestamppb.New(t.At), Asked: t.Asked, Answered: t.Answered, Who: t.Who})
		}
		return &boardv1.ChatAnswer{Kind: &boardv1.ChatAnswer_Conversation{Conversation: out}}, true
	}
	return nil, false
}

func pendingOf(p *ChatPending) *boardv1.ChatPending {
	if p == nil {
		return nil
	}
	out := &boardv1.ChatPending{Kind: boardv1.PauseKind_PAUSE_KIND_ASK, Node: p.Node, Question: p.Question}
	if p.Approval {
		out.Kind, out.ShowJson, out.Decides, out.ApprovalId = boardv1.PauseKind_PAUSE_KIND_APPROVAL, p.ShowJSON, p.Decides, p.ApprovalID
	}
	return out
}
