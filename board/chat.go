package board

import (
	"context"
	"fmt"
	"time"

	"connectrpc.com/connect/v2"
	"google.golang.org/protobuf/proto"

	boardv1 "github.com/symphonix/symphonix/api/symphonix/board/v1"
	"github.com/symphonix/symphonix/identity"
)

// capChat is the capability of an agent that answers the chat window's
// five requests.
const capChat = "chat"

// The chat window's limits (docs/limits.md).
const (
	// maxChatThread is the longest thread name, in the served agent's
	// alphabet (A-Z a-z 0-9 . _ -).
	maxChatThread = 128
	// maxChatText is the most a message in words may say.
	maxChatText = 16 << 10
	// maxChatInput is the most a message as values, or an answer, may be,
	// as JSON.
	maxChatInput = 64 << 10
	// talkWithin is how long Talk waits for the turn: a run that calls a
	// model and tools takes a while.
	talkWithin = 120 * time.Second
	// chatWithin is how long the other four wait.
	chatWithin = 10 * time.Second
)

// chatService is the board's chat window (ChatService): each call is one
// of the five named requests, sent to the agent over its link with who is
// asking, and the agent's answer handed back. The agent keeps its door.
type chatService struct{ b *Board }

func (s chatService) Talk(ctx context.Context, req *boardv1.TalkRequest) (*boardv1.TalkResponse, error) {
	if err := validChatThread(req.GetThread(), false); err != nil {
		return nil, err
	}
	given := 0
	if req.GetText() != "" {
		given++
		if n := len(req.GetText()); n > maxChatText {
			return nil, connect.Errorf(connect.CodeInvalidArgument, "text: %d bytes, at most %d", n, maxChatText)
		}
	}
	if req.GetInput() != nil {
		given++
		if n := proto.Size(req.GetInput()); n > maxChatInput {
			return nil, connect.Errorf(connect.CodeInvalidArgument, "input: %d bytes, at most %d", n, maxChatInput)
		}
	}
	if req.GetAnswer() != nil {
		given++
		if n := proto.Size(req.GetAnswer()); n > maxChatInput {
			return nil, connect.Errorf(connect.CodeInvalidArgument, "answer: %d bytes, at most %d", n, maxChatInput)
		}
	}
	if given != 1 {
		return nil, connect.NewError(connect.CodeInvalidArgument, "text, input, answer: exactly one is required")
	}
	if req.GetAnswer() != nil && req.GetThread() == "" {
		return nil, connect.NewError(connect.CodeInvalidArgument, "thread: required with an answer: the thread whose run waits")
	}
	q := proto.CloneOf(req)
	q.Agent = ""
	m, err := s.b.askChat(ctx, req.GetAgent(), talkWithin, &boardv1.ChatRequest{Kind: &boardv1.ChatRequest_Talk{Talk: q}})
	if err != nil {
		return nil, err
	}
	a := m.GetTalk()
	if a == nil || a.GetTurn() == nil {
		return nil, s.b.wrongAnswer(ctx, req.GetAgent(), "talk", m)
	}
	return a, nil
}

func (s chatService) GetChatPage(ctx context.Context, req *boardv1.GetChatPageRequest) (*boardv1.GetChatPageResponse, error) {
	m, err := s.b.askChat(ctx, req.GetAgent(), chatWithin, &boardv1.ChatRequest{Kind: &boardv1.ChatRequest_ChatPage{ChatPage: &boardv1.GetChatPageRequest{}}})
	if err != nil {
		return nil, err
	}
	if a := m.GetChatPage(); a != nil {
		return a, nil
	}
	return nil, s.b.wrongAnswer(ctx, req.GetAgent(), "chatPage", m)
}

func (s chatService) DescribeAgent(ctx context.Context, req *boardv1.DescribeAgentRequest) (*boardv1.DescribeAgentResponse, error) {
	m, err := s.b.askChat(ctx, req.GetAgent(), chatWithin, &boardv1.ChatRequest{Kind: &boardv1.ChatRequest_Describe{Describe: &boardv1.DescribeAgentRequest{}}})
	if err != nil {
		return nil, err
	}
	if a := m.GetDescribe(); a != nil {
		return a, nil
	}
	return nil, s.b.wrongAnswer(ctx, req.GetAgent(), "describe", m)
}

