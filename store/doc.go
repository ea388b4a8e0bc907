// Package store opens the board's store: the ent client over embedded
// SQLite (the default, one file in the board's data folder) or PostgreSQL
// (for a store several boards share), with its schema brought up to date.
//
// The schema is brought up to date by the versioned migrations in
// ./migrations, one directory per dialect, embedded: Open applies those the
// store lacks, under PostgreSQL's session advisory lock (MigrationLockKey)
// or in one SQLite immediate transaction, so that boards starting together
// apply each once; it refuses a store that has applied a migration this
// board does not know (SchemaNewerError). Migrate and Migrations are the
// same for `board migrate`. See docs/migrations.md.
//
// An SQLite store holds the board's signing key, so it is its owner's
// alone: its file is created 0600, and Open refuses one that others may
// read or write (PermissionError). One board serves it at a time
// (TakeLock).
//
// On SQLite, writers queue in Go and commit in groups: each caller's
// transaction is a savepoint inside one BEGIN IMMEDIATE, and the group is
// made durable by one fsync. Commit returns only once the caller's changes
// are on disk, so what an operator was told is saved survives a power cut.
package store
