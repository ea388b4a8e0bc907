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

func (s auditService) ListAudit(ctx context.Context, req *boardv1.ListAuditRequest) (*boardv1.ListAuditResponse, error) {
	if req.GetAfterSeq() < 0 {
		return nil, connect.NewError(connect.CodeInvalidArgument, "after_seq: must not be negative")
	}
	if req.GetPageSize() < 0 {
		return nil, connect.NewError(connect.CodeInvalidArgument, "page_size: must not be negative")
	}
	limit := int(req.GetPageSize())
	if limit == 0 {
		limit = 100
	}
	limit = min(limit, 1000)
	res := &boardv1.ListAuditResponse{Entries: []*boardv1.AuditEntry{}}
	budget := listBudget{max: limit}
	after := req.GetAfterSeq()
	for {
		// A page at a time, so that a few large entries never make one
		// list hold many more of them than it sends.
		n := min(auditPage, limit-budget.items)
		entries, err := s.b.audit.List(ctx, after, n)
		if err != nil {
			return nil, err
		}
		for _, e := range entries {
			p, err := auditEntryProto(e)
			if err != nil {
				return nil, err
			}
			if !budget.take(p) {
				return res, nil
			}
			res.Entries = append(res.Entries, p)
			after = e.Seq
		}
		if len(entries) < n || budget.items >= limit {
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
