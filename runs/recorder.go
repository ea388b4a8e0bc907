package runs

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"sync"
	"time"

	"github.com/symphonix/symphonix/flow"
	"github.com/symphonix/symphonix/secrets"
)

// Config configures NewRecorder.
type Config struct {
	// Build is the flow's build, "sha256:…", for every record.
	Build string
	// Outputs are the flow's declared outputs: what a finished run's
	// Output holds (with DetailFull), and what makes it withheld
	// otherwise. None: a run has no output.
	Outputs []string
	// Detail: DetailMetadata (the default) or DetailFull.
	Detail Detail
	// Secrets are removed from a run's input and output with DetailFull:
	// the agent's named secrets (secrets.Named), as its journal removes
	// them.
	Secrets []string
	// SecretSet: when not nil, used instead of Secrets, and followed as it
	// grows (secrets.Set.Add).
	SecretSet *secrets.Set
	// Safe makes an error fit to leave the machine (secrets.Set's
	// SafeDetail); nil is a Set of Secrets.
	Safe *secrets.Set
	// Outbox keeps the summaries until the board stores them; nil keeps
	// none.
	Outbox *Outbox
	// OnEvent hears each live event, in order for each run; it must not
	// block. nil: none.
	OnEvent func(Event)
	// OnSummary hears that a summary was put in the outbox; it must not
	// block. nil: none.
	OnSummary func()
	// OnError hears what could not be kept (the outbox's file); nil:
	// nothing is said.
	OnError func(error)
}

// Recorder keeps the record of every run of a graph it watches (Watch is
// its flow.Watcher; WrapModel counts the tokens). A run's record lives
// while it runs or waits; its summaries go to the outbox. Safe for
// concurrent use.
type Recorder struct {
	cfg     Config
	secrets *secrets.Set

	mu   sync.Mutex
	runs map[string]*record
	// delivering are ended runs whose trigger's delivery is pending, for
	// Delivered: at most MaxDelivering, the oldest forgotten first.
	delivering      map[string]*record
	deliveringOrder []string
}

// MaxDelivering is how many ended runs a Recorder remembers while their
// results are being delivered; past it the oldest is forgotten, and its
// record says pending.
const MaxDelivering = 256

// record is one run as it stands, and its next seq.
type record struct {
	run  Run
	seq  uint32
	open map[stepKey]int // the steps in flight, by node and copy: index in run.Steps
}

type stepKey struct {
	node string
	copy int
}

// NewRecorder checks cfg and returns a Recorder, with the records of the
// runs that were paused when the agent last stopped taken back from the
// outbox, so their seq goes on.
func NewRecorder(cfg Config) (*Recorder, error) {
	if _, err := ParseDetail(string(cfg.Detail)); err != nil {
		return nil, err
	}
	set := cfg.SecretSet
	if set == nil {
		set = secrets.NewSet(cfg.Secrets)
	}
	r := &Recorder{cfg: cfg, secrets: set, runs: map[string]*record{}, delivering: map[string]*record{}}
	if cfg.Safe == nil {
		r.cfg.Safe = r.secrets
	}
	if cfg.Outbox != nil {
		for _, s := range cfg.Outbox.paused() {
			r.runs[s.Run.ID] = &record{run: s.Run, seq: s.Seq, open: map[stepKey]int{}}
		}
	}
	return r, nil
}

// Detail is how much the recorder sends.
func (r *Recorder) Detail() Detail { return r.cfg.Detail }

