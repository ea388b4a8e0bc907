package board

import (
	"sync"
	"sync/atomic"
	"time"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/timestamppb"

	boardv1 "github.com/symphonix/symphonix/api/symphonix/board/v1"
)

// The live view's bounds (docs/limits.md, docs/runs.md).
const (
	// maxLiveRunsPerAgent is how many runs of one agent the live view
	// holds; one more pushes out the one it heard of least recently,
	// ended ones first.
	maxLiveRunsPerAgent = 16
	// maxLiveSteps is how many steps of one run the live view holds: the
	// first ones, as a summary keeps them.
	maxLiveSteps = maxRunSteps
)

// Why a run event was dropped or only partly taken, as RunEventProblems
// counts them.
const (
	problemCapability = "capability" // from an agent that did not announce live-runs
	problemRate       = "rate"       // past the link's rate
	problemInvalid    = "invalid"    // a field out of bounds
	problemUnknownRun = "unknown_run"
	problemOld        = "out_of_order" // a seq seen already, or lower
	problemGap        = "gap"          // a seq past the next one: some were lost
	problemEnded      = "after_end"    // for a run that has ended
	problemTruncated  = "truncated"    // a step past the 1,000 the live view holds
)

var runProblems = []string{problemCapability, problemRate, problemInvalid, problemUnknownRun, problemOld, problemGap, problemEnded, problemTruncated}

// runCounts counts run events dropped or only partly taken, by reason.
type runCounts struct {
	n [8]atomic.Int64
	// logged is what the last log line said (the board's loop only).
	logged   [8]int64
	loggedAt time.Time
}

func (c *runCounts) add(reason string) {
	for i, r := range runProblems {
		if r == reason {
			c.n[i].Add(1)
			return
		}
	}
}

func (c *runCounts) snapshot() map[string]int64 {
	out := make(map[string]int64, len(runProblems))
	for i, r := range runProblems {
		out[r] = c.n[i].Load()
	}
	return out
}

// RunEventProblems counts, since the board started, the run events it
// dropped or only partly took, by reason: capability, rate, invalid,
// unknown_run, out_of_order, gap, after_end, truncated (docs/runs.md).
func (b *Board) RunEventProblems() map[string]int64 { return b.runCounts.snapshot() }

// logRunProblems logs the counts when one moved since the last line, at
// most once a minute. The board's loop calls it.
func (b *Board) logRunProblems(now time.Time) {
	c := &b.runCounts
	if now.Sub(c.loggedAt) < time.Minute {
		return
	}
	moved := false
	attrs := make([]any, 0, 2*len(runProblems))
	for i, r := range runProblems {
		n := c.n[i].Load()
		if n != c.logged[i] {
			moved = true
		}
		c.logged[i] = n
		attrs = append(attrs, r, n)
	}
	if !moved {
		return
	}
	c.loggedAt = now
	b.log.Warn("run events dropped or cut since the board started", attrs...)
}

// liveRuns is what the board knows of each agent's runs as they go, from
// their run events, in memory only: the live view. Steps are never
// written one by one; a run's summary, when it pauses or ends, is what is
// stored. It is bounded (maxLiveRunsPerAgent, maxLiveSteps).
type liveRuns struct {
	mu     sync.Mutex
	agents map[string]map[string]*liveRun
	clock  uint64 // orders the runs by when they were last heard of
}

// liveRun is one run in the live view.
type liveRun struct {
	run   *boardv1.Run // without steps; its agent set
	steps []*boardv1.RunStep
	at    map[int32]int // step seq → index in steps
	seq   uint32        // the last event's seq
	ended bool          // its summary said it ended: it is kept only to drop late events
	heard uint64
}

// applied is what one event did to the live view: what to tell watchers,
// and what to write.
type applied struct {
	kind  boardv1.RunEventKind // unspecified: nothing to tell
	run   *boardv1.Run         // a copy, without steps
	step  *boardv1.RunStep
	write bool // the run's row changes: created, paused or resumed
	seen  bool // the event was taken: not dropped as old or after the end
}

