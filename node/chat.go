package node

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"

	"github.com/symphonix/symphonix/agentlink"
	"github.com/symphonix/symphonix/flow"
	"github.com/symphonix/symphonix/llm"
	"github.com/symphonix/symphonix/secrets"
	"github.com/symphonix/symphonix/serve"
)

// maxShowJSON is the most of an approval's show a chat answer carries; a
// larger one is left out (the approval's question still says what it is).
const maxShowJSON = 64 << 10

// chat answers the board's chat window with the served agent
// (agentlink.Config.OnChat): the link's request in serve's terms, its
// answer and its refusals back in agentlink's.
func chat(s *serve.Server) func(context.Context, agentlink.Chat) (agentlink.ChatReply, error) {
	return func(ctx context.Context, q agentlink.Chat) (agentlink.ChatReply, error) {
		r, err := chatReply(ctx, s, q)
		var ce *serve.ChatError
		if errors.As(err, &ce) {
			return r, &agentlink.Refusal{Code: ce.Code, Message: ce.Message}
		}
		return r, err
	}
}

func chatReply(ctx context.Context, s *serve.Server, q agentlink.Chat) (agentlink.ChatReply, error) {
	bc := serve.BoardCaller{Who: q.Who, All: q.All}
	switch q.Kind {
	case agentlink.ChatTalk:
		turn, err := s.BoardTalk(ctx, bc, serve.Talk{Thread: q.Thread, Text: q.Text, Input: q.Input, Answer: q.Answer, Answering: q.Answering})
		if err != nil {
			return agentlink.ChatReply{}, err
		}
		return agentlink.ChatReply{Turn: &agentlink.ChatTurn{Thread: turn.Thread, RunID: turn.Run, Reply: turn.Reply,
			Pending: chatPending(turn.Pending, turn.Decides)}}, nil
	case agentlink.ChatPageKind:
		d, err := s.BoardChatPage(ctx, bc)
		if err != nil {
			return agentlink.ChatReply{}, err
		}
		p := &agentlink.ChatPage{Name: d.Name, Description: d.Description, Inputs: channels(d.Inputs), Outputs: channels(d.Outputs)}
		if d.Paused != nil {
			p.Paused = d.Paused.Reason
			if p.Paused == "" {
				p.Paused = "paused"
			}
		}
		return agentlink.ChatReply{Page: p}, nil
	case agentlink.ChatDescribe:
		d, err := s.BoardDescribe(ctx, bc)
		if err != nil {
			return agentlink.ChatReply{}, err
		}
		return agentlink.ChatReply{Description: &agentlink.ChatDescription{Name: d.Name, Description: d.Description,
			Build: d.Build, Inputs: channels(d.Inputs), Outputs: channels(d.Outputs), Tools: d.Tools, Needs: d.Needs,
			Conversation: d.Conversation}}, nil
	case agentlink.ChatConversations:
		list, err := s.BoardConversations(ctx, bc)
		if err != nil {
			return agentlink.ChatReply{}, err
		}
		r := agentlink.ChatReply{Listed: true}
		for _, c := range list {
			r.Threads = append(r.Threads, agentlink.ChatThread{Thread: c.Thread, Updated: c.Updated, Turns: c.Turns, Waiting: c.Waiting})
		}
		return r, nil
	case agentlink.ChatConversation:
		c, err := s.BoardConversation(ctx, bc, q.Thread)
		if err != nil {
			return agentlink.ChatReply{}, err
		}
		out := &agentlink.ChatThreadTurns{Thread: c.Thread, Pending: chatPending(c.Pending, c.Decides)}
		for _, t := range c.Turns {
			out.Turns = append(out.Turns, agentlink.ChatTurnRecord{At: t.At, Asked: flow.Text(t.Asked), Answered: flow.Text(t.Answered), Who: t.Who})
		}
		return agentlink.ChatReply{Conversation: out}, nil
	}
	return agentlink.ChatReply{}, &serve.ChatError{Code: serve.ChatInvalidArgument, Message: "kind: a chat request this agent does not know"}
}

func channels(cs []serve.Channel) []agentlink.FlowInput {
	out := make([]agentlink.FlowInput, 0, len(cs))
	for _, c := range cs {
		out = append(out, agentlink.FlowInput{Name: c.Name, Type: c.Type, Description: c.Description})
	}
	return out
}

// chatPending is what a run waits for, for the link; nil for nothing.
func chatPending(p *flow.Pending, d *serve.Decides) *agentlink.ChatPending {
	if p == nil {
		return nil
	}
	out := &agentlink.ChatPending{Node: p.Node, Question: p.Question}
	if p.Kind == flow.PendingApproval {
		out.Approval = true
		if b, err := json.Marshal(p.Show); err == nil && len(b) <= maxShowJSON {
			out.ShowJSON = string(b)
		}
		if d != nil {
			out.Decides, out.ApprovalID = d.Who, d.Approval
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
		model = cmp.Or(getenv("OPENAI_MODEL"), llm.DefaultOpenAIModel)
	}
	return serve.AboutConfig{Build: build, Env: names, Model: model}
}
