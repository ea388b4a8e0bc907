package board

import (
	"context"
	"time"

	"connectrpc.com/connect/v2"
)

// rpcMetrics counts every RPC by procedure and code, and times the unary
// ones (symphonix_rpc_requests_total, symphonix_rpc_duration_seconds). It
// wraps the board's own interceptor, so that a call refused for its
// credential is counted with the code it was refused with.
func (b *Board) rpcMetrics() connect.ServerInterceptor {
	return func(next connect.ServerFunc) connect.ServerFunc {
		return func(ctx context.Context, spec connect.Spec, stream connect.ServerStream) error {
			start := time.Now()
			err := next(ctx, spec, stream)
			b.metrics.rpcDone(spec.Procedure, err, time.Since(start), spec.StreamType == connect.StreamTypeUnary)
			return err
		}
	}
}
