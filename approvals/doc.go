// Package approvals holds the agent's half of an approval that an
// organisation decides: the agent proposes an operation and the
// organisation approves or refuses it.
//
// The package owns the canonical encoding of what is approved. An
// operation is identified by its digest: the SHA-256 of its RFC 8785
// (JSON Canonicalization Scheme) form, written "sha256:" followed by
// lowercase hex. Two JSON texts that differ only in key order,
// whitespace, string escaping or number spelling have the same digest.
package approvals
