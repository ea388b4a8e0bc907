package board

import (
	"context"
	"fmt"
	"time"

	"github.com/symphonix/symphonix/ent"
	"github.com/symphonix/symphonix/ent/run"
	"github.com/symphonix/symphonix/ent/rundetail"
	"github.com/symphonix/symphonix/ent/runstep"
	"github.com/symphonix/symphonix/store"
)

// DefaultRunRetention is how long runs are kept by default
// (Config.RunRetention): after their end, or their start for one that
// never ended.
const DefaultRunRetention = 30 * 24 * time.Hour

// runSweepBatch is how many runs one transaction of the sweep deletes.
const runSweepBatch = 500

func (b *Board) sweepRunsLogged() {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	n, err := b.sweepRuns(ctx)
	if err != nil {
		b.log.ErrorContext(ctx, "sweep runs", "err", err.Error())
		return
	}
	if n > 0 {
		b.log.InfoContext(ctx, "runs swept", "runs", n)
	}
}

// sweepRuns deletes the runs past Config.RunRetention, with their steps, a
// batch at a time, and says how many went. A negative retention keeps
// them all.
func (b *Board) sweepRuns(ctx context.Context) (int, error) {
	if b.cfg.RunRetention < 0 {
		return 0, nil
	}
	cutoff := b.now().Add(-b.cfg.RunRetention)
	old := run.Or(run.EndTimeLT(cutoff), run.And(run.EndTimeIsNil(), run.StartTimeLT(cutoff)))
	total := 0
	for {
		ids, err := b.db.Run.Query().Where(old).Limit(runSweepBatch).IDs(ctx)
		if err != nil {
			return total, fmt.Errorf("old runs: %w", err)
		}
		if len(ids) == 0 {
			return total, nil
		}
		err = store.InTx(ctx, b.db, func(tx *ent.Tx) error {
			if _, err := tx.RunStep.Delete().Where(runstep.RunIn(ids...)).Exec(ctx); err != nil {
				return err
			}
			if _, err := tx.RunDetail.Delete().Where(rundetail.RunIn(ids...)).Exec(ctx); err != nil {
				return err
			}
			_, err := tx.Run.Delete().Where(run.IDIn(ids...)).Exec(ctx)
			return err
		})
		if err != nil {
			return total, fmt.Errorf("delete runs: %w", err)
		}
		total += len(ids)
	}
}
