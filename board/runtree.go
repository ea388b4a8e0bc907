package board

import (
	"context"
	"slices"

	"connectrpc.com/connect/v2"

	boardv1 "github.com/symphonix/symphonix/api/symphonix/board/v1"
	"github.com/symphonix/symphonix/ent"
	"github.com/symphonix/symphonix/ent/delegationfailure"
	"github.com/symphonix/symphonix/ent/predicate"
	"github.com/symphonix/symphonix/ent/run"
	"github.com/symphonix/symphonix/identity"
)

// Limits of GetRunTree and ListDelegationFailures (docs/limits.md).
const (
	// maxTreeRuns is how many runs a tree holds; maxTreeDepth how many
	// levels, the root's one.
	maxTreeRuns  = 1000
	maxTreeDepth = 32
	// treeChunk is how many parents' children one query reads.
	treeChunk = 200

	defaultFailurePageSize = 100
	maxFailurePageSize     = 500
)

// GetRunTree is the tree a run belongs to: its root found by walking
// parent_run_id up, then the children of each level, in the order they
// started, a level a query (or a few). A parent the board does not keep
// (swept, or never heard of) ends the walk up: the highest run it keeps
// is the root.
func (s runService) GetRunTree(ctx context.Context, req *boardv1.GetRunTreeRequest) (*boardv1.GetRunTreeResponse, error) {
	if err := identity.ValidName(req.GetAgent()); err != nil {
		return nil, connect.Errorf(connect.CodeInvalidArgument, "agent: %v", err)
	}
	if err := validRunID(req.GetId()); err != nil {
		return nil, connect.Errorf(connect.CodeInvalidArgument, "id: %v", err)
	}
	a := req.GetAgent()
	q := s.b.db.Run.Query()
	root, err := q.Where(run.Agent(a), run.RunID(req.GetId())).Only(ctx)
	if ent.IsNotFound(err) {
		return nil, connect.Errorf(connect.CodeNotFound, "run %s of agent %s: not found", quoted(req.GetId()), quoted(a))
	}
	if err != nil {
		return nil, err
	}
	res := &boardv1.GetRunTreeResponse{}
	seen := map[string]bool{root.RunID: true}
	// Up: at most maxTreeDepth-1 parents above the run asked for.
	for up := 0; root.ParentRunID != ""; up++ {
		if up == maxTreeDepth-1 || seen[root.ParentRunID] {
			res.Truncated = true
			break
		}
		p, err := s.b.db.Run.Query().Where(run.Agent(a), run.RunID(root.ParentRunID)).Only(ctx)
		if ent.IsNotFound(err) {
			break
		}
		if err != nil {
			return nil, err
		}
		root, seen[p.RunID] = p, true
	}
	res.Root = &boardv1.RunTreeNode{Run: s.b.withLive(runProto(root))}
	clear(seen)
	seen[root.RunID] = true
	n := 1
	level := []*boardv1.RunTreeNode{res.Root}
	for depth := 1; len(level) > 0; depth++ {
		byID := make(map[string]*boardv1.RunTreeNode, len(level))
		ids := make([]string, len(level))
		for i, t := range level {
			byID[t.GetRun().GetId()], ids[i] = t, t.GetRun().GetId()
		}
		var next []*boardv1.RunTreeNode
		for chunk := range slices.Chunk(ids, treeChunk) {
			if n >= maxTreeRuns {
				break
			}
			rows, err := s.b.db.Run.Query().Where(run.Agent(a), run.ParentRunIDIn(chunk...)).
				Order(ent.Asc(run.FieldStartTime), ent.Asc(run.FieldID)).Limit(maxTreeRuns - n + 1).All(ctx)
			if err != nil {
				return nil, err
			}
			for _, r := range rows {
				if seen[r.RunID] {
					continue
				}
				if depth == maxTreeDepth || n == maxTreeRuns {
					res.Truncated = true
					break
				}
				seen[r.RunID] = true
				n++
				t := &boardv1.RunTreeNode{Run: s.b.withLive(runProto(r))}
				p := byID[r.ParentRunID]
				p.Children = append(p.Children, t)
				next = append(next, t)
			}
		}
		if depth == maxTreeDepth {
			break
		}
		level = next
	}
	return res, nil
}

// ListDelegationFailures is a page of an agent's delegation failures,
// newest first (by time, then the row's id); its token holds the last
// one's time and row id.
func (s runService) ListDelegationFailures(ctx context.Context, req *boardv1.ListDelegationFailuresRequest) (*boardv1.ListDelegationFailuresResponse, error) {
	if err := identity.ValidName(req.GetAgent()); err != nil {
		return nil, connect.Errorf(connect.CodeInvalidArgument, "agent: %v", err)
	}
	where := []predicate.DelegationFailure{delegationfailure.Agent(req.GetAgent())}
	if c := req.GetCode(); c != "" {
		if !slices.Contains(agentCodes, c) {
			return nil, connect.Errorf(connect.CodeInvalidArgument, "code: %s, want one of the agent codes (UNKNOWN_AGENT, …, AGENT_RECURSION)", quoted(c))
		}
		where = append(where, delegationfailure.Code(c))
	}
	pg, err := s.b.page("ListDelegationFailures", req.GetPageSize(), req.GetPageToken(), defaultFailurePageSize, maxFailurePageSize, 2,
		req.GetAgent(), req.GetCode())
	if err != nil {
		return nil, err
	}
	q := s.b.db.DelegationFailure.Query().Where(where...)
	if pg.after != nil {
		t, err := positionTime(pg.after[0])
		if err != nil {
			return nil, err
		}
		id, err := positionInt(pg.after[1])
		if err != nil {
			return nil, err
		}
		q.Where(delegationfailure.TimeLTE(t), delegationfailure.Or(delegationfailure.TimeLT(t), delegationfailure.IDLT(int(id))))
	}
	// At most maxFailuresPerAgent are kept: one read holds any page.
	rows, err := q.Order(ent.Desc(delegationfailure.FieldTime), ent.Desc(delegationfailure.FieldID)).
		Limit(maxFailurePageSize + 1).All(ctx)
	if err != nil {
		return nil, err
	}
	res := &boardv1.ListDelegationFailuresResponse{Failures: []*boardv1.DelegationFailure{}}
	for _, r := range rows {
		p := delegationFailureProto(r)
		if !pg.take(p, microString(r.Time), int64String(int64(r.ID))) {
			break
		}
		res.Failures = append(res.Failures, p)
	}
	res.NextPageToken = pg.next()
	return res, nil
}
