package board

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"time"

	"connectrpc.com/connect/v2"
	"google.golang.org/protobuf/types/known/timestamppb"

	boardv1 "github.com/symphonix/symphonix/api/symphonix/board/v1"
	"github.com/symphonix/symphonix/approvals"
	"github.com/symphonix/symphonix/audit"
	"github.com/symphonix/symphonix/ent"
	"github.com/symphonix/symphonix/ent/consent"
	"github.com/symphonix/symphonix/ent/predicate"
	"github.com/symphonix/symphonix/identity"
	"github.com/symphonix/symphonix/store"
)

// Standing consent (docs/approvals.md): an approver's yes may also stand,
// for a while or a number of times, for the later operations of the same
// agent with the exact same digest, under the same rule — never for a
// tool or a node as a whole. A raise whose digest a live consent covers is
// decided yes at once, in the raise's transaction, by the consent's maker,
// with a receipt naming the consent; each use is counted by a conditional
// update, so a consent of N uses approves N operations however many are
// raised at once.
const (
	maxConsentFor  = 168 * time.Hour
	maxConsentUses = 1000
)

// consentTerms is a validated StandingConsent.
type consentTerms struct {
	lasts time.Duration
	uses  int
}

// consentTermsFrom validates req's consent; nil for none.
func consentTermsFrom(req *boardv1.DecideRequest) (*consentTerms, error) {
	c := req.GetConsent()
	if c == nil {
		return nil, nil
	}
	if req.GetSay() != boardv1.Say_SAY_YES {
		return nil, refusal(connect.CodeInvalidArgument, "consent: only with SAY_YES")
	}
	t := &consentTerms{uses: int(c.GetUses())}
	if d := c.GetDuration(); d != nil {
		if err := d.CheckValid(); err != nil {
			return nil, refusal(connect.CodeInvalidArgument, "consent.duration: %v", err)
		}
		t.lasts = d.AsDuration()
	}
	switch {
	case t.lasts < 0 || t.lasts > maxConsentFor:
		return nil, refusal(connect.CodeInvalidArgument, "consent.duration: %s, want up to %s", t.lasts, maxConsentFor)
	case t.uses < 0 || t.uses > maxConsentUses:
		return nil, refusal(connect.CodeInvalidArgument, "consent.uses: %d, want 0 to %d", t.uses, maxConsentUses)
	case t.lasts == 0 && t.uses == 0:
		return nil, refusal(connect.CodeInvalidArgument, "consent: want a duration, a number of uses, or both")
	}
	if t.lasts == 0 {
		t.lasts = maxConsentFor
	}
	return t, nil
}

// consentAllowed says why rule r does not let a yes on row stand, or nil.
func consentAllowed(row *ent.Approval, r *ent.Rule) error {
	switch {
	case r == nil:
		return refusal(connect.CodeFailedPrecondition, "consent: the approval is not governed by a rule")
	case r.NoStandingConsent:
		return refusal(connect.CodeFailedPrecondition, "consent: rule %q does not allow standing consent", r.ID)
	case r.Quorum > 1:
		return refusal(connect.CodeFailedPrecondition, "consent: rule %q wants %d people's yes; one person's consent cannot stand for them", r.ID, r.Quorum)
	}
	if max := r.StandingConsentMaxAmount; max > 0 {
		for _, a := range approvals.AmountsOf(row.Ask, row.Account) {
			if a.Value > max {
				return refusal(connect.CodeFailedPrecondition, "consent: the approval shows %s, above rule %q's standing consent limit of %g", a.Text, r.ID, max)
			}
		}
	}
	return nil
}

