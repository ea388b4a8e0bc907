package board

import (
	"github.com/symphonix/symphonix/api/symphonix/board/v1/boardv1connect"
)

// triggerService is symphonix.board.v1.TriggerService: the triggers each
// agent reports, and the operators' switch that pauses one.
// docs/triggers.md says how.
type triggerService struct {
	boardv1connect.UnimplementedTriggerServiceHandler
	b *Board
}

var _ boardv1connect.TriggerServiceHandler = triggerService{}
