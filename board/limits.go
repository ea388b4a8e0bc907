package board

import (
	"fmt"
	"strconv"
	"time"
	"unicode/utf8"

	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"

	"github.com/symphonix/symphonix/packages"
)

// Limits bound what one agent or one caller can make the board hold.
// Zero fields take the defaults, which docs/limits.md lists with what
// happens at each.
type Limits struct {
	// PendingPerAgent: how many approvals one agent may have pending at
	// once; a raise past it is refused. Zero means 200.
	PendingPerAgent int
	// WatcherBytes: how many bytes of changes one watcher (WatchApprovals,
	// WatchAgents, WatchRuns) may fall behind before it is dropped. Zero
	// means 8 MiB.
	WatcherBytes int
	// StreamsPerCaller: how many watch streams one operator token, or one
	// signed-in person, may have open at once. Zero means 16.
	StreamsPerCaller int
	// AuditBurst and AuditPerSecond: how many requests that write to the
	// audit log one agent, operator token or person may make at once, and
	// how many a second after that (auditlimit.go). Zero means 600 and 10.
	AuditBurst     int
	AuditPerSecond float64
	// HealthEvery: the least time between two health reports on one link;
	// one sooner is refused and the link stays up. Zero means 5 s.
	HealthEvery time.Duration
	// PackageBytes: the largest package archive the library takes, in
	// bytes; one of exactly this size is taken, one byte more refused.
	// Zero means packages.DefaultLimits.MaxArchiveBytes (64 MiB).
	PackageBytes int64
	// PublishesAtOnce: how many publishes the board takes at once, each
	// spooling up to PackageBytes to disk and scanning it; one more is
	// refused busy. Zero means 2.
	PublishesAtOnce int
}

// Defaults of Limits.
const (
	DefaultPendingPerAgent  = 200
	DefaultWatcherBytes     = 8 << 20
	DefaultStreamsPerCaller = 16
	DefaultAuditBurst       = 600
	DefaultAuditPerSecond   = 10
	DefaultHealthEvery      = 5 * time.Second
	DefaultPublishesAtOnce  = 2
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
	if l.AuditBurst <= 0 {
		l.AuditBurst = DefaultAuditBurst
	}
	if l.AuditPerSecond <= 0 {
		l.AuditPerSecond = DefaultAuditPerSecond
	}
	if l.HealthEvery <= 0 {
		l.HealthEvery = DefaultHealthEvery
	}
	if l.PackageBytes <= 0 {
		l.PackageBytes = packages.DefaultLimits.MaxArchiveBytes
	}
	if l.PublishesAtOnce <= 0 {
		l.PublishesAtOnce = DefaultPublishesAtOnce
	}
	return l
}

// MaxListBytes is the most one List response carries: the default a gRPC
// client accepts in one message, less room for the rest of the response.
// A page that stops at it, before its page_size, has a next_page_token like
// any other page that more items follow.
const MaxListBytes = 4<<20 - 64<<10

// listBudget counts what a List response carries so far, so that it stops
// before MaxListBytes or max items (listPage). The first item is always taken: a
// client must be able to read every item, if need be one at a time.
type listBudget struct {
	max   int // items
	items int
	bytes int
}

// take reports whether m fits in the response, and counts it if it does.
func (b *listBudget) take(m proto.Message) bool {
	if b.items >= b.max {
		return false
	}
	n := protowire.SizeTag(1) + protowire.SizeBytes(proto.Size(m))
	if b.items > 0 && b.bytes+n > MaxListBytes {
		return false
	}
	b.items++
	b.bytes += n
	return true
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