// Watch is the flow.Watcher: give it to BuildOptions.Watch.
func (r *Recorder) Watch(ctx context.Context, e flow.Event) {
	var (
		ev     *Event
		failed *Event
		sum    *Summary
	)
	r.mu.Lock()
	switch e.Kind {
	case flow.EventRunStarted:
		by, who := startedBy(ctx)
		rec := &record{open: map[stepKey]int{}, run: Run{
			ID: e.Run, Thread: e.Thread, StartedBy: by, StartedByWho: clip(who, MaxWho), Build: r.cfg.Build,
			State: StateRunning, Start: e.At, Trigger: triggerOf(ctx),
		}}
		if d := delegationOf(e.Delegation); d != nil {
			rec.run.StartedBy, rec.run.StartedByWho, rec.run.Delegation = ByDelegation, "", d
		}
		if len(e.Input) > 0 {
			rec.run.Input = r.payload(e.Input, "input", &rec.run.Withheld)
		}
		r.runs[e.Run] = rec
		ev = rec.event(e.At, EventStart)
		ev.Thread, ev.StartedBy, ev.StartedByWho, ev.Build = rec.run.Thread, rec.run.StartedBy, rec.run.StartedByWho, rec.run.Build
		ev.Trigger, ev.Delegation = rec.run.Trigger, rec.run.Delegation
	case flow.EventRunResumed:
		rec := r.runs[e.Run]
		if rec == nil {
			// Paused before a restart, and its record was not kept: what
			// is known now.
			by, who := startedBy(ctx)
			rec = &record{open: map[stepKey]int{}, run: Run{ID: e.Run, Thread: e.Thread, StartedBy: by,
				StartedByWho: clip(who, MaxWho), Build: r.cfg.Build, Start: e.At}}
			if d := delegationOf(e.Delegation); d != nil {
				rec.run.StartedBy, rec.run.StartedByWho, rec.run.Delegation = ByDelegation, "", d
			}
			r.runs[e.Run] = rec
		}
		rec.run.State = StateRunning
		rec.run.Pause, rec.run.PausedAt, rec.run.ApprovalID = "", "", ""
		ev = rec.event(e.At, EventResume)
	case flow.EventNodeEntered:
		if rec := r.runs[e.Run]; rec != nil {
			st := Step{Seq: rec.run.StepCount + 1, Node: e.Node, Kind: string(e.NodeKind), Copy: e.Copy, Start: e.At}
			rec.run.StepCount++
			if len(rec.run.Steps) < MaxSteps {
				rec.run.Steps = append(rec.run.Steps, st)
				rec.open[stepKey{e.Node, e.Copy}] = len(rec.run.Steps) - 1
			} else {
				rec.run.StepsTruncated = true
			}
			ev = rec.event(e.At, EventStep)
			ev.Step = st
		}
	case flow.EventNodeFinished:
		if rec := r.runs[e.Run]; rec != nil {
			k := stepKey{e.Node, e.Copy}
			st := Step{Node: e.Node, Kind: string(e.NodeKind), Copy: e.Copy}
			i, ok := rec.open[k]
			if ok {
				delete(rec.open, k)
				st = rec.run.Steps[i]
			}
			st.Duration, st.Outcome = e.Duration, e.Outcome
			if e.Err != nil {
				st.Error = r.safe(e.Err)
			}
			if e.Outcome == flow.OutcomePaused {
				st.Pause = PauseApproval
				if e.NodeKind == flow.KindAsk || (e.Pending != nil && e.Pending.Kind == flow.PendingAsk) {
					st.Pause = PauseAsk // an ask node, or an agent node whose child asks
				}
			}
			if ok {
				rec.run.Steps[i] = st
			}
			ev = rec.event(e.At, EventStep)
			ev.Step = st
			var de flow.DelegateError
			if e.NodeKind == flow.KindAgent && errors.As(e.Err, &de) {
				failed = rec.event(e.At, EventDelegationFailed)
				failed.Failure = r.failure(e.Node, de, e.At)
				if len(rec.run.Failures) < MaxFailures {
					rec.run.Failures = append(rec.run.Failures, *failed.Failure)
				}
			}
		}
	case flow.EventRunPaused:
		if rec := r.runs[e.Run]; rec != nil {
			rec.run.State = StatePaused
			rec.run.Duration += e.Duration
			rec.run.PausedAt = e.Node
			rec.run.Pause = PauseAsk
			if e.Pending != nil && e.Pending.Kind == flow.PendingApproval {
				rec.run.Pause = PauseApproval
			}
			ev = rec.event(e.At, EventPause)
			ev.Pause, ev.Node = rec.run.Pause, rec.run.PausedAt
			sum = rec.summary()
		}
	case flow.EventRunFinished, flow.EventRunFailed, flow.EventRunStopped:
		if rec := r.runs[e.Run]; rec != nil {
			delete(r.runs, e.Run)
			rec.run.State = StateFinished
			switch e.Kind {
			case flow.EventRunFailed:
				rec.run.State = StateFailed
			case flow.EventRunStopped:
				rec.run.State = StateStopped
			}
			rec.run.End = e.At
			rec.run.Duration += e.Duration
			if e.Err != nil {
				rec.run.Error = r.safe(e.Err)
			}
			if e.Kind == flow.EventRunFinished {
				if out := outputsOf(e.State, r.cfg.Outputs); len(out) > 0 {
					rec.run.Output = r.payload(out, "output", &rec.run.Withheld)
				}
				if t := rec.run.Trigger; t != nil && t.Delivery == DeliveryPending {
					r.remember(e.Run, rec)
				}
			}
			sum = rec.summary()
		}
	}
	if ev != nil && r.cfg.OnEvent != nil {
		r.cfg.OnEvent(*ev) // under the lock: a run's events in order
	}
	if failed != nil && r.cfg.OnEvent != nil {
		r.cfg.OnEvent(*failed)
	}
	r.mu.Unlock()
	if sum != nil {
		r.keep(*sum)
	}
}

