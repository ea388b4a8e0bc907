package schema

import (
	"entgo.io/ent"
	"entgo.io/ent/schema/field"
)

// User is one person the board knows: an operator who signs in on the web,
// and someone an agent may be told is in a conversation (paired, verified).
type User struct {
	ent.Schema
}

// Fields of the User.
func (User) Fields() []ent.Field {
	return []ent.Field{
		// id: "usr-" and random hex.
		field.String("id").NotEmpty().Unique().Immutable(),
		// email is canonical: trimmed, lower-cased (docs/people.md).
		field.String("email").NotEmpty().Unique(),
		field.String("name").Default(""),
		// role: viewer, approver or admin; each includes the ones below it.
		field.String("role").NotEmpty(),
		// password_hash: argon2id in PHC form; "" until the person sets one
		// through their one-time setup link. Never a default.
		field.String("password_hash").Default("").Sensitive(),
		// verify_hash: argon2id of the secret an agent's verify is checked
		// against; "" when the person has set none (verify then refuses).
		field.String("verify_hash").Default("").Sensitive(),
		field.Bool("disabled").Default(false),
		// setup_hash: SHA-256 of the one-time setup token, and when it
		// stops working; cleared when used.
		field.String("setup_hash").Default("").Sensitive(),
		field.Time("setup_expires_at").Optional().Nillable(),
		field.Time("created_at").Immutable(),
		field.Time("updated_at"),
	}
}
