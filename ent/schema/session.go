package schema

import (
	"entgo.io/ent"
	"entgo.io/ent/schema/field"
	"entgo.io/ent/schema/index"
)

// Session is one web sign-in. A session cookie is accepted only while its
// row exists and is not ended, so the table is the allow-list: signing out,
// or disabling the person, ends it at once.
type Session struct {
	ent.Schema
}

// Fields of the Session.
func (Session) Fields() []ent.Field {
	return []ent.Field{
		// id is the session JWT's jti.
		field.String("id").NotEmpty().Unique().Immutable(),
		field.String("user_id").NotEmpty().Immutable(),
		// csrf_hash: SHA-256 of the session's CSRF token.
		field.String("csrf_hash").NotEmpty().Immutable().Sensitive(),
		field.String("source").Default("").Immutable(),
		field.Time("created_at").Immutable(),
		field.Time("expires_at").Immutable(),
		field.Time("ended_at").Optional().Nillable(),
	}
}

// Indexes of the Session.
func (Session) Indexes() []ent.Index {
	return []ent.Index{index.Fields("user_id")}
}
