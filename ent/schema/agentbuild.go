package schema

import (
	"entgo.io/ent"
	"entgo.io/ent/schema/field"
	"entgo.io/ent/schema/index"
)

// AgentBuild is one build an agent said it runs in a hello: when the board
// first and last heard it, and the package it was installed from, as the
// latest hello with that build said ("" when it named none). The board
// keeps at most 50 builds per agent, dropping those last seen longest
// ago; forgetting the agent removes them.
type AgentBuild struct {
	ent.Schema
}

// Fields of the AgentBuild.
func (AgentBuild) Fields() []ent.Field {
	return []ent.Field{
		field.String("agent").NotEmpty().Immutable(),
		// The flow's build digest, "sha256:" and hex.
		field.String("build").Immutable(),
		field.String("package_name").Default(""),
		field.String("package_version").Default(""),
		field.Time("first_seen").Immutable(),
		field.Time("last_seen"),
	}
}

// Indexes of the AgentBuild.
func (AgentBuild) Indexes() []ent.Index {
	return []ent.Index{
		index.Fields("agent", "build").Unique(),
		index.Fields("agent", "last_seen"),
	}
}