// apply takes one valid event of agent's run, counting what was wrong
// with it. The copies it returns are made only when they are needed: for
// watchers when anybody watches, for the store when the row changes.
// watching is asked under the view's lock: a watcher that subscribes
// after it said no reads its snapshot after this event is in the view.
func (v *liveRuns) apply(agentName string, e *boardv1.RunEvent, now time.Time, watching func() bool, count func(string)) applied {
	v.mu.Lock()
	defer v.mu.Unlock()
	watched := watching()
	if v.agents == nil {
		v.agents = make(map[string]map[string]*liveRun)
	}
	runs := v.agents[agentName]
	if runs == nil {
		runs = make(map[string]*liveRun)
		v.agents[agentName] = runs
	}
	at := now
	if t := e.GetTime(); t != nil {
		at = t.AsTime()
	}
	id := e.GetRunId()
	lr := runs[id]
	created := false
	switch {
	case lr == nil:
		if e.GetStart() == nil {
			// The board restarted mid-run, or the start was lost: the run
			// is taken as running from what this event says.
			count(problemUnknownRun)
		}
		lr = &liveRun{run: &boardv1.Run{Id: id, Agent: agentName, State: boardv1.RunState_RUN_STATE_RUNNING,
			StartTime: timestamppb.New(at)}, at: map[int32]int{}}
		v.make(runs, id, lr)
		created = true
	case lr.ended:
		count(problemEnded)
		return applied{}
	case e.GetSeq() <= lr.seq:
		count(problemOld)
		return applied{}
	case e.GetSeq() > lr.seq+1:
		count(problemGap)
	}
	v.clock++
	lr.heard = v.clock
	lr.seq = e.GetSeq()
	out := applied{write: created, seen: true}
	switch k := e.GetKind().(type) {
	case *boardv1.RunEvent_Start:
		s := k.Start
		lr.run.Thread, lr.run.StartedBy, lr.run.StartedByWho, lr.run.Build = s.GetThread(), s.GetStartedBy(), s.GetStartedByWho(), s.GetBuild()
		lr.run.StartTime = timestamppb.New(at)
		lr.run.Trigger = s.GetTrigger()
		lr.run.Delegation = s.GetDelegation()
		out.kind, out.write = boardv1.RunEventKind_RUN_EVENT_KIND_STARTED, true
	case *boardv1.RunEvent_Step:
		out.kind = boardv1.RunEventKind_RUN_EVENT_KIND_STEP
		if watched {
			out.step = proto.CloneOf(k.Step)
		}
		lr.step(k.Step, count)
	case *boardv1.RunEvent_Pause:
		p := k.Pause
		lr.run.State, lr.run.Pause, lr.run.PausedAt, lr.run.ApprovalId = boardv1.RunState_RUN_STATE_PAUSED, p.GetKind(), p.GetNode(), p.GetApprovalId()
		out.kind, out.write = boardv1.RunEventKind_RUN_EVENT_KIND_PAUSED, true
	case *boardv1.RunEvent_Resume:
		lr.run.State, lr.run.Pause, lr.run.PausedAt, lr.run.ApprovalId = boardv1.RunState_RUN_STATE_RUNNING, 0, "", ""
		out.kind, out.write = boardv1.RunEventKind_RUN_EVENT_KIND_RESUMED, true
	}
	if watched || out.write {
		out.run = proto.CloneOf(lr.run)
	}
	return out
}

// make adds lr to runs, pushing out the run heard of least recently when
// runs is full: an ended one first.
func (v *liveRuns) make(runs map[string]*liveRun, id string, lr *liveRun) {
	if len(runs) >= maxLiveRunsPerAgent {
		var oldest string
		var oldestEnded bool
		var heard uint64
		for k, r := range runs {
			switch {
			case oldest == "",
				r.ended && !oldestEnded,
				r.ended == oldestEnded && r.heard < heard:
				oldest, oldestEnded, heard = k, r.ended, r.heard
			}
		}
		delete(runs, oldest)
	}
	runs[id] = lr
}

