package board

import (
	"context"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"time"

	"connectrpc.com/connect/v2"
	"google.golang.org/protobuf/proto"

	boardv1 "github.com/symphonix/symphonix/api/symphonix/board/v1"
	"github.com/symphonix/symphonix/ent"
	"github.com/symphonix/symphonix/ent/agent"
	"github.com/symphonix/symphonix/ent/run"
	"github.com/symphonix/symphonix/ent/rundetail"
	"github.com/symphonix/symphonix/ent/runstep"
	"github.com/symphonix/symphonix/store"
)

// The rates and windows of runs on one link (docs/limits.md).
const (
	// runEventsPerSecond and runEventsBurst: how many run events a link
	// may send a second, and at once; the rest are dropped and counted.
	// A run of 20 steps every 10 s is about 4 a second.
	runEventsPerSecond = 100
	runEventsBurst     = 500
	// maxRunWritesInFlight is how many run writes (summaries, and events
	// that start, pause or resume a run) of one link may wait for the
	// store at once; the link's next one waits for one of them.
	maxRunWritesInFlight = 64
	// maxRunBatch is the most run writes one transaction makes.
	maxRunBatch = 200
	// runBatchLinger is how long the run writer waits for more writes
	// before it writes a batch of fewer than maxRunBatch: a fleet's
	// trickle of starts and summaries is committed (an fsync each) about
	// 1/runBatchLinger times a second, not once for every write or two.
	runBatchLinger = 20 * time.Millisecond
	// detailChunk is how many runs' steps one insert writes.
	detailChunk = 200
)

// runEventBucket is one link's allowance of run events: a token bucket,
// read and written by the link's own goroutine only.
type runEventBucket struct {
	tokens float64
	last   time.Time
}

// take reports whether one more event is within the rate at now.
func (r *runEventBucket) take(now time.Time) bool {
	if r.last.IsZero() {
		r.tokens = runEventsBurst
	} else if d := now.Sub(r.last); d > 0 {
		r.tokens = min(runEventsBurst, r.tokens+d.Seconds()*runEventsPerSecond)
	}
	r.last = now
	if r.tokens < 1 {
		return false
	}
	r.tokens--
	return true
}

// runEvent takes a run event: into the live view, to watchers, and, when
// it starts, pauses or resumes the run, to the store, without waiting. One
// out of bounds, or that needs a capability the agent did not announce, is
// counted and refused with an Error naming field (run_event, or
// run_events.events[i] for one of a batch); one out of order or past the
// rate is counted and dropped. The link stays up.
func (l linkService) runEvent(ctx context.Context, s *session, field string, e *boardv1.RunEvent) error {
	b := l.b
	if !slices.Contains(s.caps, capLiveRuns) {
		b.runCounts.add(problemCapability)
		return l.answerError(ctx, s, "", field, &linkRequestError{code: connect.CodeFailedPrecondition,
			msg: field + ": this agent did not announce the live-runs capability in its hello"})
	}
	now := b.now()
	if !s.runEvents.take(now) {
		b.runCounts.add(problemRate)
		return nil
	}
	if !slices.Contains(s.caps, capDelegation) && (e.GetDelegationFailed() != nil || e.GetStart().GetDelegation() != nil) {
		b.runCounts.add(problemCapability)
		return l.answerError(ctx, s, "", field, &linkRequestError{code: connect.CodeFailedPrecondition,
			msg: field + ": this agent did not announce the delegation capability in its hello"})
	}
	if err := validRunEvent(field, e, now); err != nil {
		b.runCounts.add(problemInvalid)
		return l.answerError(ctx, s, "", field, err)
	}
	a := b.live.apply(s.name, e, now, b.runs.watched, b.runCounts.add)
	if a.kind != boardv1.RunEventKind_RUN_EVENT_KIND_UNSPECIFIED && a.run != nil {
		b.publishRun(a.kind, a.run, a.step)
	}
	if a.write {
		w := &runWrite{agent: s.name, run: a.run, seq: e.GetSeq(), start: e.GetStart() != nil}
		if err := l.takeRunSlot(ctx, s); err != nil {
			return err
		}
		b.runWrites.later(w, func() { <-s.runSlots; b.runWritten(w) })
	}
	if f := e.GetDelegationFailed(); f != nil && a.seen {
		w := &runWrite{agent: s.name, run: &boardv1.Run{Id: e.GetRunId()}, seq: e.GetSeq(), failure: f}
		if err := l.takeRunSlot(ctx, s); err != nil {
			return err
		}
		b.runWrites.later(w, func() { <-s.runSlots; b.runWritten(w) })
	}
	return nil
}

