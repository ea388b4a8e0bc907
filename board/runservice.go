package board

import (
	"context"
	"slices"
	"time"

	"connectrpc.com/connect/v2"

	boardv1 "github.com/symphonix/symphonix/api/symphonix/board/v1"
	"github.com/symphonix/symphonix/api/symphonix/board/v1/boardv1connect"
	"github.com/symphonix/symphonix/ent"
	"github.com/symphonix/symphonix/ent/approval"
	"github.com/symphonix/symphonix/ent/predicate"
	"github.com/symphonix/symphonix/ent/run"
	"github.com/symphonix/symphonix/identity"
)

// runService is symphonix.board.v1.RunService.
type runService struct {
	boardv1connect.UnimplementedRunServiceHandler
	b *Board
}

var _ boardv1connect.RunServiceHandler = runService{}

// Page sizes of ListRuns (docs/limits.md).
const (
	defaultRunPageSize = 50
	maxRunPageSize     = 500
	// runPage is how many runs are read from the store at once: a run
	// holds up to 128 KiB of input and output.
	runPage = 50
)

// ListRuns is a page of runs, newest first (by start_time, then the row's
// id); its token holds the last one's start time and row id.
func (s runService) ListRuns(ctx context.Context, req *boardv1.ListRunsRequest) (*boardv1.ListRunsResponse, error) {
	var where []predicate.Run
	if err := enumIn("state", req.GetState(), false); err != nil {
		return nil, err
	}
	st := runStateWord(req.GetState())
	if st != "" {
		where = append(where, run.State(st))
	}
	if a := req.GetAgent(); a != "" {
		if err := identity.ValidName(a); err != nil {
			return nil, connect.Errorf(connect.CodeInvalidArgument, "agent: %v", err)
		}
		where = append(where, run.Agent(a))
	}
	if th := req.GetThread(); th != "" {
		if req.GetAgent() == "" {
			return nil, connect.NewError(connect.CodeInvalidArgument, "thread: needs agent: a thread is one agent's")
		}
		if err := validText(th, maxRunThread, false); err != nil {
			return nil, connect.Errorf(connect.CodeInvalidArgument, "thread: %v", err)
		}
		where = append(where, run.Thread(th))
	}
	var after, before string
	if t := req.GetStartAfter(); t != nil {
		if !t.IsValid() {
			return nil, connect.NewError(connect.CodeInvalidArgument, "start_after: not a valid time")
		}
		where = append(where, run.StartTimeGTE(storedTime(t.AsTime())))
		after = microString(t.AsTime())
	}
	if t := req.GetStartBefore(); t != nil {
		if !t.IsValid() {
			return nil, connect.NewError(connect.CodeInvalidArgument, "start_before: not a valid time")
		}
		where = append(where, run.StartTimeLT(storedTime(t.AsTime())))
		before = microString(t.AsTime())
	}
	pg, err := s.b.page("ListRuns", req.GetPageSize(), req.GetPageToken(), defaultRunPageSize, maxRunPageSize, 2,
		req.GetAgent(), st, req.GetThread(), after, before)
	if err != nil {
		return nil, err
	}
	var last *runKey
	if pg.after != nil {
		t, err := positionTime(pg.after[0])
		if err != nil {
			return nil, err
		}
		id, err := positionInt(pg.after[1])
		if err != nil {
			return nil, err
		}
		last = &runKey{start: t, id: int(id)}
	}
	res := &boardv1.ListRunsResponse{Runs: []*boardv1.Run{}}
	for {
		q := s.b.db.Run.Query().Where(where...)
		if last != nil {
			q.Where(run.StartTimeLTE(last.start), run.Or(run.StartTimeLT(last.start), run.IDLT(last.id)))
		}
		rows, err := q.Order(ent.Desc(run.FieldStartTime), ent.Desc(run.FieldID)).Limit(runPage).All(ctx)
		if err != nil {
			return nil, err
		}
		for _, r := range rows {
			p := s.b.withLive(runProto(r))
			if !pg.take(p, microString(r.StartTime), int64String(int64(r.ID))) {
				res.NextPageToken = pg.next()
				return res, nil
			}
			res.Runs = append(res.Runs, p)
		}
		if len(rows) < runPage {
			res.NextPageToken = pg.next()
			return res, nil
		}
		r := rows[len(rows)-1]
		last = &runKey{start: r.StartTime, id: r.ID}
	}
}

// runKey is a run's place in the order of ListRuns.
type runKey struct {
	start time.Time
	id    int
}

// withLive is a stored run that has not ended as the live view has it
// now: its state, pause, step count and tokens.
func (b *Board) withLive(p *boardv1.Run) *boardv1.Run {
	if ended(p.GetState()) {
		return p
	}
	lr := b.live.peek(p.GetAgent(), p.GetId())
	if lr == nil {
		return p
	}
	p.State, p.Pause, p.PausedAt, p.ApprovalId = lr.GetState(), lr.GetPause(), lr.GetPausedAt(), lr.GetApprovalId()
	p.StepCount = max(p.StepCount, lr.GetStepCount())
	p.StepsTruncated = p.StepsTruncated || lr.GetStepsTruncated()
	if lr.GetTokens() != nil && lr.GetTokens().GetTotal() >= p.GetTokens().GetTotal() {
		p.Tokens = lr.GetTokens()
	}
	return p
}

