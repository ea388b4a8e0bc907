// Package approvals holds the agent's half of an approval that an
// organisation decides: the agent proposes an operation and the
// organisation approves or refuses it.
//
// An operation is identified by its digest (Digest): the jcs digest of
// what is put in front of the person — the values shown, and the case for
// saying yes. The board stores the digest and hands it back with the
// decision; the agent acts on a decision only when it is still the same
// thing (StillTheSameThing).
package approvals
