package board

import (
	"context"
	"slices"
	"time"

	"connectrpc.com/connect/v2"
	"google.golang.org/protobuf/types/known/structpb"

	boardv1 "github.com/symphonix/symphonix/api/symphonix/board/v1"
	"github.com/symphonix/symphonix/audit"
	"github.com/symphonix/symphonix/ent"
	"github.com/symphonix/symphonix/ent/agent"
	"github.com/symphonix/symphonix/ent/run"
	"github.com/symphonix/symphonix/identity"
	"github.com/symphonix/symphonix/store"
)

// Limits of StartRun and StopRun (docs/limits.md, docs/runs.md).
const (
	// fireWithin is how long StartRun and StopRun wait for the agent.
	fireWithin = 10 * time.Second
	// startRunsPerCaller StartRuns a startRunWindow, per operator token or
	// signed-in person.
	startRunsPerCaller = 60
	startRunWindow     = time.Minute
	// maxFireThread is the longest thread StartRun takes.
	maxFireThread = 128
	// maxFireInput is the most input StartRun takes, as JSON.
	maxFireInput = 64 << 10
	// maxStopReason is the longest reason StopRun takes.
	maxStopReason = 512
)

// StartRun checks the request against the agent, sends it a Fire and
// waits for its answer.
func (s runService) StartRun(ctx context.Context, req *boardv1.StartRunRequest) (*boardv1.StartRunResponse, error) {
	b := s.b
	name := req.GetAgent()
	if err := identity.ValidName(name); err != nil {
		return nil, connect.Errorf(connect.CodeInvalidArgument, "agent: %v", err)
	}
	if err := validText(req.GetThread(), maxFireThread, false); err != nil {
		return nil, connect.Errorf(connect.CodeInvalidArgument, "thread: %v", err)
	}
	if n := len(valuesJSON(req.GetInput())); n > maxFireInput {
		return nil, connect.Errorf(connect.CodeInvalidArgument, "input: %d bytes as JSON, at most %d", n, maxFireInput)
	}
	caller, _ := identity.FromContext(ctx)
	key := streamKey(caller)
	if retry, ok := b.fireRate.take(ctx, key); !ok {
		return nil, connect.Errorf(connect.CodeResourceExhausted,
			"too many runs started: at most %d a minute for one token or person; try again in %s", startRunsPerCaller, retry.Round(time.Second))
	}
	b.fireRate.done(ctx, key, true) // every start counts
	row, err := b.db.Agent.Query().Where(agent.Name(name)).Only(ctx)
	if ent.IsNotFound(err) {
		return nil, connect.Errorf(connect.CodeNotFound, "agent %s: not found", quoted(name))
	}
	if err != nil {
		return nil, err
	}
	if err := checkInput(req.GetInput(), inputsOf(row.Inputs)); err != nil {
		return nil, err
	}
	to, err := b.fireable(ctx, name, row)
	if err != nil {
		return nil, err
	}
	actor := identity.ActorOf(ctx, "")
	id := newRequestID()
	ans, err := b.askAgent(ctx, to, id, fireWithin, &boardv1.LinkResponse{Kind: &boardv1.LinkResponse_Fire{Fire: &boardv1.Fire{
		RequestId: id, Input: req.GetInput(), Thread: req.GetThread(), By: actor,
	}}})
	detail := map[string]any{"agent": name, "thread": req.GetThread()}
	var out *boardv1.StartRunResponse
	if err == nil {
		fired, _ := ans.(*boardv1.Fired)
		switch {
		case fired == nil, validRunID(fired.GetRunId()) != nil, validText(fired.GetThread(), maxRunThread, false) != nil:
			err = connect.NewError(connect.CodeUnavailable, "the agent's answer to the start did not name a run")
		default:
			out = &boardv1.StartRunResponse{RunId: fired.GetRunId(), Thread: fired.GetThread()}
			detail["run"], detail["thread"] = fired.GetRunId(), fired.GetThread()
		}
	}
	if err != nil {
		detail["refused"] = connect.CodeOf(err).String()
	}
	if aerr := b.auditRun(ctx, actor, "run.start", name, detail); aerr != nil {
		return nil, aerr
	}
	return out, err
}

