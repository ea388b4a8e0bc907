package board

import (
	"context"
	"slices"
	"time"

	"connectrpc.com/connect/v2"
	"google.golang.org/protobuf/types/known/timestamppb"

	boardv1 "github.com/symphonix/symphonix/api/symphonix/board/v1"
	"github.com/symphonix/symphonix/audit"
	"github.com/symphonix/symphonix/ent"
	"github.com/symphonix/symphonix/ent/agent"
	"github.com/symphonix/symphonix/identity"
	"github.com/symphonix/symphonix/store"
)

// Limits on a pause's words (docs/limits.md).
const (
	maxPauseReason = 512
	maxPauseBy     = 256
)

// PauseAgent records an operator's pause and sends it to the agent's live
// link, if it has one; a link that comes later gets it after its welcome.
func (s agentService) PauseAgent(ctx context.Context, req *boardv1.PauseAgentRequest) (*boardv1.PauseAgentResponse, error) {
	if err := validText(req.GetReason(), maxPauseReason, true); err != nil {
		return nil, connect.Errorf(connect.CodeInvalidArgument, "reason: %v", err)
	}
	a, err := s.b.setPause(ctx, req.GetName(), true, req.GetReason())
	if err != nil {
		return nil, err
	}
	return &boardv1.PauseAgentResponse{Agent: a}, nil
}

// ResumeAgent records an operator's resume and sends it on, as PauseAgent.
func (s agentService) ResumeAgent(ctx context.Context, req *boardv1.ResumeAgentRequest) (*boardv1.ResumeAgentResponse, error) {
	if err := validText(req.GetReason(), maxPauseReason, false); err != nil {
		return nil, connect.Errorf(connect.CodeInvalidArgument, "reason: %v", err)
	}
	a, err := s.b.setPause(ctx, req.GetName(), false, req.GetReason())
	if err != nil {
		return nil, err
	}
	return &boardv1.ResumeAgentResponse{Agent: a}, nil
}

// setPause keeps an operator's word on whether the named agent takes work,
// with its audit entry, in one transaction, and pushes it to the agent's
// live link. It is undelivered until the agent says it did (pauseState).
// Under the agent's lock, so a link coming up at the same moment never
// gets an older word after this one.
func (b *Board) setPause(ctx context.Context, name string, paused bool, reason string) (*boardv1.Agent, error) {
	if err := identity.ValidName(name); err != nil {
		return nil, connect.Errorf(connect.CodeInvalidArgument, "name: %v", err)
	}
	actor := identity.ActorOf(ctx, "")
	now := b.now().UTC().Truncate(time.Microsecond)
	unlock := b.pauseLocks.lock(name)
	defer unlock()
	var out *ent.Agent
	err := store.InTx(ctx, b.db, func(tx *ent.Tx) error {
		a, err := tx.Agent.Query().Where(agent.Name(name), store.ForUpdate).Only(ctx)
		if ent.IsNotFound(err) {
			return refusal(connect.CodeNotFound, "agent %s: not found", quoted(name))
		}
		if err != nil {
			return err
		}
		if !slices.Contains(a.Capabilities, capPause) {
			return refusal(connect.CodeFailedPrecondition,
				"agent %s: its last hello did not announce the pause capability, so it cannot be paused from the board", quoted(name))
		}
		out, err = a.Update().SetPaused(paused).SetPauseReason(reason).SetPauseBy(actor).SetPauseTime(now).
			SetPauseOrigin("board").SetPauseDelivered(false).Save(ctx)
		if err != nil {
			return err
		}
		action := "agent.resume"
		if paused {
			action = "agent.pause"
		}
		err = b.audit.Append(ctx, tx, audit.Record{
			Actor: actor, Action: action, Subject: name,
			Detail: map[string]any{"agent": name, "reason": reason, "was_paused": a.Paused},
			At:     now,
		})
		return err
	})
	if err != nil {
		return nil, err
	}
	b.presence.sendLiveTo(name, capPause, pauseMessage(out))
	p := agentProto(out)
	b.hub.publish(&boardv1.WatchAgentsResponse{Agent: p})
	return p, nil
}

