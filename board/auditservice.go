package board

import (
	"context"
	"encoding/json"
	"fmt"
	"time"
	"unicode/utf8"

	"connectrpc.com/connect/v2"
	"google.golang.org/protobuf/types/known/structpb"
	"google.golang.org/protobuf/types/known/timestamppb"

	boardv1 "github.com/symphonix/symphonix/api/symphonix/board/v1"
	"github.com/symphonix/symphonix/api/symphonix/board/v1/boardv1connect"
	"github.com/symphonix/symphonix/audit"
	"github.com/symphonix/symphonix/identity"
)

// auditService is symphonix.board.v1.AuditService.
type auditService struct {
	b *Board
}

var _ boardv1connect.AuditServiceHandler = auditService{}

// Bounds of ListAudit's filters (docs/limits.md).
const (
	maxAuditActor   = 256
	maxAuditAction  = 64
	maxAuditSubject = 256
)

// VerifyAudit's bounds (docs/limits.md): it reads the whole log, so a
// board runs one at a time, and one caller may start verifyAuditsPerCaller
// a verifyAuditWindow.
const (
	verifyAuditsPerCaller = 6
	verifyAuditWindow     = time.Minute
)

// auditFilter is a ListAudit request's filters, checked.
func auditFilter(req *boardv1.ListAuditRequest) (audit.Query, error) {
	q := audit.Query{
		AfterSeq: req.GetAfterSeq(), Actor: req.GetActor(), Action: req.GetAction(),
		Subject: req.GetSubject(), Newest: req.GetNewestFirst(),
	}
	if q.AfterSeq < 0 {
		return q, connect.NewError(connect.CodeInvalidArgument, "after_seq: must not be negative")
	}
	if err := auditText(q.Actor, maxAuditActor); err != nil {
		return q, connect.Errorf(connect.CodeInvalidArgument, "actor: %v", err)
	}
	if err := auditText(q.Subject, maxAuditSubject); err != nil {
		return q, connect.Errorf(connect.CodeInvalidArgument, "subject: %v", err)
	}
	if len(q.Action) > maxAuditAction {
		return q, connect.Errorf(connect.CodeInvalidArgument, "action: %d bytes, at most %d", len(q.Action), maxAuditAction)
	}
	for _, r := range q.Action {
		if !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '.' || r == '_' || r == '-') {
			return q, connect.Errorf(connect.CodeInvalidArgument,
				"action: %q: only lower-case letters, digits, \".\", \"_\" and \"-\" (a prefix ends with \".\")", q.Action)
		}
	}
	if q.Action != "" && q.Action[0] == '.' {
		return q, connect.Errorf(connect.CodeInvalidArgument, "action: %q: must not begin with \".\"", q.Action)
	}
	var err error
	if q.Since, err = auditTime(req.GetSince()); err != nil {
		return q, connect.Errorf(connect.CodeInvalidArgument, "since: %v", err)
	}
	if q.Until, err = auditTime(req.GetUntil()); err != nil {
		return q, connect.Errorf(connect.CodeInvalidArgument, "until: %v", err)
	}
	if !q.Since.IsZero() && !q.Until.IsZero() && !q.Until.After(q.Since) {
		return q, connect.Errorf(connect.CodeInvalidArgument, "until: %s is not after since (%s)",
			q.Until.Format(time.RFC3339Nano), q.Since.Format(time.RFC3339Nano))
	}
	return q, nil
}

// auditText checks a filter matched exactly: valid UTF-8 of at most max
// bytes.
func auditText(s string, max int) error {
	if len(s) > max {
		return fmt.Errorf("%d bytes, at most %d", len(s), max)
	}
	if !utf8.ValidString(s) {
		return fmt.Errorf("not valid UTF-8")
	}
	return nil
}

// auditTime is t as a time, zero when t is unset.
func auditTime(t *timestamppb.Timestamp) (time.Time, error) {
	if t == nil {
		return time.Time{}, nil
	}
	if err := t.CheckValid(); err != nil {
		return time.Time{}, fmt.Errorf("not a valid time: %v", err)
	}
	return t.AsTime(), nil
}

