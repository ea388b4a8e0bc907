// Package jcs is the one canonical encoding of JSON this project hashes:
// RFC 8785, the JSON Canonicalization Scheme. Two JSON texts that differ
// only in key order, whitespace, string escaping or number spelling have
// the same canonical form and so the same digest.
//
// A digest is "sha256:" followed by the lowercase hex SHA-256 of the
// canonical form. Digests are a protocol between the agent and the board,
// and between the board and anyone checking its audit log: the encoding
// never changes, and testdata/digest-vectors.json, made by an independent
// implementation, pins it.
package jcs
