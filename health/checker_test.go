package health_test

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"
	"unicode/utf8"

	"github.com/symphonix/symphonix/health"
)

func newChecker(t *testing.T, o health.Options) *health.Checker {
	t.Helper()
	c, err := health.New(o)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func register(t *testing.T, c *health.Checker, name string, fn func(context.Context) error) {
	t.Helper()
	if err := c.Register(name, fn); err != nil {
		t.Fatal(err)
	}
}

func ok(context.Context) error { return nil }

// line returns the line of r named name.
func line(t *testing.T, r health.Round, name string) health.Line {
	t.Helper()
	for _, l := range r.Lines {
		if l.Name == name {
			return l
		}
	}
	t.Fatalf("no line %q in %+v", name, r)
	return health.Line{}
}

// TestRoundStatus: a round is ok when every line is, degraded when any
// failed, unknown when none failed and some could not tell; with no checks,
// ok and no lines.
func TestRoundStatus(t *testing.T) {
	t.Parallel()
	fail := func(context.Context) error { return errors.New("refused") }
	unsure := func(context.Context) error { return health.Unknownf("no key to ask with") }
	wrapped := func(context.Context) error { return fmt.Errorf("model: %w", health.Unknownf("rate limited")) }
	for _, tc := range []struct {
		name   string
		checks []func(context.Context) error
		want   health.Status
	}{
		{"no checks", nil, health.OK},
		{"all ok", []func(context.Context) error{ok, ok}, health.OK},
		{"one unknown", []func(context.Context) error{ok, unsure}, health.Unknown},
		{"a wrapped unknown", []func(context.Context) error{wrapped}, health.Unknown},
		{"one error", []func(context.Context) error{ok, fail}, health.Degraded},
		{"an error and an unknown", []func(context.Context) error{unsure, fail, ok}, health.Degraded},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			c := newChecker(t, health.Options{})
			for i, fn := range tc.checks {
				register(t, c, fmt.Sprintf("check-%d", i), fn)
			}
			r := c.Round(t.Context())
			if r.Status != tc.want || len(r.Lines) != len(tc.checks) {
				t.Errorf("round = %+v; want %s with %d lines", r, tc.want, len(tc.checks))
			}
		})
	}
}

// TestLines: one line per check, sorted by name; an ok line has no detail,
// an error's text is the detail, and an unknown's.
func TestLines(t *testing.T) {
	t.Parallel()
	c := newChecker(t, health.Options{})
	register(t, c, "waiting", ok)
	register(t, c, "mcp orders", func(context.Context) error { return errors.New("tools/list: no answer") })
	register(t, c, "model", func(context.Context) error { return health.Unknownf("no OPENAI_API_KEY") })
	r := c.Round(t.Context())
	want := []health.Line{
		{Name: "mcp orders", Status: health.Error, Detail: "tools/list: no answer"},
		{Name: "model", Status: health.Unknown, Detail: "no OPENAI_API_KEY"},
		{Name: "waiting", Status: health.OK},
	}
	if len(r.Lines) != len(want) {
		t.Fatalf("lines = %+v; want %+v", r.Lines, want)
	}
	for i, l := range r.Lines {
		l.Duration = 0
		if l != want[i] {
			t.Errorf("line %d = %+v; want %+v", i, l, want[i])
		}
	}
	if r.Start.IsZero() {
		t.Error("round has no start")
	}
}

// TestConcurrent: the checks of a round run at once. Each waits for the
// other to start; run one after the other, neither would answer.
func TestConcurrent(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		c := newChecker(t, health.Options{})
		var started sync.WaitGroup
		started.Add(2)
		both := func(ctx context.Context) error {
			started.Done()
			done := make(chan struct{})
			go func() { started.Wait(); close(done) }()
			select {
			case <-done:
				return nil
			case <-ctx.Done():
				started.Done() // let the other's waiter go, so the bubble can end
				return ctx.Err()
			}
		}
		register(t, c, "a", both)
		register(t, c, "b", both)
		start := time.Now()
		r := c.Round(t.Context())
		if r.Status != health.OK || time.Since(start) != 0 {
			t.Errorf("round = %+v after %s; want ok at once", r, time.Since(start))
		}
	})
}

