package board

import (
	"context"
	"errors"
	"log/slog"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	boardv1 "github.com/symphonix/symphonix/api/symphonix/board/v1"
	"github.com/symphonix/symphonix/ent"
	"github.com/symphonix/symphonix/ent/agent"
	"github.com/symphonix/symphonix/identity"
	"github.com/symphonix/symphonix/store"
)

// Why a session ended; the link handler reads these from its context's cause.
var (
	errSuperseded = errors.New("a newer link from the same agent took over")
	errSilent     = errors.New("no ping within the ping timeout")
	errShutdown   = errors.New("board shutting down")
	errExpired    = errors.New("the link's token expired")
)

// How a fleet that lost its board is spread over time when it redials.
const (
	// admitPerSecond is how many arrivals a second the board plans to
	// admit when a whole fleet redials at once (docs/benchmarks.md has
	// what it measured).
	admitPerSecond = 2000
	// minRedialWithin and maxRedialWithin bound the window an agent spreads
	// its first redial over (redialWithin).
	minRedialWithin = 250 * time.Millisecond
	maxRedialWithin = 2 * time.Minute
)

// maxOfflineBatch is the most agents one write records offline.
const maxOfflineBatch = 500

// session is one live link.
type session struct {
	id      string
	name    string
	tokenID string
	cancel  context.CancelCauseFunc
	expiry  *time.Timer // ends the link when its token expires; nil if never
	out     *linkOut    // every send on the link goes through it (approvals.go)
	// caps is what the agent announced in its hello: what the board may
	// send it beyond the protocol's core.
	caps []string
	// lastHealth is when this link's last health report was kept; only
	// the link's own goroutine reads and writes it.
	lastHealth time.Time
	// lastOutcome is what this link's last kept round said (outcomeOf);
	// only the link's own goroutine reads and writes it.
	lastOutcome string
	// lastTriggers is when this link's last trigger report was taken;
	// only the link's own goroutine reads and writes it.
	lastTriggers time.Time
	// lastEvals is when this link's last eval report was taken; only the
	// link's own goroutine reads and writes it.
	lastEvals time.Time
	// runEvents is the link's allowance of run events (runstore.go); only
	// the link's own goroutine reads and writes it.
	runEvents runEventBucket
	// runSlots holds one token for each run write of this link waiting for
	// the store; runStored, the summaries stored, for the link's goroutine
	// to answer. Both hold at most maxRunWritesInFlight.
	runSlots  chan struct{}
	runStored chan *runWrite
	// asks are the requests sent on this link waiting for their
	// answer, by request id (asks.go).
	asks askWaits
}

func (s *session) stopExpiry() {
	if s.expiry != nil {
		s.expiry.Stop()
	}
}

// presence knows which agents have a live link on this board, keeps the
// store's online flag true to that, and holds an agent online for a grace
// after its link drops so that a quick redial does not flap it offline.
//
// Arrivals of different agents reach the store at once, so that the store
// commits many in one group (store.Open); arrivals of one agent are in
// order, under that agent's lock. Departures are recorded offline in
// batches (offlineMarks), each only if the agent's stored session is still
// the one that left, so a departure written after a newer arrival changes
// nothing.
type presence struct {
	b *Board
	// agents orders, per agent, its arrivals and what is published about it.
	agents keyedLocks
	// off is the departures waiting to be written.
	off offlineMarks
	// hellos is the arrivals waiting to be written (link.go).
	hellos batcher[helloWrite]

	mu       sync.Mutex
	sessions map[string]*session // by agent name
	leaving  map[string]leaving  // agents whose link dropped, by name
	closed   bool                // closeAll has begun: nobody arrives any more
	arriving sync.WaitGroup      // arrivals that began before closed
	live     atomic.Int64        // len(sessions), read without mu
}

// leaving is an agent held online for the grace after its link dropped.
type leaving struct {
	timer   *time.Timer
	session string
}

func newPresence(b *Board) *presence {
	p := &presence{b: b, sessions: make(map[string]*session), leaving: make(map[string]leaving)}
	p.hellos = batcher[helloWrite]{max: maxHelloBatch, write: func(batch []*helloWrite) { writeHellos(b, batch) }}
	p.off.p = p
	return p
}

