package board

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"connectrpc.com/connect/v2"
	"go.opentelemetry.io/otel/trace"
	"google.golang.org/protobuf/types/known/timestamppb"

	boardv1 "github.com/symphonix/symphonix/api/symphonix/board/v1"
	"github.com/symphonix/symphonix/approvals"
	"github.com/symphonix/symphonix/audit"
	"github.com/symphonix/symphonix/ent"
	"github.com/symphonix/symphonix/ent/approval"
	"github.com/symphonix/symphonix/ent/predicate"
	"github.com/symphonix/symphonix/identity"
	"github.com/symphonix/symphonix/store"
	"github.com/symphonix/symphonix/telemetry"
)

// Approval states.
const (
	StatePending    = "pending"
	StateApproved   = "approved"
	StateRejected   = "rejected"
	StateCancelled  = "cancelled"
	StateExpired    = "expired"
	StateSuperseded = "superseded"
)

// Limits on what a link request may carry.
const (
	maxRequestID  = 128
	maxRunLen     = 256
	maxThreadLen  = 256
	maxNodeLen    = 256
	maxAskLen     = 16 << 10
	maxShowLen    = 64 << 10
	maxAccountLen = 64 << 10
	// raiseAttempts is how often a raise is tried when a concurrent raise
	// for the same run and node won the race to the one pending row.
	raiseAttempts = 3
)

// digestShape is the shape of an operation's digest; the board checks the
// shape and never computes one. digestLen is its length.
var digestShape = buildShape

const digestLen = len("sha256:") + 64

// pushDecision sends d to the agent's live link on this board, if it has
// one, from whatever goroutine calls it. It reports whether the decision
// went out; a decision that did not reaches the agent when it next links
// and raises again.
func (b *Board) pushDecision(agentName string, d *boardv1.ApprovalDecision) bool {
	return b.presence.sendLive(agentName, &boardv1.LinkResponse{Kind: &boardv1.LinkResponse_Decision{Decision: d}})
}

// linkRequestError is a link request refused: only that request fails,
// and the agent is told why in a LinkError.
type linkRequestError struct {
	code connect.Code
	msg  string
}

func (e *linkRequestError) Error() string { return e.msg }

func badRequest(format string, a ...any) error {
	return &linkRequestError{code: connect.CodeInvalidArgument, msg: fmt.Sprintf(format, a...)}
}

// answerError sends the refusal of one request. A refusal that is not a
// linkRequestError is logged and answered as internal.
func (l linkService) answerError(ctx context.Context, s *session, requestID, what string, err error) error {
	if len(requestID) > maxRequestID {
		requestID = "" // refused for its length: not sent back
	}
	var le *linkRequestError
	switch {
	case errors.As(err, &le):
	case store.Unreachable(err):
		l.b.log.WarnContext(ctx, "link request failed: the store cannot be reached", "agent", s.name, "request", what, "err", err.Error())
		le = &linkRequestError{code: connect.CodeUnavailable, msg: what + ": " + storeUnreachable}
	default:
		l.b.log.ErrorContext(ctx, "link request failed", "agent", s.name, "request", what, "err", err.Error())
		le = &linkRequestError{code: connect.CodeInternal, msg: what + ": internal error"}
	}
	return s.out.send(&boardv1.LinkResponse{Kind: &boardv1.LinkResponse_Error{Error: &boardv1.LinkError{
		RequestId: requestID, Code: linkErrorCode(le.code), Message: le.msg,
	}}})
}

// whoDecides answers a who_decides. Only a failure to send ends the link.
func (l linkService) whoDecides(ctx context.Context, s *session, q *boardv1.WhoDecides) error {
	ans, err := l.b.whoDecidesAnswer(ctx, s.name, q)
	if err != nil {
		return l.answerError(ctx, s, q.GetRequestId(), "who_decides", err)
	}
	return s.out.send(&boardv1.LinkResponse{Kind: &boardv1.LinkResponse_WhoDecidesAnswer{WhoDecidesAnswer: ans}})
}

func (b *Board) whoDecidesAnswer(ctx context.Context, agentName string, q *boardv1.WhoDecides) (*boardv1.WhoDecidesAnswer, error) {
	if err := validRequestID(q.GetRequestId()); err != nil {
		return nil, badRequest("who_decides.request_id: %v", err)
	}
	if err := validText(q.GetNode(), maxNodeLen, true); err != nil {
		return nil, badRequest("who_decides.node: %v", err)
	}
	r, err := b.ruleFor(ctx, agentName, q.GetNode())
	if err != nil {
		return nil, err
	}
	ans := &boardv1.WhoDecidesAnswer{RequestId: q.GetRequestId(), Ruling: rulingProto(approvals.NotGoverned)}
	if r != nil {
		ans.Ruling = rulingProto(approvals.Governed)
		ans.RuleId = r.ID
		ans.Role = storedRoleProto(r.Role)
		ans.People = r.People
		ans.Quorum = int32(r.Quorum)
	}
	return ans, nil
}

