// Package schema is the board's store, table by table, written by hand:
// ent generates the client in the package above it from these types
// (go generate ./... at the repository root). Every table is additive:
// fields are added with defaults, never renamed or removed, because the
// schema is migrated automatically when a board starts and a store outlives
// the board that wrote it.
package schema