// ListAudit is a page of the entries the request's filters pick, oldest
// first (or newest first) after after_seq; its token holds the last seq
// sent, and is good only with the same filters.
func (s auditService) ListAudit(ctx context.Context, req *boardv1.ListAuditRequest) (*boardv1.ListAuditResponse, error) {
	q, err := auditFilter(req)
	if err != nil {
		return nil, err
	}
	order := "asc"
	if q.Newest {
		order = "desc"
	}
	pg, err := s.b.page("ListAudit", req.GetPageSize(), req.GetPageToken(), defaultPageSize, maxPageSize, 1,
		int64String(req.GetAfterSeq()), q.Actor, q.Action, q.Subject,
		timeFilter(q.Since), timeFilter(q.Until), order)
	if err != nil {
		return nil, err
	}
	if pg.after != nil {
		last, err := positionInt(pg.after[0])
		if err != nil {
			return nil, err
		}
		if q.Newest {
			q.BeforeSeq = last
		} else {
			q.AfterSeq = last
		}
	}
	res := &boardv1.ListAuditResponse{Entries: []*boardv1.AuditEntry{}}
	for {
		// A few at a time, and one more than the page holds, so that a
		// few large entries never make one list hold many more of them
		// than it sends.
		q.Limit = min(auditPage, pg.budget.max-pg.budget.items+1)
		entries, err := s.b.audit.Find(ctx, q)
		if err != nil {
			return nil, err
		}
		for _, e := range entries {
			p, err := auditEntryProto(e)
			if err != nil {
				return nil, err
			}
			if !pg.take(p, int64String(e.Seq)) {
				res.NextPageToken = pg.next()
				return res, nil
			}
			res.Entries = append(res.Entries, p)
			if q.Newest {
				q.BeforeSeq = e.Seq
			} else {
				q.AfterSeq = e.Seq
			}
		}
		if len(entries) < q.Limit {
			return res, nil
		}
	}
}

// timeFilter is t as a page token's filter: "" for no bound.
func timeFilter(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format(time.RFC3339Nano)
}

// auditPage is how many entries ListAudit reads from the log at once.
const auditPage = 100

// VerifyAudit checks the whole chain (audit.Log.Verify). The board runs
// one at a time: one asked for while another runs is refused, not queued,
// so callers never pile up behind a long read; and each caller may start
// verifyAuditsPerCaller a verifyAuditWindow.
func (s auditService) VerifyAudit(ctx context.Context, _ *boardv1.VerifyAuditRequest) (*boardv1.VerifyAuditResponse, error) {
	caller, _ := identity.FromContext(ctx)
	key := streamKey(caller)
	if retry, ok := s.b.verifyRate.take(ctx, key); !ok {
		return nil, connect.Errorf(connect.CodeResourceExhausted,
			"too many verifications: at most %d a minute for one token or person; try again in %s",
			verifyAuditsPerCaller, roundUp(retry))
	}
	s.b.verifyRate.done(ctx, key, true) // every start counts
	select {
	case s.b.verifying <- struct{}{}:
		defer func() { <-s.b.verifying }()
	default:
		return nil, connect.NewError(connect.CodeResourceExhausted,
			"the board is already verifying the audit log: one at a time; try again when it is done")
	}
	r, err := s.b.audit.Verify(ctx)
	if err != nil {
		return nil, err
	}
	res := &boardv1.VerifyAuditResponse{
		Ok: r.OK(), Entries: r.Entries, Head: r.Head, BadSeq: r.Bad, Pending: r.Pending, BadRow: int64(r.BadRow),
	}
	if r.Why != nil {
		res.Why = r.Why.Error()
	}
	return res, nil
}

func auditEntryProto(e audit.Entry) (*boardv1.AuditEntry, error) {
	var detail map[string]any
	if err := json.Unmarshal(e.Detail, &detail); err != nil {
		return nil, err
	}
	st, err := structpb.NewStruct(detail)
	if err != nil {
		return nil, err
	}
	return &boardv1.AuditEntry{
		Seq: e.Seq, RecordTime: timestamppb.New(e.At), Actor: e.Actor, Action: e.Action,
		Subject: e.Subject, Detail: st, Prev: e.Prev, Hash: e.Hash,
	}, nil
}