// step keeps a step entered or finished: by its seq, the first
// maxLiveSteps of the run.
func (lr *liveRun) step(st *boardv1.RunStep, count func(string)) {
	seq := st.GetSeq()
	if seq > lr.run.StepCount {
		lr.run.StepCount = seq
	}
	if t := st.GetTokens(); t != nil && st.GetOutcome() != boardv1.StepOutcome_STEP_OUTCOME_UNSPECIFIED {
		var was *boardv1.Tokens
		if i, ok := lr.at[seq]; ok {
			was = lr.steps[i].GetTokens()
		}
		if lr.run.Tokens == nil {
			lr.run.Tokens = &boardv1.Tokens{}
		}
		lr.run.Tokens.Input += t.GetInput() - was.GetInput()
		lr.run.Tokens.Output += t.GetOutput() - was.GetOutput()
		lr.run.Tokens.Cached += t.GetCached() - was.GetCached()
		lr.run.Tokens.Total += t.GetTotal() - was.GetTotal()
	}
	if i, ok := lr.at[seq]; ok {
		lr.steps[i] = st
		return
	}
	if len(lr.steps) >= maxLiveSteps {
		lr.run.StepsTruncated = true
		count(problemTruncated)
		return
	}
	lr.at[seq] = len(lr.steps)
	lr.steps = append(lr.steps, st)
}

// summarised takes what a stored summary (or the stored row) says of a
// run: the live view follows it, and an ended run keeps no steps. It
// returns the event watchers are to hear of, if any: paused when the live
// view did not say so already, or did without the approval the summary
// names; ended when the run ended.
func (v *liveRuns) summarised(r *boardv1.Run, seq uint32) boardv1.RunEventKind {
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.agents == nil {
		v.agents = make(map[string]map[string]*liveRun)
	}
	runs := v.agents[r.GetAgent()]
	if runs == nil {
		runs = make(map[string]*liveRun)
		v.agents[r.GetAgent()] = runs
	}
	lr := runs[r.GetId()]
	if lr == nil {
		lr = &liveRun{at: map[int32]int{}}
		v.make(runs, r.GetId(), lr)
	}
	if lr.ended {
		return boardv1.RunEventKind_RUN_EVENT_KIND_UNSPECIFIED
	}
	wasPaused := lr.run.GetState() == boardv1.RunState_RUN_STATE_PAUSED
	hadApproval := lr.run.GetApprovalId()
	v.clock++
	lr.heard = v.clock
	lr.seq = max(lr.seq, seq)
	lr.run = proto.CloneOf(r)
	lr.run.Steps = nil
	switch {
	case ended(r.GetState()):
		lr.ended, lr.steps, lr.at = true, nil, nil
		return boardv1.RunEventKind_RUN_EVENT_KIND_ENDED
	case r.GetState() == boardv1.RunState_RUN_STATE_PAUSED && (!wasPaused || r.GetApprovalId() != hadApproval):
		// Paused, or paused still and now naming the approval it waits on
		// (the agent learns its id only once the board has answered the
		// raise): watchers are told again, with the approval.
		return boardv1.RunEventKind_RUN_EVENT_KIND_PAUSED
	}
	return boardv1.RunEventKind_RUN_EVENT_KIND_UNSPECIFIED
}

// get is a copy of the live view of one run, with its steps; nil when it
// holds none, or only that it ended.
func (v *liveRuns) get(agentName, id string) *boardv1.Run {
	v.mu.Lock()
	defer v.mu.Unlock()
	lr := v.agents[agentName][id]
	if lr == nil || lr.ended {
		return nil
	}
	r := proto.CloneOf(lr.run)
	r.Steps = make([]*boardv1.RunStep, len(lr.steps))
	for i, st := range lr.steps {
		r.Steps[i] = proto.CloneOf(st)
	}
	return r
}

// current is a copy of every run the live view holds that has not ended,
// without steps: agentName's only when it is given, and only run when it
// is given.
func (v *liveRuns) current(agentName, run string) []*boardv1.Run {
	v.mu.Lock()
	defer v.mu.Unlock()
	var out []*boardv1.Run
	for a, runs := range v.agents {
		if agentName != "" && a != agentName {
			continue
		}
		for id, lr := range runs {
			if lr.ended || (run != "" && id != run) {
				continue
			}
			out = append(out, proto.CloneOf(lr.run))
		}
	}
	return out
}

// peek is a copy of the live view of one run, without steps; nil when it
// holds none, or only that it ended.
func (v *liveRuns) peek(agentName, id string) *boardv1.Run {
	v.mu.Lock()
	defer v.mu.Unlock()
	lr := v.agents[agentName][id]
	if lr == nil || lr.ended {
		return nil
	}
	return proto.CloneOf(lr.run)
}
