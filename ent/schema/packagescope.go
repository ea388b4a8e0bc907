package schema

import (
	"entgo.io/ent"
	"entgo.io/ent/schema/field"
)

// PackageScope says which publishers may publish under one "scope/" of the
// library, and how many of their keys must sign each package.
type PackageScope struct {
	ent.Schema
}

// Fields of the PackageScope.
func (PackageScope) Fields() []ent.Field {
	return []ent.Field{
		// id is the scope's name.
		field.String("id").NotEmpty().Unique().Immutable(),
		field.Strings("publishers").Optional(),
		field.Int("threshold").Positive().Default(1),
		field.String("set_by").NotEmpty(),
		field.Time("set_at"),
	}
}
