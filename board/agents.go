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

// ListAgents is a page of agents, by name; its token holds the last name.
func (s agentService) ListAgents(ctx context.Context, req *boardv1.ListAgentsRequest) (*boardv1.ListAgentsResponse, error) {
	pg, err := s.b.page("ListAgents", req.GetPageSize(), req.GetPageToken(), defaultPageSize, maxPageSize, 1)
	if err != nil {
		return nil, err
	}
	res := &boardv1.ListAgentsResponse{Agents: []*boardv1.Agent{}}
	err = s.b.agentRows(ctx, pg.afterName(), func(r *ent.Agent) (bool, error) {
		a := agentProto(r)
		if !pg.take(a, r.Name) {
			return false, nil
		}
		res.Agents = append(res.Agents, a)
		return true, nil
	})
	if err != nil {
		return nil, err
	}
	res.NextPageToken = pg.next()
	return res, nil
}

// agentPage is how many agents are read from the store at once.
const agentPage = 500

// agentPages reads every agent, by name, a page at a time, and calls f
// with each until f says stop or they run out.
func (b *Board) agentPages(ctx context.Context, f func(*boardv1.Agent) (bool, error)) error {
	return b.agentRows(ctx, "", func(r *ent.Agent) (bool, error) { return f(agentProto(r)) })
}

// agentRows is agentPages with the stored rows, from the first named after
// after ("" for the first of all).
func (b *Board) agentRows(ctx context.Context, after string, f func(*ent.Agent) (bool, error)) error {
	for {
		rows, err := b.db.Agent.Query().Where(agent.NameGT(after)).Order(ent.Asc(agent.FieldName)).Limit(agentPage).All(ctx)
		if err != nil {
			return err
		}
		for _, r := range rows {
			if more, err := f(r); err != nil || !more {
				return err
			}
		}
		if len(rows) < agentPage {
			return nil
		}
		after = rows[len(rows)-1].Name
	}
}

func (s agentService) GetAgent(ctx context.Context, req *boardv1.GetAgentRequest) (*boardv1.GetAgentResponse, error) {
	if req.GetName() == "" {
		return nil, connect.NewError(connect.CodeInvalidArgument, "name: required")
	}
	r, err := s.b.db.Agent.Query().Where(agent.Name(req.GetName())).Only(ctx)
	if ent.IsNotFound(err) {
		return nil, connect.Errorf(connect.CodeNotFound, "agent %s: not found", quoted(req.GetName()))
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
	sent := 0
	err = s.b.agentPages(ctx, func(a *boardv1.Agent) (bool, error) {
		sent++
		return true, stream.Send(&boardv1.WatchAgentsResponse{Agent: a})
	})
	if err != nil {
		return err
	}
	if sent == 0 {
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
		case change, ok := <-ch:
			if !ok {
				return connect.NewError(connect.CodeResourceExhausted, "watcher fell behind; watch again")
			}
			if err := stream.Send(change); err != nil {
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
		Name:             r.Name,
		Description:      r.Description,
		State:            agentStateProto(r.Online),
		Capabilities:     r.Capabilities,
		Protocol:         r.Protocol,
		Build:            r.Build,
		Tools:            r.Tools,
		Session:          r.Session,
		FirstSeenTime:    timestamppb.New(r.FirstSeen),
		LastSeenTime:     timestamppb.New(r.LastSeen),
		Health:           agentHealthProto(r),
		Pause:            agentPauseProto(r),
		Inputs:           inputsProto(r.Inputs),
		RunsDropped:      uint64(max(r.RunsDropped, 0)),
		Package:          installedPackageProto(r),
		DelegationCycles: delegationCyclesProto(r),
	}
}
