package audit

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/symphonix/symphonix/ent"
	"github.com/symphonix/symphonix/ent/auditentry"
	"github.com/symphonix/symphonix/ent/setting"
	"github.com/symphonix/symphonix/store"
)

// SequenceBatch is how many entries one pass of the sequencer chains, in
// one transaction (docs/limits.md).
const SequenceBatch = 500

// maxSequencePasses bounds how many batches one Sequence call chains
// before it returns, so a reader under a flood of appends is not held
// forever (docs/limits.md).
const maxSequencePasses = 100

// sequencerKey is the settings row the sequencer locks: one sequencer at a
// time across every board on the store.
const sequencerKey = "audit.sequencer"

// Unhashable is the hash the sequencer gives an entry whose detail is no
// longer a JSON object (changed before it was chained), so the chain goes
// on past it; Verify names that entry as modified.
const Unhashable = "unhashable"

// Sequence chains the entries committed before it was called: each
// unsequenced entry, in the order it was written (its row id), gets the
// next seq, the hash of the entry before as prev, and its hash. It chains
// up to SequenceBatch entries per transaction and at most
// maxSequencePasses batches per call.
//
// One sequencer runs at a time on a store, so two never fork the chain: on
// PostgreSQL each pass locks the row "audit.sequencer" of the settings
// table (SELECT … FOR UPDATE; a second sequencer waits for the first to
// commit, then reads the chain it left); on SQLite write transactions
// already run one at a time. The appenders never take that lock.
func (a *Log) Sequence(ctx context.Context) error {
	for range maxSequencePasses {
		waiting, err := a.db.AuditEntry.Query().Where(auditentry.SeqIsNil()).Exist(ctx)
		if err != nil {
			return fmt.Errorf("audit: sequence: %w", err)
		}
		if !waiting {
			return nil
		}
		n, err := a.sequenceBatch(ctx)
		if err != nil {
			return err
		}
		if n < SequenceBatch {
			return nil
		}
	}
	return nil
}

// sequenceBatch chains up to SequenceBatch entries in one transaction and
// says how many.
func (a *Log) sequenceBatch(ctx context.Context) (int, error) {
	var n int
	err := store.InTx(ctx, a.db, func(tx *ent.Tx) error {
		n = 0
		if err := lockSequencer(ctx, tx, a.now()); err != nil {
			return err
		}
		last, err := tx.AuditEntry.Query().
			Where(auditentry.SeqNotNil()).
			Order(ent.Desc(auditentry.FieldSeq)).
			Limit(1).
			All(ctx)
		if err != nil {
			return fmt.Errorf("audit: read last entry: %w", err)
		}
		var seq int64
		var prev string
		if len(last) > 0 {
			seq, prev = *last[0].Seq, last[0].Hash
		}
		rows, err := tx.AuditEntry.Query().
			Where(auditentry.SeqIsNil()).
			Order(ent.Asc(auditentry.FieldID)).
			Limit(SequenceBatch).
			All(ctx)
		if err != nil {
			return fmt.Errorf("audit: read entries to chain: %w", err)
		}
		for _, row := range rows {
			e := entryOf(row)
			e.Seq, e.Prev = seq+1, prev
			if e.Hash, err = hashOf(e); err != nil {
				e.Hash = Unhashable
			}
			k, err := tx.AuditEntry.Update().
				Where(auditentry.ID(row.ID), auditentry.SeqIsNil()).
				SetSeq(e.Seq).
				SetPrev(e.Prev).
				SetHash(e.Hash).
				Save(ctx)
			if err != nil {
				return fmt.Errorf("audit: chain entry %d: %w", e.Seq, err)
			}
			if k != 1 {
				return fmt.Errorf("audit: chain entry %d: row %d was chained by another sequencer", e.Seq, row.ID)
			}
			seq, prev = e.Seq, e.Hash
			n++
		}
		return nil
	})
	return n, err
}

// lockSequencer takes the sequencer's lock for tx's lifetime: the settings
// row sequencerKey, made the first time, locked FOR UPDATE on PostgreSQL.
func lockSequencer(ctx context.Context, tx *ent.Tx, now time.Time) error {
	for range 2 {
		n, err := tx.Setting.Query().Where(setting.ID(sequencerKey), store.ForUpdate).IDs(ctx)
		if err != nil {
			return fmt.Errorf("audit: lock the sequencer: %w", err)
		}
		if len(n) == 1 {
			return nil
		}
		err = tx.Setting.Create().
			SetID(sequencerKey).
			SetUpdatedAt(now).
			SetUpdatedBy("board").
			OnConflictColumns(setting.FieldID).
			DoNothing().
			Exec(ctx)
		if err != nil && !errors.Is(err, sql.ErrNoRows) {
			return fmt.Errorf("audit: make the sequencer's lock: %w", err)
		}
	}
	return errors.New("audit: lock the sequencer: its row is missing")
}

// Run keeps the log sequenced until ctx ends. It makes a pass soon after
// every commit of an entry appended through any Log on the same store in
// this process, but no sooner than gap after the pass before, so that under
// load one pass chains many entries; and a pass every tick, for entries
// other processes wrote. A pass that fails is reported to failed (nil:
// ignored) and tried again at the next wake-up or tick. Run returns when
// ctx is done, after its pass in flight.
func (a *Log) Run(ctx context.Context, gap, tick time.Duration, failed func(error)) {
	t := time.NewTicker(tick)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-a.wake:
		case <-t.C:
		}
		if err := a.Sequence(ctx); err != nil && ctx.Err() == nil && failed != nil {
			failed(err)
		}
		select { // wake-ups meanwhile wait in a.wake, as one
		case <-ctx.Done():
			return
		case <-time.After(gap):
		}
	}
}
