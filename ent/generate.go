// Package ent is the board's store: the schema in ./schema, written by hand,
// and the client generated from it. Regenerate with `go generate ./...` from
// the repository root; never edit the generated files.
package ent

//go:generate go tool ent generate --feature sql/upsert,sql/lock ./schema
