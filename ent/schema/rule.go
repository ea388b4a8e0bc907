package schema

import (
	"entgo.io/ent"
	"entgo.io/ent/schema/field"
	"entgo.io/ent/schema/index"
)

// Rule says which approvals the organisation governs (by agent and node)
// and who decides them. board/rules.go validates and matches them;
// docs/approvals.md says how.
type Rule struct {
	ent.Schema
}

// Fields of the Rule.
func (Rule) Fields() []ent.Field {
	return []ent.Field{
		field.String("id").NotEmpty().Unique().Immutable(),
		// agent is "*", an agent name, or a path.Match glob.
		field.String("agent").NotEmpty(),
		// node is "*", a node id, or a path.Match glob.
		field.String("node").NotEmpty(),
		// role is "approver" or "admin"; "" when people are named instead.
		field.String("role").Default(""),
		// people are operator names; empty when a role decides instead.
		field.Strings("people").Optional(),
		// quorum is how many distinct people must say yes.
		field.Int("quorum").Positive().Default(1),
		// time_limit is how long, in nanoseconds, a request may wait
		// before it expires; 0 means no limit.
		field.Int64("time_limit").NonNegative().Default(0),
		field.Bool("require_reason").Default(false),
		// allow_self_approval: a person in the conversation an approval
		// came from may decide it.
		field.Bool("allow_self_approval").Default(false),
		field.String("description").Default(""),
		field.Time("created_at").Immutable(),
		field.Time("updated_at"),
		// updated_by is the operator who last put the rule.
		field.String("updated_by").NotEmpty(),
		// no_standing_consent: a yes may not stand for later operations;
		// standing_consent_max_amount: above zero, not for an approval
		// showing an amount above it.
		field.Bool("no_standing_consent").Default(false),
		field.Float("standing_consent_max_amount").Min(0).Default(0),
		// escalation: the steps after which more people may decide.
		field.JSON("escalation", []EscalationStep{}).Optional(),
	}
}

// Indexes of the Rule: one rule per agent and node pattern, so which rule
// governs is never a coin toss between equals.
func (Rule) Indexes() []ent.Index {
	return []ent.Index{index.Fields("agent", "node").Unique()}
}

// EscalationStep is one step of a rule's escalation: after After
// nanoseconds since the raise, People (canonical addresses) or Role may
// decide the approval too.
type EscalationStep struct {
	After  int64    `json:"after"`
	People []string `json:"people,omitempty"`
	Role   string   `json:"role,omitempty"`
}
