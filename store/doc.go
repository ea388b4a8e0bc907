// Package store opens the board's store: the ent client over embedded
// SQLite (the default, one file in the board's data folder) or PostgreSQL
// (for a store several boards share), with its schema brought up to date.
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