// maxRunEvents is the most events one RunEvents may carry.
const maxRunEvents = 64

// runEvents takes each of e's events in order, as if each had come alone.
// A batch of none, or of more than maxRunEvents, is refused whole.
func (l linkService) runEvents(ctx context.Context, s *session, e *boardv1.RunEvents) error {
	if !slices.Contains(s.caps, capLiveRuns) {
		l.b.runCounts.add(problemCapability)
		return l.answerError(ctx, s, "", "run_events", &linkRequestError{code: connect.CodeFailedPrecondition,
			msg: "run_events: this agent did not announce the live-runs capability in its hello"})
	}
	if n := len(e.GetEvents()); n == 0 || n > maxRunEvents {
		l.b.runCounts.add(problemInvalid)
		return l.answerError(ctx, s, "", "run_events", badRequest("run_events.events: %d events, want 1 to %d", n, maxRunEvents))
	}
	for i, ev := range e.GetEvents() {
		if err := l.runEvent(ctx, s, fmt.Sprintf("run_events.events[%d]", i), ev); err != nil {
			return err
		}
	}
	return nil
}

// takeRunSlot waits for one of the link's slots for a run write, sending
// the answers to summaries stored meanwhile (which free theirs).
func (l linkService) takeRunSlot(ctx context.Context, s *session) error {
	for {
		select {
		case s.runSlots <- struct{}{}:
			return nil
		case w := <-s.runStored:
			if err := l.runStored(s, w); err != nil {
				return err
			}
		case <-ctx.Done():
			return context.Cause(ctx)
		}
	}
}

// runStored answers a summary once its batch is committed, and frees its
// slot. The link's own goroutine sends it: a writer never waits on an
// agent that does not read. A summary that could not be stored is not
// answered: the agent sends it again after its next welcome.
func (l linkService) runStored(s *session, w *runWrite) error {
	<-s.runSlots
	if w.err != nil {
		return nil
	}
	return s.out.send(&boardv1.LinkResponse{Kind: &boardv1.LinkResponse_RunStored{RunStored: &boardv1.RunStored{
		RunId: w.run.GetId(), Seq: w.seq,
	}}})
}

