package board

import (
	"context"
	"errors"
	"slices"
	"sync"
	"time"

	"connectrpc.com/connect/v2"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/anypb"

	boardv1 "github.com/symphonix/symphonix/api/symphonix/board/v1"
	"github.com/symphonix/symphonix/ent"
	"github.com/symphonix/symphonix/ent/agent"
	"github.com/symphonix/symphonix/ent/boardlease"
	"github.com/symphonix/symphonix/ent/relay"
)

// A request for an agent that waits for its answer — a start, a stop —
// goes over the agent's link, which one board of the store holds. Asked on
// another board, it is relayed through the store: the asking board writes
// a Relay row naming the board holding the link and wakes it (wakeRelay);
// that board claims the row, asks the agent as if asked itself, writes the
// answer or the refusal and wakes the asking board (wakeRelayed), which
// reads it and removes the row. The asking board also reads the row every
// relayPoll, so a lost wake costs at most that; the holding board looks
// for relays it has not claimed at each catch-up. A relay never answered
// is answered as the agent not answering in time, and swept.
const (
	wakeRelay   = "relay"
	wakeRelayed = "relayed"
	relayPoll   = 250 * time.Millisecond
	// relayGrace is what a relay may take beyond the agent's own time: a
	// wake, the holding board's reads and writes.
	relayGrace = 2 * time.Second
	// maxRelaysWaiting is the most relays one board waits on at once.
	maxRelaysWaiting = 256
	// relayKeep: relays older than this are swept, answered or not.
	relayKeep = 10 * time.Minute
)

// askTarget is where a request for an agent goes: the link this board
// holds (sess), or the board holding it (board, with the agent's name).
type askTarget struct {
	sess  *session
	agent string
	board string
}

// relays is what a board keeps of the relays it waits on.
type relays struct {
	mu      sync.Mutex
	waiting map[string]chan struct{} // by relay id
	// handling bounds the relays this board asks its agents at once;
	// running waits for them when the board closes.
	handling chan struct{}
	running  sync.WaitGroup
}

// elsewhere is the agent's link on another live board of the store, when
// its hello announced capability; failed_precondition naming why
// otherwise.
func (b *Board) elsewhere(ctx context.Context, name, capability, what string) (askTarget, error) {
	notLinked := connect.Errorf(connect.CodeFailedPrecondition, "agent %s: not linked to any board", quoted(name))
	if !b.notifies {
		return askTarget{}, connect.Errorf(connect.CodeFailedPrecondition, "agent %s: not linked to this board", quoted(name))
	}
	row, err := b.db.Agent.Query().Where(agent.Name(name)).Only(ctx)
	if ent.IsNotFound(err) || err == nil && (!row.Online || row.Board == "" || row.Board == b.id) {
		return askTarget{}, notLinked
	}
	if err != nil {
		return askTarget{}, err
	}
	live, err := b.db.BoardLease.Query().Where(boardlease.ID(row.Board), boardlease.ExpiresAtGT(b.now())).Exist(ctx)
	if err != nil {
		return askTarget{}, err
	}
	if !live {
		return askTarget{}, notLinked
	}
	if !slices.Contains(row.Capabilities, capability) {
		return askTarget{}, connect.Errorf(connect.CodeFailedPrecondition,
			"agent %s: its hello did not announce the %s capability, so %s", quoted(name), capability, what)
	}
	return askTarget{agent: name, board: row.Board}, nil
}

// relayAsk asks the agent of t, whose link another board holds, m (whose
// request id is id), and waits up to within for its answer, as askAgent
// does on a link of this board's.
func (b *Board) relayAsk(ctx context.Context, t askTarget, id string, within time.Duration, m *boardv1.LinkResponse) (proto.Message, error) {
	req, err := proto.Marshal(m)
	if err != nil {
		return nil, err
	}
	r := &b.relays
	rid := newRequestID()
	woken := make(chan struct{}, 1)
	r.mu.Lock()
	if r.waiting == nil {
		r.waiting = map[string]chan struct{}{}
	}
	if len(r.waiting) >= maxRelaysWaiting {
		r.mu.Unlock()
		return nil, connect.Errorf(connect.CodeResourceExhausted, "too many requests for agents on other boards at once (at most %d); try again", maxRelaysWaiting)
	}
	r.waiting[rid] = woken
	r.mu.Unlock()
	defer func() {
		r.mu.Lock()
		delete(r.waiting, rid)
		r.mu.Unlock()
	}()
	bg := context.WithoutCancel(ctx)
	defer func() {
		if _, err := b.db.Relay.Delete().Where(relay.ID(rid)).Exec(bg); err != nil {
			b.log.WarnContext(ctx, "remove a relay", "relay", rid, "err", err.Error())
		}
	}()
	err = b.db.Relay.Create().SetID(rid).SetAgent(t.agent).SetBoard(t.board).SetRequestID(id).SetRequest(req).
		SetWithinMs(within.Milliseconds()).SetCreatedAt(b.now().UTC().Truncate(time.Microsecond)).Exec(ctx)
	if err != nil {
		return nil, err
	}
	b.notify(ctx, wake{Kind: wakeRelay, ID: rid})
	deadline := time.NewTimer(within + relayGrace)
	defer deadline.Stop()
	poll := time.NewTicker(relayPoll)
	defer poll.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-deadline.C:
			return nil, connect.Errorf(connect.CodeDeadlineExceeded, "the agent did not answer within %s; it may still act on it", within)
		case <-woken:
		case <-poll.C:
		}
		row, err := b.db.Relay.Get(ctx, rid)
		if err != nil {
			return nil, err
		}
		if !row.Answered {
			continue
		}
		if row.Code != 0 || row.Answer == nil {
			return nil, connect.NewError(connect.Code(row.Code), row.Message)
		}
		var a anypb.Any
		if err := proto.Unmarshal(*row.Answer, &a); err != nil {
			return nil, err
		}
		return a.UnmarshalNew()
	}
}