// arrive makes s the agent's live session, ending any older one, records it
// online with write and tells watchers. Arrivals of one agent are ordered by
// the agent's lock; the board-wide lock is held only around the maps, never
// across the write, so arrivals of many agents reach the store together.
// Once closeAll has begun, arrive refuses with errShutdown.
func (p *presence) arrive(ctx context.Context, s *session, write func(context.Context) (*ent.Agent, error)) (*ent.Agent, error) {
	unlock := p.agents.lock(s.name)
	defer unlock()
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return nil, errShutdown
	}
	p.arriving.Add(1)
	defer p.arriving.Done()
	old := p.sessions[s.name]
	if old != nil {
		old.cancel(errSuperseded)
	}
	p.sessions[s.name] = s
	p.live.Store(int64(len(p.sessions)))
	if l, ok := p.leaving[s.name]; ok {
		l.timer.Stop()
		delete(p.leaving, s.name)
		if old == nil {
			old = &session{id: l.session}
		}
	}
	p.mu.Unlock()

	row, err := write(ctx)
	if err != nil {
		p.mu.Lock()
		if p.sessions[s.name] == s {
			delete(p.sessions, s.name)
			p.live.Store(int64(len(p.sessions)))
		}
		if old != nil {
			p.off.add(s.name, old.id)
		}
		p.mu.Unlock()
		return nil, err
	}
	p.b.hub.publish(&boardv1.WatchAgentsResponse{Agent: agentProto(row)})
	return row, nil
}

// leave ends s. With grace, the agent stays online for the board's grace and
// goes offline only if no new session arrives; without, or once closeAll has
// begun, it goes offline now. A session that was superseded leaves nothing
// to do.
func (p *presence) leave(s *session, grace bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.sessions[s.name] != s {
		return
	}
	delete(p.sessions, s.name)
	p.live.Store(int64(len(p.sessions)))
	if !grace || p.b.cfg.OfflineGrace <= 0 || p.closed {
		p.off.add(s.name, s.id)
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
		p.off.add(s.name, s.id)
	})
	p.leaving[s.name] = l
}

// redialWithin is the window over which agents spread their first redial
// when their link drops (RedialWindow of the agents linked now).
func (p *presence) redialWithin() time.Duration {
	return RedialWindow(p.live.Load())
}

// RedialWindow is the window a board with n agents linked gives them to
// spread their first redial over: the time it needs to admit n agents at
// admitPerSecond, within minRedialWithin and maxRedialWithin.
func RedialWindow(n int64) time.Duration {
	if n >= int64(maxRedialWithin/time.Second)*admitPerSecond {
		return maxRedialWithin
	}
	d := time.Duration(n) * time.Second / admitPerSecond
	return min(max(d, minRedialWithin), maxRedialWithin)
}

// revoke ends every live session whose token is in ids.
func (p *presence) revoke(ids []string) {
	if len(ids) == 0 {
		return
	}
	revoked := setOf(ids)
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, s := range p.sessions {
		if revoked[s.tokenID] {
			s.cancel(identity.ErrRevoked)
		}
	}
}

// counts returns how many agents have a live session here, and how many
// are held online for the grace after theirs dropped.
func (p *presence) counts() (linked, grace int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.sessions), len(p.leaving)
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
// leaving link offline, in batches, and returns once that is written: the
// board is going away. Arrivals already under way finish first, so that
// none is recorded online after its offline; later ones are refused.
func (p *presence) closeAll() {
	p.mu.Lock()
	p.closed = true
	p.mu.Unlock()
	p.arriving.Wait()

	p.mu.Lock()
	for name, l := range p.leaving {
		l.timer.Stop()
		delete(p.leaving, name)
		p.off.add(name, l.session)
	}
	for name, s := range p.sessions {
		s.cancel(errShutdown)
		delete(p.sessions, name)
		p.off.add(name, s.id)
	}
	p.live.Store(0)
	p.mu.Unlock()
	p.off.wait()
}

// sendLive sends m to the agent's live link on this board, if it has one,
// from whatever goroutine calls it, and reports whether it went out (or is
// held to go out right after the link's catch-up). When this board holds
// no link of the agent's, the other boards of the store are woken, and the
// one holding it pushes what the store says the agent is owed
// (crossboard.go).
func (p *presence) sendLive(agentName string, m *boardv1.LinkResponse) bool {
	p.mu.Lock()
	s := p.sessions[agentName]
	p.mu.Unlock()
	if s == nil {
		p.b.wakeAgentElsewhere(context.Background(), agentName)
		return false
	}
	return p.sendTo(s, m)
}

// sendLiveHere is sendLive without waking the other boards: for a message
// that reaches the board holding the link some other way.
func (p *presence) sendLiveHere(agentName string, m *boardv1.LinkResponse) bool {
	if s := p.session(agentName); s != nil {
		return p.sendTo(s, m)
	}
	return false
}