// TestHung: a check that does not answer is an error at exactly the
// Timeout; its context is cancelled then; the round does not wait for its
// goroutine; the others' lines stand.
func TestHung(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		c := newChecker(t, health.Options{}) // the default timeout: 5s
		release := make(chan struct{})
		var cancelledAfter atomic.Int64
		register(t, c, "hangs", func(context.Context) error {
			<-release // heeds nothing
			return nil
		})
		register(t, c, "heeds its context", func(ctx context.Context) error {
			start := time.Now()
			<-ctx.Done()
			cancelledAfter.Store(int64(time.Since(start)))
			return ctx.Err()
		})
		register(t, c, "quick", ok)
		start := time.Now()
		r := c.Round(t.Context())
		if took := time.Since(start); took != health.DefaultTimeout {
			t.Errorf("round took %s; want exactly %s", took, health.DefaultTimeout)
		}
		for _, name := range []string{"hangs", "heeds its context"} {
			l := line(t, r, name)
			if l.Status != health.Error || l.Detail != "no answer within 5s" || l.Duration != health.DefaultTimeout {
				t.Errorf("%s = %+v; want error, no answer within 5s, after 5s", name, l)
			}
		}
		if l := line(t, r, "quick"); l.Status != health.OK {
			t.Errorf("quick = %+v; want ok", l)
		}
		if r.Status != health.Degraded {
			t.Errorf("round = %s; want degraded", r.Status)
		}
		synctest.Wait()
		if got := time.Duration(cancelledAfter.Load()); got != health.DefaultTimeout {
			t.Errorf("the check's context was cancelled after %s; want %s", got, health.DefaultTimeout)
		}
		close(release)
	})
}

// TestStillRunning: a check whose last call has not returned is not called
// again: its line says so, until it returns; its late answer is discarded.
func TestStillRunning(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		c := newChecker(t, health.Options{Interval: 10 * time.Second, Timeout: time.Second})
		var calls atomic.Int32
		release := make(chan struct{})
		register(t, c, "stuck", func(context.Context) error {
			if calls.Add(1) == 1 {
				<-release
				return errors.New("a late answer")
			}
			return nil
		})
		first := c.Round(t.Context())
		if l := line(t, first, "stuck"); l.Detail != "no answer within 1s" {
			t.Errorf("first round: %+v; want no answer within 1s", l)
		}
		second := c.Round(t.Context())
		l := line(t, second, "stuck")
		if l.Status != health.Error || l.Detail != "still running from the last round" || l.Duration != 0 {
			t.Errorf("second round: %+v; want error, still running from the last round", l)
		}
		if n := calls.Load(); n != 1 {
			t.Errorf("the check was called %d times while its first call ran; want 1", n)
		}
		close(release)
		synctest.Wait()
		third := c.Round(t.Context())
		if l := line(t, third, "stuck"); l.Status != health.OK || calls.Load() != 2 {
			t.Errorf("third round, once the first call returned: %+v after %d calls; want ok, called again", l, calls.Load())
		}
		if l := line(t, first, "stuck"); l.Detail != "no answer within 1s" {
			t.Errorf("the first round changed after its check answered: %+v", l)
		}
	})
}

// TestPanic: a check that panics is an error line saying so, without a
// stack; the others and the round go on, and the check is called again
// next round.
func TestPanic(t *testing.T) {
	t.Parallel()
	c := newChecker(t, health.Options{})
	var calls atomic.Int32
	register(t, c, "boom", func(context.Context) error { calls.Add(1); panic("boom") })
	register(t, c, "out of range", func(context.Context) error {
		words := strings.Fields("one two")
		return errors.New(words[len(words)+1])
	})
	register(t, c, "goexit", func(context.Context) error { runtime.Goexit(); return nil })
	register(t, c, "nil error value", func(context.Context) error { return (*textError)(nil) })
	register(t, c, "fine", ok)
	for range 2 {
		r := c.Round(t.Context())
		if l := line(t, r, "boom"); l.Status != health.Error || l.Detail != "panic: boom" {
			t.Errorf("boom = %+v; want error, panic: boom", l)
		}
		if l := line(t, r, "out of range"); l.Status != health.Error || l.Detail != "panic: runtime error: index out of range [3] with length 2" {
			t.Errorf("out of range = %+v; want error, panic: runtime error: index out of range", l)
		}
		if l := line(t, r, "goexit"); l.Status != health.Error || l.Detail != "the check ended its goroutine without returning" {
			t.Errorf("goexit = %+v; want error, ended its goroutine", l)
		}
		if l := line(t, r, "nil error value"); l.Status != health.Error || !strings.HasPrefix(l.Detail, "panic: runtime error: invalid memory address") {
			t.Errorf("nil error value = %+v; want error, panic: runtime error", l)
		}
		if l := line(t, r, "fine"); l.Status != health.OK {
			t.Errorf("fine = %+v; want ok", l)
		}
		for _, l := range r.Lines {
			if strings.Contains(l.Detail, "[running]") || strings.Contains(l.Detail, ".go:") {
				t.Errorf("%s's detail holds a stack: %q", l.Name, l.Detail)
			}
		}
	}
	if calls.Load() != 2 {
		t.Errorf("boom was called %d times in two rounds; want 2", calls.Load())
	}
}

