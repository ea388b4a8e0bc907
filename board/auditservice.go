package board

import (
	"context"
	"encoding/json"

	"connectrpc.com/connect/v2"
	"google.golang.org/protobuf/types/known/structpb"
	"google.golang.org/protobuf/types/known/timestamppb"

	boardv1 "github.com/symphonix/symphonix/api/symphonix/board/v1"
	"github.com/symphonix/symphonix/api/symphonix/board/v1/boardv1connect"
	"github.com/symphonix/symphonix/audit"
)

// auditService is symphonix.board.v1.AuditService.
type auditService struct {
	b *Board
}

var _ boardv1connect.AuditServiceHandler = auditService{}

// ListAudit is a page of the log, oldest first, after after_seq; its
// token holds the last seq sent, and is good only with the same after_seq.
func (s auditService) ListAudit(ctx context.Context, req *boardv1.ListAuditRequest) (*boardv1.ListAuditResponse, error) {
	if req.GetAfterSeq() < 0 {
		return nil, connect.NewError(connect.CodeInvalidArgument, "after_seq: must not be negative")
	}
	pg, err := s.b.page("ListAudit", req.GetPageSize(), req.GetPageToken(), defaultPageSize, maxPageSize, 1,
		int64String(req.GetAfterSeq()))
	if err != nil {
		return nil, err
	}
	after := req.GetAfterSeq()
	if pg.after != nil {
		if after, err = positionInt(pg.after[0]); err != nil {
			return nil, err
		}
	}
	res := &boardv1.ListAuditResponse{Entries: []*boardv1.AuditEntry{}}
	for {
		// A few at a time, and one more than the page holds, so that a
		// few large entries never make one list hold many more of them
		// than it sends.
		n := min(auditPage, pg.budget.max-pg.budget.items+1)
		entries, err := s.b.audit.List(ctx, after, n)
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
			after = e.Seq
		}
		if len(entries) < n {
			return res, nil
		}
	}
}

// auditPage is how many entries ListAudit reads from the log at once.
const auditPage = 100

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
