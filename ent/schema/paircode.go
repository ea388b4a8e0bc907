package schema

import (
	"entgo.io/ent"
	"entgo.io/ent/schema/field"
	"entgo.io/ent/schema/index"
)

// PairCode is a code an agent shows in a conversation so the person in it
// can say, on the board, who they are. Stored hashed; single use; short-lived.
type PairCode struct {
	ent.Schema
}

// Fields of the PairCode.
func (PairCode) Fields() []ent.Field {
	return []ent.Field{
		field.String("id").NotEmpty().Unique().Immutable(),
		// code_hash: SHA-256 of the normalised code.
		field.String("code_hash").NotEmpty().Unique().Immutable().Sensitive(),
		field.String("agent").NotEmpty().Immutable(),
		field.String("thread").NotEmpty().Immutable(),
		field.Time("created_at").Immutable(),
		field.Time("expires_at").Immutable(),
		// wrong_tries: wrong codes entered while this one was the agent's
		// newest for the thread; at the limit the code is dead.
		field.Int("wrong_tries").Default(0),
		field.Time("used_at").Optional().Nillable(),
	}
}

// Indexes of the PairCode.
func (PairCode) Indexes() []ent.Index {
	return []ent.Index{index.Fields("agent", "thread")}
}