func (s chatService) ListThreads(ctx context.Context, req *boardv1.ListThreadsRequest) (*boardv1.ListThreadsResponse, error) {
	m, err := s.b.askChat(ctx, req.GetAgent(), chatWithin, &boardv1.ChatRequest{Kind: &boardv1.ChatRequest_Conversations{Conversations: &boardv1.ListThreadsRequest{}}})
	if err != nil {
		return nil, err
	}
	if a := m.GetConversations(); a != nil {
		return a, nil
	}
	return nil, s.b.wrongAnswer(ctx, req.GetAgent(), "conversations", m)
}

func (s chatService) GetThread(ctx context.Context, req *boardv1.GetThreadRequest) (*boardv1.GetThreadResponse, error) {
	if err := validChatThread(req.GetThread(), true); err != nil {
		return nil, err
	}
	m, err := s.b.askChat(ctx, req.GetAgent(), chatWithin, &boardv1.ChatRequest{Kind: &boardv1.ChatRequest_Conversation{Conversation: &boardv1.GetThreadRequest{Thread: req.GetThread()}}})
	if err != nil {
		return nil, err
	}
	if a := m.GetConversation(); a != nil {
		return a, nil
	}
	return nil, s.b.wrongAnswer(ctx, req.GetAgent(), "conversation", m)
}

// askChat sends q, with who is asking, to the agent announcing "chat" and
// waits within for its ChatAnswer.
func (b *Board) askChat(ctx context.Context, agentName string, within time.Duration, q *boardv1.ChatRequest) (*boardv1.ChatAnswer, error) {
	if err := identity.ValidName(agentName); err != nil {
		return nil, connect.Errorf(connect.CodeInvalidArgument, "agent: %v", err)
	}
	c, ok := identity.FromContext(ctx)
	if !ok || !c.Operates() {
		return nil, connect.NewError(connect.CodeUnauthenticated, "unauthenticated")
	}
	to, err := b.linkedWith(ctx, agentName, capChat, "it has no chat window on the board")
	if err != nil {
		return nil, err
	}
	if to.sess == nil {
		// Not relayed: what is said in the chat window would pass through
		// the store.
		return nil, connect.Errorf(connect.CodeFailedPrecondition,
			"agent %s: linked to another board of the store; its chat window is served by the board holding its link, so that what is said never passes through the store", quoted(agentName))
	}
	q.RequestId, q.Who, q.All = newRequestID(), c.Name, c.Role >= identity.RoleAdmin
	m, err := b.askAgent(ctx, to, q.RequestId, within, &boardv1.LinkResponse{Kind: &boardv1.LinkResponse_Chat{Chat: q}})
	if err != nil {
		return nil, err
	}
	if a, ok := m.(*boardv1.ChatAnswer); ok {
		return a, nil
	}
	return nil, b.wrongAnswer(ctx, agentName, "chat", nil)
}

// wrongAnswer is what the caller is told when the agent answered a chat
// request with another kind of answer: the agent's fault, logged, and
// nothing of it passed on.
func (b *Board) wrongAnswer(ctx context.Context, agentName, asked string, got *boardv1.ChatAnswer) error {
	b.log.WarnContext(ctx, "agent answered a chat request with another kind", "agent", agentName, "asked", asked,
		"kind", fmt.Sprintf("%T", got.GetKind()))
	return refusal(connect.CodeInternal, "agent %s: it answered %s with something else", quoted(agentName), asked)
}

// validChatThread checks a thread name as the served agent does.
func validChatThread(t string, required bool) error {
	switch {
	case t == "" && required:
		return connect.NewError(connect.CodeInvalidArgument, "thread: required")
	case t == "":
		return nil
	case len(t) > maxChatThread:
		return connect.Errorf(connect.CodeInvalidArgument, "thread: %d bytes, at most %d", len(t), maxChatThread)
	case t == "." || t == "..":
		return connect.Errorf(connect.CodeInvalidArgument, "thread: %q is not a thread name", t)
	}
	for i := 0; i < len(t); i++ {
		switch c := t[i]; {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9', c == '.', c == '_', c == '-':
		default:
			return connect.Errorf(connect.CodeInvalidArgument, "thread: character %d is %q: want only A-Z a-z 0-9 . _ -", i+1, rune(c))
		}
	}
	return nil
}
