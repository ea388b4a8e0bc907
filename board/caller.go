package board

import "context"

type callerKey struct{}

// withCaller returns ctx carrying who is calling.
func withCaller(ctx context.Context, c Caller) context.Context {
	return context.WithValue(ctx, callerKey{}, c)
}

// callerFrom returns who is calling, set by the authentication interceptor.
func callerFrom(ctx context.Context) (Caller, bool) {
	c, ok := ctx.Value(callerKey{}).(Caller)
	return c, ok
}
