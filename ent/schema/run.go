package schema

import (
	"entgo.io/ent"
	"entgo.io/ent/schema/field"
	"entgo.io/ent/schema/index"
)

// Run is one run of an agent's flow, as the agent reported it: created when
// it starts (or when the board first hears of it), updated when it pauses
// or resumes, and written in full from each summary the agent sends when it
// pauses or ends. Its steps are RunStep rows. board/runs*.go keep them;
// docs/runs.md says what is kept and for how long.
type Run struct {
	ent.Schema
}

// Fields of the Run.
func (Run) Fields() []ent.Field {
	return []ent.Field{
		// agent and run_id name it: the agent's name and the run's id as the
		// agent names it.
		field.String("agent").NotEmpty().Immutable(),
		field.String("run_id").NotEmpty().Immutable(),
		field.String("thread").Default(""),
		field.String("started_by").Default(""),
		field.String("started_by_who").Default(""),
		field.String("build").Default(""),
		// state is running, paused, finished, failed or stopped.
		field.String("state").NotEmpty(),
		field.Time("start_time"),
		field.Time("end_time").Optional().Nillable(),
		field.Int64("duration_ns").Default(0),
		field.Int("step_count").Default(0),
		field.Int64("tokens_input").Default(0),
		field.Int64("tokens_output").Default(0),
		field.Int64("tokens_cached").Default(0),
		field.Int64("tokens_total").Default(0),
		field.Text("error").Default(""),
		// pause is ask or approval while paused; "" otherwise.
		field.String("pause").Default(""),
		field.String("paused_at").Default(""),
		field.String("approval_id").Default(""),
		// input and output are the run's values as JSON, only from an agent
		// sending full detail; nil otherwise.
		field.Bytes("input").Optional(),
		field.Bytes("output").Optional(),
		field.Strings("withheld").Optional(),
		field.Bool("steps_truncated").Default(false),
		// trigger is the trigger that started it, when one did: a
		// symphonix.board.v1.RunTrigger in protobuf's binary form, after a
		// version byte; nil otherwise.
		field.Bytes("trigger").Optional(),
		// parent_run_id, parent_node, invocation_id, delegated_agent and
		// chain say where it sits in a delegation, when an agent node of
		// another run of the same agent started it (RunDelegation); all
		// empty for a run nothing delegated. GetRunTree walks
		// parent_run_id both ways.
		field.String("parent_run_id").Default(""),
		field.String("parent_node").Default(""),
		field.String("invocation_id").Default(""),
		field.String("delegated_agent").Default(""),
		field.Strings("chain").Optional(),
		// seq is the place among the run's events and summaries of the
		// last one written: a summary of a lower or equal seq is older.
		field.Int64("seq").Default(0),
		// updated_at is when the board last wrote it.
		field.Time("updated_at"),
	}
}

// Indexes of the Run: one row per agent and run; and one for every way the
// board lists runs (newest first, by start_time and id), reads their
// trees and sweeps them.
func (Run) Indexes() []ent.Index {
	return []ent.Index{
		index.Fields("agent", "run_id").Unique(),
		index.Fields("start_time"),
		index.Fields("agent", "start_time"),
		index.Fields("state", "start_time"),
		index.Fields("agent", "thread", "start_time"),
		index.Fields("end_time"),
		// A run's children, for GetRunTree.
		index.Fields("agent", "parent_run_id", "start_time"),
	}
}
