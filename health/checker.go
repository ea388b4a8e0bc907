package health

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// MaxChecks is the most checks one Checker holds: the agent's own (each MCP
// server, the model, the waiting store) and up to MaxFileChecks from its
// health.json.
const MaxChecks = 128

// errNoAnswer is the cause of a round's context ending at its Timeout.
var errNoAnswer = errors.New("health: no answer within the round's timeout")

// Checker runs named checks in rounds. Its methods may be called from any
// goroutine; rounds never overlap.
type Checker struct {
	opts Options

	mu     sync.Mutex // guards checks
	checks []*check   // sorted by name

	turn chan struct{} // holds a token for the whole of a round
}

// check is one registered check.
type check struct {
	name    string
	fn      func(context.Context) error
	running atomic.Bool // a call has started and not returned
}

// result is one check's answer, sent by its goroutine.
type result struct {
	i      int
	status Status // OK, Error or Unknown, as the check said
	text   string // its error's text
	dur    time.Duration
}

// New returns a Checker with no checks, or an error naming the option that
// is out of bounds.
func New(o Options) (*Checker, error) {
	o, err := o.settled()
	if err != nil {
		return nil, err
	}
	return &Checker{opts: o, turn: make(chan struct{}, 1)}, nil
}

// Register adds a check under name, from the next round on. A name is 1 to
// MaxNameBytes bytes of printable UTF-8, not starting or ending with a
// space, and not a name already registered; a Checker holds at most
// MaxChecks checks.
//
// The check is called with a context that ends at the round's Timeout. It
// returns nil when all is well, an error made by [Unknownf] (or wrapping an
// [*UnknownError]) when it cannot tell, and any other error when it failed;
// the error's text is the line's detail.
func (c *Checker) Register(name string, fn func(context.Context) error) error {
	if err := checkName(name); err != nil {
		return fmt.Errorf("health: check name %s: %w", quote(name), err)
	}
	if fn == nil {
		return fmt.Errorf("health: check %s: the check is nil", quote(name))
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	i, found := slices.BinarySearchFunc(c.checks, name, func(k *check, name string) int { return strings.Compare(k.name, name) })
	if found {
		return fmt.Errorf("health: check name %s: registered already", quote(name))
	}
	if len(c.checks) >= MaxChecks {
		return fmt.Errorf("health: check %s: %d checks registered already, the most a Checker holds", quote(name), MaxChecks)
	}
	c.checks = slices.Insert(c.checks, i, &check{name: name, fn: fn})
	return nil
}

// Round runs every registered check now, all at once, and returns their
// lines. It returns when every check has answered, or at the Timeout: a
// check that has not answered by then is an Error line ("no answer within
// 5s"), its context is cancelled, and its goroutine is not waited for. A
// check whose call from an earlier round has not returned yet is not called
// again: its line is an Error, "still running from the last round".
//
// When ctx ends first, Round returns at once, the checks that had not
// answered Unknown. Rounds never overlap: a Round called during another
// waits for it to end (or for ctx to end: then every line is Unknown).
func (c *Checker) Round(ctx context.Context) Round {
	start := time.Now()
	select {
	case c.turn <- struct{}{}:
		defer func() { <-c.turn }()
	case <-ctx.Done():
		c.mu.Lock()
		r := Round{Start: start, Lines: make([]Line, len(c.checks))}
		for i, k := range c.checks {
			r.Lines[i] = Line{Name: k.name, Status: Unknown, Detail: c.detail(cancelled)}
		}
		c.mu.Unlock()
		r.Status = rollUp(r.Lines)
		return r
	}
	c.mu.Lock()
	checks := slices.Clone(c.checks)
	c.mu.Unlock()

	start = time.Now()
	r := Round{Start: start, Lines: make([]Line, len(checks))}
	ctx, cancel := context.WithTimeoutCause(ctx, c.opts.Timeout, errNoAnswer)
	defer cancel()
	// Buffered for every check, so that one answering after the round has
	// returned never blocks: its answer is left here, unread.
	results := make(chan result, len(checks))
	pending := 0
	for i, k := range checks {
		r.Lines[i].Name = k.name
		if !k.running.CompareAndSwap(false, true) {
			r.Lines[i].Status, r.Lines[i].Detail = Error, c.detail("still running from the last round")
			continue
		}
		pending++
		go k.call(ctx, i, results)
	}
wait:
	for ; pending > 0; pending-- {
		select {
		case res := <-results:
			r.Lines[res.i] = c.line(ctx, r.Lines[res.i].Name, res)
		case <-ctx.Done():
			c.unanswered(ctx, r.Lines, start)
			break wait
		}
	}
	r.Status = rollUp(r.Lines)
	return r
}

// call runs the check on its own goroutine and sends its answer: what the
// error it returned says, or that it panicked or ended its goroutine.
func (k *check) call(ctx context.Context, i int, results chan<- result) {
	start := time.Now()
	err := errors.New("the check ended its goroutine without returning")
	defer func() {
		if v := recover(); v != nil {
			err = fmt.Errorf("panic: %v", v)
		}
		res := result{i: i, dur: time.Since(start)}
		res.status, res.text = classify(err)
		k.running.Store(false)
		results <- res
	}()
	err = k.fn(ctx)
}

// classify is what err says about a check, and its text. It runs on the
// check's goroutine, guarded: an error whose Error method panics (a nil
// pointer of an error type, say) is a failed check, not a stopped agent.
func classify(err error) (status Status, text string) {
	if err == nil {
		return OK, ""
	}
	defer func() {
		if v := recover(); v != nil {
			status, text = Error, fmt.Sprintf("panic: %v", v)
		}
	}()
	if errors.As(err, new(*UnknownError)) {
		return Unknown, err.Error()
	}
	return Error, err.Error()
}

// line is the line of a check that answered res within the round.
func (c *Checker) line(ctx context.Context, name string, res result) Line {
	l := Line{Name: name, Status: res.status, Duration: res.dur}
	switch {
	case res.status == OK:
	case ctx.Err() != nil && errors.Is(context.Cause(ctx), errNoAnswer):
		// It gave up because its context ended at the Timeout: it did not
		// answer in time, whatever it says.
		l.Status, l.Detail = Error, c.detail(c.noAnswer())
	case ctx.Err() != nil:
		l.Status, l.Detail = Unknown, c.detail(cancelled)
	default:
		l.Detail = c.detail(res.text)
	}
	return l
}

// cancelled is the detail of a check that had not answered when the
// round's context ended before its Timeout.
const cancelled = "the round was cancelled before the check answered"

// unanswered fills in the lines of the checks that had not answered when
// the round's context ended: at the Timeout, errors; before it, unknown.
func (c *Checker) unanswered(ctx context.Context, lines []Line, start time.Time) {
	timedOut := errors.Is(context.Cause(ctx), errNoAnswer)
	for i := range lines {
		l := &lines[i]
		if l.Status != "" {
			continue
		}
		if timedOut {
			l.Status, l.Duration, l.Detail = Error, c.opts.Timeout, c.detail(c.noAnswer())
		} else {
			l.Status, l.Duration, l.Detail = Unknown, time.Since(start), c.detail(cancelled)
		}
	}
}

func (c *Checker) noAnswer() string { return fmt.Sprintf("no answer within %s", c.opts.Timeout) }

// detail is s as it may leave the process: filtered, then bounded. A
// filter that panics withholds the detail rather than stop the round or let
// the text out unfiltered.
func (c *Checker) detail(s string) (d string) {
	defer func() {
		if recover() != nil {
			d = withheld
		}
	}()
	return bound(c.opts.Detail(s))
}

// withheld is the detail when Options.Detail panics.
const withheld = "(detail withheld: the detail filter failed)"

// Run runs a round now, then one every Interval (from the start of one to
// the start of the next), until ctx ends, and hands each to report on Run's
// own goroutine. A round cut short because ctx ended is not reported.
//
// report is never called twice at once, and the next round waits for it: a
// slow report delays the next round (it starts as soon as report returns,
// when its time has passed), never the agent. A nil report discards the
// rounds.
func (c *Checker) Run(ctx context.Context, report func(Round)) {
	tick := time.NewTicker(c.opts.Interval)
	defer tick.Stop()
	for {
		r := c.Round(ctx)
		if ctx.Err() != nil {
			return
		}
		if report != nil {
			report(r)
		}
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}
