package board

import (
	"context"

	"connectrpc.com/connect/v2"

	boardv1 "github.com/symphonix/symphonix/api/symphonix/board/v1"
)

// PreviewRule says what a rule would govern if it were put now.
func (s approvalService) PreviewRule(context.Context, *boardv1.PreviewRuleRequest) (*boardv1.PreviewRuleResponse, error) {
	return nil, connect.NewError(connect.CodeUnimplemented, "PreviewRule: not served by this board yet")
}
