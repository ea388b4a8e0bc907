package schema

import (
	"entgo.io/ent"
	"entgo.io/ent/schema/field"
)

// Setting is one board setting, by key (docs/people.md lists them).
type Setting struct {
	ent.Schema
}

// Fields of the Setting.
func (Setting) Fields() []ent.Field {
	return []ent.Field{
		field.String("id").NotEmpty().Unique().Immutable(),
		field.String("value").Default(""),
		field.Time("updated_at"),
		field.String("updated_by").Default(""),
	}
}
