package triggers

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/symphonix/symphonix/flow"
	"github.com/symphonix/symphonix/secrets"
)

// MaxError is the most bytes of an occurrence's or a delivery's error kept
// and reported.
const MaxError = 1024

// Start is one run a trigger starts: what Options.Run is given.
type Start struct {
	// RunID names the run: the runtime names it, so a webhook can answer
	// with it before the run ends.
	RunID string
	// Trigger is the trigger that occurred.
	Trigger Trigger
	// Occurrence is what occurred, and At when.
	Occurrence Occurrence
	At         time.Time
	// Input is the flow's input, filled from the occurrence by the
	// trigger's mapping (MapInput).
	Input map[string]any
}

// Result is what a run a trigger started came to.
type Result struct {
	// Outputs are the run's outputs, for its delivery.
	Outputs map[string]any
}

// DeliveryState is where a triggered run's result stands.
type DeliveryState string

// The delivery states.
const (
	// DeliveryNone: the trigger delivers nothing.
	DeliveryNone DeliveryState = "none"
	// DeliveryPending: not yet sent, or being retried.
	DeliveryPending DeliveryState = "pending"
	// DeliveryDelivered: the endpoint took it.
	DeliveryDelivered DeliveryState = "delivered"
	// DeliveryFailed: every attempt failed; the run and the schedule are
	// unaffected.
	DeliveryFailed DeliveryState = "failed"
)

// Happened is one occurrence of a trigger and what came of it.
type Happened struct {
	// At is when it occurred: the schedule's instant, or when the request
	// came.
	At time.Time
	// RunID is the run it started; "" when it started none.
	RunID string
	// OK: the run finished without error.
	OK bool
	// Duration is from the occurrence to the run's end.
	Duration time.Duration
	// Error says why the run failed or nothing started, without secrets;
	// at most MaxError bytes.
	Error string
	// Delivery is where the result's delivery stands.
	Delivery Outcome
}

// Report is one trigger as the runtime runs it, for the board.
type Report struct {
	Trigger Trigger
	// Description is the schedule in words (Describe).
	Description string
	// Next is when the schedule next starts a run; zero when it cannot
	// tell, for a webhook, and while the trigger or the agent is paused.
	Next time.Time
	// Paused: an operator paused it on the board.
	Paused bool
	// Last is its latest occurrence; nil before the first.
	Last *Happened
}

// Options configure NewRuntime.
type Options struct {
	// Run is what invoking the flow means: it runs s.Input as a run named
	// s.RunID and returns when the run ends, with its outputs, or why it
	// failed. The runtime never builds a graph. Required.
	Run func(ctx context.Context, s Start) (Result, error)
	// Getenv finds webhook secrets and delivery URLs by the names the file
	// gives; nil is os.Getenv.
	Getenv func(string) string
	// AgentPaused reports whether the whole agent is paused: then no
	// schedule starts a run, no webhook starts one, and nothing missed
	// meanwhile is replayed. nil: never.
	AgentPaused func() bool
	// StatePath is the file the runtime keeps each schedule's last
	// occurrence in, so that CatchUp knows what it missed while the agent
	// was down; "" keeps none (and CatchUp replays nothing).
	StatePath string
	// OnDelivered hears how the delivery of run runID's result came out;
	// it must not block. nil: nobody.
	OnDelivered func(runID string, o Outcome)
	// OnChange hears that Reports changed (a next run time, an occurrence,
	// a delivery, a pause); it must not block.
	OnChange func()
	// Client posts deliveries; nil is a client with a 30 s timeout.
	Client *http.Client
	// DeliveryBackoff is the wait before a delivery's first retry,
	// doubled for each next, up to 32 times it; zero is 1 s.
	DeliveryBackoff time.Duration
	// Secrets are removed from errors before they are kept or reported;
	// nil removes the webhook secrets and delivery URLs the file names.
	Secrets *secrets.Set
	// Logger: nil discards.
	Logger *slog.Logger
}

