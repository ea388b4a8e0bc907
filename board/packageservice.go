package board

import (
	"github.com/symphonix/symphonix/api/symphonix/board/v1/boardv1connect"
)

// packageService is symphonix.board.v1.PackageService: the library of
// signed solution packages and the trust that admits them.
// docs/library.md says how.
type packageService struct {
	boardv1connect.UnimplementedPackageServiceHandler
	b *Board
}

var _ boardv1connect.PackageServiceHandler = packageService{}
