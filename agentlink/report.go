package agentlink

import (
	"context"
	"slices"
	"time"

	boardv1 "github.com/symphonix/symphonix/api/symphonix/board/v1"
)

// poke wakes the reporter of the link that is up, if any; it never
// blocks.
func (l *Link) poke() {
	select {
	case l.wake <- struct{}{}:
	default: // awake already
	}
}

// announces reports whether the hello announces capability.
func (l *Link) announces(capability string) bool {
	return slices.Contains(l.cfg.Capabilities, capability)
}

// report sends, on c, the agent's pause state, health rounds, trigger and
// eval reports as they become due (ReportPause, ReportHealth,
// ReportTriggers, ReportEvals):
// first the newest of each, since this link has sent none, then each
// newer one. It is the only sender of any, so a caller never waits on the
// stream. It returns when ctx
// ends, c goes down, or a send fails (the link's receive loop sees why).
func (l *Link) report(ctx context.Context, c *conn) {
	var pauseSent, healthSent, triggersSent, evalsSent uint64 // the versions sent on c
	hold := time.NewTimer(time.Hour)
	hold.Stop()
	defer hold.Stop()
	for {
		if m, ver := l.pauseToSend(pauseSent); m != nil {
			if err := c.send(&boardv1.LinkRequest{Kind: &boardv1.LinkRequest_PauseState{PauseState: m}}); err != nil {
				return
			}
			pauseSent = ver
			l.log.DebugContext(ctx, "pause state reported", "paused", m.GetPaused())
		}
		now := time.Now()
		var holdFor time.Duration // the soonest a report waits for; 0 for none
		waitFor := func(d time.Duration) {
			if d > 0 && (holdFor == 0 || d < holdFor) {
				holdFor = d
			}
		}
		switch due, wait := l.healthToSend(healthSent, now); {
		case due != nil:
			if err := c.send(&boardv1.LinkRequest{Kind: &boardv1.LinkRequest_Health{Health: due.m}}); err != nil {
				return
			}
			l.healthSent(due, now)
			healthSent = due.ver
			l.log.DebugContext(ctx, "health reported", "status", due.h.Status)
		default:
			waitFor(wait)
		}
		switch m, ver, wait := l.triggersToSend(triggersSent, time.Now()); {
		case m != nil:
			if err := c.send(&boardv1.LinkRequest{Kind: &boardv1.LinkRequest_Triggers{Triggers: m}}); err != nil {
				return
			}
			triggersSent = ver
			l.log.DebugContext(ctx, "triggers reported", "triggers", len(m.GetTriggers()))
		default:
			waitFor(wait)
		}
		switch m, ver, wait := l.evalsToSend(evalsSent, time.Now()); {
		case m != nil:
			if err := c.send(&boardv1.LinkRequest{Kind: &boardv1.LinkRequest_Evals{Evals: m}}); err != nil {
				return
			}
			evalsSent = ver
			l.log.DebugContext(ctx, "evals reported", "suites", len(m.GetSuites()))
		default:
			waitFor(wait)
		}
		if holdFor > 0 {
			hold.Reset(holdFor)
		}
		select {
		case <-ctx.Done():
			return
		case <-c.done:
			return
		case <-l.wake:
		case <-hold.C:
		}
	}
}
