package board

import (
	"github.com/symphonix/symphonix/api/symphonix/board/v1/boardv1connect"
)

// evalService is symphonix.board.v1.EvalService: what each agent's builds
// scored in their evals, and whether the deployed one scored worse.
// docs/evals.md says how.
type evalService struct {
	boardv1connect.UnimplementedEvalServiceHandler
	b *Board
}

var _ boardv1connect.EvalServiceHandler = evalService{}
