package schema

import (
	"entgo.io/ent"
	"entgo.io/ent/schema/field"
	"entgo.io/ent/schema/index"
)

// DelegationFailure is one delegation an agent node of a run asked for and
// did not get, as the agent reported it in a run event. The board keeps
// the latest 1,000 of each agent (board/delegations.go sweeps the rest);
// docs/runs.md says what they are.
type DelegationFailure struct {
	ent.Schema
}

// Fields of the DelegationFailure.
func (DelegationFailure) Fields() []ent.Field {
	return []ent.Field{
		// agent is the linked agent whose run asked.
		field.String("agent").NotEmpty().Immutable(),
		field.String("run_id").NotEmpty().Immutable(),
		field.String("node").Default("").Immutable(),
		// target is the agent asked for, as the agent gave it.
		field.String("target").Default("").Immutable(),
		// code is one of the agent codes: AGENT_RECURSION is a cycle.
		field.String("code").NotEmpty().Immutable(),
		field.Text("message").Default("").Immutable(),
		field.Strings("chain").Optional().Immutable(),
		field.String("invocation_id").Default("").Immutable(),
		// time is when it was refused or failed: the board's clock when
		// the event arrived.
		field.Time("time").Immutable(),
	}
}

// Indexes of the DelegationFailure: newest first per agent, with or
// without a code.
func (DelegationFailure) Indexes() []ent.Index {
	return []ent.Index{
		index.Fields("agent", "time"),
		index.Fields("agent", "code", "time"),
	}
}
