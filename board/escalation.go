package board

import (
	"context"
	"fmt"
	"slices"
	"time"

	"connectrpc.com/connect/v2"
	"google.golang.org/protobuf/types/known/durationpb"

	boardv1 "github.com/symphonix/symphonix/api/symphonix/board/v1"
	"github.com/symphonix/symphonix/audit"
	"github.com/symphonix/symphonix/ent"
	"github.com/symphonix/symphonix/ent/approval"
	"github.com/symphonix/symphonix/ent/rule"
	"github.com/symphonix/symphonix/ent/schema"
	"github.com/symphonix/symphonix/identity"
	"github.com/symphonix/symphonix/store"
)

// Escalation (docs/approvals.md): a rule's steps each let more people
// decide a pending approval once its time since the raise has passed. The
// board's loop looks for approvals due a step every RevocationPoll; the
// step is taken by a conditional update of the approval's
// escalation_level, so on several boards of one store each step is
// reached, audited and announced once. The times are the raise's in the
// store, so a restart loses none.
const (
	maxEscalationSteps  = 5
	maxEscalationPeople = 20
	// escalateBatch: the most approvals one pass escalates.
	escalateBatch = 100
)

// escalationFrom checks a rule's escalation from the wire, under its time
// limit (0 for none).
func escalationFrom(steps []*boardv1.EscalationStep, limit time.Duration) ([]schema.EscalationStep, error) {
	bad := func(format string, args ...any) ([]schema.EscalationStep, error) {
		return nil, connect.Errorf(connect.CodeInvalidArgument, format, args...)
	}
	if len(steps) > maxEscalationSteps {
		return bad("rule.escalation: %d steps, at most %d", len(steps), maxEscalationSteps)
	}
	var out []schema.EscalationStep
	var last time.Duration
	for i, s := range steps {
		if s.GetAfter() == nil || s.GetAfter().CheckValid() != nil || s.GetAfter().AsDuration() <= 0 {
			return bad("rule.escalation[%d].after: want a duration above zero", i)
		}
		after := s.GetAfter().AsDuration()
		switch {
		case after <= last:
			return bad("rule.escalation[%d].after: %s, want later than the step before (%s)", i, after, last)
		case limit > 0 && after >= limit:
			return bad("rule.escalation[%d].after: %s, want before the rule's time_limit (%s)", i, after, limit)
		}
		last = after
		step := schema.EscalationStep{After: int64(after)}
		role, err := roleFrom(fmt.Sprintf("rule.escalation[%d].role", i), s.GetRole(), false)
		if err != nil {
			return nil, err
		}
		switch {
		case role != identity.RoleNone && len(s.GetPeople()) > 0:
			return bad("rule.escalation[%d]: give a role or people, not both", i)
		case role == identity.RoleNone && len(s.GetPeople()) == 0:
			return bad("rule.escalation[%d]: give a role or people who may decide from then on", i)
		case role != identity.RoleNone && role != identity.RoleApprover && role != identity.RoleAdmin:
			return bad("rule.escalation[%d].role: must be ROLE_APPROVER or ROLE_ADMIN", i)
		case len(s.GetPeople()) > maxEscalationPeople:
			return bad("rule.escalation[%d].people: %d people, at most %d", i, len(s.GetPeople()), maxEscalationPeople)
		}
		if role != identity.RoleNone {
			step.Role = role.String()
		}
		for j, p := range s.GetPeople() {
			c, err := canonicalPerson(p)
			if err != nil || identity.ValidName(p) != nil {
				return bad("rule.escalation[%d].people[%d]: %s is not an email address", i, j, quoted(p))
			}
			if slices.Contains(step.People, c) {
				return bad("rule.escalation[%d].people[%d]: %q given twice", i, j, c)
			}
			step.People = append(step.People, c)
		}
		out = append(out, step)
	}
	return out, nil
}

// escalationProto is a rule's escalation as the API shows it.
func escalationProto(steps []schema.EscalationStep) []*boardv1.EscalationStep {
	var out []*boardv1.EscalationStep
	for _, s := range steps {
		p := &boardv1.EscalationStep{After: durationpb.New(time.Duration(s.After)), People: s.People}
		if s.Role != "" {
			p.Role = storedRoleProto(s.Role)
		}
		out = append(out, p)
	}
	return out
}

// allowedAt is allowedBy for an approval that reached level steps of r's
// escalation: the rule's own deciders, and each reached step's.
func allowedAt(r *ent.Rule, level int, caller identity.Caller) error {
	err := allowedBy(r, caller)
	if err == nil {
		return nil
	}
	for _, s := range r.Escalation[:min(level, len(r.Escalation))] {
		if allowedBy(&ent.Rule{ID: r.ID, People: s.People, Role: s.Role}, caller) == nil {
			return nil
		}
	}
	return err
}

// escalateDue takes the escalation steps that are due, once each.
func (b *Board) escalateDue(ctx context.Context) {
	rules, err := b.db.Rule.Query().Where(rule.EscalationNotNil()).All(ctx)
	if err != nil {
		b.log.ErrorContext(ctx, "look for rules that escalate", "err", err.Error())
		return
	}
	now := b.now().UTC().Truncate(time.Microsecond)
	left := escalateBatch
	for _, r := range rules {
		for k := len(r.Escalation); k >= 1 && left > 0; k-- {
			step := r.Escalation[k-1]
			rows, err := b.db.Approval.Query().
				Where(approval.RuleID(r.ID), approval.State(StatePending), approval.EscalationLevelLT(k),
					approval.CreatedAtLTE(now.Add(-time.Duration(step.After)))).
				Limit(left).
				All(ctx)
			if err != nil {
				b.log.ErrorContext(ctx, "look for approvals to escalate", "err", err.Error())
				return
			}
			for _, row := range rows {
				left--
				b.escalate(ctx, row, r, k, now)
			}
		}
	}
}

// escalate moves row to step k of r's escalation, if no board has: audited
// and announced once.
func (b *Board) escalate(ctx context.Context, row *ent.Approval, r *ent.Rule, k int, now time.Time) {
	step := r.Escalation[k-1]
	done := false
	err := store.InTx(ctx, b.db, func(tx *ent.Tx) error {
		n, err := tx.Approval.Update().
			Where(approval.ID(row.ID), approval.State(StatePending), approval.EscalationLevelLT(k)).
			SetEscalationLevel(k).
			Save(ctx)
		if err != nil || n == 0 {
			return err
		}
		done = true
		detail := map[string]any{"agent": row.Agent, "run": row.Run, "node": row.Node, "rule_id": r.ID, "step": k,
			"after": time.Duration(step.After).String()}
		if len(step.People) > 0 {
			detail["people"] = step.People
		} else {
			detail["role"] = step.Role
		}
		if err := b.audit.Append(ctx, tx, audit.Record{Actor: "board", Action: "approval.escalate", Subject: row.ID, Detail: detail, At: now}); err != nil {
			return err
		}
		return b.enqueueNotifications(ctx, tx, row, "escalated", k, now)
	})
	if err != nil {
		b.log.ErrorContext(ctx, "escalate an approval", "approval", row.ID, "err", err.Error())
		return
	}
	if done {
		b.publishApproval(ctx, eventEscalated, row.ID)
	}
}