// event takes the run's next seq for an event of kind.
func (rec *record) event(at time.Time, kind string) *Event {
	rec.seq++
	return &Event{Run: rec.run.ID, Seq: rec.seq, At: at, Kind: kind}
}

// summary takes the run's next seq for a summary of it as it stands.
func (rec *record) summary() *Summary {
	rec.seq++
	return &Summary{Run: rec.run.clone(), Seq: rec.seq}
}

// keep puts s in the outbox.
func (r *Recorder) keep(s Summary) {
	if r.cfg.Outbox == nil {
		return
	}
	if err := r.cfg.Outbox.Add(s); err != nil && r.cfg.OnError != nil {
		r.cfg.OnError(err)
	}
	if r.cfg.OnSummary != nil {
		r.cfg.OnSummary()
	}
}

// Stopped records that the paused run id was ended without an answer
// (governed's Cancel: the run is not taking steps, so no Watcher hears
// it), with why: its summary, state stopped, goes to the outbox. It
// reports whether the recorder knew the run.
func (r *Recorder) Stopped(id, why string, at time.Time) bool {
	r.mu.Lock()
	rec := r.runs[id]
	if rec == nil || rec.run.State != StatePaused {
		r.mu.Unlock()
		return false
	}
	delete(r.runs, id)
	rec.run.State, rec.run.End = StateStopped, at
	rec.run.Error = r.safe(errors.New(why))
	sum := rec.summary()
	r.mu.Unlock()
	r.keep(*sum)
	return true
}

// Raised records the approval the paused run id waits on, once the board
// has answered its raise: the run's summary, paused and naming the
// approval (Run.ApprovalID), goes to the outbox in the place of the one
// the pause put there. It reports whether the record changed: false for a
// run that is not paused here, or already names approvalID.
func (r *Recorder) Raised(id, approvalID string) bool {
	r.mu.Lock()
	rec := r.runs[id]
	if rec == nil || rec.run.State != StatePaused || approvalID == "" || rec.run.ApprovalID == approvalID {
		r.mu.Unlock()
		return false
	}
	rec.run.ApprovalID = approvalID
	sum := rec.summary()
	r.mu.Unlock()
	r.keep(*sum)
	return true
}

// Get returns the record of run id while it runs or waits.
func (r *Recorder) Get(id string) (Run, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	rec := r.runs[id]
	if rec == nil {
		return Run{}, false
	}
	return rec.run.clone(), true
}

// Active returns the ids of the runs running or paused now, in no order.
func (r *Recorder) Active() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	ids := make([]string, 0, len(r.runs))
	for id := range r.runs {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	return ids
}

// safe is err's text fit to leave the machine: without the secrets, the
// shapes of credentials, at most MaxError bytes.
func (r *Recorder) safe(err error) string {
	return clip(r.cfg.Safe.SafeDetail(err.Error()), MaxError)
}

