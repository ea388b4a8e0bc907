package board

import (
	"context"

	"connectrpc.com/connect/v2"

	boardv1 "github.com/symphonix/symphonix/api/symphonix/board/v1"
)

func (s agentService) GetHealthHistory(ctx context.Context, req *boardv1.GetHealthHistoryRequest) (*boardv1.GetHealthHistoryResponse, error) {
	return nil, connect.NewError(connect.CodeUnimplemented, "not yet")
}
