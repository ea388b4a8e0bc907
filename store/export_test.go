package store

// LockMigrations is lockMigrations, for the external tests.
var LockMigrations = lockMigrations
