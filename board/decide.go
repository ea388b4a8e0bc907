package board

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"connectrpc.com/connect/v2"
	"google.golang.org/protobuf/types/known/timestamppb"

	boardv1 "github.com/symphonix/symphonix/api/symphonix/board/v1"
	"github.com/symphonix/symphonix/audit"
	"github.com/symphonix/symphonix/ent"
	"github.com/symphonix/symphonix/ent/approval"
	"github.com/symphonix/symphonix/ent/conversation"
	"github.com/symphonix/symphonix/ent/pairing"
	"github.com/symphonix/symphonix/ent/vote"
	"github.com/symphonix/symphonix/identity"
	"github.com/symphonix/symphonix/store"
)

// Limits on a decision.
const (
	maxReasonLen = 4096
	// maxApprovalIDLen is the longest approval id a request may name; the
	// board's own are 28 bytes.
	maxApprovalIDLen = 64
	// decideAttempts is how often a yes is tried when a concurrent vote by
	// the same person won the race to the unique (approval, person) row.
	decideAttempts = 3
	// expireBatch is how many due approvals one pass of the loop expires.
	expireBatch = 100
)

// Says a Decide may carry, and the say of a cancellation.
const (
	sayYes       = "yes"
	sayNo        = "no"
	sayCancelled = "cancelled"
	// sayExpired is never stored: an expired approval has no decision, and
	// the board pushes its expiry to the agent with this say.
	sayExpired = StateExpired
)

// errLostRace: the approval stopped being pending between reading it and
// the conditional update; someone else decided it first.
var errLostRace = errors.New("approval decided at the same moment")

// refusal is a Decide or Cancel refused: the caller gets the connect
// error, and the audit log an "approval.refuse" entry of its own.
func refusal(code connect.Code, format string, a ...any) error {
	return connect.NewError(code, fmt.Sprintf(format, a...))
}

func (s approvalService) Decide(ctx context.Context, req *boardv1.DecideRequest) (*boardv1.DecideResponse, error) {
	row, err := s.b.decide(ctx, req)
	if err != nil {
		return nil, err
	}
	return &boardv1.DecideResponse{Approval: approvalProto(row)}, nil
}

func (s approvalService) Cancel(ctx context.Context, req *boardv1.CancelRequest) (*boardv1.CancelResponse, error) {
	row, err := s.b.cancel(ctx, req)
	if err != nil {
		return nil, err
	}
	return &boardv1.CancelResponse{Approval: approvalProto(row)}, nil
}

// decide records one operator's yes or no. A no from anyone the rule
// allows decides no at once; a yes counts once per person, and the yes that
// reaches the rule's quorum approves. The vote or decision and its audit
// entry commit together or not at all; the state changes only through an
// UPDATE … WHERE state = 'pending' whose row count is checked, so of two
// decisions at the same moment exactly one wins.
func (b *Board) decide(ctx context.Context, req *boardv1.DecideRequest) (*ent.Approval, error) {
	caller, _ := identity.FromContext(ctx)
	detail := refusalDetail("decide", req.GetReason())
	say, sayErr := sayFrom("say", req.GetSay())
	if sayErr == nil {
		detail["say"] = say
	} else if req.GetSay() != boardv1.Say_SAY_UNSPECIFIED {
		detail["say"] = enumName(req.GetSay())
	}
	boundedDetail(detail, "digest", req.GetDigest(), digestLen)
	terms, termsErr := consentTermsFrom(req)
	var out *ent.Approval
	var decided bool
	var err error
	switch {
	case req.GetId() == "":
		err = refusal(connect.CodeInvalidArgument, "id: required")
	case len(req.GetId()) > maxApprovalIDLen:
		err = refusal(connect.CodeInvalidArgument, "id: %d bytes, at most %d", len(req.GetId()), maxApprovalIDLen)
	case sayErr != nil:
		err = sayErr
	case !digestShape.MatchString(req.GetDigest()):
		err = refusal(connect.CodeInvalidArgument, "digest: want sha256: and 64 lower-case hex digits, the digest of the approval shown")
	case len(req.GetReason()) > maxReasonLen:
		err = refusal(connect.CodeInvalidArgument, "reason: %d bytes, at most %d", len(req.GetReason()), maxReasonLen)
	case termsErr != nil:
		err = termsErr
	case len(req.GetActionLink()) > maxActionLink:
		err = refusal(connect.CodeInvalidArgument, "action_link: %d bytes, at most %d", len(req.GetActionLink()), maxActionLink)
	default:
		for attempt := 1; ; attempt++ {
			out, decided, err = b.decideOnce(ctx, caller, req, say, terms)
			if ent.IsConstraintError(err) && attempt < decideAttempts {
				continue // the same person's concurrent yes stored first; look again
			}
			break
		}
	}
	if errors.Is(err, errLostRace) || ent.IsConstraintError(err) {
		err = refusal(connect.CodeFailedPrecondition, "approval %q: already decided", req.GetId())
	}
	if err != nil {
		return nil, b.refused(ctx, caller, req.GetId(), detail, err)
	}
	if decided {
		b.metrics.approvalDecided(out.RuleID, out.Say, out.CreatedAt, out.DecidedAt)
		b.deliver(ctx, out.Agent, out.ID)
	}
	return out, nil
}

