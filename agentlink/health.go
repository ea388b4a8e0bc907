package agentlink

import (
	"fmt"
	"slices"
	"sync"
	"time"
	"unicode"

	"google.golang.org/protobuf/types/known/durationpb"
	"google.golang.org/protobuf/types/known/timestamppb"

	boardv1 "github.com/symphonix/symphonix/api/symphonix/board/v1"
)

// How a round of health checks came out (Health.Status).
const (
	HealthOK       = "ok"
	HealthDegraded = "degraded"
	HealthUnknown  = "unknown"
)

// How one check came out (HealthCheck.Status).
const (
	CheckOK      = "ok"
	CheckError   = "error"
	CheckUnknown = "unknown"
)

// The bounds of a health report, as the board checks them: at most
// MaxHealthChecks lines, each named by 1 to MaxCheckName bytes without
// control characters. A detail longer than MaxCheckDetail bytes is cut.
const (
	MaxHealthChecks = 100
	MaxCheckName    = 64
	MaxCheckDetail  = 1024
)

// When the link reports health: a round whose outcome differs from the
// last one reported, at most once every HealthSpacing (the board refuses
// reports closer together), and an unchanged one once HealthEvery has
// passed since the last report.
const (
	HealthSpacing = 5 * time.Second
	HealthEvery   = 5 * time.Minute
)

// Health is one round of the agent's health checks.
type Health struct {
	// Status: HealthOK, HealthDegraded or HealthUnknown.
	Status string
	// Checks: one line per check, each name once.
	Checks []HealthCheck
	// Start: when the round started.
	Start time.Time
}

// HealthCheck is one line of a round.
type HealthCheck struct {
	Name string
	// Status: CheckOK, CheckError or CheckUnknown.
	Status string
	// Took: how long the check took.
	Took time.Duration
	// Detail: what it said when it did not pass, with anything secret
	// already removed; cut to MaxCheckDetail bytes.
	Detail string
}

// healthSlot is the newest round given to ReportHealth, the last one sent
// and when, and the version of the report due: one more every time a
// round is due to be sent.
type healthSlot struct {
	mu       sync.Mutex
	latest   *boardv1.HealthReport
	latestH  Health
	ver      uint64
	sent     *Health // nil before the first report
	sentAt   time.Time
	sentOnce bool
}

// ReportHealth gives the link a round of health checks. The link tells
// the board when the round's outcome (its status, or any line's status or
// detail) differs from the last it reported, when HealthEvery has passed
// since that report, and after every welcome, so that a board that
// restarted knows at once; never two reports within HealthSpacing. It
// never blocks: a report that cannot go now is replaced by the newest. It
// fails for a Link that did not announce CapabilityHealth and for a round
// out of bounds, naming what is wrong.
func (l *Link) ReportHealth(h Health) error {
	if l == nil {
		return ErrNoLink
	}
	if !l.announces(CapabilityHealth) {
		return fmt.Errorf("agentlink: ReportHealth: the hello does not announce %q", CapabilityHealth)
	}
	m, h, err := healthReport(h)
	if err != nil {
		return err
	}
	now := time.Now()
	l.health.mu.Lock()
	l.health.latest, l.health.latestH = m, h
	if healthDue(l.health.sent, l.health.sentAt, h, now) {
		l.health.ver++
	}
	l.health.mu.Unlock()
	l.poke()
	return nil
}

