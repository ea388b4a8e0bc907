package board

import (
	"context"
	"errors"

	"connectrpc.com/connect/v2"
	"google.golang.org/protobuf/types/known/timestamppb"

	boardv1 "github.com/symphonix/symphonix/api/symphonix/board/v1"
	"github.com/symphonix/symphonix/api/symphonix/board/v1/boardv1connect"
	"github.com/symphonix/symphonix/ent"
	"github.com/symphonix/symphonix/ent/agent"
)

// agentService is symphonix.board.v1.AgentService.
type agentService struct {
	b *Board
}

var _ boardv1connect.AgentServiceHandler = agentService{}

func (s agentService) ListAgents(ctx context.Context, _ *boardv1.ListAgentsRequest) (*boardv1.ListAgentsResponse, error) {
	rows, err := s.b.db.Agent.Query().Order(ent.Asc(agent.FieldName)).All(ctx)
	if err != nil {
		return nil, err
	}
	res := &boardv1.ListAgentsResponse{Agents: make([]*boardv1.Agent, len(rows))}
	for i, r := range rows {
		res.Agents[i] = agentProto(r)
	}
	return res, nil
}

func (s agentService) GetAgent(ctx context.Context, req *boardv1.GetAgentRequest) (*boardv1.GetAgentResponse, error) {
	if req.GetName() == "" {
		return nil, connect.NewError(connect.CodeInvalidArgument, "name: required")
	}
	r, err := s.b.db.Agent.Query().Where(agent.Name(req.GetName())).Only(ctx)
	if ent.IsNotFound(err) {
		return nil, connect.Errorf(connect.CodeNotFound, "agent %q: not found", req.GetName())
	}
	if err != nil {
		return nil, err
	}
	return &boardv1.GetAgentResponse{Agent: agentProto(r)}, nil
}

func (s agentService) WatchAgents(ctx context.Context, _ *boardv1.WatchAgentsRequest, stream boardv1connect.AgentServiceWatchAgentsServerStream) error {
	done, err := s.b.startStream(ctx)
	if err != nil {
		return err
	}
	defer done()
	// Subscribe before reading the snapshot so no change falls between them;
	// a change seen twice is harmless, a change missed is not.
	ch, stop := s.b.hub.watch()
	defer stop()
	list, err := s.ListAgents(ctx, nil)
	if err != nil {
		return err
	}
	for _, a := range list.Agents {
		if err := stream.Send(&boardv1.WatchAgentsResponse{Agent: a}); err != nil {
			return err
		}
	}
	if len(list.Agents) == 0 {
		// Flush headers so the watcher knows it is connected.
		if err := stream.SendHeaders(); err != nil {
			return err
		}
	}
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-s.b.done:
			return connect.NewError(connect.CodeUnavailable, "board shutting down")
		case a, ok := <-ch:
			if !ok {
				return connect.NewError(connect.CodeResourceExhausted, "watcher fell behind; watch again")
			}
			if err := stream.Send(&boardv1.WatchAgentsResponse{Agent: a}); err != nil {
				if errors.Is(err, context.Canceled) {
					return nil
				}
				return err
			}
		}
	}
}

// agentProto is the API's view of a stored agent.
func agentProto(r *ent.Agent) *boardv1.Agent {
	return &boardv1.Agent{
		Name:         r.Name,
		Description:  r.Description,
		Online:       r.Online,
		Capabilities: r.Capabilities,
		Protocol:     r.Protocol,
		Build:        r.Build,
		Tools:        r.Tools,
		Session:      r.Session,
		FirstSeen:    timestamppb.New(r.FirstSeen),
		LastSeen:     timestamppb.New(r.LastSeen),
	}
}
