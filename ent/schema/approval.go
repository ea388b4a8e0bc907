package schema

import (
	"entgo.io/ent"
	"entgo.io/ent/dialect/entsql"
	"entgo.io/ent/schema/field"
	"entgo.io/ent/schema/index"
)

// Approval is one operation an agent asked the organisation to approve.
// board/approvals.go raises them; docs/approvals.md says how.
type Approval struct {
	ent.Schema
}

// Fields of the Approval.
func (Approval) Fields() []ent.Field {
	return []ent.Field{
		field.String("id").NotEmpty().Unique().Immutable(),
		// agent is the name of the agent that raised it.
		field.String("agent").NotEmpty().Immutable(),
		field.String("run").NotEmpty().Immutable(),
		field.String("thread").Default("").Immutable(),
		// run_id is the run, as the agent's run events and summaries name
		// it, that stopped for the approval; "" from an agent that does not
		// report runs.
		field.String("run_id").Default("").Immutable(),
		field.String("node").NotEmpty().Immutable(),
		field.String("ask").Default("").Immutable(),
		// show is what the agent shows a person: a JSON object, as text.
		field.Text("show").Immutable(),
		field.Text("account").Default("").Immutable(),
		// digest is the string the agent sent; the board never computes one.
		field.String("digest").NotEmpty().Immutable(),
		// rule_id is the rule that governed it when raised; "" when none did.
		field.String("rule_id").Default("").Immutable(),
		// state is pending, approved, rejected, cancelled, expired or superseded.
		field.String("state").NotEmpty(),
		field.Time("created_at").Immutable(),
		field.Time("decided_at").Optional().Nillable(),
		// expires_at is when a pending approval becomes expired; nil when never.
		field.Time("expires_at").Optional().Nillable().Immutable(),
		// The decision, once made: yes, no or cancelled; the digest it was
		// made for; who made it; why.
		field.String("say").Default(""),
		field.String("decision_digest").Default(""),
		field.Strings("decided_by").Optional(),
		field.Text("reason").Default(""),
		// votes are the people who said yes so far toward a quorum.
		field.Strings("votes").Optional(),
		// delivered_at is when the decision went out on the agent's link
		// (or in the answer to a raise); nil while it has not.
		field.Time("delivered_at").Optional().Nillable(),
		// traceparent is the W3C traceparent the raise was made in; "" when
		// the agent sent none. decision_traceparent is the board's span for
		// the decision, a child of it, sent with the decision to the agent
		// whenever it is delivered.
		field.String("traceparent").Default("").Immutable(),
		field.String("decision_traceparent").Default(""),
		// receipt: the board's signed receipt of the decision (a JWS,
		// package receipts), written with it; "" until it is decided.
		field.String("receipt").Default(""),
		// consent_id: the standing consent that approved it, when one did.
		field.String("consent_id").Default(""),
		// escalation_level: the steps of its rule's escalation reached.
		field.Int("escalation_level").NonNegative().Default(0),
	}
}

// Indexes of the Approval: at most one pending approval per agent, run and
// node, whatever raced to raise it; and one for every way the board lists,
// counts or looks for approvals, holding every column the query filters or
// orders by. A row holds its ask, show and account (up to 144 KiB) before
// its state and times, and SQLite reads a column past them by walking
// their overflow pages: a query that had to read the state or created_at
// of every row from the table read all of every approval.
func (Approval) Indexes() []ent.Index {
	return []ent.Index{
		index.Fields("agent", "run", "node").
			Unique().
			Annotations(entsql.IndexWhere("state = 'pending'")).
			StorageKey("approval_one_pending"),
		index.Fields("agent", "run", "node", "created_at"),
		// ListApprovals, newest first, and a watch's decided ones.
		index.Fields("created_at", "id", "state"),
		// ListApprovals of a state, a watch's pending ones, expireDue.
		index.Fields("state", "created_at", "id"),
		index.Fields("state", "expires_at"),
		// The same for one agent, and the count of its pending ones.
		index.Fields("agent", "created_at", "id", "state"),
		index.Fields("agent", "state", "created_at", "id"),
		// A run's approvals (GetRun).
		index.Fields("agent", "run_id", "node"),
		// The decisions not yet delivered to an agent.
		index.Fields("agent", "delivered_at", "say"),
		// The decisions of a minute or an hour, and their latency, for the
		// fleet's samples (board/fleet.go).
		index.Fields("decided_at", "state", "created_at"),
	}
}
