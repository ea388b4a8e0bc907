// Package ent is the board's store: the schema in ./schema, written by hand,
// and the client generated from it. Regenerate with `go generate ./...` from
// the repository root (or `go generate ./ent`); never edit the generated
// files. The second step writes the store's versioned migrations for what
// ./schema has that they do not yet (docs/migrations.md).
package ent

//go:generate go tool ent generate --feature sql/upsert,sql/lock,sql/versioned-migration ./schema
//go:generate go run ../internal/migrategen -dir ../store/migrations