// raise answers a raise. Only a failure to send ends the link.
func (l linkService) raise(ctx context.Context, s *session, q *boardv1.Raise) error {
	ctx, span := l.b.raiseSpan(ctx, s.name, q)
	row, err := l.b.raise(ctx, s.name, q)
	endRaiseSpan(span, row, err)
	if err != nil {
		return l.answerError(ctx, s, q.GetRequestId(), "raise", err)
	}
	d := linkDecisionProto(row)
	if d != nil {
		// The answer carries the decision: it counts as its delivery.
		unlock := l.b.deliveries.lock(s.name)
		defer unlock()
	}
	err = s.out.send(&boardv1.LinkResponse{Kind: &boardv1.LinkResponse_Raised{Raised: &boardv1.Raised{
		RequestId:  q.GetRequestId(),
		ApprovalId: row.ID,
		State:      approvalStateProto(row.State),
		Decision:   d,
	}}})
	if err == nil && d != nil && row.DeliveredAt == nil {
		l.b.markDelivered(s.name, row.ID)
	}
	return err
}

// validRaise checks a raise, naming the field at fault.
func validRaise(q *boardv1.Raise) error {
	if err := validRequestID(q.GetRequestId()); err != nil {
		return badRequest("raise.request_id: %v", err)
	}
	for _, f := range []struct {
		name     string
		v        string
		max      int
		required bool
	}{
		{"run", q.GetRun(), maxRunLen, true},
		{"node", q.GetNode(), maxNodeLen, true},
		{"thread", q.GetThread(), maxThreadLen, false},
	} {
		if err := validText(f.v, f.max, f.required); err != nil {
			return badRequest("raise.%s: %v", f.name, err)
		}
	}
	if id := q.GetRunId(); id != "" {
		if err := validRunID(id); err != nil {
			return badRequest("raise.run_id: %v", err)
		}
	}
	if n := len(q.GetAsk()); n > maxAskLen {
		return badRequest("raise.ask: %d bytes, at most %d", n, maxAskLen)
	}
	if n := len(q.GetAccount()); n > maxAccountLen {
		return badRequest("raise.account: %d bytes, at most %d", n, maxAccountLen)
	}
	if err := validShow(q.GetShow()); err != nil {
		return badRequest("raise.show: %v", err)
	}
	switch d := q.GetDigest(); {
	case d == "":
		return badRequest("raise.digest: required")
	case !digestShape.MatchString(d):
		return badRequest("raise.digest: want sha256: and 64 lower-case hex digits")
	}
	return nil
}

func validRequestID(id string) error {
	switch {
	case id == "":
		return fmt.Errorf("required")
	case len(id) > maxRequestID:
		return fmt.Errorf("%d bytes, at most %d", len(id), maxRequestID)
	}
	return nil
}

// validText checks an identifier-like field: UTF-8, no control characters,
// at most max bytes.
func validText(v string, max int, required bool) error {
	switch {
	case v == "" && required:
		return fmt.Errorf("required")
	case len(v) > max:
		return fmt.Errorf("%d bytes, at most %d", len(v), max)
	case !utf8.ValidString(v):
		return fmt.Errorf("not UTF-8")
	case strings.ContainsFunc(v, func(r rune) bool { return r < 0x20 || r == 0x7f }):
		return fmt.Errorf("control characters")
	}
	return nil
}

// raise stores the approval an agent asks for, or returns the one it
// already holds: raising is idempotent per agent, run and node. The same
// digest again is the same approval (decided or not) and writes nothing; a
// different digest while one is pending supersedes it, so the old one can
// never be decided. The change and its audit entries are one transaction.
func (b *Board) raise(ctx context.Context, agentName string, q *boardv1.Raise) (*ent.Approval, error) {
	if err := validRaise(q); err != nil {
		return nil, err
	}
	r, err := b.ruleFor(ctx, agentName, q.GetNode())
	if err != nil {
		return nil, err
	}
	for attempt := 1; ; attempt++ {
		row, err := b.raiseOnce(ctx, agentName, q, r)
		if ent.IsConstraintError(err) && attempt < raiseAttempts {
			// A concurrent raise for the same run and node stored its
			// pending approval first; look again.
			continue
		}
		return row, err
	}
}

