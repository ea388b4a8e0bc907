package board

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	boardv1 "github.com/symphonix/symphonix/api/symphonix/board/v1"
	"github.com/symphonix/symphonix/ent"
	"github.com/symphonix/symphonix/ent/run"
)

// DropLinksForTest ends every live link as a network failure would: no
// goodbye, so presence holds each agent for the grace.
func (b *Board) DropLinksForTest() {
	b.presence.mu.Lock()
	defer b.presence.mu.Unlock()
	for _, s := range b.presence.sessions {
		s.cancel(errDroppedForTest)
	}
}

var errDroppedForTest = errors.New("dropped by a test")

// WatcherBufferForTest is how many changes a watcher may fall behind.
const WatcherBufferForTest = watcherBuffer

// SlowApprovalWatcherForTest subscribes to approval changes as
// WatchApprovals does and never reads one: a watcher as slow as can be.
// dropped reports whether the board has given up on it.
func (b *Board) SlowApprovalWatcherForTest(t testing.TB) (dropped func() bool) {
	_, dropped = b.ApprovalWatcherForTest(t)
	return dropped
}

// ApprovalWatcherForTest subscribes to approval changes as WatchApprovals
// does; the test reads them from ch when it wants. dropped reports whether
// the board has given up on it.
func (b *Board) ApprovalWatcherForTest(t testing.TB) (ch <-chan *boardv1.WatchApprovalsResponse, dropped func() bool) {
	c, stop := b.approvals.watch()
	t.Cleanup(stop)
	return c, func() bool {
		b.approvals.mu.Lock()
		defer b.approvals.mu.Unlock()
		_, ok := b.approvals.watchers[c]
		return !ok
	}
}

// PublishApprovalForTest publishes a to the approvals' watchers n times,
// as n changes would.
func (b *Board) PublishApprovalForTest(a *boardv1.Approval, n int) {
	m := &boardv1.WatchApprovalsResponse{Event: eventVoted, Approval: a}
	for range n {
		b.approvals.publish(m)
	}
}

// PushDecisionForTest sends d to the agent's live link as a decision made
// on this board is pushed, and reports whether it went out.
func (b *Board) PushDecisionForTest(agentName string, d *boardv1.ApprovalDecision) bool {
	return b.pushDecision(agentName, d)
}

// RuleForTest is the rule that governs an approval agentName raises at
// node; nil when none does.
func (b *Board) RuleForTest(ctx context.Context, agentName, node string) (*ent.Rule, error) {
	return b.ruleFor(ctx, agentName, node)
}

// HoldHashSlotsForTest takes every hashing slot, as that many hashes
// running at once would, until release.
func (b *Board) HoldHashSlotsForTest() (release func()) {
	for range cap(b.hashSlots.slots) {
		b.hashSlots.slots <- struct{}{}
	}
	return func() {
		for range cap(b.hashSlots.slots) {
			<-b.hashSlots.slots
		}
	}
}

// MaxRequestIDForTest is the longest request id the link echoes.
const MaxRequestIDForTest = maxRequestID

// SlowRunWatcherForTest subscribes to run changes as WatchRuns does, for
// agentName's runs ("" for all), and never reads one. dropped reports
// whether the board has given up on it.
func (b *Board) SlowRunWatcherForTest(t testing.TB, agentName string) (dropped func() bool) {
	c, stop := b.runs.watchWhere(func(m *boardv1.WatchRunsResponse) bool {
		return agentName == "" || m.GetRun().GetAgent() == agentName
	})
	t.Cleanup(stop)
	return func() bool {
		b.runs.mu.Lock()
		defer b.runs.mu.Unlock()
		_, ok := b.runs.watchers[c]
		return !ok
	}
}

// DropWakes has b drop the wakes it would send to the other boards of its
// store when drop says yes: a notification lost, for the catch-up to make
// up.
func (b *Board) DropWakes(drop func(kind, id string) bool) { b.dropWake.Store(&drop) }

// LoadReceiptKeys has b read the store's receipt keys now, as it does
// every receiptKeysEvery.
func (b *Board) LoadReceiptKeys(ctx context.Context) error { return b.loadReceiptKeys(ctx) }

// VerifyAuditsPerCaller is how many VerifyAudits one caller may start a
// minute.
const VerifyAuditsPerCaller = verifyAuditsPerCaller

// HoldVerifyForTest takes the board's one VerifyAudit, as a long one
// running would, until release.
func (b *Board) HoldVerifyForTest() (release func()) {
	b.verifying <- struct{}{}
	return func() { <-b.verifying }
}

// SampleFleetForTest records the fleet's sample of the minute starting at
// minute, its gauges read now, as the board's loop does when the minute
// ends; a minute the store holds already is left as it is.
func (b *Board) SampleFleetForTest(ctx context.Context, minute time.Time) error {
	return b.sampleFleet(ctx, minute, b.now())
}

// FoldFleetForTest folds the fleet's minute samples into hours and sweeps
// the samples past their retention, as the board's loop does at the first
// minute of an hour, as at now.
func (b *Board) FoldFleetForTest(ctx context.Context, now time.Time) error {
	return b.foldFleet(ctx, now)
}

// Fleet sampling's bounds, for tests.
const (
	FleetMaxPointsForTest  = fleetMaxPoints
	FleetMinuteKeepForTest = fleetMinuteKeep
	FleetHourKeepForTest   = fleetHourKeep
)

// RunWriteForTest is one write of WriteRunsForTest: a run event's (Start
// says it is the start) or a summary's.
type RunWriteForTest struct {
	Agent          string
	Run            *boardv1.Run
	Seq            uint32
	Start, Summary bool
}

// WriteRunBatchForTest makes ws as one batch of the board's run writes,
// and nothing else.
func (b *Board) WriteRunBatchForTest(ws []RunWriteForTest) error {
	batch := make([]*runWrite, len(ws))
	for i, w := range ws {
		batch[i] = &runWrite{agent: w.Agent, run: w.Run, seq: w.Seq, start: w.Start, summary: w.Summary}
	}
	writeRuns(b, batch)
	for _, w := range batch {
		if w.err != nil {
			return w.err
		}
	}
	return nil
}

// WriteRunsForTest makes ws as one batch of the board's run writes. It
// returns, for each, whether it was kept and its run as the batch left it
// in memory, and each run's row read again from the store afterwards.
func (b *Board) WriteRunsForTest(ws []RunWriteForTest) (kept []bool, held, read []*boardv1.Run, err error) {
	batch := make([]*runWrite, len(ws))
	for i, w := range ws {
		batch[i] = &runWrite{agent: w.Agent, run: w.Run, seq: w.Seq, start: w.Start, summary: w.Summary}
	}
	writeRuns(b, batch)
	for _, w := range batch {
		if w.err != nil {
			return nil, nil, nil, w.err
		}
		kept = append(kept, w.kept)
		held = append(held, runProto(w.stored))
		row, err := b.db.Run.Query().Where(run.Agent(w.agent), run.RunID(w.run.GetId())).Only(context.Background())
		if err != nil {
			return nil, nil, nil, err
		}
		p := runProto(row)
		read = append(read, p)
		if int64(w.seq) > row.Seq || w.stored.ID != row.ID || w.stored.Seq != row.Seq {
			return nil, nil, nil, fmt.Errorf("run %s: held id %d seq %d, stored id %d seq %d", w.run.GetId(), w.stored.ID, w.stored.Seq, row.ID, row.Seq)
		}
	}
	return kept, held, read, nil
}
