package schema

import (
	"entgo.io/ent"
	"entgo.io/ent/schema/field"
	"entgo.io/ent/schema/index"
)

// Conversation is the pointer to one conversation an agent holds: which
// thread, when it last changed, whether a run waits in it, and who is in it
// (paired or verified). Never a word of what was said.
type Conversation struct {
	ent.Schema
}

// Fields of the Conversation.
func (Conversation) Fields() []ent.Field {
	return []ent.Field{
		field.String("agent").NotEmpty().Immutable(),
		field.String("thread").NotEmpty().Immutable(),
		field.Time("updated_at"),
		field.Bool("waiting").Default(false),
		// people: the canonical addresses of who is in it.
		field.Strings("people").Optional(),
		field.Time("reported_at"),
	}
}

// Indexes of the Conversation.
func (Conversation) Indexes() []ent.Index {
	return []ent.Index{index.Fields("agent", "thread").Unique()}
}
