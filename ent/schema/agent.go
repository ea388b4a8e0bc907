package schema

import (
	"entgo.io/ent"
	"entgo.io/ent/schema/field"
	"entgo.io/ent/schema/index"
)

// Agent is one agent the board has seen, by name. Presence (online, session,
// last seen) is updated as links come and go.
type Agent struct {
	ent.Schema
}

// Fields of the Agent.
func (Agent) Fields() []ent.Field {
	return []ent.Field{
		field.String("name").NotEmpty().Unique().Immutable(),
		field.String("description").Default(""),
		field.Bool("online").Default(false),
		field.String("session").Default(""),
		field.Strings("capabilities").Optional(),
		field.String("protocol").Default(""),
		field.String("build").Default(""),
		field.Strings("tools").Optional(),
		// The tool switches: which declared tools it may call, and whether
		// the board has ever said (never said: nothing is on).
		field.Strings("tools_on").Optional(),
		field.Bool("tools_spoken").Default(false),
		field.Time("tools_set_at").Optional().Nillable(),
		field.String("tools_set_by").Default(""),
		// The latest round of health checks: its status (ok, degraded,
		// unknown; empty when it never reported one), its lines as JSON, and
		// when the round started and was received.
		field.String("health_status").Default(""),
		field.Bytes("health_checks").Optional(),
		field.Time("health_started").Optional().Nillable(),
		field.Time("health_received").Optional().Nillable(),
		// The latest word on whether it takes work: from an operator
		// (pause_origin "board", pause_delivered false until the agent says
		// it did) or from the agent ("local"). pause_origin is empty when
		// nobody ever paused it.
		field.Bool("paused").Default(false),
		field.String("pause_reason").Default(""),
		field.String("pause_by").Default(""),
		field.Time("pause_time").Optional().Nillable(),
		field.String("pause_origin").Default(""),
		field.Bool("pause_delivered").Default(false),
		// inputs are the values a run of its flow may be started with, from
		// its last hello: JSON, a list of {name, type, description}.
		field.Bytes("inputs").Optional(),
		// runs_dropped is how many run summaries its outbox dropped, in all,
		// as its summaries said.
		field.Int64("runs_dropped").Default(0),
		// package_name, package_version and package_digest: the package
		// the agent's folder was installed from, as its last hello said;
		// "" when it was not.
		field.String("package_name").Default(""),
		field.String("package_version").Default(""),
		field.String("package_digest").Default(""),
		// triggers is its latest trigger report (agents announcing
		// "triggers"): a symphonix.board.v1.TriggerReport in protobuf's
		// binary form, after a version byte; triggers_time is when the
		// board received it. trigger_pauses is which of its triggers
		// operators paused: JSON, trigger id → {reason, by, time}; kept
		// whether or not the agent still reports the trigger.
		field.Bytes("triggers").Optional(),
		field.Time("triggers_time").Optional().Nillable(),
		field.Bytes("trigger_pauses").Optional(),
		// cycle_count is how many of the delegation failures the board
		// keeps of it have the code AGENT_RECURSION (a circular
		// delegation), and cycle_last when the latest was refused: what
		// Agent.delegation_cycles says, without reading the failures.
		field.Int64("cycle_count").Default(0),
		field.Time("cycle_last").Optional().Nillable(),
		field.Time("first_seen").Immutable(),
		field.Time("last_seen"),
		// The board holding the agent's link (its id, BoardLease), while
		// online; "" when it linked before boards had ids.
		field.String("board").Default(""),
	}
}

// Indexes of the Agent.
func (Agent) Indexes() []ent.Index {
	return []ent.Index{index.Fields("online"), index.Fields("package_digest")}
}
