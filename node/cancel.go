package node

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/symphonix/symphonix/flow"
	"github.com/symphonix/symphonix/lock"
	"github.com/symphonix/symphonix/runs"
)

// ErrNothingWaits: Cancel found no run waiting on the thread.
var ErrNothingWaits = errors.New("no run waits on the thread")

// Cancel is `agent cancel --thread T DIR`: it ends the run waiting on
// cfg.Thread, here, without an answer — nothing runs, not even an
// onReject — and says so on Stdout. It is how a person at the agent ends a
// run that waits for a board it cannot or will not link to: the run's
// holding note becomes a tombstone nothing can answer afterwards, and when
// the board held its approval, the board is told the next time the agent
// is linked to it (Run or Serve with a BoardURL) and cancels the approval
// there, as the agent, with cfg.Reason.
//
// It takes the folder's lock for as long as it takes, so it fails with a
// *lock.HeldError while the folder is served; with ErrNothingWaits when
// no run waits on the thread.
func Cancel(ctx context.Context, cfg Config) error {
	cfg, err := cfg.checked()
	if err != nil {
		return err
	}
	held, err := lock.Take(cfg.Dir, lock.Me("", time.Now()))
	if err != nil {
		return fmt.Errorf("%w (stop it first, or end the run from the board)", err)
	}
	defer func() {
		if err := held.Release(); err != nil {
			cfg.Logger.Warn("releasing the lock", "err", err)
		}
	}()
	cfg.BoardURL = "" // nothing is linked: the board hears of it on the agent's next link
	a, err := open(ctx, cfg, nil, nil, nil)
	if err != nil {
		return err
	}
	defer a.Close()
	gov, err := govern(cfg, a, nil, nil)
	if err != nil {
		return err
	}
	defer gov.Close()
	end, err := gov.Cancel(ctx, cfg.Thread, cfg.Reason)
	if errors.Is(err, flow.ErrNothingPending) {
		return fmt.Errorf("%w %q", ErrNothingWaits, cfg.Thread)
	}
	if err != nil {
		return err
	}
	if end.Pending != nil {
		stoppedInOutbox(cfg, end.Pending.Run, cfg.Reason)
	}
	switch {
	case end.Pending != nil:
		fmt.Fprintf(cfg.Stdout, "thread %s: the run waiting at %s (%s) was ended, without an answer\n",
			cfg.Thread, end.Pending.Node, end.Pending.Question)
	default:
		fmt.Fprintf(cfg.Stdout, "thread %s: the run had ended already; its approval is withdrawn\n", cfg.Thread)
	}
	if end.Withdrawn {
		fmt.Fprintf(cfg.Stdout, "thread %s: the board held its approval: it is told, and cancels it, the next time this agent is linked to it\n", cfg.Thread)
	}
	return nil
}

// stoppedInOutbox ends the record of run id, kept in the folder's outbox
// while it waited, as stopped: the board hears of it the next time the
// agent is linked. Nothing is done for a folder with no outbox, or a run
// it holds no record of.
func stoppedInOutbox(cfg Config, id, reason string) {
	path := runs.OutboxPath(cfg.Dir)
	if _, err := os.Stat(path); err != nil || id == "" {
		return
	}
	box, err := runs.OpenOutbox(path)
	if err != nil {
		cfg.Logger.Warn("runs: the outbox", "err", err)
		return
	}
	rec, err := runs.NewRecorder(runs.Config{Outbox: box, Safe: detailFilter(cfg),
		OnError: func(err error) { cfg.Logger.Warn("runs: the outbox", "err", err) }})
	if err != nil {
		return
	}
	why := "ended at the agent, without an answer"
	if reason != "" {
		why += ": " + reason
	}
	rec.Stopped(id, why, time.Now())
}
