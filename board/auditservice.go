package board

import (
	"context"
	"encoding/json"

	"connectrpc.com/connect/v2"
	"google.golang.org/protobuf/types/known/structpb"
	"google.golang.org/protobuf/types/known/timestamppb"

	boardv1 "github.com/symphonix/symphonix/api/symphonix/board/v1"
	"github.com/symphonix/symphonix/api/symphonix/board/v1/boardv1connect"
)

// auditService is symphonix.board.v1.AuditService.
type auditService struct {
	b *Board
}

var _ boardv1connect.AuditServiceHandler = auditService{}

func (s auditService) ListAudit(ctx context.Context, req *boardv1.ListAuditRequest) (*boardv1.ListAuditResponse, error) {
	if req.GetAfter() < 0 {
		return nil, connect.NewError(connect.CodeInvalidArgument, "after: must not be negative")
	}
	if req.GetLimit() < 0 {
		return nil, connect.NewError(connect.CodeInvalidArgument, "limit: must not be negative")
	}
	entries, err := s.b.audit.List(ctx, req.GetAfter(), int(req.GetLimit()))
	if err != nil {
		return nil, err
	}
	res := &boardv1.ListAuditResponse{Entries: make([]*boardv1.AuditEntry, len(entries))}
	for i, e := range entries {
		var detail map[string]any
		if err := json.Unmarshal(e.Detail, &detail); err != nil {
			return nil, err
		}
		st, err := structpb.NewStruct(detail)
		if err != nil {
			return nil, err
		}
		res.Entries[i] = &boardv1.AuditEntry{
			Seq: e.Seq, At: timestamppb.New(e.At), Actor: e.Actor, Action: e.Action,
			Subject: e.Subject, Detail: st, Prev: e.Prev, Hash: e.Hash,
		}
	}
	return res, nil
}