// Runtime runs one trigger file's triggers: it arms the schedules (Run)
// and answers the webhooks (Handler), one run per occurrence, each
// trigger's overlapping occurrences by its Overlap policy. It is safe for
// concurrent use.
type Runtime struct {
	opts     Options
	log      *slog.Logger
	triggers []*armed
	byID     map[string]*armed
	secret   map[string][]byte // webhook secrets, by trigger id
	deliver  map[string]string // delivery URLs, by trigger id

	mu     sync.Mutex
	paused map[string]bool
	state  runState
	// changed is closed and replaced whenever a pause changes: the
	// schedules look again.
	changed chan struct{}
}

// armed is one trigger of a Runtime and where it stands.
type armed struct {
	t Trigger
	// slot is held by the run in flight; queued counts the occurrences
	// waiting for it.
	slot   chan struct{}
	queued int
	next   time.Time
	last   *Happened
}

// runState is what the state file keeps: each schedule's latest
// occurrence considered, fired or not.
type runState struct {
	Last map[string]time.Time `json:"last"`
}

// NewRuntime checks l's file with Problems, against fl, the flow the file
// names, when it is given (the mapping against its inputs), finds
// every webhook secret and delivery URL it names in the environment, and
// returns the runtime, armed by Run. A file Problems rejects is refused,
// naming every problem, and so is a secret or URL that is not set.
func NewRuntime(l *Loaded, fl *flow.Flow, opts Options) (*Runtime, error) {
	if l == nil {
		return nil, errors.New("triggers: NewRuntime: no trigger file")
	}
	if opts.Run == nil {
		return nil, errors.New("triggers: NewRuntime: Options.Run is required")
	}
	if ps := Problems(l.File, fl); len(ps) > 0 {
		lines := make([]string, len(ps))
		for i, p := range ps {
			lines[i] = p.String()
		}
		return nil, fmt.Errorf("%s: %s", l.Path, strings.Join(lines, "; "))
	}
	if opts.Getenv == nil {
		opts.Getenv = os.Getenv
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if opts.Client == nil {
		opts.Client = &http.Client{Timeout: 30 * time.Second}
	}
	if opts.DeliveryBackoff <= 0 {
		opts.DeliveryBackoff = time.Second
	}
	r := &Runtime{
		opts: opts, log: opts.Logger,
		byID: map[string]*armed{}, secret: map[string][]byte{}, deliver: map[string]string{},
		paused: map[string]bool{}, changed: make(chan struct{}),
		state: runState{Last: map[string]time.Time{}},
	}
	var named []string
	for i, t := range l.File.Triggers {
		if t.Kind == KindWebhook {
			t.Method = t.HTTPMethod()
		}
		if t.Kind == KindSchedule {
			t.TimeZone = t.Zone()
		}
		t.Overlap = t.OverlapPolicy()
		if t.Overlap == OverlapQueue {
			t.QueueLimit = t.QueueSize()
		}
		if t.Secret != "" {
			v := opts.Getenv(t.Secret)
			if v == "" {
				return nil, fmt.Errorf("%s: triggers[%d].secret: the environment variable %s is not set: a signed webhook cannot check a signature without it", l.Path, i, t.Secret)
			}
			r.secret[t.ID], named = []byte(v), append(named, v)
		}
		if t.Deliver != nil {
			v := opts.Getenv(t.Deliver.URLEnv)
			if v == "" {
				return nil, fmt.Errorf("%s: triggers[%d].deliver.urlEnv: the environment variable %s is not set: there is nowhere to deliver to", l.Path, i, t.Deliver.URLEnv)
			}
			r.deliver[t.ID], named = v, append(named, v)
		}
		a := &armed{t: t, slot: make(chan struct{}, 1)}
		r.triggers = append(r.triggers, a)
		r.byID[t.ID] = a
	}
	if r.opts.Secrets == nil {
		r.opts.Secrets = secrets.NewSet(named)
	}
	if opts.StatePath != "" {
		if err := r.readState(); err != nil {
			return nil, err
		}
	}
	for _, a := range r.triggers {
		if a.t.Kind == KindSchedule {
			a.next = r.nextAfter(a, time.Now())
		}
	}
	return r, nil
}

// Triggers are the file's triggers, with their defaults filled in.
func (r *Runtime) Triggers() []Trigger {
	out := make([]Trigger, len(r.triggers))
	for i, a := range r.triggers {
		out[i] = a.t
	}
	return out
}

// Webhooks reports whether the file has any webhook, so a listener is
// worth opening.
func (r *Runtime) Webhooks() bool {
	return slices.ContainsFunc(r.triggers, func(a *armed) bool { return a.t.Kind == KindWebhook })
}

// SetPaused makes the triggers named by ids the paused ones, as operators
// paused them on the board, and every other one not paused. A paused
// trigger starts nothing; what it missed is not replayed on resume. Ids
// the file does not have are ignored.
func (r *Runtime) SetPaused(ids []string) {
	r.mu.Lock()
	next := map[string]bool{}
	for _, id := range ids {
		if r.byID[id] != nil {
			next[id] = true
		}
	}
	same := maps.Equal(next, r.paused)
	r.paused = next
	if !same {
		close(r.changed)
		r.changed = make(chan struct{})
	}
	r.mu.Unlock()
	if !same {
		r.notify()
	}
}

// Reports are the triggers as they stand, in the file's order.
func (r *Runtime) Reports() []Report {
	agentPaused := r.agentPaused()
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make([]Report, len(r.triggers))
	for i, a := range r.triggers {
		rep := Report{Trigger: a.t, Paused: r.paused[a.t.ID]}
		if a.t.Kind == KindSchedule {
			rep.Description = Describe(a.t.Schedule)
			if !rep.Paused && !agentPaused {
				rep.Next = a.next
			}
		}
		if a.last != nil {
			h := *a.last
			rep.Last = &h
		}
		out[i] = rep
	}
	return out
}

// Run arms the schedules, and returns nil when ctx ends (a file without
// schedules too). A schedule with CatchUp first
// runs the latest occurrence it missed while the agent was down, once.
// The runs in flight when it returns go on: Options.Run is where a caller
// keeps count of them, to wait for them as it stops.
func (r *Runtime) Run(ctx context.Context) error {
	var wg sync.WaitGroup
	for _, a := range r.triggers {
		if a.t.Kind != KindSchedule {
			continue
		}
		wg.Go(func() { r.schedule(ctx, a) })
	}
	<-ctx.Done()
	wg.Wait()
	return nil
}

// schedule runs one schedule's occurrences until ctx ends.
func (r *Runtime) schedule(ctx context.Context, a *armed) {
	now := time.Now()
	if a.t.CatchUp {
		if missed := r.missed(a, now); !missed.IsZero() && !r.isPaused(a) {
			r.log.InfoContext(ctx, "trigger: catching up the latest occurrence missed while the agent was down", "trigger", a.t.ID, "at", missed)
			r.consider(a, missed)
			r.fireSchedule(ctx, a, missed)
		}
	}
	for {
		r.mu.Lock()
		changed := r.changed
		r.mu.Unlock()
		next := r.nextAfter(a, time.Now())
		r.setNext(a, next)
		if next.IsZero() {
			// It never comes round: nothing to arm.
			select {
			case <-ctx.Done():
				return
			case <-changed:
				continue
			}
		}
		t := time.NewTimer(time.Until(next))
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-changed:
			t.Stop()
			continue
		case <-t.C:
		}
		r.consider(a, next)
		if r.isPaused(a) {
			continue // not replayed on resume: the next one is
		}
		r.fireSchedule(ctx, a, next)
	}
}