// newConsent records a standing consent given with the yes on row, in tx.
func (b *Board) newConsent(ctx context.Context, tx *ent.Tx, row *ent.Approval, r *ent.Rule, t *consentTerms, who string, now time.Time) (string, error) {
	p := make([]byte, 12)
	if _, err := rand.Read(p); err != nil {
		return "", err
	}
	id := "con-" + hex.EncodeToString(p)
	exp := now.Add(t.lasts)
	err := tx.Consent.Create().SetID(id).SetAgent(row.Agent).SetDigest(row.Digest).SetRuleID(r.ID).SetApprovalID(row.ID).
		SetCreatedBy(who).SetCreatedAt(now).SetExpiresAt(exp).SetUsesAllowed(t.uses).Exec(ctx)
	if err != nil {
		return "", err
	}
	return id, b.audit.Append(ctx, tx, audit.Record{Actor: who, Action: "consent.create", Subject: id, At: now, Detail: map[string]any{
		"agent": row.Agent, "digest": row.Digest, "rule_id": r.ID, "approval": row.ID,
		"expires_at": exp.Format(time.RFC3339Nano), "uses": t.uses,
	}})
}

// liveConsent is what a consent must be to approve an operation now.
func liveConsent(now time.Time) predicate.Consent {
	return consent.And(consent.RevokedAtIsNil(), consent.ExpiresAtGT(now))
}

// useConsent decides row, just raised under rule r, yes by a live consent
// covering its agent and digest, if there is one with a use left; it
// reports whether one did.
func (b *Board) useConsent(ctx context.Context, tx *ent.Tx, row *ent.Approval, r *ent.Rule, now time.Time) (bool, error) {
	if consentAllowed(row, r) != nil {
		return false, nil // the rule as it is now does not let a yes stand
	}
	cs, err := tx.Consent.Query().
		Where(consent.Agent(row.Agent), consent.Digest(row.Digest), consent.RuleID(r.ID), liveConsent(now)).
		Order(ent.Desc(consent.FieldCreatedAt)).
		Limit(16).
		All(ctx)
	if err != nil {
		return false, err
	}
	for _, c := range cs {
		u := tx.Consent.Update().Where(consent.ID(c.ID), liveConsent(now))
		if c.UsesAllowed > 0 {
			u.Where(consent.UsesLT(c.UsesAllowed))
		}
		n, err := u.AddUses(1).Save(ctx)
		if err != nil {
			return false, err
		}
		if n == 0 {
			continue // spent or revoked meanwhile
		}
		detail := map[string]any{
			"agent": row.Agent, "run": row.Run, "node": row.Node, "digest": row.Digest,
			"rule_id": r.ID, "say": sayYes, "who": []string{c.CreatedBy}, "consent": c.ID,
		}
		rec := audit.Record{Actor: c.CreatedBy, Action: "approval.decide", Subject: row.ID, Detail: detail, At: now}
		d := decisionWrite{state: StateApproved, say: sayYes, who: []string{c.CreatedBy}, reason: "standing consent " + c.ID, at: now, consent: c.ID}
		if err := b.recordDecision(ctx, tx, row, r, d, rec); err != nil {
			return false, err
		}
		return true, nil
	}
	return false, nil
}

// consentProto is c as the API shows it, at now.
func consentProto(c *ent.Consent, now time.Time) *boardv1.Consent {
	p := &boardv1.Consent{
		Id: c.ID, Agent: c.Agent, Digest: c.Digest, RuleId: c.RuleID, ApprovalId: c.ApprovalID, CreatedBy: c.CreatedBy,
		CreateTime: timestamppb.New(c.CreatedAt), ExpireTime: timestamppb.New(c.ExpiresAt),
		UsesAllowed: int32(c.UsesAllowed), Uses: int32(c.Uses), RevokedBy: c.RevokedBy,
	}
	switch {
	case c.RevokedAt != nil:
		p.RevokeTime, p.State = timestamppb.New(*c.RevokedAt), "revoked"
	case c.UsesAllowed > 0 && c.Uses >= c.UsesAllowed:
		p.State = "used"
	case !now.Before(c.ExpiresAt):
		p.State = "expired"
	default:
		p.State = "active"
	}
	return p
}

