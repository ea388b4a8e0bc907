package schema

import (
	"entgo.io/ent"
	"entgo.io/ent/schema/field"
	"entgo.io/ent/schema/index"
)

// HealthRound is one round of an agent's health checks, as the agent
// reported it. The board keeps the last 7 days, at most 10,000 rounds per
// agent; an hourly sweep removes the rest.
type HealthRound struct {
	ent.Schema
}

// Fields of the HealthRound.
func (HealthRound) Fields() []ent.Field {
	return []ent.Field{
		field.String("agent").NotEmpty().Immutable(),
		// ok, degraded or unknown.
		field.String("status").Immutable(),
		// The lines, as JSON: name, status, duration and detail each.
		field.Bytes("checks").Immutable(),
		field.Time("started").Immutable(),
		field.Time("received").Immutable(),
	}
}

// Indexes of the HealthRound.
func (HealthRound) Indexes() []ent.Index {
	return []ent.Index{
		index.Fields("agent", "received"),
		index.Fields("received"),
	}
}
