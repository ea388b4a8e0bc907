package health

import (
	"fmt"
	"time"
)

// The timing of rounds: what zero Options mean, and the bounds New accepts.
const (
	// DefaultInterval is the time between round starts when
	// Options.Interval is zero.
	DefaultInterval = 60 * time.Second
	// MinInterval and MaxInterval bound Options.Interval.
	MinInterval = time.Second
	MaxInterval = 24 * time.Hour
	// DefaultTimeout is how long a round waits for a check when
	// Options.Timeout is zero.
	DefaultTimeout = 5 * time.Second
	// MinTimeout is the shortest Options.Timeout; the longest is just under
	// the Interval, so that a round always ends before the next is due.
	MinTimeout = time.Millisecond
)

// Options says how a [Checker] runs its rounds.
type Options struct {
	// Interval is the time between the starts of two rounds in Run: 0 is
	// DefaultInterval; otherwise from MinInterval to MaxInterval.
	Interval time.Duration
	// Timeout is how long a round waits for each check: 0 is
	// DefaultTimeout; otherwise at least MinTimeout and shorter than the
	// Interval.
	Timeout time.Duration
	// Detail is applied to every detail before it is reported: a filter
	// that takes secrets out. nil leaves details as they are. Its result is
	// then cut to MaxDetailBytes of valid UTF-8. Should it panic, the
	// detail is withheld, never sent unfiltered.
	Detail func(string) string
}

// settled returns o with its defaults filled in, or an error naming the
// field that is out of bounds.
func (o Options) settled() (Options, error) {
	if o.Interval == 0 {
		o.Interval = DefaultInterval
	}
	if o.Interval < MinInterval || o.Interval > MaxInterval {
		return o, fmt.Errorf("health: Interval: %s, must be from %s to %s (or 0 for %s)", o.Interval, MinInterval, MaxInterval, DefaultInterval)
	}
	if o.Timeout == 0 {
		o.Timeout = DefaultTimeout
	}
	if o.Timeout < MinTimeout {
		return o, fmt.Errorf("health: Timeout: %s, must be at least %s (or 0 for %s)", o.Timeout, MinTimeout, DefaultTimeout)
	}
	if o.Timeout >= o.Interval {
		return o, fmt.Errorf("health: Timeout: %s, must be shorter than the Interval (%s)", o.Timeout, o.Interval)
	}
	if o.Detail == nil {
		o.Detail = func(s string) string { return s }
	}
	return o, nil
}