// healthReport checks h and makes its message, and h as it is sent
// (details cut).
func healthReport(h Health) (*boardv1.HealthReport, Health, error) {
	m := &boardv1.HealthReport{}
	switch h.Status {
	case HealthOK:
		m.Status = boardv1.HealthStatus_HEALTH_STATUS_OK
	case HealthDegraded:
		m.Status = boardv1.HealthStatus_HEALTH_STATUS_DEGRADED
	case HealthUnknown:
		m.Status = boardv1.HealthStatus_HEALTH_STATUS_UNKNOWN
	default:
		return nil, h, fmt.Errorf("agentlink: ReportHealth: Status %q: want %s, %s or %s", h.Status, HealthOK, HealthDegraded, HealthUnknown)
	}
	if len(h.Checks) > MaxHealthChecks {
		return nil, h, fmt.Errorf("agentlink: ReportHealth: %d checks: at most %d", len(h.Checks), MaxHealthChecks)
	}
	if !h.Start.IsZero() {
		m.StartTime = timestamppb.New(h.Start)
	}
	checks := make([]HealthCheck, len(h.Checks))
	seen := make(map[string]bool, len(h.Checks))
	for i, c := range h.Checks {
		if err := checkName(c.Name); err != nil {
			return nil, h, fmt.Errorf("agentlink: ReportHealth: Checks[%d].Name: %w", i, err)
		}
		if seen[c.Name] {
			return nil, h, fmt.Errorf("agentlink: ReportHealth: Checks[%d].Name: %q given twice", i, c.Name)
		}
		seen[c.Name] = true
		line := &boardv1.HealthCheck{Name: c.Name, Duration: durationpb.New(max(c.Took, 0))}
		switch c.Status {
		case CheckOK:
			line.Status = boardv1.CheckStatus_CHECK_STATUS_OK
		case CheckError:
			line.Status = boardv1.CheckStatus_CHECK_STATUS_ERROR
		case CheckUnknown:
			line.Status = boardv1.CheckStatus_CHECK_STATUS_UNKNOWN
		default:
			return nil, h, fmt.Errorf("agentlink: ReportHealth: Checks[%d].Status %q: want %s, %s or %s", i, c.Status, CheckOK, CheckError, CheckUnknown)
		}
		c.Detail = Clip(c.Detail, MaxCheckDetail)
		line.Detail = c.Detail
		checks[i] = c
		m.Checks = append(m.Checks, line)
	}
	h.Checks = checks
	return m, h, nil
}

// checkName refuses a check's name that is empty, longer than
// MaxCheckName bytes, not UTF-8, or holds a control character.
func checkName(name string) error {
	switch {
	case name == "":
		return fmt.Errorf("empty")
	case len(name) > MaxCheckName:
		return fmt.Errorf("%d bytes: at most %d", len(name), MaxCheckName)
	case Clip(name, len(name)) != name:
		return fmt.Errorf("%q is not UTF-8", name)
	case slices.ContainsFunc([]rune(name), unicode.IsControl):
		return fmt.Errorf("%q holds a control character", name)
	}
	return nil
}

// healthDue reports whether round h is to be reported at now, given the
// last round sent (nil: none yet) and when.
func healthDue(sent *Health, sentAt time.Time, h Health, now time.Time) bool {
	return sent == nil || !sameOutcome(*sent, h) || now.Sub(sentAt) >= HealthEvery
}

// sameOutcome reports whether a and b came out alike: the same status and
// the same lines, each with the same status and detail. How long the
// checks took, and when the round started, do not count.
func sameOutcome(a, b Health) bool {
	if a.Status != b.Status || len(a.Checks) != len(b.Checks) {
		return false
	}
	lines := make(map[string]HealthCheck, len(a.Checks))
	for _, c := range a.Checks {
		lines[c.Name] = c
	}
	for _, c := range b.Checks {
		o, ok := lines[c.Name]
		if !ok || o.Status != c.Status || o.Detail != c.Detail {
			return false
		}
	}
	return true
}

// dueHealth is a round due to be sent: its message, the round as sent,
// and its version.
type dueHealth struct {
	m   *boardv1.HealthReport
	h   Health
	ver uint64
}

// healthToSend returns the round to send when one is due whose version is
// newer than sent; or how long to wait before it may go, to keep
// HealthSpacing; or neither.
func (l *Link) healthToSend(sent uint64, now time.Time) (*dueHealth, time.Duration) {
	l.health.mu.Lock()
	defer l.health.mu.Unlock()
	if l.health.latest == nil || l.health.ver <= sent {
		return nil, 0
	}
	if l.health.sentOnce {
		if wait := l.health.sentAt.Add(HealthSpacing).Sub(now); wait > 0 {
			return nil, wait
		}
	}
	return &dueHealth{m: l.health.latest, h: l.health.latestH, ver: l.health.ver}, 0
}

// healthSent records that d went to the board at now.
func (l *Link) healthSent(d *dueHealth, now time.Time) {
	l.health.mu.Lock()
	defer l.health.mu.Unlock()
	l.health.sent = &d.h
	l.health.sentAt, l.health.sentOnce = now, true
}
