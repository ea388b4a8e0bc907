package schema

import (
	"entgo.io/ent"
	"entgo.io/ent/schema/field"
	"entgo.io/ent/schema/index"
)

// Relay is a request for an agent whose link another board of the store
// holds (a start, a stop): the board the operator asked writes it, the board holding the link sends it to the agent and
// writes the agent's answer, and the first board reads the answer and
// removes the row (docs/many-boards.md).
type Relay struct {
	ent.Schema
}

// Fields of the Relay.
func (Relay) Fields() []ent.Field {
	return []ent.Field{
		field.String("id").NotEmpty().MaxLen(64).Unique().Immutable(),
		field.String("agent").NotEmpty().Immutable(),
		// board: the id of the board holding the agent's link.
		field.String("board").NotEmpty().Immutable(),
		// request_id: the request's id on the link; request: the
		// LinkResponse to send, as protobuf.
		field.String("request_id").NotEmpty().Immutable(),
		field.Bytes("request").MaxLen(8 << 20).Immutable(),
		// within_ms: how long to wait for the agent's answer.
		field.Int64("within_ms").Immutable(),
		field.Time("created_at").Immutable(),
		// claimed: taken by the board holding the link, so that it is sent
		// once however many wakes it hears.
		field.Bool("claimed").Default(false),
		// answered: the agent answered (answer, a google.protobuf.Any of
		// its answer), or the ask failed (code, a connect code, and
		// message).
		field.Bool("answered").Default(false),
		field.Bytes("answer").Optional().Nillable(),
		field.Int("code").Default(0),
		field.String("message").Default(""),
	}
}

// Indexes of the Relay.
func (Relay) Indexes() []ent.Index {
	return []ent.Index{
		index.Fields("board", "claimed"),
		index.Fields("created_at"),
	}
}