// validRunEvent checks a run event, naming the field at fault, and cuts
// a step's error to what the board keeps.
func validRunEvent(field string, e *boardv1.RunEvent, now time.Time) error {
	if err := validRunID(e.GetRunId()); err != nil {
		return badRequest("%s.run_id: %v", field, err)
	}
	if e.GetSeq() == 0 {
		return badRequest("%s.seq: required, 1 or more", field)
	}
	if t := e.GetTime(); t != nil {
		if err := validRunTime(t, now); err != nil {
			return badRequest("%s.time: %v", field, err)
		}
	}
	switch k := e.GetKind().(type) {
	case *boardv1.RunEvent_Start:
		st := k.Start
		for _, f := range []struct {
			name string
			v    string
			max  int
		}{
			{"thread", st.GetThread(), maxRunThread},
			{"started_by", st.GetStartedBy(), maxStartedBy},
			{"started_by_who", st.GetStartedByWho(), maxStartedByWho},
		} {
			if err := validText(f.v, f.max, false); err != nil {
				return badRequest("%s.start.%s: %v", field, f.name, err)
			}
		}
		if b := st.GetBuild(); b != "" && !buildShape.MatchString(b) {
			return badRequest("%s.start.build: want sha256: and 64 lower-case hex digits", field)
		}
		if t := st.GetTrigger(); t != nil {
			if err := validRunTrigger(field+".start.trigger", t, now); err != nil {
				return err
			}
		}
		if d := st.GetDelegation(); d != nil {
			if err := validRunDelegation(field+".start.delegation", e.GetRunId(), d); err != nil {
				return err
			}
		}
	case *boardv1.RunEvent_Step:
		if k.Step == nil {
			return badRequest("%s.step: required", field)
		}
		return validStep(stepField{field + ".step", -1}, k.Step)
	case *boardv1.RunEvent_Pause:
		if err := linkEnum(field+".pause.kind", k.Pause.GetKind()); err != nil {
			return err
		}
		if err := validText(k.Pause.GetNode(), maxRunNode, false); err != nil {
			return badRequest("%s.pause.node: %v", field, err)
		}
		if err := validText(k.Pause.GetApprovalId(), maxApprovalIDLen, false); err != nil {
			return badRequest("%s.pause.approval_id: %v", field, err)
		}
	case *boardv1.RunEvent_Resume:
	case *boardv1.RunEvent_DelegationFailed:
		return validDelegationFailure(field+".delegation_failed", e.GetRunId(), k.DelegationFailed)
	default:
		return badRequest("%s: start, step, pause, resume or delegation_failed required", field)
	}
	return nil
}

// runSummary stores a summary without waiting for the store: the agent
// is answered run_stored once it is committed (or a later one of the run
// was). Up to maxRunWritesInFlight writes of one link wait for the store at once;
// past that the link waits. A summary the board refuses is answered with
// an Error (request_id empty); the link stays up.
func (l linkService) runSummary(ctx context.Context, s *session, m *boardv1.RunSummary) error {
	b := l.b
	if !slices.Contains(s.caps, capRuns) {
		return l.answerError(ctx, s, "", "run_summary", &linkRequestError{code: connect.CodeFailedPrecondition,
			msg: "run_summary: this agent did not announce the runs capability in its hello"})
	}
	if r := m.GetRun(); r != nil && !slices.Contains(s.caps, capDelegation) {
		// A delegation from an agent that did not announce it is not
		// taken; the rest of the summary is.
		r.Delegation, r.DelegationFailures = nil, nil
	}
	if err := validSummary(m, b.now()); err != nil {
		return l.answerError(ctx, s, "", "run_summary", err)
	}
	r := m.GetRun()
	r.Agent = s.name
	w := &runWrite{agent: s.name, run: r, seq: m.GetSeq(), summary: true, dropped: m.GetDropped()}
	if err := l.takeRunSlot(ctx, s); err != nil {
		return err
	}
	b.runWrites.later(w, func() {
		b.runWritten(w)
		s.runStored <- w // never waits: it holds no more than the slots
	})
	return nil
}

// runWrite is one change of a run waiting for its batch (Board.runWrites):
// what a run event says of it (created, paused, resumed), or its summary.
type runWrite struct {
	agent   string
	run     *boardv1.Run // a summary's with its steps
	seq     uint32
	start   bool // the run's start event: its start fields are written
	summary bool
	dropped uint32
	// failure is a delegation failure of the run to keep; nothing else
	// of the run is written.
	failure *boardv1.DelegationFailure
	// newFailures are the codes of the failures a kept summary listed that
	// the board did not hold yet.
	newFailures []string
	// stored is the run's row after the batch; kept says this write changed
	// it (a write of a seq the row had reached already does not).
	stored *ent.Run
	kept   bool
	err    error
}

