package schema

import (
	"entgo.io/ent"
	"entgo.io/ent/schema/field"
)

// ReceiptKey is one of the keys the board signs decision receipts with
// (docs/receipts.md): the newest that is valid signs; a retired one is
// kept, and published, so the receipts it signed stay verifiable.
type ReceiptKey struct {
	ent.Schema
}

// Fields of the ReceiptKey.
func (ReceiptKey) Fields() []ent.Field {
	return []ent.Field{
		field.String("id").NotEmpty().MaxLen(64).Unique().Immutable(),
		// private_key: the Ed25519 seed.
		field.Bytes("private_key").Sensitive().Immutable(),
		// not_before: when it begins to sign; retired_at: when it stopped.
		field.Time("not_before").Immutable(),
		field.Time("retired_at").Optional().Nillable(),
		field.Time("created_at").Immutable(),
	}
}