func (b *Board) raiseOnce(ctx context.Context, agentName string, q *boardv1.Raise, r *ent.Rule) (*ent.Approval, error) {
	now := b.now().UTC().Truncate(time.Microsecond)
	actor := identity.ActorOf(ctx, agentName)
	var out *ent.Approval
	superseded := "" // the pending approval the new one replaced
	created, consented := false, false
	err := store.InTx(ctx, b.db, func(tx *ent.Tx) error {
		latest, err := tx.Approval.Query().
			Where(approval.Agent(agentName), approval.Run(q.GetRun()), approval.Node(q.GetNode()),
				approval.StateNEQ(StateSuperseded)).
			Order(ent.Desc(approval.FieldCreatedAt), ent.Desc(approval.FieldID)).
			First(ctx)
		switch {
		case ent.IsNotFound(err):
			latest = nil
		case err != nil:
			return err
		}
		if latest != nil && latest.Digest == q.GetDigest() {
			out = latest
			return nil
		}
		id, err := newApprovalID()
		if err != nil {
			return err
		}
		if latest == nil || latest.State != StatePending {
			// A new pending approval, not one in the place of another.
			if err := b.roomToRaise(ctx, tx, agentName); err != nil {
				return err
			}
		}
		if ok, retry := b.mayAudit(ctx, "approval.raise"); !ok {
			return b.auditLimited("raise", retry)
		}
		if latest != nil && latest.State == StatePending {
			n, err := tx.Approval.Update().
				Where(approval.ID(latest.ID), approval.State(StatePending)).
				SetState(StateSuperseded).
				SetDecidedAt(now).
				Save(ctx)
			if err != nil {
				return err
			}
			if n != 1 {
				return fmt.Errorf("approval %s: changed while superseding it", latest.ID)
			}
			superseded = latest.ID
			err = b.audit.Append(ctx, tx, audit.Record{
				Actor:   actor,
				Action:  "approval.supersede",
				Subject: latest.ID,
				Detail: map[string]any{
					"agent": agentName, "run": latest.Run, "node": latest.Node,
					"digest": latest.Digest, "by": id,
				},
				At: now,
			})
			if err != nil {
				return err
			}
		}
		create := tx.Approval.Create().
			SetID(id).
			SetAgent(agentName).
			SetRun(q.GetRun()).
			SetRunID(q.GetRunId()).
			SetThread(q.GetThread()).
			SetNode(q.GetNode()).
			SetAsk(q.GetAsk()).
			SetShow(q.GetShow()).
			SetAccount(q.GetAccount()).
			SetDigest(q.GetDigest()).
			SetTraceparent(telemetry.Traceparent(trace.SpanContextFromContext(ctx))).
			SetState(StatePending).
			SetCreatedAt(now)
		detail := map[string]any{
			"agent": agentName, "run": q.GetRun(), "node": q.GetNode(),
			"digest": q.GetDigest(), "ruling": string(approvals.NotGoverned),
		}
		if r != nil {
			create.SetRuleID(r.ID)
			detail["ruling"] = string(approvals.Governed)
			detail["rule_id"] = r.ID
			if r.TimeLimit > 0 {
				exp := now.Add(time.Duration(r.TimeLimit))
				create.SetExpiresAt(exp)
				detail["expires_at"] = exp.Format(time.RFC3339Nano)
			}
		}
		if out, err = create.Save(ctx); err != nil {
			return err
		}
		created = true
		err = b.audit.Append(ctx, tx, audit.Record{
			Actor:   actor,
			Action:  "approval.raise",
			Subject: id,
			Detail:  detail,
			At:      now,
		})
		if err != nil || r == nil {
			return err
		}
		// A standing consent for this very operation decides it now.
		if consented, err = b.useConsent(ctx, tx, out, r, now); err != nil {
			return err
		}
		if !consented {
			return b.enqueueNotifications(ctx, tx, out, "raised", 0, now)
		}
		out, err = tx.Approval.Get(ctx, id)
		return err
	})
	if err != nil {
		return nil, err
	}
	if superseded != "" {
		b.publishApproval(ctx, eventSuperseded, superseded)
	}
	if created {
		b.metrics.approvalRaised(out.RuleID)
		b.publishApproval(ctx, eventRaised, out.ID)
	}
	if consented {
		b.metrics.approvalDecided(out.RuleID, out.Say, out.CreatedAt, out.DecidedAt)
		b.publishApproval(ctx, eventDecided, out.ID)
	}
	return out, nil
}

