package schema

import (
	"entgo.io/ent"
	"entgo.io/ent/schema/field"
	"entgo.io/ent/schema/index"
)

// Pairing is a conversation linked to a person: the person entered the
// code the agent showed in it. It reaches the agent now, or on its next
// connection.
type Pairing struct {
	ent.Schema
}

// Fields of the Pairing.
func (Pairing) Fields() []ent.Field {
	return []ent.Field{
		field.String("id").NotEmpty().Unique().Immutable(),
		field.String("agent").NotEmpty().Immutable(),
		field.String("thread").NotEmpty().Immutable(),
		field.String("user_id").NotEmpty().Immutable(),
		field.String("email").NotEmpty().Immutable(),
		field.String("name").Default("").Immutable(),
		field.Time("created_at").Immutable(),
		field.Time("delivered_at").Optional().Nillable(),
	}
}

// Indexes of the Pairing.
func (Pairing) Indexes() []ent.Index {
	return []ent.Index{index.Fields("agent", "delivered_at"), index.Fields("user_id")}
}
