package node

import (
	"context"
	"encoding/json"
	"errors"

	"google.golang.org/protobuf/types/known/timestamppb"

	"github.com/symphonix/symphonix/agentlink"
	boardv1 "github.com/symphonix/symphonix/api/symphonix/board/v1"
	"github.com/symphonix/symphonix/flow"
	"github.com/symphonix/symphonix/llm"
	"github.com/symphonix/symphonix/secrets"
	"github.com/symphonix/symphonix/serve"
)

// maxShowJSON is the most of an approval's show a chat answer carries.
const maxShowJSON = 64 << 10

// chat answers one of the board's chat window's requests with the served
// agent (Config.OnChat): the link's messages turned into serve's plain
// types and back, and serve's refusals into the link's.
func chat(s *serve.Server) func(context.Context, *boardv1.ChatRequest) (*boardv1.ChatAnswer, error) {
	return func(ctx context.Context, q *boardv1.ChatRequest) (*boardv1.ChatAnswer, error) {
		bc := serve.BoardCaller{Who: q.GetWho(), All: q.GetAll()}
		a, err := chatAnswer(ctx, s, bc, q)
		var ce *serve.ChatError
		if errors.As(err, &ce) {
			return nil, &agentlink.Refusal{Code: ce.Code, Message: ce.Message}
		}
		return a, err
	}
}

func chatAnswer(ctx context.Context, s *serve.Server, bc serve.BoardCaller, q *boardv1.ChatRequest) (*boardv1.ChatAnswer, error) {
	switch k := q.GetKind().(type) {
	case *boardv1.ChatRequest_Talk:
		t := serve.Talk{Thread: k.Talk.GetThread(), Text: k.Talk.GetText()}
		if in := k.Talk.GetInput(); in != nil {
			t.Input = in.AsMap()
		}
		if ans := k.Talk.GetAnswer(); ans != nil {
			t.Answer, t.Answering = ans.AsInterface(), true
		}
		turn, err := s.BoardTalk(ctx, bc, t)
		if err != nil {
			return nil, err
		}
		return &boardv1.ChatAnswer{Kind: &boardv1.ChatAnswer_Talk{Talk: &boardv1.TalkResponse{Turn: &boardv1.ChatTurn{
			Thread: turn.Thread, RunId: turn.Run, Reply: turn.Reply, Pending: chatPending(turn.Pending, turn.Decides),
		}}}}, nil
	case *boardv1.ChatRequest_ChatPage:
		d, err := s.BoardChatPage(ctx, bc)
		if err != nil {
			return nil, err
		}
		p := &boardv1.GetChatPageResponse{Name: d.Name, Description: d.Description,
			Inputs: flowInputs(d.Inputs), Outputs: flowInputs(d.Outputs)}
		if d.Paused != nil {
			p.Paused = d.Paused.Reason
			if p.Paused == "" {
				p.Paused = "paused"
			}
		}
		return &boardv1.ChatAnswer{Kind: &boardv1.ChatAnswer_ChatPage{ChatPage: p}}, nil
	case *boardv1.ChatRequest_Describe:
		d, err := s.BoardDescribe(ctx, bc)
		if err != nil {
			return nil, err
		}
		return &boardv1.ChatAnswer{Kind: &boardv1.ChatAnswer_Describe{Describe: &boardv1.DescribeAgentResponse{
			Name: d.Name, Description: d.Description, Build: d.Build, Inputs: flowInputs(d.Inputs),
			Outputs: flowInputs(d.Outputs), Tools: d.Tools, Needs: d.Needs, Conversation: d.Conversation,
		}}}, nil
	case *boardv1.ChatRequest_Conversations:
		list, err := s.BoardConversations(ctx, bc)
		if err != nil {
			return nil, err
		}
		out := &boardv1.ListThreadsResponse{}
		for _, c := range list {
			th := &boardv1.ChatThread{Thread: c.Thread, Turns: int32(c.Turns), Waiting: c.Waiting}
			if !c.Updated.IsZero() {
				th.UpdateTime = timestamppb.New(c.Updated)
			}
			out.Threads = append(out.Threads, th)
		}
		return &boardv1.ChatAnswer{Kind: &boardv1.ChatAnswer_Conversations{Conversations: out}}, nil
	case *boardv1.ChatRequest_Conversation:
		c, err := s.BoardConversation(ctx, bc, k.Conversation.GetThread())
		if err != nil {
			return nil, err
		}
		out := &boardv1.GetThreadResponse{Thread: c.Thread, Pending: chatPending(c.Pending, c.Decides)}
		for _, t := range c.Turns {
			out.Turns = append(out.Turns, &boardv1.ChatTurnRecord{Time: timestamppb.New(t.At),
				Asked: flow.Text(t.Asked), Answered: flow.Text(t.Answered), Who: t.Who})
		}
		return &boardv1.ChatAnswer{Kind: &boardv1.ChatAnswer_Conversation{Conversation: out}}, nil
	}
	return nil, &serve.ChatError{Code: serve.ChatInvalidArgument, Message: "kind: a chat request this agent does not know"}
}

func flowInputs(cs []serve.Channel) []*boardv1.FlowInput {
	out := make([]*boardv1.FlowInput, 0, len(cs))
	for _, c := range cs {
		out = append(out, &boardv1.FlowInput{Name: c.Name, Type: c.Type, Description: c.Description})
	}
	return out
}

// chatPending is what a run waits for, as the link says it; nil for none.
func chatPending(p *flow.Pending, d *serve.Decides) *boardv1.ChatPending {
	if p == nil {
		return nil
	}
	out := &boardv1.ChatPending{Kind: boardv1.PauseKind_PAUSE_KIND_ASK, Node: p.Node, Question: p.Question}
	if p.Kind == flow.PendingApproval {
		out.Kind = boardv1.PauseKind_PAUSE_KIND_APPROVAL
		if b, err := json.Marshal(p.Show); err == nil && len(b) <= maxShowJSON {
			out.ShowJson = string(b)
		}
		if d != nil {
			out.Decides, out.ApprovalId = d.Who, d.Approval
		}
	}
	return out
}

// about is what the board's chat window is told the agent needs beyond its
// flow: its build, the names of the variables it is known to read (the
// folder's .env.example and .env, and the model's that are set) — never a
// value — and the model by name, never its key or URL.
func about(cfg Config, build string) serve.AboutConfig {
	names, _ := secrets.NamesIn(cfg.Dir) // a file refused is said at start; no names then
	getenv := cfg.Getenv
	if getenv == nil {
		getenv = func(string) string { return "" }
	}
	for _, n := range append(llm.SecretEnv(), "OPENAI_MODEL") {
		if getenv(n) != "" {
			names = append(names, n)
		}
	}
	model := "stand-in"
	if getenv("OPENAI_API_KEY") != "" {
		model = cmpOr(getenv("OPENAI_MODEL"), llm.DefaultOpenAIModel)
	}
	return serve.AboutConfig{Build: build, Env: names, Model: model}
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}
