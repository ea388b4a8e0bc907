package board

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"log/slog"
	"slices"
	"sync"
	"time"

	boardv1 "github.com/symphonix/symphonix/api/symphonix/board/v1"
	"github.com/symphonix/symphonix/ent"
	"github.com/symphonix/symphonix/ent/agent"
	"github.com/symphonix/symphonix/ent/approval"
	"github.com/symphonix/symphonix/store"
)

// Several boards on one PostgreSQL store are one board: what an operator
// does on any of them reaches the agent on whichever board holds its link.
// The store is the truth. After a change commits, the board that made it
// pushes it to the agent's link if it holds it, and otherwise sends a
// notification (PostgreSQL's NOTIFY on wakeChannel) naming the agent; every
// board listens, and the one holding the agent's link reads what the agent
// is owed from the store and pushes it (resync). Approvals' changes are
// announced too, so every board's watchers see them. A notification is only
// a wake-up: one lost (the listener's connection down for a moment) is made
// up by the catch-up each board runs when it listens again and every
// catchUpEvery, which delivers the decisions its agents are still owed.
const (
	wakeChannel  = "symphonix_wake"
	catchUpEvery = 5 * time.Second
	// maxCatchUp is the most undelivered decisions one catch-up reads.
	maxCatchUp = 1000
)

// wake is one notification's payload.
type wake struct {
	Board string `json:"b"`           // the board that sent it, which ignores it
	Kind  string `json:"k"`           // wakeAgent, wakeApproval, wakeRelay or wakeRelayed
	ID    string `json:"id"`          // the agent's name, the approval's id, or the relay's
	Event int32  `json:"e,omitempty"` // an approval's: its boardv1.ApprovalEvent
}

const (
	wakeAgent    = "agent"
	wakeApproval = "approval"
)

// newBoardID is a board's name for itself among the boards of its store.
func newBoardID() string {
	var p [8]byte
	_, _ = rand.Read(p[:])
	return hex.EncodeToString(p[:])
}

// notify sends w to the other boards of the store, if it has others. A
// failure is logged: the catch-up delivers what it would have woken.
func (b *Board) notify(ctx context.Context, w wake) {
	if !b.notifies {
		return
	}
	if drop := b.dropWake.Load(); drop != nil && (*drop)(w.Kind, w.ID) {
		return
	}
	w.Board = b.id
	p, err := json.Marshal(w)
	if err != nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	if err := store.Notify(ctx, b.db, wakeChannel, string(p)); err != nil {
		b.log.WarnContext(ctx, "wake the other boards", "kind", w.Kind, "err", err.Error())
	}
}

// wakeAgentElsewhere tells the other boards that agent is owed something
// this board could not push, not holding its link.
func (b *Board) wakeAgentElsewhere(ctx context.Context, name string) {
	b.notify(ctx, wake{Kind: wakeAgent, ID: name})
}

// startListening runs listenToBoards until the func it returns is called,
// which waits for it to end.
func (b *Board) startListening() func() {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		b.listenToBoards(ctx)
	}()
	return func() {
		cancel()
		<-done
	}
}

// listenToBoards runs until ctx ends: it takes the other boards' wakes,
// and catches up when it begins to listen and every catchUpEvery. It
// returns at once for a store that is not PostgreSQL.
func (b *Board) listenToBoards(ctx context.Context) {
	if !b.notifies {
		return
	}
	b.log.InfoContext(ctx, "listening to the other boards of the store", "board_id", b.id, "channel", wakeChannel)
	var wg sync.WaitGroup
	defer wg.Wait()
	wg.Go(func() {
		t := time.NewTicker(catchUpEvery)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
				b.catchUp(ctx)
			}
		}
	})
	err := store.Listen(ctx, b.db, wakeChannel, func(payload string) { b.woken(ctx, payload) }, func() { b.catchUp(ctx) })
	if err != nil && !errors.Is(err, store.ErrNoNotifications) {
		b.log.ErrorContext(ctx, "listen to the other boards", "err", err.Error())
	}
}

// woken acts on another board's wake. A payload that is not one of ours is
// ignored.
func (b *Board) woken(ctx context.Context, payload string) {
	var w wake
	if len(payload) > store.MaxNotifyPayload || json.Unmarshal([]byte(payload), &w) != nil || w.ID == "" {
		b.log.DebugContext(ctx, "a notification that is not a board's wake", "bytes", len(payload))
		return
	}
	if w.Board == b.id {
		return
	}
	switch w.Kind {
	case wakeAgent:
		b.resync(ctx, w.ID)
	case wakeRelay:
		b.handleRelayLater(ctx, w.ID)
	case wakeRelayed:
		b.relayed(w.ID)
	case wakeApproval:
		b.publishApprovalHere(ctx, boardv1.ApprovalEvent(w.Event), w.ID)
		if boardv1.ApprovalEvent(w.Event) == eventExpired {
			b.tellExpiredHere(ctx, w.ID)
		}
	default:
		b.log.DebugContext(ctx, "a wake of an unknown kind", "kind", w.Kind)
	}
}

// resync pushes to the agent's link, if this board holds it, what the
// store says it is owed: its switches, the decisions and pairings it has
// not had, the operator's pause word it has not acted on, and its paused
// triggers.
func (b *Board) resync(ctx context.Context, name string) {
	s := b.presence.session(name)
	if s == nil || s.out == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	row, err := b.db.Agent.Query().Where(agent.Name(name)).Only(ctx)
	if err != nil {
		if !ent.IsNotFound(err) {
			b.log.ErrorContext(ctx, "read an agent another board woke", "agent", name, "err", err.Error())
		}
		return
	}
	push := s.out.push
	_ = push(switchesMessage(switchesProto(row)))
	b.deliverUndelivered(ctx, s, push)
	b.deliverPairings(ctx, s, push)
	if slices.Contains(s.caps, capPause) && row.PauseOrigin == "board" && !row.PauseDelivered {
		_ = push(pauseMessage(row))
	}
	if slices.Contains(s.caps, capTriggers) {
		_ = push(pausesMessage(triggerPausesOf(row)))
	}
}

// catchUp delivers the decisions owed to the agents linked here that no
// wake brought (one lost, or sent while this board was not listening).
func (b *Board) catchUp(ctx context.Context) {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	b.catchUpRelays(ctx)
	agents, err := b.db.Approval.Query().
		Where(approval.SayNEQ(""), approval.DeliveredAtIsNil()).
		Limit(maxCatchUp).
		Unique(true).
		Select(approval.FieldAgent).
		Strings(ctx)
	if err != nil {
		if ctx.Err() == nil {
			b.log.WarnContext(ctx, "catch up on decisions", "err", err.Error())
		}
		return
	}
	for _, name := range agents {
		if s := b.presence.session(name); s != nil && s.out != nil {
			b.deliverUndelivered(ctx, s, s.out.push)
		}
	}
	if len(agents) > 0 {
		b.log.LogAttrs(ctx, slog.LevelDebug, "caught up on decisions", slog.Int("agents", len(agents)))
	}
}

// tellExpiredHere tells the agent of an approval another board expired
// that it expired, if this board holds its link.
func (b *Board) tellExpiredHere(ctx context.Context, id string) {
	row, err := b.db.Approval.Get(context.WithoutCancel(ctx), id)
	if err != nil {
		if !ent.IsNotFound(err) {
			b.log.ErrorContext(ctx, "read an approval another board expired", "approval", id, "err", err.Error())
		}
		return
	}
	if row.State == StateExpired {
		b.tellExpired(ctx, row)
	}
}
