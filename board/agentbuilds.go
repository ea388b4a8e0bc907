package board

import (
	"context"

	"connectrpc.com/connect/v2"
	"google.golang.org/protobuf/types/known/timestamppb"

	boardv1 "github.com/symphonix/symphonix/api/symphonix/board/v1"
	"github.com/symphonix/symphonix/ent"
	"github.com/symphonix/symphonix/ent/agent"
	"github.com/symphonix/symphonix/ent/agentbuild"
	"github.com/symphonix/symphonix/identity"
)

// ListAgentBuilds is a page of the builds an agent said it runs, the one
// last seen most recently first; its token holds the last build's
// last_seen and id. Its hellos write them (writeBuilds).
func (s agentService) ListAgentBuilds(ctx context.Context, req *boardv1.ListAgentBuildsRequest) (*boardv1.ListAgentBuildsResponse, error) {
	name := req.GetName()
	if name == "" {
		return nil, connect.NewError(connect.CodeInvalidArgument, "name: required")
	}
	if err := identity.ValidName(name); err != nil {
		return nil, connect.Errorf(connect.CodeInvalidArgument, "name: %v", err)
	}
	pg, err := s.b.page("ListAgentBuilds", req.GetPageSize(), req.GetPageToken(), maxAgentBuilds, maxAgentBuilds, 2, name)
	if err != nil {
		return nil, err
	}
	a, err := s.b.db.Agent.Query().Where(agent.Name(name)).Select(agent.FieldBuild).Only(ctx)
	if ent.IsNotFound(err) {
		return nil, connect.Errorf(connect.CodeNotFound, "agent %s: not found", quoted(name))
	}
	if err != nil {
		return nil, err
	}
	q := s.b.db.AgentBuild.Query().Where(agentbuild.Agent(name))
	if pg.after != nil {
		seen, err := positionTime(pg.after[0])
		if err != nil {
			return nil, err
		}
		id, err := positionInt(pg.after[1])
		if err != nil {
			return nil, err
		}
		q = q.Where(agentbuild.Or(
			agentbuild.LastSeenLT(seen),
			agentbuild.And(agentbuild.LastSeen(seen), agentbuild.IDLT(int(id))),
		))
	}
	rows, err := q.Order(ent.Desc(agentbuild.FieldLastSeen), ent.Desc(agentbuild.FieldID)).
		Limit(pg.budget.max + 1).All(ctx)
	if err != nil {
		return nil, err
	}
	res := &boardv1.ListAgentBuildsResponse{Builds: []*boardv1.AgentBuild{}}
	for _, r := range rows {
		p := &boardv1.AgentBuild{
			Build:          r.Build,
			PackageName:    r.PackageName,
			PackageVersion: r.PackageVersion,
			FirstSeenTime:  timestamppb.New(r.FirstSeen),
			LastSeenTime:   timestamppb.New(r.LastSeen),
			Current:        r.Build == a.Build,
		}
		if !pg.take(p, microString(r.LastSeen), int64String(int64(r.ID))) {
			break
		}
		res.Builds = append(res.Builds, p)
	}
	res.NextPageToken = pg.next()
	return res, nil
}
