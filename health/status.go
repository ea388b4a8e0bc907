package health

import "time"

// Status is what a check or a round says. A check's is [OK], [Error] or
// [Unknown]; a round's is [OK], [Degraded] or [Unknown].
type Status string

const (
	// OK: the check answered that all is well; for a round, every check did.
	OK Status = "ok"
	// Error: the check failed, panicked or did not answer in time.
	Error Status = "error"
	// Unknown: the check could not tell (it returned an error made by
	// [Unknownf] or wrapping an [*UnknownError]), or the round was cancelled
	// before it answered. For a round: no check failed and at least one
	// could not tell.
	Unknown Status = "unknown"
	// Degraded: a round in which at least one check failed.
	Degraded Status = "degraded"
)

// Line is one check's result in a round.
type Line struct {
	// Name is the check's name, as registered.
	Name string
	// Status is OK, Error or Unknown.
	Status Status
	// Duration is how long the check took to answer: the round's Timeout
	// for one that did not answer, zero for one not started because its
	// last call is still running.
	Duration time.Duration
	// Detail says what went wrong, after Options.Detail, at most
	// MaxDetailBytes of valid UTF-8; empty when Status is OK.
	Detail string
}

// Round is one round of every registered check.
type Round struct {
	// Status rolls the lines up: Degraded when any line is Error, else
	// Unknown when any line is Unknown, else OK (a round with no checks too).
	Status Status
	// Lines holds one line per check, sorted by name.
	Lines []Line
	// Start is when the round started.
	Start time.Time
}

// rollUp is the status of a round with these lines.
func rollUp(lines []Line) Status {
	status := OK
	for _, l := range lines {
		switch l.Status {
		case Error:
			return Degraded
		case Unknown:
			status = Unknown
		}
	}
	return status
}
