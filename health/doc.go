// Package health says whether an agent can do its job. A ping on the link
// proves the process is up; a round of health checks proves it can do the
// work: its MCP servers answer, its model endpoint answers, its waiting
// store writes and reads, and whatever the agent's own health.json asks.
//
// A [Checker] holds named checks, each a func(context.Context) error, and
// runs them all at once in a [Round]: every check gets its own [Line], and
// the round's [Status] rolls them up. [Checker.Run] runs a round now and
// then one every Interval, never two at a time, and hands each to a report
// callback on its own goroutine.
//
// A round never waits longer than Timeout for a check: one that has not
// answered by then is an error line, its context is cancelled, and its
// goroutine is left to end on its own, its late answer discarded. Until it
// does, later rounds report it "still running from the last round" rather
// than start it again, so a check never has more than one call running. A
// check that panics is an error line and nothing else.
//
// [Load] reads the custom checks of an agent folder's health.json, and
// [Spec.Check] turns one into a check: a TCP connection, an HTTP GET or a
// command. The format, the timing and the limits are in docs/health.md.
//
// The package returns errors and never logs; every detail it reports has
// passed through [Options.Detail] and is cut to [MaxDetailBytes].
package health