// roomToRaise refuses a new pending approval when the agent has
// Limits.PendingPerAgent pending already.
func (b *Board) roomToRaise(ctx context.Context, tx *ent.Tx, agentName string) error {
	max := b.cfg.Limits.PendingPerAgent
	n, err := tx.Approval.Query().Where(approval.Agent(agentName), approval.State(StatePending)).Count(ctx)
	if err != nil {
		return err
	}
	if n >= max {
		return &linkRequestError{code: connect.CodeResourceExhausted, msg: fmt.Sprintf(
			"raise: this agent has %d approvals pending, at most %d: raise more once some are decided, cancelled or expired", n, max)}
	}
	return nil
}

// newApprovalID is a fresh approval id.
func newApprovalID() (string, error) {
	p := make([]byte, 12)
	if _, err := rand.Read(p); err != nil {
		return "", fmt.Errorf("approval id: %w", err)
	}
	return "apr-" + hex.EncodeToString(p), nil
}

// ListApprovals is a page of approvals, newest first (by create_time,
// then id); its token holds the last one's time and id.
func (s approvalService) ListApprovals(ctx context.Context, req *boardv1.ListApprovalsRequest) (*boardv1.ListApprovalsResponse, error) {
	var where []predicate.Approval
	st, err := approvalStateFrom("state", req.GetState())
	if err != nil {
		return nil, err
	}
	if st != "" {
		where = append(where, approval.State(st))
	}
	if a := req.GetAgent(); a != "" {
		where = append(where, approval.Agent(a))
	}
	if r := req.GetRuleId(); r != "" {
		if len(r) > maxRuleIDLen {
			return nil, connect.Errorf(connect.CodeInvalidArgument, "rule_id: %d bytes, at most %d", len(r), maxRuleIDLen)
		}
		where = append(where, approval.RuleID(r))
	}
	since, err := auditTime(req.GetSince())
	if err != nil {
		return nil, connect.Errorf(connect.CodeInvalidArgument, "since: %v", err)
	}
	until, err := auditTime(req.GetUntil())
	if err != nil {
		return nil, connect.Errorf(connect.CodeInvalidArgument, "until: %v", err)
	}
	if !since.IsZero() && !until.IsZero() && !until.After(since) {
		return nil, connect.Errorf(connect.CodeInvalidArgument, "until: %s is not after since (%s)",
			until.Format(time.RFC3339Nano), since.Format(time.RFC3339Nano))
	}
	if !since.IsZero() {
		where = append(where, approval.CreatedAtGTE(since))
	}
	if !until.IsZero() {
		where = append(where, approval.CreatedAtLT(until))
	}
	pg, err := s.b.page("ListApprovals", req.GetPageSize(), req.GetPageToken(), defaultApprovalPageSize, maxApprovalPageSize, 2,
		st, req.GetAgent(), req.GetRuleId(), timeFilter(since), timeFilter(until))
	if err != nil {
		return nil, err
	}
	var from *approvalKey
	if pg.after != nil {
		t, err := positionTime(pg.after[0])
		if err != nil {
			return nil, err
		}
		from = &approvalKey{createdAt: t, id: pg.after[1]}
	}
	res := &boardv1.ListApprovalsResponse{Approvals: []*boardv1.Approval{}}
	err = s.b.approvalPages(ctx, where, true, from, func(r *ent.Approval) (bool, error) {
		a := approvalProto(r)
		if !pg.take(a, microString(r.CreatedAt), r.ID) {
			return false, nil
		}
		res.Approvals = append(res.Approvals, a)
		return true, nil
	})
	if err != nil {
		return nil, err
	}
	res.NextPageToken = pg.next()
	return res, nil
}

// approvalKey is an approval's place in the order of approvalPages.
type approvalKey struct {
	createdAt time.Time
	id        string
}

// approvalPage is how many approvals are read from the store at once: a
// page holds at most about 150 KiB of each (ask, show, account), so a list
// or a watch's snapshot never holds more than a few pages of them, and a
// watch whose client does not read holds one page, 600 KiB at most. Each
// page is one query on an index (ent/schema/approval.go), so small pages
// cost little.
const approvalPage = 4

