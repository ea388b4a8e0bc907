package board

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"connectrpc.com/connect/v2"
	"google.golang.org/protobuf/types/known/timestamppb"

	boardv1 "github.com/symphonix/symphonix/api/symphonix/board/v1"
	"github.com/symphonix/symphonix/api/symphonix/board/v1/boardv1connect"
	"github.com/symphonix/symphonix/audit"
	"github.com/symphonix/symphonix/ent"
	"github.com/symphonix/symphonix/ent/agent"
	"github.com/symphonix/symphonix/identity"
	"github.com/symphonix/symphonix/store"
)

// toolService is symphonix.board.v1.ToolService: which of its declared MCP
// tools each agent may call. The flow's declaration is the upper bound;
// the board is the switch (docs/tools.md).
type toolService struct {
	b *Board
}

var _ boardv1connect.ToolServiceHandler = toolService{}

// maxSwitches is the most names one ReplaceSwitches may carry: as many as a
// hello may declare.
const maxSwitches = maxTools

func (s toolService) GetSwitches(ctx context.Context, req *boardv1.GetSwitchesRequest) (*boardv1.GetSwitchesResponse, error) {
	if err := identity.ValidName(req.GetAgent()); err != nil {
		return nil, refusal(connect.CodeInvalidArgument, "agent: %v", err)
	}
	a, err := s.b.db.Agent.Query().Where(agent.Name(req.GetAgent())).Only(ctx)
	if ent.IsNotFound(err) {
		return nil, refusal(connect.CodeNotFound, "agent: %q has never linked to this board", req.GetAgent())
	}
	if err != nil {
		return nil, err
	}
	return &boardv1.GetSwitchesResponse{Switches: switchesProto(a)}, nil
}

func (s toolService) ReplaceSwitches(ctx context.Context, req *boardv1.ReplaceSwitchesRequest) (*boardv1.ReplaceSwitchesResponse, error) {
	if n := len(req.GetOn()); n > maxSwitches {
		return nil, refusal(connect.CodeInvalidArgument, "on: %d names, at most %d", n, maxSwitches)
	}
	sw, pushed, err := s.b.setSwitches(ctx, req.GetAgent(), func(a *ent.Agent) ([]string, error) {
		return switchedOn(req.GetOn(), a.Tools)
	})
	if err != nil {
		return nil, err
	}
	return &boardv1.ReplaceSwitchesResponse{Switches: sw, Pushed: pushed}, nil
}

func (s toolService) SetToolSwitch(ctx context.Context, req *boardv1.SetToolSwitchRequest) (*boardv1.SetToolSwitchResponse, error) {
	tool := req.GetTool()
	sw, pushed, err := s.b.setSwitches(ctx, req.GetAgent(), func(a *ent.Agent) ([]string, error) {
		if !slices.Contains(a.Tools, tool) {
			return nil, refusal(connect.CodeInvalidArgument,
				"tool: %q: the agent does not declare it, so it cannot be switched (it declares %s)", tool, declaredWords(a.Tools))
		}
		on := slices.DeleteFunc(onNames(a), func(n string) bool { return n == tool })
		if req.GetOn() {
			on = append(on, tool)
			slices.Sort(on)
		}
		return on, nil
	})
	if err != nil {
		return nil, err
	}
	return &boardv1.SetToolSwitchResponse{Switches: sw, Pushed: pushed}, nil
}

// ListSwitches is a page of agents' switches, by agent name; its token
// holds the last name.
func (s toolService) ListSwitches(ctx context.Context, req *boardv1.ListSwitchesRequest) (*boardv1.ListSwitchesResponse, error) {
	pg, err := s.b.page("ListSwitches", req.GetPageSize(), req.GetPageToken(), defaultPageSize, maxPageSize, 1)
	if err != nil {
		return nil, err
	}
	out := &boardv1.ListSwitchesResponse{Switches: []*boardv1.Switches{}}
	err = s.b.agentRows(ctx, pg.afterName(), func(a *ent.Agent) (bool, error) {
		sw := switchesProto(a)
		if !pg.take(sw, a.Name) {
			return false, nil
		}
		out.Switches = append(out.Switches, sw)
		return true, nil
	})
	if err != nil {
		return nil, err
	}
	out.NextPageToken = pg.next()
	return out, nil
}

