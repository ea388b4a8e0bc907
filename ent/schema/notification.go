package schema

import (
	"entgo.io/ent"
	"entgo.io/ent/schema/field"
	"entgo.io/ent/schema/index"
)

// Notification is one message the board owes one webhook or one person
// (an email): an approval raised or escalated, written in the change's transaction and sent, with
// retries, by whichever board claims it first (docs/notifications.md).
type Notification struct {
	ent.Schema
}

// Fields of the Notification.
func (Notification) Fields() []ent.Field {
	return []ent.Field{
		field.String("approval_id").NotEmpty().Immutable(),
		// event: "raised" or "escalated".
		field.String("event").NotEmpty().Immutable(),
		// target: the webhook's URL, or "mailto:" and the person's address.
		field.String("target").NotEmpty().MaxLen(2048).Immutable(),
		// body: the JSON to post, made when the change was.
		field.Bytes("body").MaxLen(64 << 10).Immutable(),
		field.Time("created_at").Immutable(),
		// next_at: when it may be tried (again); a board trying it moves it
		// on first, so that no other board tries it meanwhile.
		field.Time("next_at"),
		field.Int("attempts").Default(0),
		field.Time("sent_at").Optional().Nillable(),
		// failed: given up after the last attempt.
		field.Bool("failed").Default(false),
		field.String("last_error").Default(""),
	}
}

// Indexes of the Notification.
func (Notification) Indexes() []ent.Index {
	return []ent.Index{
		index.Fields("sent_at", "failed", "next_at"),
		index.Fields("approval_id"),
	}
}
