package schema

import (
	"entgo.io/ent"
	"entgo.io/ent/schema/field"
	"entgo.io/ent/schema/index"
)

// Vote is one person's yes toward an approval's quorum. The unique
// (approval_id, person) index makes the same person twice count once,
// whatever raced. board/decide.go writes them.
type Vote struct {
	ent.Schema
}

// Fields of the Vote.
func (Vote) Fields() []ent.Field {
	return []ent.Field{
		field.String("approval_id").NotEmpty().Immutable(),
		field.String("person").NotEmpty().Immutable(),
		field.Text("reason").Default("").Immutable(),
		field.Time("at").Immutable(),
	}
}

// Indexes of the Vote.
func (Vote) Indexes() []ent.Index {
	return []ent.Index{
		index.Fields("approval_id", "person").Unique(),
	}
}