// runWritten follows a write once its batch is committed: the live view
// and watchers learn what a kept summary says, and what the store says of
// a run the live view thought was running when the store holds its end.
func (b *Board) runWritten(w *runWrite) {
	if w.err != nil {
		b.log.LogAttrs(context.Background(), slog.LevelError, "store a run", slog.String("agent", w.agent),
			slog.String("run", w.run.GetId()), slog.String("err", w.err.Error()))
		return
	}
	switch {
	case w.summary && w.kept:
		r := runProto(w.stored)
		if k := b.live.summarised(r, w.seq); k != boardv1.RunEventKind_RUN_EVENT_KIND_UNSPECIFIED {
			b.publishRun(k, r, nil)
		}
	case !w.kept && w.stored != nil && ended(runStateProto(w.stored.State)):
		b.live.summarised(runProto(w.stored), uint32(w.stored.Seq))
	}
}

// writeRuns makes a batch of run writes in one transaction, in the order
// they came: a write whose seq is not past the row's is not made. A
// failure fails them all. The rows of runs the store does not hold yet
// are created in one insert, from the first write of each; the rest are
// updated, each row as the write leaves it, without reading it back.
func writeRuns(b *Board, batch []*runWrite) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	now := storedTime(b.now())
	type key struct{ agent, id string }
	byKey := make(map[key]*ent.Run, len(batch))
	var cycles []string
	var failures []*runWrite // live failures written, not already held
	err := store.InTx(ctx, b.db, func(tx *ent.Tx) error {
		clear(byKey)
		var agents, ids []string
		for _, w := range batch {
			agents, ids = append(agents, w.agent), append(ids, w.run.GetId())
		}
		slices.Sort(agents)
		slices.Sort(ids)
		rows, err := tx.Run.Query().Where(run.AgentIn(slices.Compact(agents)...), run.RunIDIn(slices.Compact(ids)...)).All(ctx)
		if err != nil {
			return fmt.Errorf("read runs: %w", err)
		}
		for _, r := range rows {
			byKey[key{r.Agent, r.RunID}] = r
		}
		// The first write of a run without a row creates it.
		var fresh []*ent.Run
		created := map[*runWrite]bool{}
		for _, w := range batch {
			k := key{w.agent, w.run.GetId()}
			if w.failure != nil || byKey[k] != nil {
				continue
			}
			var row *ent.Run
			if w.summary {
				row = summaryRow(&ent.Run{Agent: w.agent, RunID: w.run.GetId()}, w, now)
			} else {
				row = liveRow(nil, w, now)
			}
			byKey[k] = row
			fresh = append(fresh, row)
			created[w] = true
		}
		if err := createRuns(ctx, tx, fresh); err != nil {
			return err
		}
		dropped := map[string]int64{}
		details := map[int][]*boardv1.RunStep{}
		failures, cycles = nil, nil
		for _, w := range batch {
			w.kept = false
			k := key{w.agent, w.run.GetId()}
			row := byKey[k]
			if w.failure != nil {
				failures = append(failures, w)
				continue
			}
			if !created[w] {
				if int64(w.seq) <= row.Seq {
					continue
				}
				next := liveRow
				if w.summary {
					next = summaryRow
				}
				updated := next(row, w, now)
				if err := updateRun(ctx, tx, updated, row.Seq); err != nil {
					return err
				}
				row = updated
				byKey[k] = row
			}
			w.kept = true
			if !w.summary {
				continue
			}
			details[row.ID] = w.run.GetSteps()
			dropped[w.agent] += int64(w.dropped)
			codes, cycled, err := mergeFailures(ctx, tx, w.agent, w.run.GetId(), w.run.GetDelegationFailures(), now)
			if err != nil {
				return err
			}
			w.newFailures = codes
			if cycled && !slices.Contains(cycles, w.agent) {
				cycles = append(cycles, w.agent)
			}
		}
		if err := writeDetails(ctx, tx, details); err != nil {
			return err
		}
		written, more, err := writeFailures(ctx, tx, failures, now)
		if err != nil {
			return err
		}
		failures = written // those counted once committed
		for _, a := range more {
			if !slices.Contains(cycles, a) {
				cycles = append(cycles, a)
			}
		}
		for name, n := range dropped {
			if n == 0 {
				continue
			}
			if err := tx.Agent.Update().Where(agent.Name(name)).AddRunsDropped(n).Exec(ctx); err != nil {
				return fmt.Errorf("count dropped summaries: %w", err)
			}
		}
		return nil
	})
	for _, w := range batch {
		w.err, w.stored = err, byKey[key{w.agent, w.run.GetId()}]
	}
	if err == nil {
		for _, w := range batch {
			if w.failure != nil && slices.Contains(failures, w) {
				b.metrics.delegationFailed(w.failure.GetCode())
			}
			for _, code := range w.newFailures {
				b.metrics.delegationFailed(code)
			}
		}
	}
	if err == nil && len(cycles) > 0 {
		// Watchers of agents see the count of cycles move.
		rows, err := b.db.Agent.Query().Where(agent.NameIn(cycles...)).All(ctx)
		if err == nil {
			for _, r := range rows {
				b.hub.publish(&boardv1.WatchAgentsResponse{Agent: agentProto(r)})
			}
		}
	}
}