func (b *Board) decideOnce(ctx context.Context, caller identity.Caller, req *boardv1.DecideRequest, say string, terms *consentTerms) (*ent.Approval, bool, error) {
	now := b.now().UTC().Truncate(time.Microsecond)
	var out *ent.Approval
	var decided bool
	event := boardv1.ApprovalEvent_APPROVAL_EVENT_UNSPECIFIED // what changed, for the watchers; unspecified when nothing did
	err := store.InTx(ctx, b.db, func(tx *ent.Tx) (err error) {
		row, r, err := b.decidable(ctx, tx, caller, req.GetId(), now, false)
		if err != nil {
			return err
		}
		span := b.decisionSpan(ctx, row, "approval decide")
		decidedSay := ""
		defer func() { endDecisionSpan(span, decidedSay, err) }()
		tp := traceparentOf(span)
		if req.GetDigest() != row.Digest {
			return refusal(connect.CodeFailedPrecondition,
				"digest: %q is not the approval's %q: the operator saw another operation", req.GetDigest(), row.Digest)
		}
		if r.RequireReason && req.GetReason() == "" {
			return refusal(connect.CodeInvalidArgument, "reason: required by rule %q", r.ID)
		}
		detail := map[string]any{
			"agent": row.Agent, "run": row.Run, "node": row.Node,
			"digest": row.Digest, "rule_id": r.ID, "say": say,
		}
		if req.GetActionLink() != "" {
			link, err := b.useActionLink(ctx, tx, caller, req, now)
			if err != nil {
				return err
			}
			detail["action_link"] = link
		}
		if req.GetReason() != "" {
			detail["reason"] = req.GetReason()
		}
		if say == sayNo {
			detail["who"] = []string{caller.Name}
			rec := audit.Record{Actor: caller.Name, Action: "approval.decide", Subject: row.ID, Detail: detail, At: now}
			if err := b.recordDecision(ctx, tx, row, r, decisionWrite{state: StateRejected, say: sayNo, who: []string{caller.Name}, reason: req.GetReason(), traceparent: tp, at: now}, rec); err != nil {
				return err
			}
			decided, decidedSay = true, sayNo
			event = eventDecided
			out, err = tx.Approval.Get(ctx, row.ID)
			return err
		}
		if terms != nil {
			if err := consentAllowed(row, r); err != nil {
				return err
			}
		}
		// A yes: one vote per person, however often it is said.
		voted, err := tx.Vote.Query().Where(vote.ApprovalID(row.ID), vote.Person(caller.Name)).Exist(ctx)
		if err != nil {
			return err
		}
		if !voted {
			if err := tx.Vote.Create().SetApprovalID(row.ID).SetPerson(caller.Name).SetReason(req.GetReason()).SetAt(now).Exec(ctx); err != nil {
				return err
			}
		}
		votes, err := tx.Vote.Query().Where(vote.ApprovalID(row.ID)).Order(ent.Asc(vote.FieldAt), ent.Asc(vote.FieldID)).All(ctx)
		if err != nil {
			return err
		}
		voters := make([]string, len(votes))
		for i, v := range votes {
			voters[i] = v.Person
		}
		detail["votes"] = voters
		detail["quorum"] = r.Quorum
		action := "approval.vote"
		if voted {
			detail["counted"] = false // the same person again counts once
		} else {
			event = eventVoted
		}
		if len(voters) >= r.Quorum {
			action = "approval.decide"
			detail["who"] = voters
			rec := audit.Record{Actor: caller.Name, Action: action, Subject: row.ID, Detail: detail, At: now}
			if err := b.recordDecision(ctx, tx, row, r, decisionWrite{state: StateApproved, say: sayYes, who: voters, votes: votes, reason: req.GetReason(), traceparent: tp, at: now}, rec); err != nil {
				return err
			}
			if terms != nil {
				if _, err := b.newConsent(ctx, tx, row, r, terms, caller.Name, now); err != nil {
					return err
				}
			}
			decided, decidedSay = true, sayYes
			event = eventDecided
			out, err = tx.Approval.Get(ctx, row.ID)
			return err
		}
		n, err := tx.Approval.Update().
			Where(approval.ID(row.ID), approval.State(StatePending)).
			SetVotes(voters).
			Save(ctx)
		if err != nil {
			return err
		}
		if n != 1 {
			return errLostRace
		}
		if err := b.audit.Append(ctx, tx, audit.Record{Actor: caller.Name, Action: action, Subject: row.ID, Detail: detail, At: now}); err != nil {
			return err
		}
		out, err = tx.Approval.Get(ctx, row.ID)
		return err
	})
	if err != nil {
		return nil, false, err
	}
	if event != boardv1.ApprovalEvent_APPROVAL_EVENT_UNSPECIFIED {
		b.publishApproval(ctx, event, out.ID)
	}
	return out, decided, nil
}

