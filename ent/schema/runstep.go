package schema

import (
	"entgo.io/ent"
	"entgo.io/ent/schema/field"
	"entgo.io/ent/schema/index"
)

// RunStep is one node's step of a Run stored by a board before RunDetail
// held a run's steps in one value: the board reads them for such a run
// when the run has no RunDetail, and the sweep removes them with their
// run; it writes none.
type RunStep struct {
	ent.Schema
}

// Fields of the RunStep.
func (RunStep) Fields() []ent.Field {
	return []ent.Field{
		// run is the id of the Run row it belongs to.
		field.Int("run").Immutable(),
		field.Int("seq").Immutable(),
		field.String("node").Default("").Immutable(),
		field.String("kind").Default("").Immutable(),
		field.Int("copy").Default(-1).Immutable(),
		field.Time("start_time").Optional().Nillable().Immutable(),
		// duration_ns is -1 while the step runs.
		field.Int64("duration_ns").Default(-1).Immutable(),
		// outcome is ok, failed, paused, stopped, or "" while it runs.
		field.String("outcome").Default("").Immutable(),
		field.Text("error").Default("").Immutable(),
		field.String("pause").Default("").Immutable(),
		field.String("approval_id").Default("").Immutable(),
		field.Int64("tokens_input").Default(0).Immutable(),
		field.Int64("tokens_output").Default(0).Immutable(),
		field.Int64("tokens_cached").Default(0).Immutable(),
		field.Int64("tokens_total").Default(0).Immutable(),
	}
}

// Indexes of the RunStep.
func (RunStep) Indexes() []ent.Index {
	return []ent.Index{index.Fields("run", "seq")}
}
