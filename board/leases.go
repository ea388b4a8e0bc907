package board

import (
	"context"
	"time"

	"github.com/symphonix/symphonix/ent/agent"
	"github.com/symphonix/symphonix/ent/boardlease"
)

// Each board of a store holds a lease (BoardLease), renewed every
// leaseRenew while it runs, lasting leaseFor. An agent's row names the
// board holding its link. A board starting marks offline only the agents of
// boards without a live lease (a board killed without a goodbye, or the
// store's boards before they had leases); a running board marks offline
// the agents of a board whose lease ran out, within leaseFor and a sweep.
// An agent that linked again elsewhere names its new board, so a dead
// board's sweep never takes it offline. On SQLite, one board a store,
// every agent is the starting board's to mark offline, as before.
const (
	leaseFor   = 15 * time.Second
	leaseRenew = 5 * time.Second
)

// startLease takes this board's lease and marks offline the agents no
// live board holds.
func (b *Board) startLease(ctx context.Context) error {
	now := b.now().UTC().Truncate(time.Microsecond)
	if !b.notifies {
		// The store's one board (SQLite): a lease left by the board before
		// it, killed, is not a live board.
		if _, err := b.db.BoardLease.Delete().Exec(ctx); err != nil {
			return err
		}
	}
	if err := b.db.BoardLease.Create().SetID(b.id).SetStartedAt(now).SetExpiresAt(now.Add(leaseFor)).Exec(ctx); err != nil {
		return err
	}
	return b.markOrphansOffline(ctx, now)
}

// renewLease extends this board's lease and marks offline the agents of
// boards whose leases ran out, forgetting those leases. A failure is
// logged: the lease lasts leaseFor, three renewals.
func (b *Board) renewLease(ctx context.Context) {
	now := b.now().UTC().Truncate(time.Microsecond)
	n, err := b.db.BoardLease.UpdateOneID(b.id).SetExpiresAt(now.Add(leaseFor)).Save(ctx)
	if err != nil && n == nil {
		// Taken away (a board that was cut off for longer than its lease
		// came back): take it again. Its agents may have been marked
		// offline by the others; their next arrival here marks them online.
		err = b.db.BoardLease.Create().SetID(b.id).SetStartedAt(now).SetExpiresAt(now.Add(leaseFor)).Exec(ctx)
	}
	if err != nil {
		b.log.ErrorContext(ctx, "renew the board's lease", "board_id", b.id, "err", err.Error())
		return
	}
	if err := b.markOrphansOffline(ctx, now); err != nil {
		b.log.ErrorContext(ctx, "mark the agents of stopped boards offline", "err", err.Error())
	}
}

// markOrphansOffline marks offline every online agent whose board holds no
// live lease, and removes the leases that ran out.
func (b *Board) markOrphansOffline(ctx context.Context, now time.Time) error {
	live, err := b.db.BoardLease.Query().Where(boardlease.ExpiresAtGT(now)).IDs(ctx)
	if err != nil {
		return err
	}
	n, err := b.db.Agent.Update().
		Where(agent.Online(true), agent.BoardNotIn(live...)).
		SetOnline(false).
		Save(ctx)
	if err != nil {
		return err
	}
	if n > 0 {
		b.log.InfoContext(ctx, "agents of stopped boards marked offline", "agents", n)
	}
	_, err = b.db.BoardLease.Delete().Where(boardlease.ExpiresAtLTE(now)).Exec(ctx)
	return err
}

// endLease gives the lease up, when the board stops: its agents, whose
// links it ended, are already offline.
func (b *Board) endLease(ctx context.Context) {
	if err := b.db.BoardLease.DeleteOneID(b.id).Exec(ctx); err != nil {
		b.log.WarnContext(ctx, "give the board's lease up", "board_id", b.id, "err", err.Error())
	}
}