// fireSchedule makes a schedule's occurrence at. It does not wait for the
// run: the next occurrence is armed at once, and meets the overlap policy.
func (r *Runtime) fireSchedule(ctx context.Context, a *armed, at time.Time) {
	go func() {
		_, _ = r.Occur(context.WithoutCancel(ctx), a.t.ID, OccurrenceOf(a.t), at)
	}()
}

// ErrSkipped: an occurrence started nothing because a run of its trigger
// was in flight (overlap "skip"), or its queue was full.
var ErrSkipped = errors.New("skipped: a run of this trigger is still going")

// ErrPaused: an occurrence started nothing because the trigger, or the
// agent, is paused.
var ErrPaused = errors.New("paused: it starts nothing until it is resumed")

// ErrNoTrigger: Occur was given an id the file does not have.
var ErrNoTrigger = errors.New("no such trigger")

// Occur makes one occurrence o of trigger id at instant at (now when
// zero): it starts one run, unless the trigger or the agent is paused
// (ErrPaused), a run of it is in flight and its overlap policy says skip
// or its queue is full (ErrSkipped), or the mapping fills an input with
// nothing (wrapping ErrFilledNothing); each is recorded as the trigger's
// latest occurrence, with no run. It returns when the run ends, with the
// run's id and its error, then delivers the result in the background when
// the trigger says so.
func (r *Runtime) Occur(ctx context.Context, id string, o Occurrence, at time.Time) (string, error) {
	return r.occur(ctx, id, o, at, flow.NewRunID())
}

