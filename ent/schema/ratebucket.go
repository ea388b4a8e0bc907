package schema

import (
	"entgo.io/ent"
	"entgo.io/ent/schema/field"
)

// RateBucket is one caller's token bucket (how many audited refusals it may
// still make the board write), when several boards share the store. Its id
// is a hash of the caller's key.
type RateBucket struct {
	ent.Schema
}

// Fields of the RateBucket.
func (RateBucket) Fields() []ent.Field {
	return []ent.Field{
		field.String("id").NotEmpty().MaxLen(64).Unique().Immutable(),
		field.Float("tokens"),
		field.Time("at"),
	}
}
