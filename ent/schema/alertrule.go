package schema

import (
	"entgo.io/ent"
	"entgo.io/ent/schema/field"
)

// AlertRule is one condition on what agents report that an operator wants
// to hear about. board/alerts.go validates and evaluates them (at most
// 100); docs/alerts.md says how.
type AlertRule struct {
	ent.Schema
}

// Fields of the AlertRule.
func (AlertRule) Fields() []ent.Field {
	return []ent.Field{
		field.String("id").NotEmpty().Unique().Immutable(),
		// agent is "*", an agent name, or a path.Match glob.
		field.String("agent").NotEmpty(),
		// condition is what it watches for: "delegation_cycle".
		field.String("condition").NotEmpty(),
		// window is how far back a report counts, in nanoseconds.
		field.Int64("window").Positive(),
		field.String("description").Default(""),
		field.Time("created_at").Immutable(),
		field.Time("updated_at"),
		// updated_by is the operator who last put the rule.
		field.String("updated_by").NotEmpty(),
	}
}