// GetRun is one run with its steps: as stored, or, while it has not
// ended, as the live view has it, over what is stored.
func (s runService) GetRun(ctx context.Context, req *boardv1.GetRunRequest) (*boardv1.GetRunResponse, error) {
	if err := identity.ValidName(req.GetAgent()); err != nil {
		return nil, connect.Errorf(connect.CodeInvalidArgument, "agent: %v", err)
	}
	if err := validRunID(req.GetId()); err != nil {
		return nil, connect.Errorf(connect.CodeInvalidArgument, "id: %v", err)
	}
	row, err := s.b.db.Run.Query().Where(run.Agent(req.GetAgent()), run.RunID(req.GetId())).Only(ctx)
	if err != nil && !ent.IsNotFound(err) {
		return nil, err
	}
	live := s.b.live.get(req.GetAgent(), req.GetId())
	if row == nil && live == nil {
		return nil, connect.Errorf(connect.CodeNotFound, "run %s of agent %s: not found", quoted(req.GetId()), quoted(req.GetAgent()))
	}
	var out *boardv1.Run
	if row != nil {
		out = runProto(row)
		if out.Steps, err = s.b.storedSteps(ctx, row.ID); err != nil {
			return nil, err
		}
	}
	if live != nil && (out == nil || !ended(out.GetState())) {
		out = mergeLive(out, live)
	}
	if err := s.b.fillApprovals(ctx, out); err != nil {
		return nil, err
	}
	return &boardv1.GetRunResponse{Run: out}, nil
}

// mergeLive is a stored run (nil when none is) with what the live view
// says of it over it: the live view's steps in the place of stored ones of
// the same seq.
func mergeLive(stored, live *boardv1.Run) *boardv1.Run {
	if stored == nil {
		return live
	}
	out := stored
	out.State, out.Pause, out.PausedAt, out.ApprovalId = live.GetState(), live.GetPause(), live.GetPausedAt(), live.GetApprovalId()
	out.StepCount = max(out.StepCount, live.GetStepCount())
	out.StepsTruncated = out.StepsTruncated || live.GetStepsTruncated()
	if live.GetTokens().GetTotal() > out.GetTokens().GetTotal() {
		out.Tokens = live.GetTokens()
	}
	bySeq := make(map[int32]int, len(out.Steps))
	for i, st := range out.Steps {
		bySeq[st.GetSeq()] = i
	}
	for _, st := range live.GetSteps() {
		if i, ok := bySeq[st.GetSeq()]; ok {
			out.Steps[i] = st
			continue
		}
		out.Steps = append(out.Steps, st)
	}
	slices.SortFunc(out.Steps, func(a, b *boardv1.RunStep) int { return int(a.GetSeq() - b.GetSeq()) })
	if len(out.Steps) > maxRunSteps {
		out.Steps, out.StepsTruncated = out.Steps[:maxRunSteps], true
	}
	return out
}

// fillApprovals gives a paused run, and each step that paused, the
// approval the agent raised for it when the agent did not say which: the
// newest raised by the agent for the run at that node.
func (b *Board) fillApprovals(ctx context.Context, r *boardv1.Run) error {
	var nodes []string
	if r.GetState() == boardv1.RunState_RUN_STATE_PAUSED && r.GetApprovalId() == "" && r.GetPausedAt() != "" {
		nodes = append(nodes, r.GetPausedAt())
	}
	for _, st := range r.GetSteps() {
		if st.GetOutcome() == boardv1.StepOutcome_STEP_OUTCOME_PAUSED && st.GetApprovalId() == "" && st.GetNode() != "" &&
			st.GetPause() != boardv1.PauseKind_PAUSE_KIND_ASK && !slices.Contains(nodes, st.GetNode()) && len(nodes) < 100 {
			nodes = append(nodes, st.GetNode())
		}
	}
	if len(nodes) == 0 {
		return nil
	}
	rows, err := b.db.Approval.Query().
		Where(approval.Agent(r.GetAgent()), approval.RunID(r.GetId()), approval.NodeIn(nodes...), approval.StateNEQ(StateSuperseded)).
		Order(ent.Desc(approval.FieldCreatedAt)).Select(approval.FieldID, approval.FieldNode).All(ctx)
	if err != nil {
		return err
	}
	byNode := make(map[string]string, len(rows))
	for _, a := range rows {
		if _, ok := byNode[a.Node]; !ok {
			byNode[a.Node] = a.ID
		}
	}
	if r.GetState() == boardv1.RunState_RUN_STATE_PAUSED && r.GetApprovalId() == "" {
		r.ApprovalId = byNode[r.GetPausedAt()]
	}
	for _, st := range r.GetSteps() {
		if st.GetOutcome() == boardv1.StepOutcome_STEP_OUTCOME_PAUSED && st.GetApprovalId() == "" {
			st.ApprovalId = byNode[st.GetNode()]
		}
	}
	return nil
}
