package schema

import (
	"entgo.io/ent"
	"entgo.io/ent/schema/field"
	"entgo.io/ent/schema/index"
)

// PackageChunk is one piece of a published archive, content-addressed by
// the package digest: the archive is its chunks in seq order. Kept in the
// database so that every board on one database serves the same library.
type PackageChunk struct {
	ent.Schema
}

// Fields of the PackageChunk.
func (PackageChunk) Fields() []ent.Field {
	return []ent.Field{
		field.String("digest").NotEmpty().Immutable(),
		field.Int("seq").NonNegative().Immutable(),
		field.Bytes("data").Immutable(),
	}
}

// Indexes of the PackageChunk.
func (PackageChunk) Indexes() []ent.Index {
	return []ent.Index{index.Fields("digest", "seq").Unique()}
}