// decisionWrite is a decision to record: the state it moves the approval
// to, what was said, who said it (and the votes counted, for a yes), why,
// the traceparent of its span, and when.
type decisionWrite struct {
	state, say  string
	consent     string // the standing consent deciding it, if one does
	who         []string
	votes       []*ent.Vote
	reason      string
	traceparent string
	at          time.Time
}

// recordDecision records d on row, governed by rule r (nil for none), with
// its signed receipt and its audit entry rec, in tx; errLostRace when row
// is no longer pending.
func (b *Board) recordDecision(ctx context.Context, tx *ent.Tx, row *ent.Approval, r *ent.Rule, d decisionWrite, rec audit.Record) error {
	if r == nil && row.RuleID != "" {
		var err error
		if r, err = tx.Rule.Get(ctx, row.RuleID); err != nil && !ent.IsNotFound(err) {
			return err
		}
	}
	rc := receiptOf(row, d.say, d.who, d.votes, r, d.at)
	rc.Consent = d.consent
	receipt, err := b.signReceipt(rc, rec, d.at)
	if err != nil {
		return fmt.Errorf("sign the decision's receipt: %w", err)
	}
	var voters []string
	for _, v := range d.votes {
		voters = append(voters, v.Person)
	}
	if err := setDecision(ctx, tx, row.ID, d.state, d.say, row.Digest, d.who, d.reason, d.traceparent, receipt, d.at, voters...); err != nil {
		return err
	}
	if d.consent != "" {
		if err := tx.Approval.UpdateOneID(row.ID).SetConsentID(d.consent).Exec(ctx); err != nil {
			return err
		}
	}
	return b.audit.Append(ctx, tx, rec)
}

// setDecision moves a pending approval to state with its decision and the
// traceparent of the decision's span (decisionSpan; "" for none), or
// returns errLostRace when it is no longer pending.
func setDecision(ctx context.Context, tx *ent.Tx, id, state, say, digest string, who []string, reason, traceparent, receipt string, now time.Time, votes ...string) error {
	u := tx.Approval.Update().
		Where(approval.ID(id), approval.State(StatePending)).
		SetState(state).
		SetSay(say).
		SetDecisionDigest(digest).
		SetDecidedBy(who).
		SetReason(reason).
		SetDecisionTraceparent(traceparent).
		SetReceipt(receipt).
		SetDecidedAt(now)
	if votes != nil {
		u.SetVotes(votes)
	}
	n, err := u.Save(ctx)
	if err != nil {
		return err
	}
	if n != 1 {
		return errLostRace
	}
	return nil
}

