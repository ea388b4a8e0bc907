package schema

import (
	"entgo.io/ent"
	"entgo.io/ent/schema/field"
)

// AuditEntry is one line of the board's audit log: who did what to which
// thing, and when. Entries are only ever appended; each carries the hash of
// the one before it (prev) and its own hash over its contents, so a changed,
// deleted or reordered entry breaks the chain. A change's transaction writes
// its entry unsequenced and the sequencer chains it moments later (package
// audit); docs/audit.md says exactly what is hashed.
type AuditEntry struct {
	ent.Schema
}

// Fields of the AuditEntry.
func (AuditEntry) Fields() []ent.Field {
	return []ent.Field{
		// seq is the entry's place in the chain: 1, 2, 3, … with no gaps.
		// Empty (NULL) until the sequencer chains the entry (audit.Log.Sequence):
		// the transaction that records a change writes its entry unsequenced,
		// so appenders never wait for one another.
		field.Int64("seq").Positive().Optional().Nillable().Unique(),
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
		// content is "sha256:" + hex SHA-256 of the canonical encoding of
		// {at, actor, action, subject, detail}, written with the entry, so an
		// entry changed before it is chained is found; "" on entries
		// written before content was kept.
		field.String("content").Default("").Immutable(),
		// prev is the hash of the entry before; "" for seq 1 and until the
		// entry is chained.
		field.String("prev").Default(""),
		// hash is "sha256:" + hex SHA-256 of the canonical encoding of
		// {seq, at, actor, action, subject, detail, prev}; "" until the
		// entry is chained.
		field.String("hash").Default(""),
	}
}
