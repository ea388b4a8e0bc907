package agentlink

import (
	"fmt"
	"sync"
	"time"

	"google.golang.org/protobuf/types/known/durationpb"

	boardv1 "github.com/symphonix/symphonix/api/symphonix/board/v1"
)

// The bounds of a trigger report, as the board takes it.
const (
	// MaxTriggers is the most triggers a report carries.
	MaxTriggers = 64
	// TriggerSpacing is the least time between two trigger reports: a
	// newer one waits, and only the newest goes. The board drops a report
	// within a second of the last it had; the half second more covers the
	// network's jitter.
	TriggerSpacing = 1500 * time.Millisecond
	// MaxTriggerError is the most bytes of an occurrence's error.
	MaxTriggerError = 1024
)

// What makes a trigger occur (Trigger.Kind, RunTrigger.Kind).
const (
	TriggerSchedule = "schedule"
	TriggerWebhook  = "webhook"
)

// Where a triggered run's result stands (TriggerOccurrence.Delivery,
// RunTrigger.Delivery).
const (
	DeliveryNone      = "none"
	DeliveryPending   = "pending"
	DeliveryDelivered = "delivered"
	DeliveryFailed    = "failed"
)

// Trigger is one trigger the agent runs, as it reports it.
type Trigger struct {
	ID string
	// Kind: TriggerSchedule or TriggerWebhook.
	Kind string
	// For a schedule: its cron fields, zone and the schedule in words.
	Schedule, TimeZone, Description string
	// For a webhook: the method and path it answers.
	Method, Path string
	// Next: when the schedule next starts a run; zero when the agent
	// cannot tell or it is paused.
	Next time.Time
	// Overlap: "skip" or "queue".
	Overlap string
	// Delivers: it delivers its runs' results (never where to).
	Delivers bool
	// Signed: the webhook takes signed requests only.
	Signed bool
	// Last: its latest occurrence; nil before the first.
	Last *TriggerOccurrence
}

// TriggerOccurrence is one time a trigger occurred, and what came of it.
type TriggerOccurrence struct {
	At    time.Time
	RunID string
	OK    bool
	// Duration: from the occurrence to the run's end.
	Duration time.Duration
	// Error: why it failed or started nothing, without secrets; cut to
	// MaxTriggerError bytes.
	Error string
	// Delivery: one of DeliveryNone, DeliveryPending, DeliveryDelivered,
	// DeliveryFailed.
	Delivery string
}

// RunTrigger is why a run exists, when a trigger started it: carried by
// the run's start event and its summaries.
type RunTrigger struct {
	ID string
	// Kind: TriggerSchedule or TriggerWebhook.
	Kind string
	// At: when it occurred.
	At time.Time
	// For a webhook: the request's method and path.
	Method, Path string
	// Delivery and DeliveryAttempts: where the result's delivery stands.
	Delivery         string
	DeliveryAttempts int
}

// triggerSlot is the newest trigger report, its version (one more at
// every ReportTriggers) and when a report last went.
type triggerSlot struct {
	mu     sync.Mutex
	report *boardv1.TriggerReport
	ver    uint64
	sentAt time.Time
}

// ReportTriggers tells the board every trigger the agent runs: at once
// when a link is up, and again after every welcome, so a board that
// restarted knows them; never two reports within TriggerSpacing (a newer
// one replaces one that waits). Call it whenever a next run time, an
// occurrence, a delivery or a pause changes. It never blocks. It fails for
// a Link that did not announce CapabilityTriggers and for more than
// MaxTriggers triggers.
func (l *Link) ReportTriggers(ts []Trigger) error {
	if l == nil {
		return ErrNoLink
	}
	if !l.announces(CapabilityTriggers) {
		return fmt.Errorf("agentlink: ReportTriggers: the hello does not announce %q", CapabilityTriggers)
	}
	if len(ts) > MaxTriggers {
		return fmt.Errorf("agentlink: ReportTriggers: %d triggers: at most %d", len(ts), MaxTriggers)
	}
	m := &boardv1.TriggerReport{}
	for _, t := range ts {
		m.Triggers = append(m.Triggers, triggerOf(t))
	}
	l.triggers.mu.Lock()
	l.triggers.report = m
	l.triggers.ver++
	l.triggers.mu.Unlock()
	l.poke()
	return nil
}

// triggersToSend returns the newest report when it is newer than the
// version sent, with its version; or how long to wait before it may go.
func (l *Link) triggersToSend(sent uint64, now time.Time) (*boardv1.TriggerReport, uint64, time.Duration) {
	l.triggers.mu.Lock()
	defer l.triggers.mu.Unlock()
	if l.triggers.report == nil || l.triggers.ver <= sent {
		return nil, sent, 0
	}
	if wait := l.triggers.sentAt.Add(TriggerSpacing).Sub(now); wait > 0 {
		return nil, sent, wait
	}
	l.triggers.sentAt = now
	return l.triggers.report, l.triggers.ver, 0
}

func triggerOf(t Trigger) *boardv1.Trigger {
	m := &boardv1.Trigger{
		Id: t.ID, Kind: triggerKindOf(t.Kind), Schedule: t.Schedule, TimeZone: t.TimeZone, Description: t.Description,
		Method: t.Method, Path: t.Path, NextRunTime: timeOf(t.Next), Overlap: t.Overlap, Delivers: t.Delivers, Signed: t.Signed,
	}
	if o := t.Last; o != nil {
		m.Last = &boardv1.TriggerOccurrence{
			Time: timeOf(o.At), RunId: o.RunID, Ok: o.OK, Duration: durationpb.New(max(o.Duration, 0)),
			Error: Clip(o.Error, MaxTriggerError), Delivery: deliveryOf(o.Delivery),
		}
	}
	return m
}

func runTriggerOf(t *RunTrigger) *boardv1.RunTrigger {
	if t == nil {
		return nil
	}
	return &boardv1.RunTrigger{
		TriggerId: t.ID, Kind: triggerKindOf(t.Kind), OccurrenceTime: timeOf(t.At), Method: t.Method, Path: t.Path,
		Delivery: deliveryOf(t.Delivery), DeliveryAttempts: int32(min(t.DeliveryAttempts, 1<<20)),
	}
}

func triggerKindOf(k string) boardv1.TriggerKind {
	switch k {
	case TriggerSchedule:
		return boardv1.TriggerKind_TRIGGER_KIND_SCHEDULE
	case TriggerWebhook:
		return boardv1.TriggerKind_TRIGGER_KIND_WEBHOOK
	}
	return boardv1.TriggerKind_TRIGGER_KIND_UNSPECIFIED
}

func deliveryOf(s string) boardv1.DeliveryState {
	switch s {
	case DeliveryNone:
		return boardv1.DeliveryState_DELIVERY_STATE_NONE
	case DeliveryPending:
		return boardv1.DeliveryState_DELIVERY_STATE_PENDING
	case DeliveryDelivered:
		return boardv1.DeliveryState_DELIVERY_STATE_DELIVERED
	case DeliveryFailed:
		return boardv1.DeliveryState_DELIVERY_STATE_FAILED
	}
	return boardv1.DeliveryState_DELIVERY_STATE_UNSPECIFIED
}
