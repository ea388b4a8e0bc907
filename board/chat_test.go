package board_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"connectrpc.com/connect/v2"
	"google.golang.org/protobuf/types/known/structpb"

	boardv1 "github.com/symphonix/symphonix/api/symphonix/board/v1"
	"github.com/symphonix/symphonix/api/symphonix/board/v1/boardv1connect"
	"github.com/symphonix/symphonix/board"
	"github.com/symphonix/symphonix/identity"
	"github.com/symphonix/symphonix/internal/boardtest"
)

func chatClient(bt *boardtest.Board, token string) boardv1connect.ChatServiceClient {
	return boardv1connect.NewChatServiceClient(bt.Client(token))
}

// TestChatOverTheLink: each of the chat window's five requests goes to the
// agent over its link with who is asking and whether they see everything,
// and the agent's answer comes back to the caller as it was.
func TestChatOverTheLink(t *testing.T) {
	t.Parallel()
	bt := boardtest.Start(t, boardtest.Options{})
	l, _ := openLinkWith(t, bt, &boardv1.Hello{Name: "desk", Protocol: board.Protocol, Capabilities: []string{"chat"}})
	l.ping(1)
	viewer := chatClient(bt, bt.OperatorToken("ana", identity.RoleViewer))
	admin := chatClient(bt, bt.OperatorToken("ops", identity.RoleAdmin))

	type call struct {
		name   string
		do     func() (any, error)
		check  func(*boardv1.ChatRequest) string
		answer *boardv1.ChatAnswer
		want   func(any) bool
	}
	turn := &boardv1.ChatTurn{Thread: "t-1", RunId: "r1", Reply: "Refunded."}
	threads := &boardv1.ListThreadsResponse{Threads: []*boardv1.ChatThread{{Thread: "t-1", Turns: 2}}}
	calls := []call{
		{
			name: "talk",
			do: func() (any, error) {
				return viewer.Talk(t.Context(), &boardv1.TalkRequest{Agent: "desk", Thread: "t-1", Text: "refund A-1"})
			},
			check: func(q *boardv1.ChatRequest) string {
				if q.GetTalk().GetText() != "refund A-1" || q.GetTalk().GetThread() != "t-1" || q.GetTalk().GetAgent() != "" || q.GetWho() != "ana" || q.GetAll() {
					return "want the text on t-1, from ana, not all"
				}
				return ""
			},
			answer: &boardv1.ChatAnswer{Kind: &boardv1.ChatAnswer_Talk{Talk: &boardv1.TalkResponse{Turn: turn}}},
			want:   func(r any) bool { return r.(*boardv1.TalkResponse).GetTurn().GetReply() == "Refunded." },
		},
		{
			name: "conversations",
			do: func() (any, error) {
				return admin.ListThreads(t.Context(), &boardv1.ListThreadsRequest{Agent: "desk"})
			},
			check: func(q *boardv1.ChatRequest) string {
				if q.GetConversations() == nil || q.GetWho() != "ops" || !q.GetAll() {
					return "want conversations from ops, all"
				}
				return ""
			},
			answer: &boardv1.ChatAnswer{Kind: &boardv1.ChatAnswer_Conversations{Conversations: threads}},
			want:   func(r any) bool { return r.(*boardv1.ListThreadsResponse).GetThreads()[0].GetThread() == "t-1" },
		},
		{
			name: "conversation",
			do: func() (any, error) {
				return viewer.GetThread(t.Context(), &boardv1.GetThreadRequest{Agent: "desk", Thread: "t-1"})
			},
			check: func(q *boardv1.ChatRequest) string {
				if q.GetConversation().GetThread() != "t-1" {
					return "want the conversation t-1"
				}
				return ""
			},
			answer: &boardv1.ChatAnswer{Kind: &boardv1.ChatAnswer_Conversation{Conversation: &boardv1.GetThreadResponse{Thread: "t-1",
				Turns: []*boardv1.ChatTurnRecord{{Asked: "hi", Answered: "hello"}}}}},
			want: func(r any) bool { return r.(*boardv1.GetThreadResponse).GetTurns()[0].GetAnswered() == "hello" },
		},
		{
			name: "chatPage",
			do: func() (any, error) {
				return viewer.GetChatPage(t.Context(), &boardv1.GetChatPageRequest{Agent: "desk"})
			},
			check: func(q *boardv1.ChatRequest) string {
				if q.GetChatPage() == nil {
					return "want chatPage"
				}
				return ""
			},
			answer: &boardv1.ChatAnswer{Kind: &boardv1.ChatAnswer_ChatPage{ChatPage: &boardv1.GetChatPageResponse{Name: "desk", Paused: "maintenance"}}},
			want:   func(r any) bool { return r.(*boardv1.GetChatPageResponse).GetPaused() == "maintenance" },
		},
		{
			name: "describe",
			do: func() (any, error) {
				return viewer.DescribeAgent(t.Context(), &boardv1.DescribeAgentRequest{Agent: "desk"})
			},
			check: func(q *boardv1.ChatRequest) string {
				if q.GetDescribe() == nil {
					return "want describe"
				}
				return ""
			},
			answer: &boardv1.ChatAnswer{Kind: &boardv1.ChatAnswer_Describe{Describe: &boardv1.DescribeAgentResponse{Name: "desk", Needs: []string{"OPENAI_API_KEY"}}}},
			want:   func(r any) bool { return r.(*boardv1.DescribeAgentResponse).GetNeeds()[0] == "OPENAI_API_KEY" },
		},
	}
	for _, c := range calls {
		type result struct {
			r   any
			err error
		}
		done := make(chan result, 1)
		go func() {
			r, err := c.do()
			done <- result{r, err}
		}()
		q := l.next().GetChat()
		if q == nil || q.GetRequestId() == "" {
			t.Fatalf("%s: the link got %v, want a chat request with a request id", c.name, q)
		}
		if why := c.check(q); why != "" {
			t.Errorf("%s: the agent was asked %v: %s", c.name, q, why)
		}
		c.answer.RequestId = q.GetRequestId()
		l.send(&boardv1.LinkRequest{Kind: &boardv1.LinkRequest_ChatAnswer{ChatAnswer: c.answer}})
		res := <-done
		if res.err != nil || !c.want(res.r) {
			t.Errorf("%s: the caller got %v, %v; want the agent's answer", c.name, res.r, res.err)
		}
	}
}

