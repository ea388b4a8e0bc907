package board

import "github.com/symphonix/symphonix/api/symphonix/board/v1/boardv1connect"

// alertService is symphonix.board.v1.AlertService: the board's alert rules
// and what they say of each agent now.
type alertService struct {
	boardv1connect.UnimplementedAlertServiceHandler
	b *Board
}

var _ boardv1connect.AlertServiceHandler = alertService{}
