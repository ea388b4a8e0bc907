package board

import (
	"context"
	"errors"
	"time"

	"connectrpc.com/connect/v2"

	boardv1 "github.com/symphonix/symphonix/api/symphonix/board/v1"
	"github.com/symphonix/symphonix/api/symphonix/board/v1/boardv1connect"
	"github.com/symphonix/symphonix/ent"
	"github.com/symphonix/symphonix/ent/agent"
	"github.com/symphonix/symphonix/ent/evalscore"
	"github.com/symphonix/symphonix/ent/predicate"
	"github.com/symphonix/symphonix/identity"
)

// evalService is symphonix.board.v1.EvalService: what each agent's builds
// scored in their evals, and whether the deployed one scored worse.
// docs/evals-board.md says how.
type evalService struct {
	boardv1connect.UnimplementedEvalServiceHandler
	b *Board
}

var _ boardv1connect.EvalServiceHandler = evalService{}

// evalListChunk is how many stored scores one read of ListEvalScores
// takes.
const evalListChunk = 500

// ListEvalScores is a page of suites, by agent and suite; its token holds
// the last agent and suite.
func (s evalService) ListEvalScores(ctx context.Context, req *boardv1.ListEvalScoresRequest) (*boardv1.ListEvalScoresResponse, error) {
	only := req.GetAgent()
	if only != "" {
		if err := identity.ValidName(only); err != nil {
			return nil, refusal(connect.CodeInvalidArgument, "agent: %v", err)
		}
	}
	pg, err := s.b.page("ListEvalScores", req.GetPageSize(), req.GetPageToken(), defaultPageSize, maxPageSize, 2, only)
	if err != nil {
		return nil, err
	}
	afterAgent, afterSuite := "", ""
	if pg.after != nil {
		afterAgent, afterSuite = pg.after[0], pg.after[1]
	}
	out := &boardv1.ListEvalScoresResponse{Suites: []*boardv1.AgentEvalSuite{}}
	deployed := map[string]string{}
	var curAgent, curSuite string
	var cur []*ent.EvalScore
	// flush puts the suite read so far on the page; false when it is full.
	flush := func() (bool, error) {
		if len(cur) == 0 {
			return true, nil
		}
		d, ok := deployed[curAgent]
		if !ok {
			if d, err = s.b.deployedBuild(ctx, curAgent); err != nil {
				return false, err
			}
			deployed[curAgent] = d
		}
		suite := agentEvalSuite(curAgent, curSuite, d, cur)
		cur = nil
		if !pg.take(suite, curAgent, curSuite) {
			return false, nil
		}
		out.Suites = append(out.Suites, suite)
		return true, nil
	}
	after := evalscore.Or(evalscore.AgentGT(afterAgent), evalscore.And(evalscore.Agent(afterAgent), evalscore.SuiteGT(afterSuite)))
	for {
		q := s.b.db.EvalScore.Query().Where(after)
		if only != "" {
			q = q.Where(evalscore.Agent(only))
		}
		rows, err := q.Order(ent.Asc(evalscore.FieldAgent), ent.Asc(evalscore.FieldSuite), ent.Asc(evalscore.FieldBuild)).
			Limit(evalListChunk).All(ctx)
		if err != nil {
			return nil, err
		}
		for _, r := range rows {
			if r.Agent != curAgent || r.Suite != curSuite {
				more, err := flush()
				if err != nil {
					return nil, err
				}
				if !more {
					out.NextPageToken = pg.next()
					return out, nil
				}
				curAgent, curSuite = r.Agent, r.Suite
			}
			cur = append(cur, r)
		}
		if len(rows) < evalListChunk {
			break
		}
		last := rows[len(rows)-1]
		after = afterEvalRow(last)
	}
	if _, err := flush(); err != nil {
		return nil, err
	}
	out.NextPageToken = pg.next()
	return out, nil
}

// afterEvalRow is the stored scores after r in the list's order: agent,
// suite, build.
func afterEvalRow(r *ent.EvalScore) predicate.EvalScore {
	return evalscore.Or(
		evalscore.AgentGT(r.Agent),
		evalscore.And(evalscore.Agent(r.Agent), evalscore.SuiteGT(r.Suite)),
		evalscore.And(evalscore.Agent(r.Agent), evalscore.Suite(r.Suite), evalscore.BuildGT(r.Build)),
	)
}

// deployedBuild is the build the agent's latest hello said it runs; ""
// for an agent that never linked.
func (b *Board) deployedBuild(ctx context.Context, name string) (string, error) {
	builds, err := b.db.Agent.Query().Where(agent.Name(name)).Select(agent.FieldBuild).Strings(ctx)
	if err != nil || len(builds) == 0 {
		return "", err
	}
	return builds[0], nil
}

// evalSuite is one suite of one agent as the board holds it now.
func (b *Board) evalSuite(ctx context.Context, name, suite string) (*boardv1.AgentEvalSuite, error) {
	rows, err := b.db.EvalScore.Query().Where(evalscore.Agent(name), evalscore.Suite(suite)).All(ctx)
	if err != nil {
		return nil, err
	}
	d, err := b.deployedBuild(ctx, name)
	if err != nil {
		return nil, err
	}
	return agentEvalSuite(name, suite, d, rows), nil
}

// PublishEvalScores keeps one eval run's summary for one build of the
// agent the token names. It is the agent speaking of its own builds, as on
// its link, so it is not written to the audit log.
func (s evalService) PublishEvalScores(ctx context.Context, req *boardv1.PublishEvalScoresRequest) (*boardv1.PublishEvalScoresResponse, error) {
	caller, _ := identity.FromContext(ctx)
	name := caller.Name
	if caller.Kind != identity.KindAgent || name == "" {
		return nil, refusal(connect.CodePermissionDenied, "PublishEvalScores: agent tokens only")
	}
	if err := validEvalSuiteName(req.GetSuite()); err != nil {
		return nil, refusal(connect.CodeInvalidArgument, "suite: %v", err)
	}
	now := s.b.now()
	if err := validEvalScore("score", req.GetScore(), now, false); err != nil {
		return nil, asRPCError(err)
	}
	if retry, ok := s.b.evals.publishRate.take(ctx, name); !ok {
		return nil, refusal(connect.CodeResourceExhausted,
			"too many eval scores published: at most %d a minute for agent %s; try again in %s",
			evalPublishesPerAgent, quoted(name), retry.Round(time.Second))
	}
	s.b.evals.publishRate.done(ctx, name, true) // every publish counts
	suite := &boardv1.EvalSuiteScores{Suite: req.GetSuite(), Builds: []*boardv1.EvalScore{req.GetScore()}}
	if _, err := s.b.keepEvals(ctx, name, []*boardv1.EvalSuiteScores{suite}, evalscore.SourcePublished, true, now); err != nil {
		return nil, err
	}
	out, err := s.b.evalSuite(ctx, name, req.GetSuite())
	if err != nil {
		return nil, err
	}
	return &boardv1.PublishEvalScoresResponse{Suite: out}, nil
}

// asRPCError is a link refusal as an RPC's error, with its code and words.
func asRPCError(err error) error {
	var le *linkRequestError
	if errors.As(err, &le) {
		return connect.NewError(le.code, le.msg)
	}
	return err
}
