package board

import (
	"context"
	"errors"
	"log/slog"

	"connectrpc.com/connect/v2"

	"github.com/symphonix/symphonix/ent"
	"github.com/symphonix/symphonix/identity"
	"github.com/symphonix/symphonix/store"
)

// storeUnreachable is what a caller is told when the board cannot reach
// its store: it decides nothing on what it last knew.
const storeUnreachable = "the board cannot reach its store now; try again"

// toConnectError is the one place a handler's error becomes what a client
// sees. Connect errors made on purpose pass through; known conditions get
// their code; anything else is logged and sent as a bare internal error.
func (b *Board) toConnectError(ctx context.Context, err error) error {
	if err == nil {
		return nil
	}
	var slow *slowBodyError
	if errors.As(err, &slow) {
		// Connect reports a failed read as unknown; it was the client's.
		return connect.NewError(connect.CodeDeadlineExceeded, slow.Error())
	}
	var ce *connect.Error
	if errors.As(err, &ce) {
		return err
	}
	switch {
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return connect.NewError(connect.CodeCanceled, "canceled").WithCause(err)
	case errors.Is(err, identity.ErrNoUser):
		return connect.NewError(connect.CodeNotFound, err.Error())
	case errors.Is(err, identity.ErrUserExists):
		return connect.NewError(connect.CodeAlreadyExists, err.Error())
	case errors.Is(err, identity.ErrBadEmail), errors.Is(err, identity.ErrBadName), errors.Is(err, identity.ErrNoRole), errors.Is(err, identity.ErrWeakPassword):
		return connect.NewError(connect.CodeInvalidArgument, err.Error())
	case errors.Is(err, identity.ErrLastAdmin):
		return connect.NewError(connect.CodeFailedPrecondition, err.Error())
	case ent.IsNotFound(err):
		return connect.NewError(connect.CodeNotFound, "not found").WithCause(err)
	case store.Unreachable(err):
		// Nothing was done: whatever the call would change is in the store.
		b.log.LogAttrs(ctx, slog.LevelWarn, "the store cannot be reached", slog.String("err", err.Error()))
		return connect.NewError(connect.CodeUnavailable, storeUnreachable).WithCause(err)
	}
	b.log.LogAttrs(ctx, slog.LevelError, "internal error", slog.String("err", err.Error()))
	return connect.NewError(connect.CodeInternal, "internal error").WithCause(err)
}
