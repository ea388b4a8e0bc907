package schema

import (
	"entgo.io/ent"
	"entgo.io/ent/schema/field"
	"entgo.io/ent/schema/index"
)

// ActionLinkUse records an action link used: the personal, signed link
// to one approval a notification sends a person who may decide it
// (docs/notifications.md). Its id is the link's, so a link is used once.
type ActionLinkUse struct {
	ent.Schema
}

// Fields of the ActionLinkUse.
func (ActionLinkUse) Fields() []ent.Field {
	return []ent.Field{
		field.String("id").NotEmpty().MaxLen(64).Unique().Immutable(),
		field.String("approval_id").NotEmpty().Immutable(),
		field.String("person").NotEmpty().Immutable(),
		field.Time("used_at").Immutable(),
		// expires_at: the link's; the row is swept some time after it.
		field.Time("expires_at").Immutable(),
	}
}

// Indexes of the ActionLinkUse.
func (ActionLinkUse) Indexes() []ent.Index {
	return []ent.Index{
		index.Fields("expires_at"),
	}
}
