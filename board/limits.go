package board

import (
	"fmt"
	"strconv"
	"unicode/utf8"
)

// Limits bound what one agent or one caller can make the board hold.
// Zero fields take the defaults, which docs/limits.md lists with what
// happens at each.
type Limits struct {
	// PendingPerAgent: how many approvals one agent may have pending at
	// once; a raise past it is refused. Zero means 200.
	PendingPerAgent int
	// WatcherBytes: how many bytes of changes one watcher (WatchApprovals,
	// WatchAgents) may fall behind before it is dropped. Zero means 8 MiB.
	WatcherBytes int
	// StreamsPerCaller: how many watch streams one operator token, or one
	// signed-in person, may have open at once. Zero means 16.
	StreamsPerCaller int
}

// Defaults of Limits.
const (
	DefaultPendingPerAgent  = 200
	DefaultWatcherBytes     = 8 << 20
	DefaultStreamsPerCaller = 16
)

// withDefaults is l with every zero field set to its default.
func (l Limits) withDefaults() Limits {
	if l.PendingPerAgent <= 0 {
		l.PendingPerAgent = DefaultPendingPerAgent
	}
	if l.WatcherBytes <= 0 {
		l.WatcherBytes = DefaultWatcherBytes
	}
	if l.StreamsPerCaller <= 0 {
		l.StreamsPerCaller = DefaultStreamsPerCaller
	}
	return l
}

// maxQuoted is the most of a refused value an error message repeats.
const maxQuoted = 64

// quoted is s quoted for an error message, cut to maxQuoted bytes (on a
// rune boundary) with its full length said, so that a refusal never
// carries back, or into the audit log, what it refused for being too long.
func quoted(s string) string {
	if len(s) <= maxQuoted {
		return strconv.Quote(s)
	}
	cut := maxQuoted
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return fmt.Sprintf("%s… (%d bytes)", strconv.Quote(s[:cut]), len(s))
}