// TestDetail: every detail passes through Options.Detail whole, then is cut
// to MaxDetailBytes on a character boundary, made valid UTF-8 and trimmed.
func TestDetail(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("é", 400) + " sk-secret" // 810 bytes; the secret past the cut
	var seen []string
	var mu sync.Mutex
	c := newChecker(t, health.Options{Detail: func(s string) string {
		mu.Lock()
		seen = append(seen, s)
		mu.Unlock()
		return strings.ReplaceAll(s, "sk-secret", "[redacted]")
	}})
	register(t, c, "long", func(context.Context) error { return errors.New(long) })
	register(t, c, "secret", func(context.Context) error { return errors.New("401 for key sk-secret") })
	register(t, c, "bytes", func(context.Context) error { return errors.New("bad \xff\xfe output\n") })
	r := c.Round(t.Context())

	l := line(t, r, "long")
	if len(l.Detail) > health.MaxDetailBytes || !utf8.ValidString(l.Detail) || !strings.HasSuffix(l.Detail, "é…") {
		t.Errorf("long detail: %d bytes, valid %v, ends %q; want at most %d bytes of valid UTF-8 ending in é…",
			len(l.Detail), utf8.ValidString(l.Detail), l.Detail[max(0, len(l.Detail)-8):], health.MaxDetailBytes)
	}
	if l := line(t, r, "secret"); l.Detail != "401 for key [redacted]" {
		t.Errorf("secret detail = %q; want it filtered", l.Detail)
	}
	if l := line(t, r, "bytes"); l.Detail != "bad \uFFFD output" {
		t.Errorf("bytes detail = %q; want valid UTF-8, trimmed", l.Detail)
	}
	mu.Lock()
	defer mu.Unlock()
	var whole bool
	for _, s := range seen {
		whole = whole || s == long
	}
	if !whole {
		t.Errorf("Options.Detail was given %q; want the whole detail, before it is cut", seen)
	}
}

// textError is an error whose Error method reads its receiver: a nil one
// panics.
type textError struct{ text string }

func (e *textError) Error() string { return e.text }

// TestDetailFilterPanics: a filter that panics withholds the detail; the
// round goes on.
func TestDetailFilterPanics(t *testing.T) {
	t.Parallel()
	c := newChecker(t, health.Options{Detail: func(string) string { panic("filter broken") }})
	register(t, c, "fails", func(context.Context) error { return errors.New("token sk-secret refused") })
	register(t, c, "fine", ok)
	r := c.Round(t.Context())
	if l := line(t, r, "fails"); l.Status != health.Error || l.Detail != "(detail withheld: the detail filter failed)" {
		t.Errorf("fails = %+v; want error, its detail withheld", l)
	}
	if l := line(t, r, "fine"); l.Status != health.OK || l.Detail != "" {
		t.Errorf("fine = %+v; want ok", l)
	}
}

// TestDetailOfEngine: the engine's own details pass through the filter too.
func TestDetailOfEngine(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		c := newChecker(t, health.Options{Detail: strings.ToUpper})
		release := make(chan struct{})
		register(t, c, "hangs", func(context.Context) error { <-release; return nil })
		r := c.Round(t.Context())
		if l := line(t, r, "hangs"); l.Detail != "NO ANSWER WITHIN 5S" {
			t.Errorf("detail = %q; want it through Options.Detail", l.Detail)
		}
		close(release)
	})
}