// ListConsents is a page of standing consents, newest first.
func (s approvalService) ListConsents(ctx context.Context, req *boardv1.ListConsentsRequest) (*boardv1.ListConsentsResponse, error) {
	if a := req.GetAgent(); a != "" {
		if err := identity.ValidName(a); err != nil {
			return nil, connect.Errorf(connect.CodeInvalidArgument, "agent: %v", err)
		}
	}
	pg, err := s.b.page("ListConsents", req.GetPageSize(), req.GetPageToken(), defaultApprovalPageSize, maxApprovalPageSize, 2,
		req.GetAgent(), fmt.Sprint(req.GetActiveOnly()))
	if err != nil {
		return nil, err
	}
	now := s.b.now()
	q := s.b.db.Consent.Query()
	if a := req.GetAgent(); a != "" {
		q.Where(consent.Agent(a))
	}
	if req.GetActiveOnly() {
		q.Where(liveConsent(now))
	}
	if pg.after != nil {
		t, err := positionTime(pg.after[0])
		if err != nil {
			return nil, err
		}
		q.Where(consent.Or(consent.CreatedAtLT(t), consent.And(consent.CreatedAt(t), consent.IDLT(pg.after[1]))))
	}
	rows, err := q.Order(ent.Desc(consent.FieldCreatedAt), ent.Desc(consent.FieldID)).Limit(maxApprovalPageSize + 1).All(ctx)
	if err != nil {
		return nil, err
	}
	out := &boardv1.ListConsentsResponse{Consents: []*boardv1.Consent{}}
	for _, c := range rows {
		p := consentProto(c, now)
		if req.GetActiveOnly() && p.State != "active" {
			continue
		}
		if !pg.take(p, microString(c.CreatedAt), c.ID) {
			out.NextPageToken = pg.next()
			return out, nil
		}
		out.Consents = append(out.Consents, p)
	}
	return out, nil
}

// RevokeConsent ends a consent at once: its maker, a person its rule lets
// decide, or an admin may.
func (s approvalService) RevokeConsent(ctx context.Context, req *boardv1.RevokeConsentRequest) (*boardv1.RevokeConsentResponse, error) {
	b := s.b
	caller, _ := identity.FromContext(ctx)
	switch {
	case req.GetId() == "":
		return nil, connect.Errorf(connect.CodeInvalidArgument, "id: required")
	case len(req.GetId()) > 64:
		return nil, connect.Errorf(connect.CodeInvalidArgument, "id: %d bytes, at most 64", len(req.GetId()))
	case len(req.GetReason()) > maxReasonLen:
		return nil, connect.Errorf(connect.CodeInvalidArgument, "reason: %d bytes, at most %d", len(req.GetReason()), maxReasonLen)
	}
	now := b.now().UTC().Truncate(time.Microsecond)
	var out *ent.Consent
	err := store.InTx(ctx, b.db, func(tx *ent.Tx) error {
		c, err := tx.Consent.Get(ctx, req.GetId())
		if ent.IsNotFound(err) {
			return refusal(connect.CodeNotFound, "consent %q: not found", req.GetId())
		}
		if err != nil {
			return err
		}
		if c.RevokedAt != nil {
			return refusal(connect.CodeFailedPrecondition, "consent %q: already revoked", c.ID)
		}
		if caller.Name != c.CreatedBy && caller.Role < identity.RoleAdmin {
			r, err := tx.Rule.Get(ctx, c.RuleID)
			if err != nil && !ent.IsNotFound(err) {
				return err
			}
			if r == nil || allowedBy(r, caller) != nil {
				return refusal(connect.CodePermissionDenied, "permission denied: only the consent's maker, a person its rule lets decide, or an admin may revoke it")
			}
		}
		if out, err = tx.Consent.UpdateOneID(c.ID).SetRevokedAt(now).SetRevokedBy(caller.Name).Save(ctx); err != nil {
			return err
		}
		detail := map[string]any{"agent": c.Agent, "digest": c.Digest, "uses": c.Uses}
		if req.GetReason() != "" {
			detail["reason"] = req.GetReason()
		}
		return b.audit.Append(ctx, tx, audit.Record{Actor: identity.ActorOf(ctx, caller.Name), Action: "consent.revoke", Subject: c.ID, Detail: detail, At: now})
	})
	if err != nil {
		return nil, err
	}
	return &boardv1.RevokeConsentResponse{Consent: consentProto(out, now)}, nil
}
