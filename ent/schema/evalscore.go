package schema

import (
	"entgo.io/ent"
	"entgo.io/ent/schema/field"
	"entgo.io/ent/schema/index"
)

// EvalScore is what one build of one agent's flow scored in one eval
// suite: its latest run's summary, as the agent reported it on its link or
// `agent eval --publish` sent it. Never a case's input or output. The
// board keeps the newest 20 builds per agent and suite, and 16 suites per
// agent (docs/evals-board.md).
type EvalScore struct {
	ent.Schema
}

// Fields of the EvalScore.
func (EvalScore) Fields() []ent.Field {
	return []ent.Field{
		field.String("agent").NotEmpty().Immutable(),
		// The eval file's name beside the flow ("refund-desk.eval.json").
		field.String("suite").NotEmpty().Immutable(),
		// "sha256:" and 64 lowercase hex: the build scored.
		field.String("build").NotEmpty().Immutable(),
		// When the build's latest run was scored.
		field.Time("score_time"),
		field.Float("score"),
		field.Bool("passed"),
		field.Int("cases"),
		field.Int("completed"),
		field.Int("scored"),
		field.Int("times"),
		// The mean score per criterion, by name.
		field.JSON("criteria", map[string]float64{}).Optional(),
		// The suite's threshold on the mean score; nil when it has none.
		field.Float("threshold").Optional().Nillable(),
		// Where the board heard it: reported (the link) or published
		// (PublishEvalScores).
		field.Enum("source").Values("reported", "published"),
		// When the board kept it.
		field.Time("received"),
	}
}

// Indexes of the EvalScore.
func (EvalScore) Indexes() []ent.Index {
	return []ent.Index{
		index.Fields("agent", "suite", "build").Unique(),
		index.Fields("agent", "suite", "score_time"),
	}
}