// TestRoundCancelled: a round whose context ends returns at once; the
// checks that had not answered are unknown, the others stand.
func TestRoundCancelled(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		c := newChecker(t, health.Options{})
		release := make(chan struct{})
		register(t, c, "hangs", func(context.Context) error { <-release; return nil })
		register(t, c, "gives up", func(ctx context.Context) error { <-ctx.Done(); return ctx.Err() })
		register(t, c, "quick", ok)
		ctx, cancel := context.WithCancel(t.Context())
		time.AfterFunc(time.Second, cancel)
		start := time.Now()
		r := c.Round(ctx)
		if took := time.Since(start); took != time.Second {
			t.Errorf("round took %s; want 1s, when its context ended", took)
		}
		for _, name := range []string{"hangs", "gives up"} {
			if l := line(t, r, name); l.Status != health.Unknown || !strings.Contains(l.Detail, "cancelled") {
				t.Errorf("%s = %+v; want unknown, cancelled", name, l)
			}
		}
		if l := line(t, r, "quick"); l.Status != health.OK {
			t.Errorf("quick = %+v; want ok", l)
		}
		if r.Status != health.Unknown {
			t.Errorf("round = %s; want unknown", r.Status)
		}
		close(release)
	})
}

// TestRoundsDoNotOverlap: a round asked for during another waits for it.
func TestRoundsDoNotOverlap(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		c := newChecker(t, health.Options{})
		var now, most atomic.Int32
		register(t, c, "slow", func(ctx context.Context) error {
			n := now.Add(1)
			defer now.Add(-1)
			if n > most.Load() {
				most.Store(n)
			}
			select {
			case <-time.After(time.Second): // the check's work, in the bubble's time
				return nil
			case <-ctx.Done():
				return ctx.Err()
			}
		})
		rounds := make(chan health.Round, 2)
		for range 2 {
			go func() { rounds <- c.Round(t.Context()) }()
		}
		a, b := <-rounds, <-rounds
		if a.Start.After(b.Start) {
			a, b = b, a
		}
		if most.Load() != 1 || a.Status != health.OK || b.Status != health.OK || b.Start.Sub(a.Start) != time.Second {
			t.Errorf("two rounds at once: %d calls at most at a time, %+v then %+v; want one at a time, both ok, the second 1s later",
				most.Load(), a, b)
		}
	})
}

// TestRun: a round now, then one every Interval from start to start; a slow
// report delays the next round, which starts as soon as it returns; Run
// returns when its context ends, without reporting a round cut short.
func TestRun(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		c := newChecker(t, health.Options{})
		hang := make(chan struct{})
		var calls atomic.Int32
		register(t, c, "check", func(ctx context.Context) error {
			if calls.Add(1) == 5 {
				<-ctx.Done() // the fifth round is cut short by Run's context
				close(hang)
			}
			return nil
		})
		ctx, cancel := context.WithCancel(t.Context())
		begin := time.Now()
		var starts []time.Duration
		done := make(chan struct{})
		go func() {
			defer close(done)
			c.Run(ctx, func(r health.Round) {
				starts = append(starts, r.Start.Sub(begin))
				if len(starts) == 2 {
					time.Sleep(90 * time.Second) // a slow report, in the bubble's time
				}
			})
		}()
		time.AfterFunc(4*time.Minute+time.Second, cancel)
		<-done
		<-hang
		want := []time.Duration{0, time.Minute, 150 * time.Second, 3 * time.Minute}
		if fmt.Sprint(starts) != fmt.Sprint(want) {
			t.Errorf("rounds reported at %v; want %v", starts, want)
		}
		if calls.Load() != 5 {
			t.Errorf("%d rounds ran; want 5, the last cut short and not reported", calls.Load())
		}
	})
}

// TestNew: zero Options are the defaults; anything out of bounds is refused,
// naming the field.
func TestNew(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		o    health.Options
		want string
	}{
		{health.Options{Interval: -time.Second}, "health: Interval: -1s, must be from 1s to 24h0m0s (or 0 for 1m0s)"},
		{health.Options{Interval: 500 * time.Millisecond}, "health: Interval: 500ms, must be from 1s to 24h0m0s (or 0 for 1m0s)"},
		{health.Options{Interval: 25 * time.Hour}, "health: Interval: 25h0m0s, must be from 1s to 24h0m0s (or 0 for 1m0s)"},
		{health.Options{Timeout: -1}, "health: Timeout: -1ns, must be at least 1ms (or 0 for 5s)"},
		{health.Options{Timeout: time.Minute}, "health: Timeout: 1m0s, must be shorter than the Interval (1m0s)"},
		{health.Options{Interval: 2 * time.Second}, "health: Timeout: 5s, must be shorter than the Interval (2s)"},
	} {
		if _, err := health.New(tc.o); err == nil || err.Error() != tc.want {
			t.Errorf("New(%+v) = %v; want %q", tc.o, err, tc.want)
		}
	}
	for _, o := range []health.Options{{}, {Interval: time.Second, Timeout: time.Millisecond}, {Interval: 24 * time.Hour, Timeout: time.Hour}} {
		if _, err := health.New(o); err != nil {
			t.Errorf("New(%+v) = %v; want a Checker", o, err)
		}
	}
}