// decidable reads the approval id inside tx and checks that caller may
// decide (or, with cancel, cancel) it now. It returns the approval and the
// rule that governs it; the rule is nil only for an admin cancelling an
// approval no rule governs.
func (b *Board) decidable(ctx context.Context, tx *ent.Tx, caller identity.Caller, id string, now time.Time, cancel bool) (*ent.Approval, *ent.Rule, error) {
	row, err := tx.Approval.Get(ctx, id)
	if ent.IsNotFound(err) {
		return nil, nil, refusal(connect.CodeNotFound, "approval %q: not found", id)
	}
	if err != nil {
		return nil, nil, err
	}
	admin := cancel && caller.Operates() && caller.Role >= identity.RoleAdmin
	var r *ent.Rule
	if row.RuleID == "" {
		if !admin {
			return nil, nil, refusal(connect.CodeFailedPrecondition,
				"approval %q: not governed: no rule governed it when raised, so the agent's chat decides it", id)
		}
	} else {
		r, err = tx.Rule.Get(ctx, row.RuleID)
		switch {
		case ent.IsNotFound(err) && admin:
			r = nil
		case ent.IsNotFound(err):
			return nil, nil, refusal(connect.CodeFailedPrecondition,
				"approval %q: its rule %q was deleted; nobody can decide it (an admin can cancel it)", id, row.RuleID)
		case err != nil:
			return nil, nil, err
		}
		if r != nil && !admin {
			if err := allowedAt(r, row.EscalationLevel, caller); err != nil {
				return nil, nil, err
			}
		}
		if r != nil && !cancel && !r.AllowSelfApproval {
			in, err := inConversation(ctx, tx, caller.Name, row)
			if err != nil {
				return nil, nil, err
			}
			if in {
				return nil, nil, refusal(connect.CodePermissionDenied,
					"permission denied: %q is in the conversation this approval came from (agent %q, thread %q), and rule %q does not allow self-approval",
					caller.Name, row.Agent, row.Thread, r.ID)
			}
		}
	}
	if row.State != StatePending {
		return nil, nil, refusal(connect.CodeFailedPrecondition, "approval %q: %s, not pending", id, row.State)
	}
	if row.ExpiresAt != nil && !now.Before(*row.ExpiresAt) {
		// Past its time limit: the loop has not got to it yet.
		return nil, nil, refusal(connect.CodeFailedPrecondition, "approval %q: expired at %s, not pending", id, row.ExpiresAt.Format(time.RFC3339))
	}
	return row, r, nil
}

// inConversation reports whether who is a person in the conversation the
// approval came from: paired into its thread, or named in its pointer
// (which names only people the board paired or verified for the agent).
// An operator token's name is never an address, so never in one.
func inConversation(ctx context.Context, tx *ent.Tx, who string, row *ent.Approval) (bool, error) {
	if who == "" || row.Thread == "" {
		return false, nil
	}
	paired, err := tx.Pairing.Query().
		Where(pairing.Agent(row.Agent), pairing.Thread(row.Thread), pairing.Email(who)).
		Exist(ctx)
	if err != nil || paired {
		return paired, err
	}
	c, err := tx.Conversation.Query().
		Where(conversation.Agent(row.Agent), conversation.Thread(row.Thread)).
		Only(ctx)
	if ent.IsNotFound(err) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	return slices.Contains(c.People, who), nil
}

// allowedBy refuses a caller the rule does not let decide.
func allowedBy(r *ent.Rule, caller identity.Caller) error {
	// An operator token, or a signed-in person (named by their address;
	// no token's name is an address).
	if !caller.Operates() {
		return refusal(connect.CodePermissionDenied, "permission denied: not an operator")
	}
	if len(r.People) > 0 {
		named := func(p string) bool {
			// Canonical since PutRule canonicalises them; a rule put before
			// may name an address in another case.
			c, err := canonicalPerson(p)
			return err == nil && c == caller.Name
		}
		if !slices.ContainsFunc(r.People, named) {
			return refusal(connect.CodePermissionDenied, "permission denied: rule %q names who decides, and %q is not among them", r.ID, caller.Name)
		}
		return nil
	}
	need := identity.RoleApprover
	if r.Role == identity.RoleAdmin.String() {
		need = identity.RoleAdmin
	}
	if caller.Role < need {
		return refusal(connect.CodePermissionDenied, "permission denied: rule %q needs role %s", r.ID, need)
	}
	return nil
}