// liveRow is a run's row as what a run event said leaves it: row, or a
// new one when row is nil. row itself is not changed.
func liveRow(row *ent.Run, w *runWrite, now time.Time) *ent.Run {
	r := w.run
	var n ent.Run
	start := w.start
	if row == nil {
		n = ent.Run{Agent: w.agent, RunID: r.GetId()}
		start = true
	} else {
		n = *row
	}
	n.State, n.Pause, n.PausedAt, n.ApprovalID = runStateWord(r.GetState()), pauseKindWord(r.GetPause()), r.GetPausedAt(), r.GetApprovalId()
	n.Seq, n.UpdatedAt = int64(w.seq), now
	if start {
		n.Thread, n.StartedBy, n.StartedByWho, n.Build = r.GetThread(), r.GetStartedBy(), r.GetStartedByWho(), r.GetBuild()
		n.StartTime = storedTime(r.GetStartTime().AsTime())
		// A start without a trigger or a delegation keeps the one the
		// row holds.
		if t := runTriggerBytes(r.GetTrigger()); t != nil {
			n.Trigger = t
		}
		setRowDelegation(&n, r.GetDelegation())
	}
	return &n
}

// summaryRow is a run's row as its summary in w leaves it. row itself is
// not changed.
func summaryRow(row *ent.Run, w *runWrite, now time.Time) *ent.Run {
	r := w.run
	n := *row
	n.Thread, n.StartedBy, n.StartedByWho, n.Build = r.GetThread(), r.GetStartedBy(), r.GetStartedByWho(), r.GetBuild()
	n.State, n.StartTime, n.EndTime = runStateWord(r.GetState()), storedTime(r.GetStartTime().AsTime()), nil
	if t := r.GetEndTime(); t != nil {
		e := storedTime(t.AsTime())
		n.EndTime = &e
	}
	n.DurationNs, n.StepCount = int64(r.GetDuration().AsDuration()), int(r.GetStepCount())
	tk := r.GetTokens()
	n.TokensInput, n.TokensOutput, n.TokensCached, n.TokensTotal = tk.GetInput(), tk.GetOutput(), tk.GetCached(), tk.GetTotal()
	n.Error, n.Pause, n.PausedAt, n.ApprovalID = r.GetError(), pauseKindWord(r.GetPause()), r.GetPausedAt(), r.GetApprovalId()
	n.Input, n.Output = valuesJSON(r.GetInput()), valuesJSON(r.GetOutput())
	n.Withheld, n.StepsTruncated = r.GetWithheld(), r.GetStepsTruncated()
	// A summary without the delegation or the trigger keeps the one its
	// start said.
	if t := runTriggerBytes(r.GetTrigger()); t != nil {
		n.Trigger = t
	}
	setRowDelegation(&n, r.GetDelegation())
	n.Seq, n.UpdatedAt = int64(w.seq), now
	return &n
}