// TestRegister: names are 1 to 64 bytes of printable UTF-8, unique, not
// starting or ending with a space; a check is not nil; at most MaxChecks.
func TestRegister(t *testing.T) {
	t.Parallel()
	c := newChecker(t, health.Options{})
	register(t, c, "orders-db", ok)
	register(t, c, strings.Repeat("n", health.MaxNameBytes), ok)
	register(t, c, "mcp: orders ✓", ok)
	for _, tc := range []struct {
		name string
		fn   func(context.Context) error
		want string
	}{
		{"", ok, `health: check name "": required`},
		{strings.Repeat("n", 65), ok, `health: check name "` + strings.Repeat("n", 64) + `"…: 65 bytes, must be at most 64`},
		{"bad\nname", ok, `health: check name "bad\nname": must be printable: holds U+000A`},
		{"tab\tname", ok, `health: check name "tab\tname": must be printable: holds U+0009`},
		{"bad\xffname", ok, `health: check name "bad\xffname": must be UTF-8`},
		{" disk", ok, `health: check name " disk": must not start or end with a space`},
		{"orders-db", ok, `health: check name "orders-db": registered already`},
		{"nil", nil, `health: check "nil": the check is nil`},
	} {
		if err := c.Register(tc.name, tc.fn); err == nil || err.Error() != tc.want {
			t.Errorf("Register(%q) = %v; want %s", tc.name, err, tc.want)
		}
	}
	for i := 3; i < health.MaxChecks; i++ {
		register(t, c, fmt.Sprintf("check %d", i), ok)
	}
	if err := c.Register("one more", ok); err == nil || !strings.Contains(err.Error(), "128 checks registered already") {
		t.Errorf("Register past MaxChecks = %v; want refused", err)
	}
	if r := c.Round(t.Context()); len(r.Lines) != health.MaxChecks || r.Status != health.OK {
		t.Errorf("round of %d checks = %s with %d lines", health.MaxChecks, r.Status, len(r.Lines))
	}
}

// TestUnknownError: errors.As finds an UnknownError through wrapping, and
// Unknownf wraps with %w.
func TestUnknownError(t *testing.T) {
	t.Parallel()
	cause := errors.New("dial refused")
	err := fmt.Errorf("model: %w", health.Unknownf("cannot ask: %w", cause))
	var u *health.UnknownError
	if !errors.As(err, &u) || !errors.Is(err, cause) || err.Error() != "model: cannot ask: dial refused" {
		t.Errorf("err = %v; want an UnknownError wrapping the cause", err)
	}
}

// TestRoundWaitingCancelled: a round waiting for another to end stops
// waiting when its context ends, every line unknown.
func TestRoundWaitingCancelled(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		c := newChecker(t, health.Options{})
		release := make(chan struct{})
		register(t, c, "hangs", func(context.Context) error { <-release; return nil })
		first := make(chan health.Round)
		go func() { first <- c.Round(t.Context()) }()
		synctest.Wait() // the first round has started
		ctx, cancel := context.WithTimeout(t.Context(), time.Second)
		defer cancel()
		start := time.Now()
		r := c.Round(ctx)
		if l := line(t, r, "hangs"); time.Since(start) != time.Second || r.Status != health.Unknown || !strings.Contains(l.Detail, "cancelled") {
			t.Errorf("a round cancelled while waiting: %+v after %s; want unknown after 1s", r, time.Since(start))
		}
		if r := <-first; r.Status != health.Degraded {
			t.Errorf("the first round = %+v; want degraded, its check hung", r)
		}
		close(release)
	})
}

// BenchmarkRound: a round of MaxChecks checks that answer at once, the
// engine's own cost.
func BenchmarkRound(b *testing.B) {
	c, err := health.New(health.Options{Interval: health.MinInterval, Timeout: time.Second / 2})
	if err != nil {
		b.Fatal(err)
	}
	for i := range health.MaxChecks {
		if err := c.Register(fmt.Sprintf("check %d", i), ok); err != nil {
			b.Fatal(err)
		}
	}
	for b.Loop() {
		if r := c.Round(b.Context()); r.Status != health.OK {
			b.Fatalf("round = %s", r.Status)
		}
	}
}