// occur is Occur, the run it starts named runID.
func (r *Runtime) occur(ctx context.Context, id string, o Occurrence, at time.Time, runID string) (string, error) {
	a := r.byID[id]
	if a == nil {
		return "", fmt.Errorf("%w: %q", ErrNoTrigger, id)
	}
	if at.IsZero() {
		at = time.Now()
	}
	o.Trigger, o.Kind = a.t.ID, a.t.Kind
	if a.t.Kind == KindSchedule {
		o.TimeZone = a.t.TimeZone
	}
	if r.isPaused(a) {
		r.record(a, &Happened{At: at, Error: ErrPaused.Error(), Delivery: Outcome{State: DeliveryNone}})
		return "", ErrPaused
	}
	input, err := MapInput(a.t, o, at)
	if err != nil {
		r.record(a, &Happened{At: at, Error: r.safe(err.Error()), Delivery: Outcome{State: DeliveryNone}})
		return "", err
	}
	if !r.acquire(ctx, a) {
		r.record(a, &Happened{At: at, Error: ErrSkipped.Error(), Delivery: Outcome{State: DeliveryNone}})
		r.log.InfoContext(ctx, "trigger: occurrence skipped", "trigger", id, "at", at)
		return "", ErrSkipped
	}
	s := Start{RunID: runID, Trigger: a.t, Occurrence: o, At: at, Input: input}
	res, err := r.opts.Run(ctx, s)
	<-a.slot
	h := &Happened{At: at, RunID: s.RunID, OK: err == nil, Duration: time.Since(at), Delivery: Outcome{State: DeliveryNone}}
	if err != nil {
		h.Error = r.safe(err.Error())
	}
	url, delivers := r.deliver[id]
	if delivers && err == nil {
		h.Delivery = Outcome{State: DeliveryPending}
	}
	r.record(a, h)
	if delivers && err == nil {
		body := MapDeliveryBody(*a.t.Deliver, res.Outputs, o, at)
		go func() {
			out := Deliver(context.WithoutCancel(ctx), DeliverConfig{
				Client: r.opts.Client, URL: url, Attempts: a.t.Deliver.Tries(), Backoff: r.opts.DeliveryBackoff,
			}, body)
			out.Error = r.safe(out.Error)
			if out.State == DeliveryFailed {
				r.log.WarnContext(ctx, "trigger: the result was not delivered", "trigger", id, "run", s.RunID, "attempts", out.Attempts, "err", out.Error)
			}
			r.mu.Lock()
			if a.last != nil && a.last.RunID == s.RunID {
				a.last.Delivery = out
			}
			r.mu.Unlock()
			if r.opts.OnDelivered != nil {
				r.opts.OnDelivered(s.RunID, out)
			}
			r.notify()
		}()
	}
	return s.RunID, err
}