// sendTo sends m to the live link s, ending the link when it is overrun.
func (p *presence) sendTo(s *session, m *boardv1.LinkResponse) bool {
	if s.out == nil {
		return false
	}
	err := s.out.push(m)
	if errors.Is(err, errOverrun) {
		s.cancel(err)
	}
	return err == nil
}

// session is the agent's live link on this board, or nil.
func (p *presence) session(agentName string) *session {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.sessions[agentName]
}

// sendLiveTo is sendLive to an agent whose live link announced capability,
// and to no other.
func (p *presence) sendLiveTo(agentName, capability string, m *boardv1.LinkResponse) bool {
	p.mu.Lock()
	s := p.sessions[agentName]
	p.mu.Unlock()
	if s == nil {
		p.b.wakeAgentElsewhere(context.Background(), agentName)
		return false
	}
	if !slices.Contains(s.caps, capability) {
		return false
	}
	return p.sendLive(agentName, m)
}

// offlineMarks is the departures not yet written: agents to record offline,
// each if its stored session is still the one that left (a newer link, here
// or on another board, has replaced it otherwise). One goroutine, started
// when there is one and ended when there are none, writes them up to
// maxOfflineBatch in a transaction, so that a fleet leaving at once (the
// board shutting down, a network gone) costs a few writes, not one each.
type offlineMarks struct {
	p *presence

	mu       sync.Mutex
	pending  map[string]string // session id → agent name
	flushing bool
	idle     *sync.Cond // signalled when a flush goroutine ends
	writes   atomic.Int64
}

// add queues the agent offline unless its stored session has changed, and
// starts a flush goroutine unless one is running.
func (o *offlineMarks) add(name, sessionID string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.pending == nil {
		o.pending = make(map[string]string)
	}
	o.pending[sessionID] = name
	if !o.flushing {
		o.flushing = true
		go o.flush()
	}
}

// flush writes the queued departures, a batch at a time, until there are
// none, and ends. A batch that fails is logged; its agents stay online in
// the store until the board next starts (it marks every agent offline).
func (o *offlineMarks) flush() {
	for {
		o.mu.Lock()
		if len(o.pending) == 0 {
			o.flushing = false
			if o.idle != nil {
				o.idle.Broadcast()
			}
			o.mu.Unlock()
			return
		}
		ids := make([]string, 0, min(len(o.pending), maxOfflineBatch))
		for id := range o.pending {
			ids = append(ids, id)
			if len(ids) == maxOfflineBatch {
				break
			}
		}
		for _, id := range ids {
			delete(o.pending, id)
		}
		o.mu.Unlock()
		o.write(ids)
	}
}

// write records offline the agents whose stored session is one of ids and
// who are online, and tells watchers of each, unless the agent has linked
// here again meanwhile (its arrival tells them).
func (o *offlineMarks) write(ids []string) {
	p := o.p
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	now := p.b.now()
	var gone []*ent.Agent
	err := store.InTx(ctx, p.b.db, func(tx *ent.Tx) error {
		var err error
		gone, err = tx.Agent.Query().Where(agent.SessionIn(ids...), agent.Online(true), store.ForUpdate).All(ctx)
		if err != nil || len(gone) == 0 {
			return err
		}
		return tx.Agent.Update().
			Where(agent.IDIn(agentIDs(gone)...), agent.Online(true)).
			SetOnline(false).
			SetLastSeen(now).
			Exec(ctx)
	})
	o.writes.Add(1)
	if err != nil {
		p.b.log.LogAttrs(ctx, slog.LevelError, "record agents offline", slog.Int("agents", len(ids)), slog.String("err", err.Error()))
		return
	}
	for _, row := range gone {
		row.Online, row.LastSeen = false, now
		unlock := p.agents.lock(row.Name)
		p.mu.Lock()
		_, back := p.sessions[row.Name]
		p.mu.Unlock()
		if !back {
			p.b.hub.publish(&boardv1.WatchAgentsResponse{Agent: agentProto(row)})
		}
		unlock()
	}
}

// wait returns when every departure queued so far is written.
func (o *offlineMarks) wait() {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.idle == nil {
		o.idle = sync.NewCond(&o.mu)
	}
	for o.flushing {
		o.idle.Wait()
	}
}

func agentIDs(rows []*ent.Agent) []int {
	out := make([]int, len(rows))
	for i, r := range rows {
		out[i] = r.ID
	}
	return out
}
