package schema

import (
	"entgo.io/ent"
	"entgo.io/ent/schema/field"
	"entgo.io/ent/schema/index"
)

// Verification is a person the board verified for an agent (the verify
// door), and when it last did. Like a Pairing, it is the board's own word
// that the person came to that agent: the people an agent reports in its
// conversations are kept only when the board paired or verified them for
// it.
type Verification struct {
	ent.Schema
}

// Fields of the Verification.
func (Verification) Fields() []ent.Field {
	return []ent.Field{
		field.String("agent").NotEmpty().Immutable(),
		// email is the person's canonical address.
		field.String("email").NotEmpty().Immutable(),
		field.String("user_id").NotEmpty(),
		field.Time("at"),
	}
}

// Indexes of the Verification: one row per agent and person.
func (Verification) Indexes() []ent.Index {
	return []ent.Index{index.Fields("agent", "email").Unique()}
}
