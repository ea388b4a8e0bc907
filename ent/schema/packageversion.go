package schema

import (
	"entgo.io/ent"
	"entgo.io/ent/schema/field"
	"entgo.io/ent/schema/index"
)

// PackageVersion is one version in the board's library: admitted through
// every publish gate, never changed afterwards except to be yanked.
// docs/library.md says how.
type PackageVersion struct {
	ent.Schema
}

// Fields of the PackageVersion.
func (PackageVersion) Fields() []ent.Field {
	return []ent.Field{
		// name is "scope/name"; scope is its part before "/".
		field.String("name").NotEmpty().Immutable(),
		field.String("scope").NotEmpty().Immutable(),
		field.String("version").NotEmpty().Immutable(),
		// digest is the manifest digest, "sha256:…"; the archive is kept
		// under it in package_chunks.
		field.String("digest").NotEmpty().Unique().Immutable(),
		field.String("kind").NotEmpty().Immutable(),
		field.String("description").Default("").Immutable(),
		// size is the archive's length in bytes.
		field.Int64("size").NonNegative().Immutable(),
		field.Int("files").NonNegative().Immutable(),
		// manifest is the canonical manifest JSON, as digested.
		field.Bytes("manifest").Immutable(),
		// envelope is the DSSE signature envelope as published, or as a
		// later publish of the same digest signed it again.
		field.Bytes("envelope"),
		// signers are the key ids that counted when it was.
		field.Strings("signers").Optional(),
		field.String("published_by").NotEmpty().Immutable(),
		field.Time("published_at").Immutable(),
		field.Time("yanked_at").Optional().Nillable(),
		field.String("yanked_by").Default(""),
		field.String("yank_reason").Default(""),
	}
}

// Indexes of the PackageVersion: name@version is immutable, so one row
// each.
func (PackageVersion) Indexes() []ent.Index {
	return []ent.Index{
		index.Fields("name", "version").Unique(),
		index.Fields("scope"),
	}
}