// StopRun checks the run is one the agent may be running — not ended on
// the board; one the board has not heard of may be a fired run that has
// not begun — sends it a Stop and waits for its answer.
func (s runService) StopRun(ctx context.Context, req *boardv1.StopRunRequest) (*boardv1.StopRunResponse, error) {
	b := s.b
	name := req.GetAgent()
	if err := identity.ValidName(name); err != nil {
		return nil, connect.Errorf(connect.CodeInvalidArgument, "agent: %v", err)
	}
	if err := validRunID(req.GetId()); err != nil {
		return nil, connect.Errorf(connect.CodeInvalidArgument, "id: %v", err)
	}
	if err := validText(req.GetReason(), maxStopReason, false); err != nil {
		return nil, connect.Errorf(connect.CodeInvalidArgument, "reason: %v", err)
	}
	notFound := connect.Errorf(connect.CodeNotFound, "run %s of agent %s: not found", quoted(req.GetId()), quoted(name))
	// A run the board has not heard of yet may still be the agent's: one
	// fired that has not begun. The agent is asked, and says.
	known := b.live.peek(name, req.GetId())
	if known == nil {
		row, err := b.db.Run.Query().Where(run.Agent(name), run.RunID(req.GetId())).Only(ctx)
		switch {
		case ent.IsNotFound(err):
		case err != nil:
			return nil, err
		default:
			known = runProto(row)
		}
	}
	if ended(known.GetState()) {
		return nil, connect.Errorf(connect.CodeFailedPrecondition, "run %s: it has ended (%s)", quoted(req.GetId()), runStateWord(known.GetState()))
	}
	to, err := b.fireable(ctx, name, nil)
	if err != nil {
		if known == nil {
			return nil, notFound
		}
		return nil, err
	}
	actor := identity.ActorOf(ctx, "")
	id := newRequestID()
	ans, err := b.askAgent(ctx, to, id, fireWithin, &boardv1.LinkResponse{Kind: &boardv1.LinkResponse_Stop{Stop: &boardv1.Stop{
		RequestId: id, RunId: req.GetId(), Reason: req.GetReason(), By: actor,
	}}})
	if err == nil {
		if _, ok := ans.(*boardv1.Stopped); !ok {
			err = connect.NewError(connect.CodeUnavailable, "the agent's answer to the stop was not stopped")
		}
	}
	switch {
	case connect.CodeOf(err) == connect.CodeNotFound && known == nil:
		err = notFound
	case connect.CodeOf(err) == connect.CodeNotFound:
		err = connect.Errorf(connect.CodeFailedPrecondition, "run %s: the agent is not running it", quoted(req.GetId()))
	}
	detail := map[string]any{"agent": name, "run": req.GetId(), "thread": known.GetThread(), "reason": req.GetReason()}
	if err != nil {
		detail["refused"] = connect.CodeOf(err).String()
	}
	if aerr := b.auditRun(ctx, actor, "run.stop", name, detail); aerr != nil {
		return nil, aerr
	}
	if err != nil {
		return nil, err
	}
	return &boardv1.StopRunResponse{}, nil
}

// fireable is where to send the agent a fire or a stop: its live link,
// on this board or another, when it announced fire and, when row is given,
// is not paused.
func (b *Board) fireable(ctx context.Context, name string, row *ent.Agent) (askTarget, error) {
	to, err := b.linkedWith(ctx, name, capFire, "runs cannot be started or stopped from the board")
	if err != nil {
		return askTarget{}, err
	}
	if row != nil && row.Paused {
		return askTarget{}, connect.Errorf(connect.CodeFailedPrecondition, "agent %s: paused, so it takes no new work; resume it first", quoted(name))
	}
	return to, nil
}

// checkInput checks a start's input against the agent's declared inputs,
// naming input.<name> at fault.
func checkInput(in *structpb.Struct, declared []flowInput) error {
	for name, v := range in.GetFields() {
		i := slices.IndexFunc(declared, func(f flowInput) bool { return f.Name == name })
		if i < 0 {
			return connect.Errorf(connect.CodeInvalidArgument, "input.%s: the agent's flow declares no such input", cutText(name, maxInputName))
		}
		ok := true
		switch declared[i].Type {
		case "string":
			_, ok = v.GetKind().(*structpb.Value_StringValue)
		case "number":
			_, ok = v.GetKind().(*structpb.Value_NumberValue)
		case "boolean":
			_, ok = v.GetKind().(*structpb.Value_BoolValue)
		case "object":
			_, ok = v.GetKind().(*structpb.Value_StructValue)
		case "list":
			_, ok = v.GetKind().(*structpb.Value_ListValue)
		}
		if !ok {
			return connect.Errorf(connect.CodeInvalidArgument, "input.%s: want a %s", name, declared[i].Type)
		}
	}
	return nil
}

// auditRun writes a start's or a stop's audit entry.
func (b *Board) auditRun(ctx context.Context, actor, action, name string, detail map[string]any) error {
	return store.InTx(context.WithoutCancel(ctx), b.db, func(tx *ent.Tx) error {
		err := b.audit.Append(ctx, tx, audit.Record{Actor: actor, Action: action, Subject: name, Detail: detail, At: b.now().UTC()})
		return err
	})
}

// newFireID is a fresh request id for a fire or a stop.