// setRowDelegation writes d on a run's row in memory; nil writes
// nothing, so a row keeps the delegation its start said.
func setRowDelegation(n *ent.Run, d *boardv1.RunDelegation) {
	if d == nil {
		return
	}
	n.ParentRunID, n.ParentNode, n.InvocationID, n.DelegatedAgent, n.Chain =
		d.GetParentRunId(), d.GetParentNode(), d.GetInvocationId(), d.GetAgent(), d.GetChain()
}

// runColumns are the setters of a run's row, created or updated.
type runColumns[T any] interface {
	SetThread(string) T
	SetStartedBy(string) T
	SetStartedByWho(string) T
	SetBuild(string) T
	SetState(string) T
	SetStartTime(time.Time) T
	SetDurationNs(int64) T
	SetStepCount(int) T
	SetTokensInput(int64) T
	SetTokensOutput(int64) T
	SetTokensCached(int64) T
	SetTokensTotal(int64) T
	SetError(string) T
	SetPause(string) T
	SetPausedAt(string) T
	SetApprovalID(string) T
	SetStepsTruncated(bool) T
	SetParentRunID(string) T
	SetParentNode(string) T
	SetInvocationID(string) T
	SetDelegatedAgent(string) T
	SetSeq(int64) T
	SetUpdatedAt(time.Time) T
}

// setRunColumns sets every column of n that is never empty (NULL) on u.
func setRunColumns[T runColumns[T]](u T, n *ent.Run) {
	u.SetThread(n.Thread).SetStartedBy(n.StartedBy).SetStartedByWho(n.StartedByWho).SetBuild(n.Build).
		SetState(n.State).SetStartTime(n.StartTime).SetDurationNs(n.DurationNs).SetStepCount(n.StepCount).
		SetTokensInput(n.TokensInput).SetTokensOutput(n.TokensOutput).SetTokensCached(n.TokensCached).
		SetTokensTotal(n.TokensTotal).SetError(n.Error).SetPause(n.Pause).SetPausedAt(n.PausedAt).
		SetApprovalID(n.ApprovalID).SetStepsTruncated(n.StepsTruncated).SetParentRunID(n.ParentRunID).
		SetParentNode(n.ParentNode).SetInvocationID(n.InvocationID).SetDelegatedAgent(n.DelegatedAgent).
		SetSeq(n.Seq).SetUpdatedAt(n.UpdatedAt)
}

// createRuns inserts rows, one statement for up to maxRunBatch of them,
// and sets their ids. writeRuns creates one row per agent and run id, and
// only for one its transaction read as missing; one made meanwhile by a
// writer outside the board's batches is not overwritten: the insert fails
// on the unique index, and the batch with it.
func createRuns(ctx context.Context, tx *ent.Tx, rows []*ent.Run) error {
	for len(rows) > 0 {
		chunk := rows[:min(len(rows), maxRunBatch)]
		creates := make([]*ent.RunCreate, len(chunk))
		for i, n := range chunk {
			c := tx.Run.Create().SetAgent(n.Agent).SetRunID(n.RunID).SetNillableEndTime(n.EndTime)
			setRunColumns(c, n)
			if n.Input != nil {
				c.SetInput(n.Input)
			}
			if n.Output != nil {
				c.SetOutput(n.Output)
			}
			if n.Withheld != nil {
				c.SetWithheld(n.Withheld)
			}
			if n.Trigger != nil {
				c.SetTrigger(n.Trigger)
			}
			if n.Chain != nil {
				c.SetChain(n.Chain)
			}
			creates[i] = c
		}
		made, err := tx.Run.CreateBulk(creates...).Save(ctx)
		if err != nil {
			return fmt.Errorf("create runs: %w", err)
		}
		for i, m := range made {
			chunk[i].ID = m.ID
		}
		rows = rows[len(chunk):]
	}
	return nil
}