// TestChatRefusals: bad requests are refused naming the field before the
// agent is asked; an agent not linked, or without "chat", is
// failed_precondition; the agent's refusal reaches the caller with its
// code and words; an answer from nobody times out, and a link that ends
// ends the wait.
func TestChatRefusals(t *testing.T) {
	t.Parallel()
	bt := boardtest.Start(t, boardtest.Options{})
	viewer := chatClient(bt, bt.OperatorToken("ana", identity.RoleViewer))
	ctx := t.Context()

	for _, c := range []struct {
		name  string
		req   *boardv1.TalkRequest
		field string
	}{
		{"nothing", &boardv1.TalkRequest{Agent: "desk", Thread: "t"}, "text, input, answer"},
		{"two", &boardv1.TalkRequest{Agent: "desk", Text: "a", Answer: structpb.NewStringValue("yes")}, "text, input, answer"},
		{"bad thread", &boardv1.TalkRequest{Agent: "desk", Thread: "../x", Text: "a"}, "thread"},
		{"long thread", &boardv1.TalkRequest{Agent: "desk", Thread: strings.Repeat("t", 129), Text: "a"}, "thread"},
		{"long text", &boardv1.TalkRequest{Agent: "desk", Text: strings.Repeat("a", 16<<10+1)}, "text"},
		{"answer without thread", &boardv1.TalkRequest{Agent: "desk", Answer: structpb.NewStringValue("yes")}, "thread"},
		{"no agent", &boardv1.TalkRequest{Text: "a"}, "agent"},
	} {
		_, err := viewer.Talk(ctx, c.req)
		if connect.CodeOf(err) != connect.CodeInvalidArgument || !strings.Contains(err.Error(), c.field+":") {
			t.Errorf("%s: %v, want invalid_argument naming %s", c.name, err, c.field)
		}
	}
	if _, err := viewer.GetChatPage(ctx, &boardv1.GetChatPageRequest{Agent: "desk"}); connect.CodeOf(err) != connect.CodeFailedPrecondition {
		t.Errorf("an agent not linked: %v, want failed_precondition", err)
	}
	plain, _ := openLinkWith(t, bt, &boardv1.Hello{Name: "plain", Protocol: board.Protocol})
	plain.ping(1)
	if _, err := viewer.GetChatPage(ctx, &boardv1.GetChatPageRequest{Agent: "plain"}); connect.CodeOf(err) != connect.CodeFailedPrecondition ||
		!strings.Contains(err.Error(), "chat capability") {
		t.Errorf("an agent without chat: %v, want failed_precondition naming the capability", err)
	}

	l, _ := openLinkWith(t, bt, &boardv1.Hello{Name: "desk", Protocol: board.Protocol, Capabilities: []string{"chat"}})
	l.ping(1)
	done := make(chan error, 1)
	go func() {
		_, err := viewer.GetThread(ctx, &boardv1.GetThreadRequest{Agent: "desk", Thread: "someone-elses"})
		done <- err
	}()
	q := l.next().GetChat()
	// Another request id is nobody's answer; the right one with an Error
	// is the caller's.
	l.send(&boardv1.LinkRequest{Kind: &boardv1.LinkRequest_ChatAnswer{ChatAnswer: &boardv1.ChatAnswer{RequestId: "made-up",
		Kind: &boardv1.ChatAnswer_Conversation{Conversation: &boardv1.GetThreadResponse{Thread: "x"}}}}})
	l.send(&boardv1.LinkRequest{Kind: &boardv1.LinkRequest_Error{Error: &boardv1.LinkError{RequestId: q.GetRequestId(),
		Code: boardv1.LinkErrorCode_LINK_ERROR_CODE_NOT_FOUND, Message: "thread \"someone-elses\": not found\x00"}}})
	if err := <-done; connect.CodeOf(err) != connect.CodeNotFound || !strings.Contains(err.Error(), `agent "desk": thread "someone-elses": not found`) {
		t.Errorf("the agent's refusal: %v, want not_found in its words", err)
	}

	// A link that ends while a request waits ends the wait: unavailable.
	go func() {
		_, err := viewer.DescribeAgent(ctx, &boardv1.DescribeAgentRequest{Agent: "desk"})
		done <- err
	}()
	if l.next().GetChat() == nil {
		t.Fatal("want the describe request")
	}
	_ = l.s.Close()
	select {
	case err := <-done:
		if connect.CodeOf(err) != connect.CodeUnavailable {
			t.Errorf("the link ended: %v, want unavailable", err)
		}
	case <-time.After(time.Minute):
		t.Fatal("the request still waits a minute after the link ended")
	}
}

// TestChatAsksAreBounded: one agent holds at most 16 requests waiting on
// its answers; one more is refused at once.
func TestChatAsksAreBounded(t *testing.T) {
	t.Parallel()
	bt := boardtest.Start(t, boardtest.Options{})
	viewer := chatClient(bt, bt.OperatorToken("ana", identity.RoleViewer))
	l, _ := openLinkWith(t, bt, &boardv1.Hello{Name: "desk", Protocol: board.Protocol, Capabilities: []string{"chat"}})
	l.ping(1)
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	errs := make(chan error, 16)
	for range 16 {
		go func() {
			_, err := viewer.GetChatPage(ctx, &boardv1.GetChatPageRequest{Agent: "desk"})
			errs <- err
		}()
	}
	for range 16 {
		if l.next().GetChat() == nil {
			t.Fatal("want a chat request")
		}
	}
	if _, err := viewer.GetChatPage(t.Context(), &boardv1.GetChatPageRequest{Agent: "desk"}); connect.CodeOf(err) != connect.CodeResourceExhausted {
		t.Errorf("the 17th: %v, want resource_exhausted", err)
	}
	cancel()
	for range 16 {
		<-errs
	}
}