// pauseMessage is an operator's word, as the link carries it.
func pauseMessage(a *ent.Agent) *boardv1.LinkResponse {
	m := &boardv1.Pause{Paused: a.Paused, Reason: a.PauseReason, By: a.PauseBy}
	if a.PauseTime != nil {
		m.Time = timestamppb.New(*a.PauseTime)
	}
	return &boardv1.LinkResponse{Kind: &boardv1.LinkResponse_Pause{Pause: m}}
}

// sendPause tells a session that has just been welcomed an operator's word
// it has not yet said it acted on. row is the agent as its arrival read it
// back: a word kept after that read is pushed to the session, which was
// live before the read, and follows this one.
func sendPause(s *session, row *ent.Agent) {
	if slices.Contains(s.caps, capPause) && row.PauseOrigin == "board" && !row.PauseDelivered {
		_ = s.out.send(pauseMessage(row))
	}
}

// pauseState keeps what the agent says of whether it takes work. While an
// operator's word is undelivered, only a state that matches it counts (it
// is the agent saying it acted on it); an older state, sent before the
// agent read the word, is ignored. Otherwise the agent's word is the
// latest: a pause or resume set on its machine, audited as the agent's.
func (l linkService) pauseState(ctx context.Context, s *session, st *boardv1.PauseState) error {
	if err := l.b.keepPauseState(ctx, s.name, st); err != nil {
		return l.answerError(ctx, s, "", "pause_state", err)
	}
	return nil
}

func (b *Board) keepPauseState(ctx context.Context, name string, st *boardv1.PauseState) error {
	if err := validText(st.GetReason(), maxPauseReason, false); err != nil {
		return badRequest("pause_state.reason: %v", err)
	}
	if err := validText(st.GetBy(), maxPauseBy, false); err != nil {
		return badRequest("pause_state.by: %v", err)
	}
	origin := pauseOriginWord(st.GetOrigin())
	if origin == "" {
		origin = "local"
	}
	actor := identity.ActorOf(ctx, name)
	now := b.now().UTC().Truncate(time.Microsecond)
	at := now
	if t := st.GetTime(); t != nil && t.IsValid() {
		at = t.AsTime().UTC().Truncate(time.Microsecond)
	}
	unlock := b.pauseLocks.lock(name)
	defer unlock()
	var out *ent.Agent
	err := store.InTx(ctx, b.db, func(tx *ent.Tx) error {
		a, err := tx.Agent.Query().Where(agent.Name(name), store.ForUpdate).Only(ctx)
		if err != nil {
			return err
		}
		switch {
		case a.PauseOrigin == "board" && !a.PauseDelivered:
			if st.GetPaused() != a.Paused {
				return nil // said before the agent read the operator's word
			}
			out, err = a.Update().SetPauseDelivered(true).Save(ctx)
			return err
		case a.Paused == st.GetPaused() && (a.PauseOrigin != "" || !st.GetPaused()):
			return nil // nothing new: every link says where it stands
		}
		action := "agent.resume"
		if st.GetPaused() {
			action = "agent.pause"
		}
		if ok, retry := b.mayAudit(ctx, action); !ok {
			return b.auditLimited("pause_state", retry)
		}
		out, err = a.Update().SetPaused(st.GetPaused()).SetPauseReason(st.GetReason()).SetPauseBy(st.GetBy()).
			SetPauseTime(at).SetPauseOrigin(origin).SetPauseDelivered(true).Save(ctx)
		if err != nil {
			return err
		}
		err = b.audit.Append(ctx, tx, audit.Record{
			Actor: actor, Action: action, Subject: name,
			Detail: map[string]any{"agent": name, "reason": st.GetReason(), "by": st.GetBy(), "origin": origin, "was_paused": a.Paused},
			At:     now,
		})
		return err
	})
	if err != nil || out == nil {
		return err
	}
	b.hub.publish(&boardv1.WatchAgentsResponse{Agent: agentProto(out)})
	return nil
}

// agentPauseProto is the latest word on whether an agent takes work; nil
// when nobody ever paused it.
func agentPauseProto(r *ent.Agent) *boardv1.AgentPause {
	if r.PauseOrigin == "" {
		return nil
	}
	p := &boardv1.AgentPause{
		Paused: r.Paused, Reason: r.PauseReason, By: r.PauseBy,
		Origin: pauseOriginProto(r.PauseOrigin), Delivered: r.PauseDelivered,
	}
	if r.PauseTime != nil {
		p.Time = timestamppb.New(*r.PauseTime)
	}
	return p
}