// updateRun writes n over its row, which held seq: one UPDATE, the row not
// read back. A row gone or past seq meanwhile fails the batch.
func updateRun(ctx context.Context, tx *ent.Tx, n *ent.Run, seq int64) error {
	u := tx.Run.Update().Where(run.ID(n.ID), run.Seq(seq))
	setRunColumns(u, n)
	if n.EndTime != nil {
		u.SetEndTime(*n.EndTime)
	} else {
		u.ClearEndTime()
	}
	if n.Input != nil {
		u.SetInput(n.Input)
	} else {
		u.ClearInput()
	}
	if n.Output != nil {
		u.SetOutput(n.Output)
	} else {
		u.ClearOutput()
	}
	if n.Withheld != nil {
		u.SetWithheld(n.Withheld)
	} else {
		u.ClearWithheld()
	}
	if n.Trigger != nil {
		u.SetTrigger(n.Trigger)
	} else {
		u.ClearTrigger()
	}
	if n.Chain != nil {
		u.SetChain(n.Chain)
	} else {
		u.ClearChain()
	}
	count, err := u.Save(ctx)
	switch {
	case err != nil:
		return fmt.Errorf("write run %q of %s: %w", n.RunID, n.Agent, err)
	case count != 1:
		return fmt.Errorf("write run %q of %s: its row changed meanwhile", n.RunID, n.Agent)
	}
	return nil
}

// writeDetails writes the steps of each run, by its row's id, in the place
// of any it had: one statement for the batch.
func writeDetails(ctx context.Context, tx *ent.Tx, details map[int][]*boardv1.RunStep) error {
	ids := slices.Sorted(maps.Keys(details))
	for len(ids) > 0 {
		n := min(len(ids), detailChunk)
		creates := make([]*ent.RunDetailCreate, n)
		for i, id := range ids[:n] {
			enc, err := encodeSteps(details[id])
			if err != nil {
				return err
			}
			creates[i] = tx.RunDetail.Create().SetRun(id).SetSteps(enc)
		}
		err := tx.RunDetail.CreateBulk(creates...).OnConflictColumns(rundetail.FieldRun).UpdateNewValues().Exec(ctx)
		if err != nil {
			return fmt.Errorf("write steps: %w", err)
		}
		ids = ids[n:]
	}
	return nil
}

// stepsFormat is the version byte of a RunDetail's steps.
const stepsFormat = 1

// encodeSteps is steps as a RunDetail keeps them.
func encodeSteps(steps []*boardv1.RunStep) ([]byte, error) {
	b, err := proto.MarshalOptions{Deterministic: true}.MarshalAppend([]byte{stepsFormat}, &boardv1.Run{Steps: steps})
	if err != nil {
		return nil, fmt.Errorf("encode steps: %w", err)
	}
	return b, nil
}

// decodeSteps reads what encodeSteps wrote.
func decodeSteps(b []byte) ([]*boardv1.RunStep, error) {
	if len(b) == 0 || b[0] != stepsFormat {
		return nil, fmt.Errorf("run steps: stored in a form this board does not read")
	}
	var r boardv1.Run
	if err := proto.Unmarshal(b[1:], &r); err != nil {
		return nil, fmt.Errorf("run steps: %w", err)
	}
	return r.Steps, nil
}

// storedSteps is the steps the store holds of the run whose row has id:
// from its RunDetail, or, for a run stored by a board before those, from
// its RunStep rows.
func (b *Board) storedSteps(ctx context.Context, id int) ([]*boardv1.RunStep, error) {
	d, err := b.db.RunDetail.Query().Where(rundetail.Run(id)).Only(ctx)
	switch {
	case err == nil:
		return decodeSteps(d.Steps)
	case !ent.IsNotFound(err):
		return nil, err
	}
	rows, err := b.db.RunStep.Query().Where(runstep.Run(id)).Order(ent.Asc(runstep.FieldSeq)).All(ctx)
	if err != nil {
		return nil, err
	}
	steps := make([]*boardv1.RunStep, len(rows))
	for i, st := range rows {
		steps[i] = runStepProto(st)
	}
	return steps, nil
}
