package schema

import (
	"entgo.io/ent"
	"entgo.io/ent/schema/field"
	"entgo.io/ent/schema/index"
)

// PublisherKey is an Ed25519 public key the board trusts as a publisher's,
// until it is revoked; a revoked key is never trusted again.
type PublisherKey struct {
	ent.Schema
}

// Fields of the PublisherKey.
func (PublisherKey) Fields() []ent.Field {
	return []ent.Field{
		// id is the key id: "sha256:" and the hex SHA-256 of the raw key.
		field.String("id").NotEmpty().Unique().Immutable(),
		// public_key is the raw 32 bytes.
		field.Bytes("public_key").Immutable(),
		field.String("publisher").NotEmpty().Immutable(),
		field.String("added_by").NotEmpty().Immutable(),
		field.Time("added_at").Immutable(),
		field.Time("revoked_at").Optional().Nillable(),
		field.String("revoked_by").Default(""),
		field.String("revoke_reason").Default(""),
	}
}

// Indexes of the PublisherKey.
func (PublisherKey) Indexes() []ent.Index {
	return []ent.Index{index.Fields("publisher")}
}
