package schema

import (
	"entgo.io/ent"
	"entgo.io/ent/schema/field"
	"entgo.io/ent/schema/index"
)

// RateHit is one failure a rate limit counts (a wrong password, a wrong
// pairing code), when several boards share the store: each board counts
// the failures every board recorded, within the limit's window
// (docs/many-boards.md). The key is a hash of what is limited (an account,
// an address), never the thing itself.
type RateHit struct {
	ent.Schema
}

// Fields of the RateHit.
func (RateHit) Fields() []ent.Field {
	return []ent.Field{
		field.String("limiter").NotEmpty().MaxLen(32).Immutable(),
		field.String("key").NotEmpty().MaxLen(64).Immutable(),
		field.Time("at").Immutable(),
	}
}

// Indexes of the RateHit.
func (RateHit) Indexes() []ent.Index {
	return []ent.Index{
		index.Fields("limiter", "key", "at"),
		index.Fields("at"),
	}
}
