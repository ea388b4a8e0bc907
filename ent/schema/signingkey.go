package schema

import (
	"entgo.io/ent"
	"entgo.io/ent/schema/field"
)

// SigningKey is the board's Ed25519 key for tokens, created on first use and
// kept with the store so every board on one database signs alike.
type SigningKey struct {
	ent.Schema
}

// Fields of the SigningKey.
func (SigningKey) Fields() []ent.Field {
	return []ent.Field{
		// id is the key id (kid) tokens carry in their header.
		field.String("id").NotEmpty().Unique().Immutable(),
		field.Bytes("private_key").Sensitive().Immutable(),
		field.Time("created_at").Immutable(),
	}
}