// setSwitches sets what the named agent is switched on for to what change
// makes of its row, keeps it and its audit entry in one transaction, and
// pushes it to the agent's live link. It is done under the agent's lock,
// so a link coming up at the same moment never gets an older word after
// this one, and two changes at once are applied one after the other.
func (b *Board) setSwitches(ctx context.Context, name string, change func(*ent.Agent) ([]string, error)) (*boardv1.Switches, bool, error) {
	if err := identity.ValidName(name); err != nil {
		return nil, false, refusal(connect.CodeInvalidArgument, "agent: %v", err)
	}
	actor := identity.ActorOf(ctx, "")
	now := b.now().UTC().Truncate(time.Microsecond)
	unlock := b.switchLocks.lock(name)
	defer unlock()
	var out *ent.Agent
	err := store.InTx(ctx, b.db, func(tx *ent.Tx) error {
		// Locked on PostgreSQL, where another board may change it at once.
		a, err := tx.Agent.Query().Where(agent.Name(name), store.ForUpdate).Only(ctx)
		if ent.IsNotFound(err) {
			return refusal(connect.CodeNotFound, "agent: %q has never linked to this board, so what it declares is not known", name)
		}
		if err != nil {
			return err
		}
		on, err := change(a)
		if err != nil {
			return err
		}
		if out, err = a.Update().SetToolsOn(on).SetToolsSpoken(true).SetToolsSetAt(now).SetToolsSetBy(actor).Save(ctx); err != nil {
			return err
		}
		err = b.audit.Append(ctx, tx, audit.Record{
			Actor:   actor,
			Action:  "tools.set",
			Subject: a.Name,
			Detail:  map[string]any{"agent": a.Name, "on": on, "was": onNames(a), "was_spoken": a.ToolsSpoken},
			At:      now,
		})
		return err
	})
	if err != nil {
		return nil, false, err
	}
	sw := switchesProto(out)
	return sw, b.pushSwitches(out.Name, sw), nil
}

// switchedOn checks want against what the agent declares and returns it
// sorted, without repeats.
func switchedOn(want, declared []string) ([]string, error) {
	on := make([]string, 0, len(want))
	for i, name := range want {
		switch {
		case name == "":
			return nil, refusal(connect.CodeInvalidArgument, "on[%d]: empty; want \"<server>.<tool>\"", i)
		case !slices.Contains(declared, name):
			return nil, refusal(connect.CodeInvalidArgument,
				"on[%d]: %q: the agent does not declare it, so it cannot be switched on (it declares %s)",
				i, name, declaredWords(declared))
		}
		if !slices.Contains(on, name) {
			on = append(on, name)
		}
	}
	slices.Sort(on)
	return on, nil
}

func declaredWords(declared []string) string {
	if len(declared) == 0 {
		return "no tools"
	}
	return strings.Join(declared, ", ")
}

// onNames is what is switched on for a, within what it declares now: a
// tool its new build no longer declares is not on.
func onNames(a *ent.Agent) []string {
	out := []string{}
	for _, n := range a.ToolsOn {
		if slices.Contains(a.Tools, n) {
			out = append(out, n)
		}
	}
	return out
}

func onSet(a *ent.Agent) map[string]bool {
	m := map[string]bool{}
	for _, n := range onNames(a) {
		m[n] = true
	}
	return m
}

func switchesProto(a *ent.Agent) *boardv1.Switches {
	sw := &boardv1.Switches{
		Agent:    a.Name,
		Declared: append([]string{}, a.Tools...),
		On:       onNames(a),
		Spoken:   a.ToolsSpoken,
		SetBy:    a.ToolsSetBy,
	}
	if a.ToolsSetAt != nil {
		sw.SetTime = timestamppb.New(*a.ToolsSetAt)
	}
	return sw
}

// pushSwitches tells the agent's live link, if it has one, what it is
// switched on for.
func (b *Board) pushSwitches(name string, sw *boardv1.Switches) bool {
	return b.presence.sendLive(name, switchesMessage(sw))
}

func switchesMessage(sw *boardv1.Switches) *boardv1.LinkResponse {
	return &boardv1.LinkResponse{Kind: &boardv1.LinkResponse_Switches{Switches: &boardv1.ToolSwitches{
		On: sw.GetOn(), Spoken: sw.GetSpoken(),
	}}}
}

// sendSwitches tells a session that has just been welcomed what it is
// switched on for. row is the agent as its arrival read it back: a change
// kept after that read is pushed to the session, which was live before the
// read, and follows this word, never comes before it (linkOut holds it
// until the catch-up is out).
func sendSwitches(s *session, row *ent.Agent) {
	_ = s.out.send(switchesMessage(switchesProto(row)))
}

// pruneSwitches switches off, for good, the tools a's build no longer
// declares: a tool an operator saw go off must not come back on by itself
// when an older build links again. Audited as the board's own change.
func (b *Board) pruneSwitches(ctx context.Context, a *ent.Agent) (*ent.Agent, error) {
	if len(onNames(a)) == len(a.ToolsOn) {
		return a, nil
	}
	unlock := b.switchLocks.lock(a.Name)
	defer unlock()
	now := b.now().UTC().Truncate(time.Microsecond)
	var out *ent.Agent
	err := store.InTx(ctx, b.db, func(tx *ent.Tx) error {
		// Read again under the lock: an operator may have flipped a switch
		// since the arrival read the row.
		cur, err := tx.Agent.Query().Where(agent.ID(a.ID), store.ForUpdate).Only(ctx)
		if err != nil {
			return err
		}
		on := onNames(cur)
		if len(on) == len(cur.ToolsOn) {
			out = cur
			return nil
		}
		if out, err = cur.Update().SetToolsOn(on).Save(ctx); err != nil {
			return err
		}
		err = b.audit.Append(ctx, tx, audit.Record{
			Actor: "board", Action: "tools.prune", Subject: a.Name,
			Detail: map[string]any{"agent": a.Name, "on": on, "was": cur.ToolsOn, "build": cur.Build,
				"why": "the build that linked no longer declares them"},
			At: now,
		})
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("switch off undeclared tools: %w", err)
	}
	return out, nil
}
