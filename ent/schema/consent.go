package schema

import (
	"entgo.io/ent"
	"entgo.io/ent/schema/field"
	"entgo.io/ent/schema/index"
)

// Consent is a standing consent: an approver's yes that also approves, for
// a while or a number of times, the later operations of one agent with one
// exact digest, under the rule that governed the approval it was given on
// (docs/approvals.md).
type Consent struct {
	ent.Schema
}

// Fields of the Consent.
func (Consent) Fields() []ent.Field {
	return []ent.Field{
		field.String("id").NotEmpty().MaxLen(64).Unique().Immutable(),
		field.String("agent").NotEmpty().Immutable(),
		field.String("digest").NotEmpty().Immutable(),
		field.String("rule_id").NotEmpty().Immutable(),
		field.String("approval_id").NotEmpty().Immutable(),
		field.String("created_by").NotEmpty().Immutable(),
		field.Time("created_at").Immutable(),
		field.Time("expires_at").Immutable(),
		// uses_allowed: 0 for any number until it expires.
		field.Int("uses_allowed").NonNegative().Immutable(),
		field.Int("uses").NonNegative().Default(0),
		field.Time("revoked_at").Optional().Nillable(),
		field.String("revoked_by").Default(""),
	}
}

// Indexes of the Consent.
func (Consent) Indexes() []ent.Index {
	return []ent.Index{
		index.Fields("agent", "digest"),
		index.Fields("created_at", "id"),
	}
}