// relayed wakes the relay this board waits on, if it does.
func (b *Board) relayed(id string) {
	b.relays.mu.Lock()
	ch := b.relays.waiting[id]
	b.relays.mu.Unlock()
	if ch != nil {
		select {
		case ch <- struct{}{}:
		default:
		}
	}
}

// handleRelay asks the agent of relay id, if this board holds its link,
// and writes its answer, once: the first board to claim the row asks.
func (b *Board) handleRelay(ctx context.Context, id string) {
	ctx = context.WithoutCancel(ctx)
	n, err := b.db.Relay.Update().Where(relay.ID(id), relay.Board(b.id), relay.Claimed(false)).SetClaimed(true).Save(ctx)
	if err != nil {
		b.log.WarnContext(ctx, "claim a relay", "relay", id, "err", err.Error())
		return
	}
	if n == 0 {
		return // another board's, or claimed already
	}
	row, err := b.db.Relay.Get(ctx, id)
	if err != nil {
		b.log.WarnContext(ctx, "read a relay", "relay", id, "err", err.Error())
		return
	}
	var m boardv1.LinkResponse
	var ans proto.Message
	if err = proto.Unmarshal(row.Request, &m); err == nil {
		if sess := b.presence.session(row.Agent); sess == nil {
			err = connect.Errorf(connect.CodeFailedPrecondition, "agent %s: its link moved; try again", quoted(row.Agent))
		} else {
			ans, err = b.askAgent(ctx, askTarget{sess: sess}, row.RequestID, time.Duration(row.WithinMs)*time.Millisecond, &m)
		}
	}
	u := b.db.Relay.UpdateOneID(id).SetAnswered(true)
	if err == nil {
		a, aerr := anypb.New(ans)
		var raw []byte
		if aerr == nil {
			raw, aerr = proto.Marshal(a)
		}
		err = aerr
		u.SetAnswer(raw)
	}
	if err != nil {
		var ce *connect.Error
		if !errors.As(err, &ce) {
			b.log.ErrorContext(ctx, "relay a request to an agent", "relay", id, "agent", row.Agent, "err", err.Error())
			ce = connect.NewError(connect.CodeInternal, "internal error")
		}
		u.ClearAnswer().SetCode(int(ce.Code())).SetMessage(ce.Message())
	}
	if err := u.Exec(ctx); err != nil && !ent.IsNotFound(err) {
		b.log.WarnContext(ctx, "write a relay's answer", "relay", id, "err", err.Error())
		return
	}
	b.notify(ctx, wake{Kind: wakeRelayed, ID: id})
}

// handleRelayLater runs handleRelay on a goroutine of its own, at most
// cap(handling) at once: the wake's listener never waits on an agent. A
// relay past that is left for the next catch-up.
func (b *Board) handleRelayLater(ctx context.Context, id string) {
	select {
	case b.relays.handling <- struct{}{}:
	default:
		return
	}
	b.relays.running.Go(func() {
		defer func() { <-b.relays.handling }()
		b.handleRelay(ctx, id)
	})
}

// catchUpRelays handles the relays to this board that no wake brought.
func (b *Board) catchUpRelays(ctx context.Context) {
	ids, err := b.db.Relay.Query().Where(relay.Board(b.id), relay.Claimed(false)).Limit(maxRelaysWaiting).IDs(ctx)
	if err != nil {
		b.log.WarnContext(ctx, "catch up on relays", "err", err.Error())
		return
	}
	for _, id := range ids {
		b.handleRelayLater(ctx, id)
	}
}

// sweepRelays removes relays older than relayKeep: the board that wrote
// one stopped before it could.
func (b *Board) sweepRelays(ctx context.Context, now time.Time) {
	if _, err := b.db.Relay.Delete().Where(relay.CreatedAtLT(now.Add(-relayKeep))).Exec(ctx); err != nil {
		b.log.WarnContext(ctx, "sweep old relays", "err", err.Error())
	}
}