// payload is v as the board may see it: with DetailFull, a plain JSON
// copy without the named secrets, when it is at most MaxPayload bytes;
// otherwise nil, and what is named in withheld.
func (r *Recorder) payload(v map[string]any, what string, withheld *[]string) map[string]any {
	if r.cfg.Detail != DetailFull {
		*withheld = append(*withheld, what)
		return nil
	}
	clean, _ := r.secrets.WithoutValue(v).(map[string]any)
	b, err := json.Marshal(clean)
	if err != nil || len(b) > MaxPayload {
		*withheld = append(*withheld, what)
		return nil
	}
	var out map[string]any
	if json.Unmarshal(b, &out) != nil {
		*withheld = append(*withheld, what)
		return nil
	}
	return out
}

// outputsOf is the declared outputs of state that hold a value.
func outputsOf(state flow.State, outputs []string) map[string]any {
	out := map[string]any{}
	for _, name := range outputs {
		if v, ok := state[name]; ok && v != nil {
			out[name] = v
		}
	}
	return out
}

// clip cuts s to at most max bytes at a character's edge, as valid UTF-8.
func clip(s string, max int) string {
	b := []rune{}
	n := 0
	for _, c := range s {
		l := len(string(c))
		if n+l > max {
			break
		}
		b = append(b, c)
		n += l
	}
	return string(b)
}

// The delivery states of a run's trigger (Trigger.Delivery).
const (
	DeliveryNone      = "none"
	DeliveryPending   = "pending"
	DeliveryDelivered = "delivered"
	DeliveryFailed    = "failed"
)

// remember keeps the ended run id's record until its delivery is done.
// Called with r.mu held.
func (r *Recorder) remember(id string, rec *record) {
	if len(r.deliveringOrder) >= MaxDelivering {
		delete(r.delivering, r.deliveringOrder[0])
		r.deliveringOrder = r.deliveringOrder[1:]
	}
	r.delivering[id] = rec
	r.deliveringOrder = append(r.deliveringOrder, id)
}

// Delivered records how the delivery of the ended run id's result came
// out — state DeliveryDelivered or DeliveryFailed, after attempts posts —
// and puts a summary saying so in the outbox, so the board shows it with
// the run. It reports whether the recorder knew the run as delivering.
func (r *Recorder) Delivered(id, state string, attempts int) bool {
	r.mu.Lock()
	rec := r.delivering[id]
	var sum *Summary
	if rec != nil {
		delete(r.delivering, id)
		if i := slices.Index(r.deliveringOrder, id); i >= 0 {
			r.deliveringOrder = slices.Delete(r.deliveringOrder, i, i+1)
		}
		t := *rec.run.Trigger
		t.Delivery, t.DeliveryAttempts = state, attempts
		rec.run.Trigger = &t
		sum = rec.summary()
	}
	r.mu.Unlock()
	if sum != nil {
		r.keep(*sum)
	}
	return sum != nil
}

// delegationOf is the engine's delegation as a record keeps it, bounded:
// names and ids at most MaxName bytes, the chain's latest MaxChain names.
func delegationOf(d *flow.Delegation) *Delegation {
	if d == nil {
		return nil
	}
	return &Delegation{ParentRun: clip(d.ParentRun, MaxName), ParentNode: clip(d.ParentNode, MaxName),
		Invocation: clip(d.Invocation, MaxName), Agent: clip(d.Agent, MaxName), Chain: chainOf(d.Chain)}
}

// chainOf is a chain bounded: its latest MaxChain names, each at most
// MaxName bytes.
func chainOf(chain []string) []string {
	if len(chain) > MaxChain {
		chain = chain[len(chain)-MaxChain:]
	}
	out := make([]string, len(chain))
	for i, c := range chain {
		out[i] = clip(c, MaxName)
	}
	return out
}

// failure is the delegation an agent node did not get, fit to leave the
// machine: its message without secrets, at most MaxError bytes.
func (r *Recorder) failure(node string, de flow.DelegateError, at time.Time) *DelegationFailure {
	f := de.DelegateFailure()
	return &DelegationFailure{Node: clip(node, MaxName), Target: clip(f.Target, MaxName), Code: f.Code,
		Message: r.safe(de), Chain: chainOf(f.Chain), Invocation: clip(f.Invocation, MaxName), At: at}
}
