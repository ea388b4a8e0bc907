package schema

import (
	"entgo.io/ent"
	"entgo.io/ent/schema/field"
)

// RunDetail is the steps of a stored Run, from its latest summary, in one
// value: a version byte (1) and then the protobuf encoding of a
// symphonix.board.v1.Run holding only its steps. A new summary replaces
// it in one write. Runs stored by a board before this table existed keep
// their steps in RunStep rows, which the board still reads.
type RunDetail struct {
	ent.Schema
}

// Fields of the RunDetail.
func (RunDetail) Fields() []ent.Field {
	return []ent.Field{
		// run is the id of the Run row it belongs to.
		field.Int("run").Unique().Immutable(),
		field.Bytes("steps"),
	}
}