// refused appends an "approval.refuse" entry, in a transaction of its
// own, for a refusal err, and returns err. An error that is not a
// refusal (the store failed) is returned as it is, unaudited.
func (b *Board) refused(ctx context.Context, caller identity.Caller, id string, detail map[string]any, err error) error {
	var ce *connect.Error
	if !errors.As(err, &ce) {
		return err
	}
	d := make(map[string]any, len(detail)+2)
	for k, v := range detail {
		d[k] = v
	}
	d["code"] = ce.Code().String()
	d["why"] = ce.Message()
	if len(id) > maxApprovalIDLen {
		d["id_bytes"] = len(id)
		id = ""
	}
	if ok, _ := b.mayAudit(ctx, "approval.refuse"); !ok {
		return err // counted, and summarised in one entry
	}
	if aerr := b.audit.AppendNow(ctx, audit.Record{
		Actor: identity.ActorOf(ctx, caller.Name), Action: "approval.refuse", Subject: id, Detail: d,
	}); aerr != nil {
		b.log.ErrorContext(ctx, "audit a refusal", "approval", id, "err", aerr.Error())
	}
	return err
}

// refusalDetail is the start of what the audit log keeps about a refused
// op: the reason, unless it is over the limit (then only its length).
func refusalDetail(op, reason string) map[string]any {
	d := map[string]any{"op": op}
	boundedDetail(d, "reason", reason, maxReasonLen)
	return d
}

// boundedDetail sets d[key] to v when v is not empty and at most max
// bytes, and d[key+"_bytes"] to its length when it is longer: a refusal's
// audit entry never carries what it refused for being too long.
func boundedDetail(d map[string]any, key, v string, max int) {
	switch {
	case v == "":
	case len(v) <= max:
		d[key] = v
	default:
		d[key+"_bytes"] = len(v)
	}
}

// cancel ends a pending approval with the say "cancelled".
func (b *Board) cancel(ctx context.Context, req *boardv1.CancelRequest) (*ent.Approval, error) {
	caller, _ := identity.FromContext(ctx)
	detail := refusalDetail("cancel", req.GetReason())
	var out *ent.Approval
	var err error
	switch {
	case req.GetId() == "":
		err = refusal(connect.CodeInvalidArgument, "id: required")
	case len(req.GetId()) > maxApprovalIDLen:
		err = refusal(connect.CodeInvalidArgument, "id: %d bytes, at most %d", len(req.GetId()), maxApprovalIDLen)
	case len(req.GetReason()) > maxReasonLen:
		err = refusal(connect.CodeInvalidArgument, "reason: %d bytes, at most %d", len(req.GetReason()), maxReasonLen)
	default:
		out, err = b.cancelOnce(ctx, caller, req)
	}
	if errors.Is(err, errLostRace) {
		err = refusal(connect.CodeFailedPrecondition, "approval %q: already decided", req.GetId())
	}
	if err != nil {
		return nil, b.refused(ctx, caller, req.GetId(), detail, err)
	}
	b.deliver(ctx, out.Agent, out.ID)
	return out, nil
}

