// Package audit is the board's audit log: an append-only, hash-chained
// record of every change an operator, an agent or the board itself made,
// kept in the store beside the changes it records and written in the same
// transaction, so a change and its entry commit together or not at all.
//
// An entry is written unchained (with a hash of its own contents) and a
// sequencer, one at a time across every board on the store, gives committed
// entries their place in the chain moments later, so audited changes never
// wait for one another.
//
// Each entry carries the hash of the one before; Verify walks the chain and
// names the first entry that was modified, deleted or moved. What is
// hashed is pinned by testdata/hash-vectors.json and written out in
// docs/audit.md, so anyone can check a chain without this code.
package audit
