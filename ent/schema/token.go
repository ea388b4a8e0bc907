package schema

import (
	"entgo.io/ent"
	"entgo.io/ent/schema/field"
	"entgo.io/ent/schema/index"
)

// Token is one signed token the board minted. A token is accepted only while
// its row exists and is not revoked, so the table is the allow-list.
type Token struct {
	ent.Schema
}

// Fields of the Token.
func (Token) Fields() []ent.Field {
	return []ent.Field{
		// id is the token's jti.
		field.String("id").NotEmpty().Unique().Immutable(),
		field.Enum("kind").Values("operator", "agent").Immutable(),
		field.String("name").NotEmpty().Immutable(),
		// role is set for operator tokens only.
		field.String("role").Default("").Immutable(),
		field.Time("issued_at").Immutable(),
		field.Time("expires_at").Immutable(),
		field.Time("revoked_at").Optional().Nillable(),
	}
}

// Indexes of the Token.
func (Token) Indexes() []ent.Index {
	return []ent.Index{index.Fields("revoked_at")}
}