func (b *Board) cancelOnce(ctx context.Context, caller identity.Caller, req *boardv1.CancelRequest) (*ent.Approval, error) {
	now := b.now().UTC().Truncate(time.Microsecond)
	var out *ent.Approval
	err := store.InTx(ctx, b.db, func(tx *ent.Tx) (err error) {
		row, r, err := b.decidable(ctx, tx, caller, req.GetId(), now, true)
		if err != nil {
			return err
		}
		span := b.decisionSpan(ctx, row, "approval cancel")
		defer func() { endDecisionSpan(span, sayCancelled, err) }()
		if r != nil && r.RequireReason && req.GetReason() == "" {
			return refusal(connect.CodeInvalidArgument, "reason: required by rule %q", r.ID)
		}
		detail := map[string]any{
			"agent": row.Agent, "run": row.Run, "node": row.Node,
			"digest": row.Digest, "rule_id": row.RuleID, "who": []string{caller.Name},
		}
		if req.GetReason() != "" {
			detail["reason"] = req.GetReason()
		}
		rec := audit.Record{Actor: caller.Name, Action: "approval.cancel", Subject: row.ID, Detail: detail, At: now}
		if err := b.recordDecision(ctx, tx, row, r, decisionWrite{state: StateCancelled, say: sayCancelled, who: []string{caller.Name}, reason: req.GetReason(), traceparent: traceparentOf(span), at: now}, rec); err != nil {
			return err
		}
		out, err = tx.Approval.Get(ctx, row.ID)
		return err
	})
	if err != nil {
		return nil, err
	}
	b.metrics.approvalDecided(out.RuleID, sayCancelled, out.CreatedAt, out.DecidedAt)
	b.publishApproval(ctx, eventCancelled, out.ID)
	return out, nil
}

// deliveries serialises, per agent, sending decisions and marking them
// delivered, so that a decision pushed the moment it is made and the
// undelivered decisions sent when the agent links go out exactly once
// between them (on this board).
type deliveries struct {
	keyedLocks
	// marks: the decisions sent whose delivered marks are not yet written
	// (delivered.go).
	marks deliveredMarks
}

// deliver pushes the decision on approval id to the agent's live link, if
// it has one and the decision has not gone out yet, and marks it delivered
// when the send succeeded. A decision not delivered now goes out when the
// agent next links (deliverUndelivered).
func (b *Board) deliver(ctx context.Context, agentName, id string) {
	unlock := b.deliveries.lock(agentName)
	defer unlock()
	ctx = context.WithoutCancel(ctx)
	// Asked before the store: a mark written in between is then seen in
	// one or the other.
	if b.deliveries.marks.of(agentName)[id] {
		return
	}
	row, err := b.db.Approval.Get(ctx, id)
	if err != nil {
		b.log.ErrorContext(ctx, "read a decision to deliver", "approval", id, "err", err.Error())
		return
	}
	d := linkDecisionProto(row)
	if d == nil || row.DeliveredAt != nil {
		return
	}
	if b.pushDecision(agentName, d) {
		b.markDelivered(agentName, id)
	}
}

// deliverUndelivered sends every decision on the agent's approvals that
// has not reached it, oldest first, with send (the session's: its send
// for one that has just been welcomed, its push for one that another
// board woke, crossboard.go), and then marks those that went out delivered, in one write
// before it returns (or, if the store cannot take it, as soon as it can). A decision that went out on an earlier link of this
// board and whose mark is not written yet is not sent again. It stops at
// the first failed send: the rest go out on the next link.
func (b *Board) deliverUndelivered(ctx context.Context, s *session, send func(*boardv1.LinkResponse) error) {
	unlock := b.deliveries.lock(s.name)
	defer unlock()
	sentHere := b.deliveries.marks.of(s.name)
	rows, err := b.db.Approval.Query().
		Where(approval.Agent(s.name), approval.SayNEQ(""), approval.DeliveredAtIsNil()).
		Order(ent.Asc(approval.FieldDecidedAt), ent.Asc(approval.FieldID)).
		All(ctx)
	if err != nil {
		b.log.ErrorContext(ctx, "read undelivered decisions", "agent", s.name, "err", err.Error())
		return
	}
	var sent []string
	for _, row := range rows {
		if sentHere[row.ID] {
			continue
		}
		err := send(&boardv1.LinkResponse{Kind: &boardv1.LinkResponse_Decision{Decision: linkDecisionProto(row)}})
		if err != nil {
			break
		}
		sent = append(sent, row.ID)
	}
	now := b.now().UTC().Truncate(time.Microsecond)
	for ids := range slices.Chunk(sent, maxMarkBatch) {
		err := b.db.Approval.Update().
			Where(approval.IDIn(ids...), approval.DeliveredAtIsNil()).
			SetDeliveredAt(now).
			Exec(ctx)
		if err != nil {
			// Kept as sent on this board and written when the store is back.
			b.log.WarnContext(ctx, "mark decisions delivered", "agent", s.name, "approvals", len(ids), "err", err.Error())
			for _, id := range ids {
				b.deliveries.marks.add(b, s.name, id, now)
			}
		}
	}
}

