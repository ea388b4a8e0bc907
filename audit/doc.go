// Package audit is the board's audit log: an append-only, hash-chained
// record of every change an operator, an agent or the board itself made,
// kept in the store beside the changes it records and written in the same
// transaction, so a change and its entry commit together or not at all.
//
// Each entry carries the hash of the one before; Verify walks the chain and
// names the first entry that was modified, deleted or moved. What is
// hashed is pinned by testdata/hash-vectors.json and written out in
// docs/audit.md, so anyone can check a chain without this code.
package audit