// acquire takes a's slot by its overlap policy: at once, or after the runs
// queued before it (up to QueueLimit waiting), or not at all.
func (r *Runtime) acquire(ctx context.Context, a *armed) bool {
	select {
	case a.slot <- struct{}{}:
		return true
	default:
	}
	if a.t.Overlap != OverlapQueue {
		return false
	}
	r.mu.Lock()
	if a.queued >= a.t.QueueLimit {
		r.mu.Unlock()
		return false
	}
	a.queued++
	r.mu.Unlock()
	defer func() {
		r.mu.Lock()
		a.queued--
		r.mu.Unlock()
	}()
	select {
	case a.slot <- struct{}{}:
		return true
	case <-ctx.Done():
		return false
	}
}

// record makes h a's latest occurrence.
func (r *Runtime) record(a *armed, h *Happened) {
	r.mu.Lock()
	a.last = h
	r.mu.Unlock()
	r.notify()
}

func (r *Runtime) setNext(a *armed, next time.Time) {
	r.mu.Lock()
	same := a.next.Equal(next)
	a.next = next
	r.mu.Unlock()
	if !same {
		r.notify()
	}
}

// nextAfter is a's next instant after t, or zero when it cannot tell.
func (r *Runtime) nextAfter(a *armed, t time.Time) time.Time {
	next, ok := NextRun(a.t.Schedule, a.t.TimeZone, t)
	if !ok {
		return time.Time{}
	}
	return next
}

// missed is the latest instant of a after the last one considered and no
// later than now: zero when none was missed, or none was ever considered
// (a schedule's first start replays nothing).
func (r *Runtime) missed(a *armed, now time.Time) time.Time {
	r.mu.Lock()
	last, ok := r.state.Last[a.t.ID]
	r.mu.Unlock()
	if !ok {
		return time.Time{}
	}
	prev, ok := PrevRun(a.t.Schedule, a.t.TimeZone, now)
	if !ok || !prev.After(last) {
		return time.Time{}
	}
	return prev
}

// consider records at as a's latest instant considered, fired or not, in
// the state file: what CatchUp counts from.
func (r *Runtime) consider(a *armed, at time.Time) {
	if r.opts.StatePath == "" {
		return
	}
	r.mu.Lock()
	r.state.Last[a.t.ID] = at
	data, err := json.MarshalIndent(r.state, "", "  ")
	r.mu.Unlock()
	if err == nil {
		err = writeAtomic(r.opts.StatePath, append(data, '\n'))
	}
	if err != nil {
		r.log.Warn("trigger: the state file was not written: a catch-up after a restart may miss this occurrence", "err", err)
	}
}

func (r *Runtime) readState() error {
	data, err := os.ReadFile(r.opts.StatePath)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err == nil {
		err = json.Unmarshal(data, &r.state)
	}
	if err != nil {
		return fmt.Errorf("%s: the trigger state cannot be read (delete it to start afresh; nothing missed is then caught up): %w", r.opts.StatePath, err)
	}
	if r.state.Last == nil {
		r.state.Last = map[string]time.Time{}
	}
	return nil
}

// writeAtomic writes data to path through a file beside it and a rename,
// so a reader never finds half of it.
func writeAtomic(path string, data []byte) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), ".trigger-state-*")
	if err != nil {
		return err
	}
	_, err = tmp.Write(data)
	if err == nil {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), path)
	}
	if err != nil {
		os.Remove(tmp.Name())
	}
	return err
}

func (r *Runtime) isPaused(a *armed) bool {
	if r.agentPaused() {
		return true
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.paused[a.t.ID]
}

func (r *Runtime) agentPaused() bool {
	return r.opts.AgentPaused != nil && r.opts.AgentPaused()
}

func (r *Runtime) notify() {
	if r.opts.OnChange != nil {
		r.opts.OnChange()
	}
}

// safe is s fit to leave the machine: without the secrets and URLs the
// file names, or anything that looks like one, and at most MaxError bytes.
func (r *Runtime) safe(s string) string {
	return r.opts.Secrets.SafeDetail(s)
}
