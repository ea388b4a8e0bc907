package board

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"time"

	boardv1 "github.com/symphonix/symphonix/api/symphonix/board/v1"
	"github.com/symphonix/symphonix/ent"
	"github.com/symphonix/symphonix/ent/agent"
	"github.com/symphonix/symphonix/identity"
)

// Why a session ended; the link handler reads these from its context's cause.
var (
	errSuperseded = errors.New("a newer link from the same agent took over")
	errSilent     = errors.New("no ping within the ping timeout")
	errShutdown   = errors.New("board shutting down")
	errExpired    = errors.New("the link's token expired")
)

// session is one live link.
type session struct {
	id      string
	name    string
	tokenID string
	cancel  context.CancelCauseFunc
	expiry  *time.Timer // ends the link when its token expires; nil if never
	out     *linkOut    // every send on the link goes through it (approvals.go)
}

func (s *session) stopExpiry() {
	if s.expiry != nil {
		s.expiry.Stop()
	}
}

// presence knows which agents have a live link on this board, keeps the
// store's online flag true to that, and holds an agent online for a grace
// after its link drops so that a quick redial does not flap it offline.
type presence struct {
	b *Board

	mu       sync.Mutex
	sessions map[string]*session // by agent name
	leaving  map[string]leaving  // agents whose link dropped, by name
}

// leaving is an agent held online for the grace after its link dropped.
type leaving struct {
	timer   *time.Timer
	session string
}

func newPresence(b *Board) *presence {
	return &presence{b: b, sessions: make(map[string]*session), leaving: make(map[string]leaving)}
}

// arrive makes s the agent's live session, ending any older one, records it
// online and tells watchers. It holds the presence lock throughout, so the
// store and the watchers see arrivals and departures of one agent in the
// order they happened.
func (p *presence) arrive(ctx context.Context, s *session, write func(context.Context) (*ent.Agent, error)) (*ent.Agent, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	old := p.sessions[s.name]
	if old != nil {
		old.cancel(errSuperseded)
	}
	p.sessions[s.name] = s
	if l, ok := p.leaving[s.name]; ok {
		l.timer.Stop()
		delete(p.leaving, s.name)
		if old == nil {
			old = &session{id: l.session}
		}
	}
	row, err := write(ctx)
	if err != nil {
		delete(p.sessions, s.name)
		if old != nil {
			p.offline(s.name, old.id)
		}
		return nil, err
	}
	p.b.hub.publish(agentProto(row))
	return row, nil
}

// leave ends s. With grace, the agent stays online for the board's grace and
// goes offline only if no new session arrives; without, it goes offline now.
// A session that was superseded leaves nothing to do.
func (p *presence) leave(s *session, grace bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.sessions[s.name] != s {
		return
	}
	delete(p.sessions, s.name)
	if !grace || p.b.cfg.OfflineGrace <= 0 {
		p.offline(s.name, s.id)
		return
	}
	var l leaving
	l.session = s.id
	l.timer = time.AfterFunc(p.b.cfg.OfflineGrace, func() {
		p.mu.Lock()
		defer p.mu.Unlock()
		if cur, ok := p.leaving[s.name]; !ok || cur.session != s.id {
			return
		}
		delete(p.leaving, s.name)
		p.offline(s.name, s.id)
	})
	p.leaving[s.name] = l
}

// offline records the agent offline if its stored session is still sessionID
// (a newer link on another board would have replaced it). Called with p.mu held,
// so it and arrive are ordered.
func (p *presence) offline(name, sessionID string) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	n, err := p.b.db.Agent.Update().
		Where(agent.Name(name), agent.Session(sessionID)).
		SetOnline(false).
		SetLastSeen(p.b.now()).
		Save(ctx)
	if err != nil {
		p.b.log.LogAttrs(ctx, slog.LevelError, "record agent offline", slog.String("agent", name), slog.String("err", err.Error()))
		return
	}
	if n == 0 {
		return
	}
	p.b.publishAgent(ctx, name)
}

// revoke ends every live session whose token is in ids.
func (p *presence) revoke(ids []string) {
	if len(ids) == 0 {
		return
	}
	revoked := make(map[string]bool, len(ids))
	for _, id := range ids {
		revoked[id] = true
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, s := range p.sessions {
		if revoked[s.tokenID] {
			s.cancel(identity.ErrRevoked)
		}
	}
}

// names returns the agents with a live session here.
func (p *presence) names() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := make([]string, 0, len(p.sessions))
	for n := range p.sessions {
		out = append(out, n)
	}
	return out
}

// closeAll ends every session and records every agent with a live or
// leaving link offline: the board is going away.
func (p *presence) closeAll() {
	p.mu.Lock()
	defer p.mu.Unlock()
	for name, l := range p.leaving {
		l.timer.Stop()
		delete(p.leaving, name)
		p.offline(name, l.session)
	}
	for name, s := range p.sessions {
		s.cancel(errShutdown)
		delete(p.sessions, name)
		p.offline(name, s.id)
	}
}

// sendLive sends m to the agent's live link on this board, if it has one,
// from whatever goroutine calls it, and reports whether it went out.
func (p *presence) sendLive(agentName string, m *boardv1.LinkResponse) bool {
	p.mu.Lock()
	s := p.sessions[agentName]
	p.mu.Unlock()
	return s != nil && s.out != nil && s.out.send(m) == nil
}
