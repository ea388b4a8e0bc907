package board

import (
	"context"

	"connectrpc.com/connect/v2"

	boardv1 "github.com/symphonix/symphonix/api/symphonix/board/v1"
)

func (s agentService) PauseAgent(ctx context.Context, req *boardv1.PauseAgentRequest) (*boardv1.PauseAgentResponse, error) {
	return nil, connect.NewError(connect.CodeUnimplemented, "not yet")
}

func (s agentService) ResumeAgent(ctx context.Context, req *boardv1.ResumeAgentRequest) (*boardv1.ResumeAgentResponse, error) {
	return nil, connect.NewError(connect.CodeUnimplemented, "not yet")
}
