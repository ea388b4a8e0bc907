package board

import (
	"context"
	"time"

	"connectrpc.com/connect/v2"

	boardv1 "github.com/symphonix/symphonix/api/symphonix/board/v1"
	"github.com/symphonix/symphonix/api/symphonix/board/v1/boardv1connect"
	"github.com/symphonix/symphonix/ent"
	"github.com/symphonix/symphonix/ent/predicate"
	"github.com/symphonix/symphonix/ent/run"
	"github.com/symphonix/symphonix/identity"
)

// runWatchPage is how many stored runs a watch's snapshot reads at once.
const runWatchPage = 200

// publishRun tells the runs' watchers what happened to r (without its
// steps), and step for a step. It never waits for a watcher (hub.publish
// drops one that is full), and does nothing while nobody watches.
func (b *Board) publishRun(kind boardv1.RunEventKind, r *boardv1.Run, step *boardv1.RunStep) {
	if !b.runs.watched() {
		return
	}
	b.runs.publish(&boardv1.WatchRunsResponse{Kind: kind, Run: r, Step: step})
}

func (s runService) WatchRuns(ctx context.Context, req *boardv1.WatchRunsRequest, stream boardv1connect.RunServiceWatchRunsServerStream) error {
	agentName, runID := req.GetAgent(), req.GetRun()
	if agentName != "" {
		if err := identity.ValidName(agentName); err != nil {
			return connect.Errorf(connect.CodeInvalidArgument, "agent: %v", err)
		}
	}
	if runID != "" {
		if agentName == "" {
			return connect.NewError(connect.CodeInvalidArgument, "run: needs agent: a run's id is its agent's")
		}
		if err := validRunID(runID); err != nil {
			return connect.Errorf(connect.CodeInvalidArgument, "run: %v", err)
		}
	}
	done, err := s.b.startStream(ctx)
	if err != nil {
		return err
	}
	defer done()
	// Subscribe before reading the snapshot so no change falls between them;
	// a change seen twice is harmless, a change missed is not.
	ch, stop := s.b.runs.watchWhere(func(m *boardv1.WatchRunsResponse) bool {
		return (agentName == "" || m.GetRun().GetAgent() == agentName) && (runID == "" || m.GetRun().GetId() == runID)
	})
	defer stop()
	err = s.b.runSnapshot(ctx, agentName, runID, func(r *boardv1.Run) error {
		return stream.Send(&boardv1.WatchRunsResponse{Kind: boardv1.RunEventKind_RUN_EVENT_KIND_SNAPSHOT, Run: r})
	})
	if err != nil {
		return sendErr(err)
	}
	if err := stream.Send(&boardv1.WatchRunsResponse{Kind: boardv1.RunEventKind_RUN_EVENT_KIND_SYNCED}); err != nil {
		return sendErr(err)
	}
	return watchLoop(ctx, s.b, ch, &boardv1.WatchRunsResponse{Kind: boardv1.RunEventKind_RUN_EVENT_KIND_HEARTBEAT}, stream.Send)
}

// watchLoop sends a watch's changes from ch, and heartbeat every
// WatchHeartbeat, until the watcher goes, the board shuts down, or the hub
// drops the watcher for falling behind (resource_exhausted).
func watchLoop[T any](ctx context.Context, b *Board, ch <-chan T, heartbeat T, send func(T) error) error {
	tick := time.NewTicker(b.cfg.WatchHeartbeat)
	defer tick.Stop()
	for {
		var m T
		select {
		case <-ctx.Done():
			return nil
		case <-b.done:
			return connect.NewError(connect.CodeUnavailable, "board shutting down")
		case <-tick.C:
			m = heartbeat
		case c, ok := <-ch:
			if !ok {
				return connect.NewError(connect.CodeResourceExhausted, "watcher fell behind; watch again")
			}
			m = c
		}
		if err := send(m); err != nil {
			return sendErr(err)
		}
	}
}

// runSnapshot is what a watch of runs sends first, each run given to send
// as it is found: every run the live view holds that has not ended, then
// every stored run running or paused it does not hold, a page at a time;
// only agentName's, and only runID, when given.
func (b *Board) runSnapshot(ctx context.Context, agentName, runID string, send func(*boardv1.Run) error) error {
	type key struct{ agent, id string }
	sent := map[key]bool{}
	for _, r := range b.live.current(agentName, runID) {
		sent[key{r.GetAgent(), r.GetId()}] = true
		if err := send(r); err != nil {
			return err
		}
	}
	where := []predicate.Run{run.StateIn(runRunning, runPaused)}
	if agentName != "" {
		where = append(where, run.Agent(agentName))
	}
	if runID != "" {
		where = append(where, run.RunID(runID))
	}
	after := 0
	for {
		rows, err := b.db.Run.Query().Where(append(where, run.IDGT(after))...).Order(ent.Asc(run.FieldID)).Limit(runWatchPage).All(ctx)
		if err != nil {
			return err
		}
		for _, r := range rows {
			if sent[key{r.Agent, r.RunID}] {
				continue
			}
			if err := send(runProto(r)); err != nil {
				return err
			}
		}
		if len(rows) < runWatchPage {
			return nil
		}
		after = rows[len(rows)-1].ID
	}
}