// approvalPages reads the approvals where says, by (created_at, id),
// newest first when newest, a page at a time, from the one after from (nil:
// the first), and calls f with each until f says stop or they run out.
func (b *Board) approvalPages(ctx context.Context, where []predicate.Approval, newest bool, from *approvalKey, f func(*ent.Approval) (bool, error)) error {
	last := from
	for {
		q := b.db.Approval.Query().Where(where...)
		order := ent.Asc
		if newest {
			order = ent.Desc
		}
		// After the last page: a range of created_at, so that SQLite walks
		// the index from there in order; "created_at < t OR (created_at =
		// t AND id < i)" alone made it gather and sort every row before.
		if last != nil {
			if newest {
				q.Where(approval.CreatedAtLTE(last.createdAt),
					approval.Or(approval.CreatedAtLT(last.createdAt), approval.IDLT(last.id)))
			} else {
				q.Where(approval.CreatedAtGTE(last.createdAt),
					approval.Or(approval.CreatedAtGT(last.createdAt), approval.IDGT(last.id)))
			}
		}
		rows, err := q.Order(order(approval.FieldCreatedAt), order(approval.FieldID)).Limit(approvalPage).All(ctx)
		if err != nil {
			return err
		}
		for _, r := range rows {
			if more, err := f(r); err != nil || !more {
				return err
			}
		}
		if len(rows) < approvalPage {
			return nil
		}
		r := rows[len(rows)-1]
		last = &approvalKey{createdAt: r.CreatedAt, id: r.ID}
	}
}

func (s approvalService) GetApproval(ctx context.Context, req *boardv1.GetApprovalRequest) (*boardv1.GetApprovalResponse, error) {
	id := req.GetId()
	switch {
	case id == "":
		return nil, connect.NewError(connect.CodeInvalidArgument, "id: required")
	case len(id) > maxApprovalIDLen:
		return nil, connect.Errorf(connect.CodeInvalidArgument, "id: %d bytes, at most %d", len(id), maxApprovalIDLen)
	}
	row, err := s.b.db.Approval.Get(ctx, id)
	if ent.IsNotFound(err) {
		return nil, connect.Errorf(connect.CodeNotFound, "approval %q: not found", id)
	}
	if err != nil {
		return nil, err
	}
	return &boardv1.GetApprovalResponse{Approval: approvalProto(row)}, nil
}

// approvalProto is the API's view of a stored approval.
func approvalProto(r *ent.Approval) *boardv1.Approval {
	p := &boardv1.Approval{
		EscalationLevel: int32(r.EscalationLevel),
		Id:              r.ID,
		Agent:           r.Agent,
		Run:             r.Run,
		RunId:           r.RunID,
		Thread:          r.Thread,
		Node:            r.Node,
		Ask:             r.Ask,
		Account:         r.Account,
		Digest:          r.Digest,
		State:           approvalStateProto(r.State),
		RuleId:          r.RuleID,
		CreateTime:      timestamppb.New(r.CreatedAt),
		Decision:        decisionProto(r),
		Votes:           r.Votes,
		ShowJson:        r.Show,
		//lint:ignore SA1019 deprecated for readers, still sent to the clients that read it
		Show: showStruct(r.Show),
	}
	for _, a := range approvals.AmountsOf(r.Ask, r.Account) {
		p.Amounts = append(p.Amounts, &boardv1.Amount{Text: a.Text, Value: a.Value, Currency: a.Currency})
	}
	if r.ExpiresAt != nil {
		p.ExpireTime = timestamppb.New(*r.ExpiresAt)
	}
	return p
}

// decisionProto is the decision on an approval; nil while it has none.
func decisionProto(r *ent.Approval) *boardv1.ApprovalDecision {
	if r.Say == "" {
		return nil
	}
	d := &boardv1.ApprovalDecision{
		ApprovalId: r.ID,
		Say:        sayProto(r.Say),
		Digest:     r.DecisionDigest,
		Who:        r.DecidedBy,
		Reason:     r.Reason,
		Run:        r.Run,
		Node:       r.Node,
		Thread:     r.Thread,
		Receipt:    r.Receipt,
		ConsentId:  r.ConsentID,
	}
	if r.DecidedAt != nil {
		d.DecideTime = timestamppb.New(*r.DecidedAt)
	}
	return d
}

// linkDecisionProto is decisionProto as the agent's link sends it: with
// the traceparent of the board's span for the decision, which operators
// are not sent.
func linkDecisionProto(r *ent.Approval) *boardv1.ApprovalDecision {
	d := decisionProto(r)
	if d != nil {
		d.Traceparent = r.DecisionTraceparent
	}
	return d
}
