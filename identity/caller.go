package identity

import (
	"context"
	"time"
)

// Caller is who an authenticated request comes from.
type Caller struct {
	Kind Kind
	// Name: the operator's or agent's name; a person's canonical email.
	Name string
	// UserID: the signed-in person (KindSession); "" otherwise.
	UserID  string
	Role    Role
	TokenID string
	// ExpiresAt is when the token stops being good.
	ExpiresAt time.Time
}

// Operates reports whether the caller works the board: an operator token,
// or a signed-in person. Either is judged by its role.
func (c Caller) Operates() bool { return c.Kind == KindOperator || c.Kind == KindSession }

type callerKey struct{}

// NewContext returns ctx carrying who is calling. The board's
// authentication sets it once per request; nothing else should.
func NewContext(ctx context.Context, c Caller) context.Context {
	return context.WithValue(ctx, callerKey{}, c)
}

// FromContext returns who is calling, if anyone authenticated the request.
func FromContext(ctx context.Context) (Caller, bool) {
	c, ok := ctx.Value(callerKey{}).(Caller)
	return c, ok
}
