package board

import "github.com/symphonix/symphonix/identity"

// Access is what the board asks of the caller of one procedure, read from
// the policy table it enforces. The API reference (docs/api.md) is written
// from it, so that the reference cannot say a role the board does not
// enforce.
type Access struct {
	// Kind: identity.KindAgent (the link) or identity.KindOperator (the
	// operator API, where a signed-in person stands for an operator); empty
	// with AnyKind or Public.
	Kind identity.Kind
	// Role: for operators, the lowest role allowed.
	Role identity.Role
	// SessionOnly: only a signed-in person (a session cookie), never a
	// token.
	SessionOnly bool
	// AnyKind: any valid operator or agent token.
	AnyKind bool
	// Public: anyone, without a credential.
	Public bool
}

// AccessOf returns what procedure ("/package.Service/Method") asks of its
// caller, and false for a procedure the board refuses to everybody.
func AccessOf(procedure string) (Access, bool) {
	a, ok := policy[procedure]
	if !ok {
		return Access{}, false
	}
	return Access{Kind: a.kind, Role: a.role, SessionOnly: a.session, AnyKind: a.anyKind, Public: a.public}, true
}
