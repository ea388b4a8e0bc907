package schema

import (
	"entgo.io/ent"
	"entgo.io/ent/schema/field"
)

// AuditEntry is one line of the board's audit log: who did what to which
// thing, and when. Entries are only ever appended; each carries the hash of
// the one before it (prev) and its own hash over its contents, so a changed,
// deleted or reordered entry breaks the chain. board.Audit appends and
// verifies them; docs/audit.md says exactly what is hashed.
type AuditEntry struct {
	ent.Schema
}

// Fields of the AuditEntry.
func (AuditEntry) Fields() []ent.Field {
	return []ent.Field{
		// seq is the entry's place in the chain: 1, 2, 3, … with no gaps.
		field.Int64("seq").Positive().Unique().Immutable(),
		// at is when the entry was written, to the microsecond (the
		// precision PostgreSQL keeps), in UTC.
		field.Time("at").Immutable(),
		// actor is who: an operator's name, an agent's name, "cli" or "board".
		field.String("actor").NotEmpty().Immutable(),
		// action is what, as noun.verb: "token.mint", "approval.decide", …
		field.String("action").NotEmpty().Immutable(),
		// subject is what it is about: a token id, an approval id, …
		field.String("subject").Default("").Immutable(),
		// detail is a JSON object in its RFC 8785 canonical form. Never a
		// secret or a token.
		field.Text("detail").Default("{}").Immutable(),
		// prev is the hash of the entry before; "" for seq 1.
		field.String("prev").Default("").Immutable(),
		// hash is "sha256:" + hex SHA-256 of the canonical encoding of
		// {seq, at, actor, action, subject, detail, prev}.
		field.String("hash").NotEmpty().Immutable(),
	}
}