// markDelivered records that the decision on id reached agentName. The
// mark is written soon after, with others (deliveredMarks), not before the
// caller goes on: it is not on a decision's way to its agent or to the
// operator's answer. The caller holds the agent's delivery lock.
func (b *Board) markDelivered(agentName, id string) {
	b.deliveries.marks.add(b, agentName, id, b.now().UTC().Truncate(time.Microsecond))
}

// expireDue turns pending approvals past their expires_at into expired,
// each with its "approval.expire" audit entry in the same transaction.
// The background loop calls it on every tick. An expiry is pushed to a
// live agent as a decision of its own (say "expired", never a no); an agent
// that is away learns it when it raises again, from the state "expired" in
// the answer.
func (b *Board) expireDue(ctx context.Context) {
	now := b.now().UTC().Truncate(time.Microsecond)
	rows, err := b.db.Approval.Query().
		Where(approval.State(StatePending), approval.ExpiresAtLTE(now)).
		Order(ent.Asc(approval.FieldExpiresAt)).
		Limit(expireBatch).
		All(ctx)
	if err != nil {
		b.log.ErrorContext(ctx, "look for expired approvals", "err", err.Error())
		return
	}
	for _, row := range rows {
		expired := false
		err := store.InTx(ctx, b.db, func(tx *ent.Tx) error {
			rec := audit.Record{
				Actor: "board", Action: "approval.expire", Subject: row.ID,
				Detail: map[string]any{
					"agent": row.Agent, "run": row.Run, "node": row.Node, "digest": row.Digest,
					"rule_id": row.RuleID, "expires_at": row.ExpiresAt.UTC().Format(time.RFC3339Nano),
				},
				At: now,
			}
			r, err := tx.Rule.Get(ctx, row.RuleID)
			if err != nil && !ent.IsNotFound(err) {
				return err
			}
			receipt, err := b.signReceipt(receiptOf(row, sayExpired, nil, nil, r, now), rec, now)
			if err != nil {
				return fmt.Errorf("sign the expiry's receipt: %w", err)
			}
			n, err := tx.Approval.Update().
				Where(approval.ID(row.ID), approval.State(StatePending)).
				SetState(StateExpired).
				SetReceipt(receipt).
				SetDecidedAt(now).
				Save(ctx)
			if err != nil || n != 1 {
				return err // n == 0: decided or expired by someone else first
			}
			expired = true
			row.Receipt = receipt
			return b.audit.Append(ctx, tx, rec)
		})
		if err != nil {
			b.log.ErrorContext(ctx, "expire an approval", "approval", row.ID, "err", err.Error())
			continue
		}
		if expired {
			b.metrics.approvalExpired(row.RuleID)
			b.publishApproval(ctx, eventExpired, row.ID)
			row.DecidedAt = &now
			b.tellExpired(ctx, row)
		}
	}
}

// tellExpired tells the agent of row, an approval that expired, if its
// link is live: on this board, or (through the approval's wake) on the
// board that holds it. One that is away learns it when it raises again.
// Not recorded as delivered: there is no decision.
func (b *Board) tellExpired(ctx context.Context, row *ent.Approval) {
	span := b.decisionSpan(ctx, row, "approval expire")
	var at *timestamppb.Timestamp
	if row.DecidedAt != nil {
		at = timestamppb.New(*row.DecidedAt)
	}
	b.presence.sendLiveHere(row.Agent, &boardv1.LinkResponse{Kind: &boardv1.LinkResponse_Decision{Decision: &boardv1.ApprovalDecision{
		ApprovalId: row.ID, Say: sayProto(sayExpired), Digest: row.Digest, DecideTime: at,
		Run: row.Run, Node: row.Node, Thread: row.Thread, Traceparent: traceparentOf(span), Receipt: row.Receipt,
	}}})
	endDecisionSpan(span, sayExpired, nil)
}
