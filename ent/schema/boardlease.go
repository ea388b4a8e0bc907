package schema

import (
	"entgo.io/ent"
	"entgo.io/ent/schema/field"
)

// BoardLease is one board of the store, alive while its lease lasts: it
// renews it every few seconds, and the others mark offline the agents of a
// board whose lease ran out (docs/many-boards.md).
type BoardLease struct {
	ent.Schema
}

// Fields of the BoardLease.
func (BoardLease) Fields() []ent.Field {
	return []ent.Field{
		field.String("id").NotEmpty().Unique().Immutable(),
		field.Time("started_at").Immutable(),
		field.Time("expires_at"),
	}
}
