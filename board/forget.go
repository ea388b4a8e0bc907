package board

import (
	"context"
	"time"

	"connectrpc.com/connect/v2"

	boardv1 "github.com/symphonix/symphonix/api/symphonix/board/v1"
	"github.com/symphonix/symphonix/audit"
	"github.com/symphonix/symphonix/ent"
	"github.com/symphonix/symphonix/ent/agent"
	"github.com/symphonix/symphonix/ent/agentbuild"
	"github.com/symphonix/symphonix/ent/evalscore"
	"github.com/symphonix/symphonix/ent/healthround"
	"github.com/symphonix/symphonix/identity"
	"github.com/symphonix/symphonix/store"
)

// DefaultForgetAfter is how long an agent must have been offline before
// it may be forgotten, unless Config.ForgetAfter says otherwise.
const DefaultForgetAfter = time.Hour

// maxForgetReason bounds why an agent is forgotten.
const maxForgetReason = 512

// ForgetAgent removes a stale agent: its row (and with it its tool
// switches, reported triggers and pause), its health rounds, eval scores
// and builds, with an audit entry saying who and why, in one transaction.
// Runs, approvals, conversations and the audit log keep what they say of
// it. Watchers are told it is gone.
func (s agentService) ForgetAgent(ctx context.Context, req *boardv1.ForgetAgentRequest) (*boardv1.ForgetAgentResponse, error) {
	b, name := s.b, req.GetName()
	if err := identity.ValidName(name); err != nil {
		return nil, connect.Errorf(connect.CodeInvalidArgument, "name: %v", err)
	}
	if err := validText(req.GetReason(), maxForgetReason, true); err != nil {
		return nil, connect.Errorf(connect.CodeInvalidArgument, "reason: %v", err)
	}
	actor := identity.ActorOf(ctx, "")
	now := b.now().UTC().Truncate(time.Microsecond)
	unlock := b.pauseLocks.lock(name)
	defer unlock()
	var was *ent.Agent
	err := store.InTx(ctx, b.db, func(tx *ent.Tx) error {
		a, err := tx.Agent.Query().Where(agent.Name(name), store.ForUpdate).Only(ctx)
		if ent.IsNotFound(err) {
			return refusal(connect.CodeNotFound, "agent %s: not found", quoted(name))
		}
		if err != nil {
			return err
		}
		if a.Online {
			return refusal(connect.CodeFailedPrecondition, "agent %s is online: only an agent offline for %s may be forgotten", quoted(name), b.cfg.ForgetAfter)
		}
		if after := a.LastSeen.Add(b.cfg.ForgetAfter); now.Before(after) {
			return refusal(connect.CodeFailedPrecondition, "agent %s was last seen %s: it may be forgotten from %s, once offline for %s",
				quoted(name), a.LastSeen.UTC().Format(time.RFC3339), after.UTC().Format(time.RFC3339), b.cfg.ForgetAfter)
		}
		if _, err := tx.HealthRound.Delete().Where(healthround.Agent(name)).Exec(ctx); err != nil {
			return err
		}
		if _, err := tx.EvalScore.Delete().Where(evalscore.Agent(name)).Exec(ctx); err != nil {
			return err
		}
		if _, err := tx.AgentBuild.Delete().Where(agentbuild.Agent(name)).Exec(ctx); err != nil {
			return err
		}
		if err := tx.Agent.DeleteOne(a).Exec(ctx); err != nil {
			return err
		}
		err = b.audit.Append(ctx, tx, audit.Record{
			Actor: actor, Action: "agent.forget", Subject: name, At: now,
			Detail: map[string]any{
				"agent": name, "reason": req.GetReason(), "last_seen": a.LastSeen.UTC().Format(time.RFC3339Nano),
				"build": a.Build, "tools_on": a.ToolsOn,
			},
		})
		was = a
		return err
	})
	if err != nil {
		return nil, err
	}
	p := agentProto(was)
	b.hub.publish(&boardv1.WatchAgentsResponse{Agent: p, Forgotten: true})
	return &boardv1.ForgetAgentResponse{Agent: p}, nil
}
